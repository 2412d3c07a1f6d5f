/* Kernel programs on a device: building every embedded program (through the binary cache), and
 * looking up a kernel by family and name for the op plans. */
#ifndef CLS_PROGRAM_H
#define CLS_PROGRAM_H

#include "device/engine.h"
#include "device/kernel_sources.h"

/* Builds one program for the device with the device's options, through the binary cache: a cache
 * entry is used only when the driver accepts and builds it, otherwise the source is built and the
 * entry rewritten. On CLS_ERR_BUILD the error text names the device and file and holds the options
 * and the build log. *cache_hit (may be NULL) tells where the program came from. */
cls_status cls_program_build(cls_engine *engine, cls_device *device, const cls_kernel_source *source, cl_program *out,
                             bool *cache_hit);

/* Creates kernel `name` from the built program of `family` on the device (the caller releases it).
 * The device must have been built (cls_engine_build_device). */
cls_status cls_device_kernel(cls_engine *engine, cls_device *device, const char *family, const char *name,
                             cl_kernel *out);

/* The first dimension of a kernel's reqd_work_group_size (its compile-time work-group size, which the
 * kernel takes from a tunable of the device's options), in *out; `fallback` when it declares none. */
cls_status cls_kernel_compile_wg(cls_engine *engine, cls_device *device, cl_kernel kernel, const char *name,
                                 size_t fallback, size_t *out);

#endif
