/* An LD_PRELOAD shim for the nan_fill test: every OpenCL buffer created without host data starts as
 * all-one bytes (NaN as a float, -1 as an int) instead of what the driver gives (PoCL and Oclgrind give
 * zeros), as on a device that leaves new memory as it was. A run whose results change under it read a
 * buffer before writing it (a GEMM with beta = 0 that reads C would give 0 x NaN = NaN). */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef cl_mem (*create_buffer_fn)(cl_context, cl_mem_flags, size_t, void *, cl_int *);

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host,
                                               cl_int *status) {
  static create_buffer_fn next;
  if (!next) next = (create_buffer_fn)dlsym(RTLD_NEXT, "clCreateBuffer");
  cl_mem m = next(context, flags, size, host, status);
  if (!m || (flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR)) || size == 0) return m;
  cl_device_id device = NULL;
  if (clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, NULL) != CL_SUCCESS) return m;
  cl_command_queue q = clCreateCommandQueue(context, device, 0, NULL);
  void *ones = malloc(size);
  if (q && ones) {
    memset(ones, 0xff, size);
    clEnqueueWriteBuffer(q, m, CL_TRUE, 0, size, ones, 0, NULL, NULL);
  }
  free(ones);
  if (q) clReleaseCommandQueue(q);
  return m;
}
