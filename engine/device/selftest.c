/* Device self-test: builds every kernel program for the device, runs the self-test kernel (local
 * memory, barriers, arithmetic) and a CLBlast SGEMM, and compares every result with a
 * double-precision evaluation on the host. Owns nothing but the test. */
#include <clblast_c.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device/engine.h"
#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"

#define DEVICE_FMT "device %d:%d (%s)"
#define DEVICE_ARGS(d) (d)->info.platform_index, (d)->info.device_index, (d)->info.name

/* Deterministic values in [-1, 1). */
static float next_value(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xFFFFFF) / 8388608.0f - 1.0f;
}

enum { AXPY_N = 1000 }; /* elements of the axpy self-test */

/* Runs selftest_axpy_sum once: y = a x + y into out[], each work-group's sum of it into partial[groups]. */
static cls_status run_axpy_sum(cls_engine *e, cls_device *d, cl_kernel k, float a, const float *x, const float *y,
                               size_t local, size_t groups, float *out, float *partial) {
  const size_t bytes = AXPY_N * sizeof *x;
  cl_mem bx = NULL, by = NULL, bp = NULL;
  cl_int err = CL_SUCCESS;
  cls_status st = CLS_OK;
  const char *what = "clCreateBuffer";
  bx = clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, (void *)x, &err);
  if (err == CL_SUCCESS)
    by = clCreateBuffer(d->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)y, &err);
  if (err == CL_SUCCESS) bp = clCreateBuffer(d->context, CL_MEM_WRITE_ONLY, groups * sizeof *partial, NULL, &err);
  if (err == CL_SUCCESS) {
    cls_kargs args = cls_kargs_begin(cls_engine_errors(e), k, "selftest_axpy_sum");
    cls_kargs_int(&args, (cl_int)AXPY_N);
    cls_kargs_float(&args, a);
    cls_kargs_mem(&args, bx);
    cls_kargs_mem(&args, by);
    cls_kargs_mem(&args, bp);
    st = cls_kargs_end(&args);
  }
  if (err == CL_SUCCESS && st == CLS_OK) {
    what = "clEnqueueNDRangeKernel(selftest_axpy_sum)";
    const size_t global = groups * local;
    err = clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS && st == CLS_OK) {
    what = "clEnqueueReadBuffer";
    err = clEnqueueReadBuffer(d->queue, by, CL_TRUE, 0, bytes, out, 0, NULL, NULL);
    if (err == CL_SUCCESS)
      err = clEnqueueReadBuffer(d->queue, bp, CL_TRUE, 0, groups * sizeof *partial, partial, 0, NULL, NULL);
  }
  if (err != CL_SUCCESS)
    st = cls_fail(e, CLS_ERR_OPENCL, DEVICE_FMT ": self-test: %s failed: %s", DEVICE_ARGS(d), what, cls_cl_error_name(err));
  if (bx) clReleaseMemObject(bx);
  if (by) clReleaseMemObject(by);
  if (bp) clReleaseMemObject(bp);
  return st;
}

/* Compares run_axpy_sum's results with a double-precision evaluation on the host. */
static cls_status compare_axpy_sum(cls_engine *e, cls_device *d, float a, const float *x, const float *y,
                                   size_t local, size_t groups, const float *out, const float *partial) {
  for (int i = 0; i < AXPY_N; i++) {
    double expect = (double)a * x[i] + y[i];
    if (fabs(out[i] - expect) > 1e-6 * (1.0 + fabs(expect))) {
      return cls_fail(e, CLS_ERR_SELFTEST, DEVICE_FMT ": self-test: selftest_axpy_sum y[%d] = %.9g, expected %.9g",
                      DEVICE_ARGS(d), i, out[i], expect);
    }
  }
  for (size_t g = 0; g < groups; g++) {
    double expect = 0.0, scale = 0.0;
    for (size_t i = g * local; i < (g + 1) * local && i < AXPY_N; i++) {
      expect += (double)a * x[i] + y[i];
      scale += fabs((double)a * x[i] + y[i]);
    }
    if (fabs(partial[g] - expect) > 1e-6 * (1.0 + scale)) {
      return cls_fail(e, CLS_ERR_SELFTEST,
                      DEVICE_FMT ": self-test: selftest_axpy_sum work-group %zu sum = %.9g, expected %.9g (local memory "
                                 "or barrier fault)",
                      DEVICE_ARGS(d), g, partial[g], expect);
    }
  }
  return CLS_OK;
}

