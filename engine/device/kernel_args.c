/* Typed kernel-argument lists (see kernel_args.h): clSetKernelArg in order, the first failure kept,
 * and at the end the count checked against the kernel's own. */
#include "device/kernel_args.h"

#include "device/log.h"

cls_kargs cls_kargs_begin(cls_error *err, cl_kernel kernel, const char *name) {
  return (cls_kargs){err, kernel, name, 0, CL_SUCCESS, 0};
}

void cls_kargs_set(cls_kargs *a, size_t size, const void *value) {
  cl_int err = clSetKernelArg(a->kernel, a->n, size, value);
  if (err != CL_SUCCESS && a->failed == CL_SUCCESS) {
    a->failed = err;
    a->failed_at = a->n;
  }
  a->n++;
}

cls_status cls_kargs_end(cls_kargs *a) {
  if (a->failed != CL_SUCCESS)
    return cls_error_set(a->err, CLS_ERR_OPENCL, "%s: clSetKernelArg(%u) failed: %s", a->name, (unsigned)a->failed_at,
                         cls_cl_error_name(a->failed));
  cl_uint want = 0;
  cl_int err = clGetKernelInfo(a->kernel, CL_KERNEL_NUM_ARGS, sizeof want, &want, NULL);
  if (err != CL_SUCCESS)
    return cls_error_set(a->err, CLS_ERR_OPENCL, "%s: clGetKernelInfo(CL_KERNEL_NUM_ARGS) failed: %s", a->name,
                         cls_cl_error_name(err));
  if (want != a->n)
    return cls_error_set(a->err, CLS_ERR_OPENCL, "%s: the kernel takes %u arguments, %u were set", a->name,
                         (unsigned)want, (unsigned)a->n);
  return CLS_OK;
}
