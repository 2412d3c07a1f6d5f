/* Device buffers of one benchmark (see bench_buffers.h). */
#include "bench/bench_buffers.h"

#include <stdlib.h>

#include "device/log.h"

void cls_bench_buffers_release(cls_bench_buffers *b) {
  for (int i = 0; i < b->n; i++)
    if (b->mem[i]) clReleaseMemObject(b->mem[i]);
  b->n = 0;
}

static cls_status made(cls_bench_buffers *b, cl_mem m, cl_int err, size_t bytes, cl_mem *out) {
  if (!m)
    return cls_fail(b->e, CLS_ERR_OPENCL, "bench: allocating %zu bytes of device memory failed: %s", bytes,
                    cls_cl_error_name(err));
  b->mem[b->n++] = m;
  *out = m;
  return CLS_OK;
}

cls_status cls_bench_floats(cls_bench_buffers *b, size_t n, unsigned seed, float scale, float fill, cl_mem *out) {
  *out = NULL;
  if (b->n == CLS_BENCH_MAX_BUFFERS) return cls_fail(b->e, CLS_ERR_INVALID_ARGUMENT, "bench: too many buffers");
  const size_t count = n ? n : 1;
  float *h = malloc(count * sizeof *h);
  if (!h) return cls_fail(b->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (size_t i = 0; i < count; i++) {
    seed = seed * 1664525u + 1013904223u;
    h[i] = scale != 0 ? scale * ((float)(seed >> 8) / 8388608.0f - 1.0f) : fill;
  }
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(b->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, count * sizeof *h, h, &err);
  free(h);
  return made(b, m, err, count * sizeof(float), out);
}

cls_status cls_bench_ints(cls_bench_buffers *b, const int32_t *v, size_t n, cl_mem *out) {
  *out = NULL;
  if (b->n == CLS_BENCH_MAX_BUFFERS) return cls_fail(b->e, CLS_ERR_INVALID_ARGUMENT, "bench: too many buffers");
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(b->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *v, (void *)v, &err);
  return made(b, m, err, n * sizeof *v, out);
}
