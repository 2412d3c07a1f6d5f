/* Kernel arguments through typed setters: an argument list is begun for one kernel, each argument
 * is set by a function of its OpenCL type (a buffer, int, uint, ulong or float, or the size of a
 * __local array) in the kernel's order, and cls_kargs_end checks that the count is the kernel's
 * and names the kernel and the argument on a failure. A setter accepts only a value of exactly its
 * type (a compile error otherwise: no silent int/long/double conversion into a kernel's parameter). */
#ifndef CLS_KERNEL_ARGS_H
#define CLS_KERNEL_ARGS_H

#include <CL/cl.h>

#include "device/engine.h"

typedef struct cls_kargs {
  cls_error *err;     /* where a failure's text goes */
  cl_kernel kernel;
  const char *name;   /* the kernel's name, for messages */
  cl_uint n;          /* arguments set so far (the next one's index) */
  cl_int failed;      /* the first clSetKernelArg error (CL_SUCCESS: none) */
  cl_uint failed_at;  /* its argument index */
} cls_kargs;

/* Starts setting `kernel`'s arguments from index 0; cls_kargs_end reports a failure into `err`
 * (the sink of the object that launches: an op plan's, a tower's; engine-level callers such as the
 * self-tests and the bench pass cls_engine_errors(engine)). */
cls_kargs cls_kargs_begin(cls_error *err, cl_kernel kernel, const char *name);

/* The next argument: `size` bytes at `value` (clSetKernelArg); a failure is kept for cls_kargs_end. */
void cls_kargs_set(cls_kargs *args, size_t size, const void *value);

static inline void cls_kargs_set_mem(cls_kargs *a, cl_mem v) { cls_kargs_set(a, sizeof v, &v); }
static inline void cls_kargs_set_int(cls_kargs *a, cl_int v) { cls_kargs_set(a, sizeof v, &v); }
static inline void cls_kargs_set_uint(cls_kargs *a, cl_uint v) { cls_kargs_set(a, sizeof v, &v); }
static inline void cls_kargs_set_ulong(cls_kargs *a, cl_ulong v) { cls_kargs_set(a, sizeof v, &v); }
static inline void cls_kargs_set_float(cls_kargs *a, cl_float v) { cls_kargs_set(a, sizeof v, &v); }
/* A __local array of `bytes` (no value). */
static inline void cls_kargs_local(cls_kargs *a, size_t bytes) { cls_kargs_set(a, bytes, NULL); }

/* The typed setters: `v` must have exactly the setter's type (_Generic has no other association). */
#define cls_kargs_mem(a, v) cls_kargs_set_mem((a), _Generic((v), cl_mem: (v)))
#define cls_kargs_int(a, v) cls_kargs_set_int((a), _Generic((v), cl_int: (v)))
#define cls_kargs_uint(a, v) cls_kargs_set_uint((a), _Generic((v), cl_uint: (v)))
#define cls_kargs_ulong(a, v) cls_kargs_set_ulong((a), _Generic((v), cl_ulong: (v)))
#define cls_kargs_float(a, v) cls_kargs_set_float((a), _Generic((v), cl_float: (v)))

/* CLS_OK when every argument was set and their number is the kernel's (CL_KERNEL_NUM_ARGS);
 * otherwise CLS_ERR_OPENCL with the text naming the kernel and the argument or the two counts. */
cls_status cls_kargs_end(cls_kargs *args);

#endif
