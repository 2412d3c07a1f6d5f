/* Kernel programs on a device: building every embedded program (through the binary cache), and
 * looking up a kernel by family and name for the op plans. */
#ifndef CLS_PROGRAM_H
#define CLS_PROGRAM_H

#include "engine.h"

/* Creates kernel `name` from the built program of `family` on the device (the caller releases it).
 * The device must have been built (cls_engine_build_device). */
cls_status cls_device_kernel(cls_engine *engine, cls_device *device, const char *family, const char *name,
                             cl_kernel *out);

#endif