static cls_status check_axpy_sum(cls_engine *e, cls_device *d) {
  const float a = 0.75f;
  float x[AXPY_N], y[AXPY_N], out[AXPY_N];
  uint32_t s = 12345;
  for (int i = 0; i < AXPY_N; i++) {
    x[i] = next_value(&s);
    y[i] = next_value(&s);
  }
  cl_kernel k = NULL;
  cls_status st = cls_device_kernel(e, d, "selftest", "selftest_axpy_sum", &k);
  if (st != CLS_OK) return st;
  size_t wg[3] = {0, 0, 0};
  clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof wg, wg, NULL);
  size_t local = wg[0] ? wg[0] : 64;
  size_t groups = (AXPY_N + local - 1) / local;
  float *partial = calloc(groups, sizeof *partial);
  if (!partial) {
    clReleaseKernel(k);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  st = run_axpy_sum(e, d, k, a, x, y, local, groups, out, partial);
  if (st == CLS_OK) st = compare_axpy_sum(e, d, a, x, y, local, groups, out, partial);
  clReleaseKernel(k);
  free(partial);
  return st;
}

static cls_status check_sgemm(cls_engine *e, cls_device *d) {
  enum { M = 37, N = 29, K = 53 };
  static float a[M * K], b[K * N], c[M * N];
  uint32_t s = 777;
  for (int i = 0; i < M * K; i++) a[i] = next_value(&s);
  for (int i = 0; i < K * N; i++) b[i] = next_value(&s);
  cls_status st = CLS_OK;
  cl_int err = CL_SUCCESS;
  cl_mem ba = clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  cl_mem bb = err == CL_SUCCESS ? clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b, &err) : NULL;
  cl_mem bc = err == CL_SUCCESS ? clCreateBuffer(d->context, CL_MEM_WRITE_ONLY, sizeof c, NULL, &err) : NULL;
  if (err != CL_SUCCESS) {
    st = cls_fail(e, CLS_ERR_OPENCL, DEVICE_FMT ": self-test: clCreateBuffer failed: %s", DEVICE_ARGS(d),
                  cls_cl_error_name(err));
    goto done;
  }
  CLBlastStatusCode bs = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, M, N, K, 1.0f, ba, 0,
                                      K, bb, 0, N, 0.0f, bc, 0, N, &d->queue, NULL);
  if (bs != CLBlastSuccess) {
    st = cls_fail(e, CLS_ERR_BLAS, DEVICE_FMT ": self-test: CLBlastSgemm failed with status %d", DEVICE_ARGS(d), (int)bs);
    goto done;
  }
  err = clEnqueueReadBuffer(d->queue, bc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    st = cls_fail(e, CLS_ERR_OPENCL, DEVICE_FMT ": self-test: reading the SGEMM result failed: %s", DEVICE_ARGS(d),
                  cls_cl_error_name(err));
    goto done;
  }
  for (int i = 0; i < M && st == CLS_OK; i++)
    for (int j = 0; j < N; j++) {
      double expect = 0.0, scale = 0.0;
      for (int k = 0; k < K; k++) {
        expect += (double)a[i * K + k] * b[k * N + j];
        scale += fabs((double)a[i * K + k] * b[k * N + j]);
      }
      /* Any float32 summation order of K products is within K·u·Σ|a·b| (u = 2^-24) of the exact
         value (the standard dot-product bound); a wrong kernel is off by far more. */
      if (fabs(c[i * N + j] - expect) > K * 0x1p-24 * scale + 1e-7) {
        st = cls_fail(e, CLS_ERR_SELFTEST, DEVICE_FMT ": self-test: CLBlast SGEMM C[%d][%d] = %.9g, expected %.9g",
                      DEVICE_ARGS(d), i, j, c[i * N + j], expect);
        break;
      }
    }
done:
  if (ba) clReleaseMemObject(ba);
  if (bb) clReleaseMemObject(bb);
  if (bc) clReleaseMemObject(bc);
  return st;
}

cls_status cls_engine_selftest(cls_engine *e, int index) {
  if (!e || index < 0 || index >= e->n_devices) return CLS_ERR_INVALID_ARGUMENT;
  cls_status st = cls_engine_build_device(e, index, NULL, 0, NULL);
  if (st != CLS_OK) return st;
  cls_device *d = &e->devices[index];
  st = check_axpy_sum(e, d);
  if (st == CLS_OK) st = check_sgemm(e, d);
  return st;
}
