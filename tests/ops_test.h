/* Helpers of the op tests: every device of the machine prepared as a test target, host<->device
 * copies, reference fixtures (safetensors files made by the scripts in tests/ref/), and comparisons that print
 * the largest error and the first differing values. Include after check.h. */
#ifndef CLS_OPS_TEST_H
#define CLS_OPS_TEST_H

#include <math.h>
#include <stdlib.h>

#include "base/safetensors.h"
#include "clspeech/internal/ops.h"
#include "clspeech/ops.h"

#ifndef CLS_FIXTURE_DIR
#error "CLS_FIXTURE_DIR must name tests/fixtures"
#endif

typedef struct tst_env {
  cls_engine *engine;
  int devices[64];
  int n_devices;
} tst_env;

/* Every device the machine has (CI: three PoCL devices), built; fails the test if there is none. */
static inline int tst_open(tst_env *env) {
  memset(env, 0, sizeof *env);
  cls_status st = cls_engine_create(NULL, &env->engine);
  CHECK(st == CLS_OK, "engine: %s", cls_engine_error(env->engine));
  if (st != CLS_OK) return 0;
  st = cls_engine_select(env->engine, "all", env->devices, 64, &env->n_devices);
  if (st == CLS_OK) st = cls_engine_prepare(env->engine, env->devices, &env->n_devices);
  CHECK(st == CLS_OK && env->n_devices > 0, "devices: %s", cls_engine_error(env->engine));
  return st == CLS_OK && env->n_devices > 0;
}

static inline void tst_close_env(tst_env *env) { cls_engine_destroy(env->engine); }

static inline const char *tst_device_name(tst_env *env, int dev) { return cls_engine_device(env->engine, dev)->name; }

static inline cl_command_queue tst_queue(tst_env *env, int dev) {
  cl_command_queue q = NULL;
  cls_engine_device_cl(env->engine, dev, NULL, NULL, &q);
  return q;
}

/* A device buffer of `bytes`, filled from `data` when given (else zeroed). */
static inline cl_mem tst_buffer(tst_env *env, int dev, const void *data, size_t bytes) {
  cl_context ctx = NULL;
  cl_command_queue q = NULL;
  cls_engine_device_cl(env->engine, dev, &ctx, NULL, &q);
  cl_int err = CL_SUCCESS;
  if (bytes == 0) bytes = 4;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer(%zu) failed: %d", bytes, err);
  if (err != CL_SUCCESS) return NULL;
  if (data) {
    err = clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, data, 0, NULL, NULL);
  } else {
    unsigned char zero = 0;
    err = clEnqueueFillBuffer(q, m, &zero, 1, 0, bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS) err = clFinish(q);
  }
  CHECK(err == CL_SUCCESS, "writing a test buffer failed: %d", err);
  return m;
}

static inline void tst_read(tst_env *env, int dev, cl_mem m, void *out, size_t bytes) {
  cl_int err = clEnqueueReadBuffer(tst_queue(env, dev), m, CL_TRUE, 0, bytes, out, 0, NULL, NULL);
  CHECK(err == CL_SUCCESS, "reading a test buffer failed: %d", err);
}

/* A fixture from tests/fixtures/NAME (aborts the test's checks if it is missing). */
static inline cls_safetensors *tst_fixture(const char *name) {
  char path[1024];
  cls_error err;
  snprintf(path, sizeof path, "%s/%s", CLS_FIXTURE_DIR, name);
  cls_safetensors *st = NULL;
  cls_status s = cls_safetensors_read(path, &st, &err);
  CHECK(s == CLS_OK, "fixture: %s", err.text);
  return st;
}

/* A tensor of a fixture, checked for dtype and element count (n < 0: any count). */
static inline const void *tst_tensor(const cls_safetensors *st, const char *name, cls_dtype dtype, int64_t n) {
  const cls_tensor_info *t = cls_safetensors_find(st, name);
  CHECK(t != NULL, "fixture lacks tensor %s", name);
  if (!t) return NULL;
  CHECK(t->dtype == dtype, "tensor %s has dtype %d, expected %d", name, (int)t->dtype, (int)dtype);
  if (n >= 0) CHECK(cls_tensor_elements(t) == n, "tensor %s has %lld elements, expected %lld", name,
                    (long long)cls_tensor_elements(t), (long long)n);
  return cls_safetensors_tensor_data(st, t);
}

static inline int tst_meta_int(const cls_safetensors *st, const char *key) {
  const char *v = cls_safetensors_meta(st, key);
  CHECK(v != NULL, "fixture lacks metadata %s", key);
  return v ? atoi(v) : 0;
}

/* |got - want| <= atol + rtol*|want| everywhere; prints the largest error and the first five
 * mismatches. Returns the largest absolute error (NaN/inf mismatches count as infinite). */
static inline double tst_compare(const char *what, const float *got, const float *want, size_t n, double rtol,
                                 double atol) {
  double max_err = 0.0, max_rel = 0.0;
  int shown = 0, bad = 0;
  for (size_t i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    double err = (isinf(w) && g == w) ? 0.0 : fabs(g - w);
    if (isnan(err)) err = INFINITY;
    if (err > max_err) max_err = err;
    if (fabs(w) > 0 && err / fabs(w) > max_rel) max_rel = err / fabs(w);
    if (!(err <= atol + rtol * fabs(w))) {
      bad++;
      if (shown++ < 5) fprintf(stderr, "    %s[%zu]: got %.9g, expected %.9g (|diff| %.3g)\n", what, i, g, w, err);
    }
  }
  CHECK(bad == 0, "%s: %d of %zu values outside rtol %.1e + atol %.1e (max |diff| %.3g)", what, bad, n, rtol, atol,
        max_err);
  printf("  %-40s n=%-8zu max|diff| %.3g  max rel %.3g\n", what, n, max_err, max_rel);
  return max_err;
}

/* |got - want| <= bound[i] everywhere (a per-element bound, e.g. a few ulp of the sum of the
 * magnitudes that a dot product adds up); prints the worst ratio and the first five mismatches. */
static inline void tst_compare_bound(const char *what, const float *got, const float *want, const double *bound,
                                     size_t n) {
  double worst = 0.0, max_err = 0.0;
  int shown = 0, bad = 0;
  for (size_t i = 0; i < n; i++) {
    double err = fabs((double)got[i] - want[i]);
    if (isnan(err)) err = INFINITY;
    if (err > max_err) max_err = err;
    double ratio = bound[i] > 0 ? err / bound[i] : (err > 0 ? INFINITY : 0);
    if (ratio > worst) worst = ratio;
    if (!(err <= bound[i])) {
      bad++;
      if (shown++ < 5)
        fprintf(stderr, "    %s[%zu]: got %.9g, expected %.9g (|diff| %.3g > bound %.3g)\n", what, i, got[i], want[i],
                err, bound[i]);
    }
  }
  CHECK(bad == 0, "%s: %d of %zu values outside their bounds (max |diff| %.3g)", what, bad, n, max_err);
  printf("  %-40s n=%-8zu max|diff| %.3g  worst %.2f of bound\n", what, n, max_err, worst);
}

#endif
