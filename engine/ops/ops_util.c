/* Shared plumbing of the op plans (see ops_util.h). */
#include "ops/ops_util.h"

#include <stdarg.h>

#include "device/log.h"

cls_status cls_ops_device(cls_engine *e, int index, cls_device **out) {
  *out = NULL;
  if (!e) return CLS_ERR_INVALID_ARGUMENT;
  if (index < 0 || index >= e->n_devices) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "no device with index %d", index);
  cls_status st = cls_engine_build_device(e, index, NULL, 0, NULL);
  if (st == CLS_OK) *out = &e->devices[index];
  return st;
}

cls_status cls_engine_device_cl(cls_engine *e, int index, cl_context *context, cl_device_id *device,
                                cl_command_queue *queue) {
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, index, &d);
  if (st != CLS_OK) return st;
  if (context) *context = d->context;
  if (device) *device = d->id;
  if (queue) *queue = d->queue;
  return CLS_OK;
}

cls_status cls_ops_args(cls_engine *e, cl_kernel kernel, const char *name, int n, ...) {
  va_list ap;
  va_start(ap, n);
  cls_status st = CLS_OK;
  for (int i = 0; i < n; i++) {
    size_t size = va_arg(ap, size_t);
    const void *value = va_arg(ap, const void *);
    cl_int err = clSetKernelArg(kernel, (cl_uint)i, size, value);
    if (err != CL_SUCCESS) {
      st = cls_fail(e, CLS_ERR_OPENCL, "%s: clSetKernelArg(%d) failed: %s", name, i, cls_cl_error_name(err));
      break;
    }
  }
  va_end(ap);
  return st;
}

cls_status cls_ops_launch(cls_engine *e, cl_command_queue queue, cl_kernel kernel, const char *name, int dims,
                          const size_t *global, const size_t *local, cl_event *event) {
  size_t rounded[3];
  for (int i = 0; i < dims; i++) {
    size_t l = local && local[i] ? local[i] : 1;
    rounded[i] = (global[i] + l - 1) / l * l;
    if (rounded[i] == 0) return CLS_OK; /* nothing to do */
  }
  cl_int err = clEnqueueNDRangeKernel(queue, kernel, (cl_uint)dims, NULL, rounded, local, 0, NULL, event);
  if (err != CL_SUCCESS)
    return cls_fail(e, CLS_ERR_OPENCL, "%s: clEnqueueNDRangeKernel failed: %s", name, cls_cl_error_name(err));
  return CLS_OK;
}

cls_status cls_ops_fill(cls_engine *e, cl_command_queue queue, cls_buf buf, size_t n, float value) {
  if (n == 0) return CLS_OK;
  cl_int err = clEnqueueFillBuffer(queue, buf.mem, &value, sizeof value, buf.offset * sizeof(float), n * sizeof(float), 0,
                                   NULL, NULL);
  if (err != CL_SUCCESS) return cls_fail(e, CLS_ERR_OPENCL, "clEnqueueFillBuffer failed: %s", cls_cl_error_name(err));
  return CLS_OK;
}

cls_status cls_ops_cl_check(cls_engine *e, int index, cl_int err, const char *what) {
  if (err == CL_SUCCESS) return CLS_OK;
  const cls_device_info *d = cls_engine_device(e, index);
  return cls_fail(e, err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ? CLS_ERR_OUT_OF_MEMORY
                                                                                          : CLS_ERR_OPENCL,
                  "device %d:%d (%s): %s failed: %s", d ? d->platform_index : -1, d ? d->device_index : -1,
                  d ? d->name : "?", what, cls_cl_error_name(err));
}

cl_mem cls_ops_buffer(cls_engine *e, int index, cl_context context, size_t bytes, size_t *total, cls_status *st) {
  if (*st != CLS_OK) return NULL;
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL, &err);
  *st = cls_ops_cl_check(e, index, m ? CL_SUCCESS : err, "allocating device memory");
  *total += bytes;
  return m;
}
