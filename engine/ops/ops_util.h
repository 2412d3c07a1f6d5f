/* Helpers the op plans share: the device record behind an engine index, kernel argument setting with
 * error reporting, and 1-D/2-D launches rounded up to the work-group size. Internal to the engine. */
#ifndef CLS_OPS_UTIL_H
#define CLS_OPS_UTIL_H

#include "clspeech/ops.h"
#include "device/engine.h"

/* The built device behind an index (opens it and builds its kernels if needed). */
cls_status cls_ops_device(cls_engine *engine, int index, cls_device **out);

/* Sets kernel arguments from (size, pointer) pairs: cls_ops_args(e, k, "name", 3, sizeof a, &a, ...). */
cls_status cls_ops_args(cls_engine *engine, cl_kernel kernel, const char *name, int n, ...);

/* Enqueues `kernel` over `global` items (rounded up to a multiple of `local`, which kernels must
 * guard against); `local` 0 lets the driver choose. */
cls_status cls_ops_launch(cls_engine *engine, cl_command_queue queue, cl_kernel kernel, const char *name, int dims,
                          const size_t *global, const size_t *local, cl_event *event);

/* CLS_OK for CL_SUCCESS; otherwise the engine's error naming device `index` and `what`
 * ("device 0:1 (NAME): allocating device memory failed: CL_OUT_OF_RESOURCES"): CLS_ERR_OUT_OF_MEMORY for
 * an allocation failure or CL_OUT_OF_RESOURCES, CLS_ERR_OPENCL for anything else. */
cls_status cls_ops_cl_check(cls_engine *engine, int index, cl_int err, const char *what);

/* A read-write buffer of `bytes` (4 when 0) on `context` of device `index`, counted into *total;
 * NULL and nothing done once *status is not CLS_OK, so that a run of allocations checks once. */
cl_mem cls_ops_buffer(cls_engine *engine, int index, cl_context context, size_t bytes, size_t *total,
                      cls_status *status);

/* Fills n floats of a buffer view with a value. */
cls_status cls_ops_fill(cls_engine *engine, cl_command_queue queue, cls_buf buf, size_t n, float value);

#endif
