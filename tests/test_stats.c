/* The statistics op (engine/ops/stats.c, kernels/summary.cl) on every device against a host
 * computation in double written here (two-pass mean and standard deviation; TF's upper_bound over the
 * default limits for the buckets): bucket counts and min/max exactly, mean and standard deviation
 * within 1e-5 of the tensor's spread (the kernel adds floats; the bound is far above their rounding and
 * far below any real error). Tensors at offsets in one flat buffer as the parameters are: sizes from 1
 * to past the kernel's 64 work-groups, a bias-like constant far from 0, values on and beside TF's
 * bucket limits, huge and negative values, +-inf and NaN in the end buckets; a slot used twice keeps
 * only its last tensor; bad slots and sizes are refused. Also the host statistics (the async
 * strategy's) against the same reference. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "ops/stats.h"
#include "ops_test.h"

typedef struct ref_stats {
  double mean, stddev, min, max;
  uint32_t buckets[CLS_HISTO_BUCKETS];
} ref_stats;

static void reference(const float *x, size_t n, ref_stats *r) {
  const double *l = cls_histo_limits();
  double sum = 0;
  r->min = INFINITY;
  r->max = -INFINITY;
  memset(r->buckets, 0, sizeof r->buckets);
  for (size_t i = 0; i < n; i++) {
    double v = x[i];
    sum += v;
    if (v < r->min) r->min = v;
    if (v > r->max) r->max = v;
    int lo = 0, hi = CLS_HISTO_BUCKETS; /* std::upper_bound */
    while (lo < hi) {
      int m = lo + (hi - lo) / 2;
      if (v < l[m]) hi = m;
      else lo = m + 1;
    }
    r->buckets[lo < CLS_HISTO_BUCKETS ? lo : CLS_HISTO_BUCKETS - 1]++;
  }
  r->mean = sum / (double)n;
  double ss = 0;
  for (size_t i = 0; i < n; i++) ss += ((double)x[i] - r->mean) * ((double)x[i] - r->mean);
  r->stddev = sqrt(ss / (double)n);
}

/* Compares statistics with the reference; `finite` 0 skips the moments (inf/NaN make them so). */
static void compare(const char *what, const cls_tensor_stats *s, const float *x, size_t n, int finite) {
  ref_stats r;
  reference(x, n, &r);
  CHECK_INT(s->n, n);
  int differ = 0, first = -1;
  for (int b = 0; b < CLS_HISTO_BUCKETS; b++)
    if (s->buckets[b] != r.buckets[b]) {
      differ++;
      if (first < 0) first = b;
    }
  CHECK(differ == 0, "%s: %d buckets differ, the first %d: %u against %u", what, differ, first,
        first >= 0 ? s->buckets[first] : 0, first >= 0 ? r.buckets[first] : 0);
  if (!finite) return;
  double spread = 0;
  for (size_t i = 0; i < n; i++) spread = fmax(spread, fabs((double)x[i] - r.mean));
  double tol = 1e-5 * spread + 1e-30;
  CHECK(s->min == r.min && s->max == r.max, "%s: min %.9g max %.9g, expected %.9g %.9g", what, s->min, s->max, r.min,
        r.max);
  double mean = cls_tensor_stats_mean(s), sd = cls_tensor_stats_stddev(s);
  CHECK(fabs(mean - r.mean) <= tol, "%s: mean %.12g, expected %.12g (tolerance %.3g)", what, mean, r.mean, tol);
  CHECK(fabs(sd - r.stddev) <= tol, "%s: stddev %.12g, expected %.12g (tolerance %.3g)", what, sd, r.stddev, tol);
  printf("  %-34s n=%-7zu mean %+.6e (|diff| %.2e)  stddev %.6e (|diff| %.2e)\n", what, n, mean,
         fabs(mean - r.mean), sd, fabs(sd - r.stddev));
}

static uint32_t rng = 2024;
static double uniform(void) {
  rng = rng * 1664525u + 1013904223u;
  return (double)(rng >> 8) / 16777216.0;
}

enum { N_CASES = 7 };

int main(void) {
  /* The cases, one after the other in one flat buffer. */
  static const size_t sizes[N_CASES] = {1, 29, 1000, 262144, 2613, 4000, 9};
  static const char *names[N_CASES] = {"one value",        "29 normal",           "1000 weights",
                                       "262144 (64 groups)", "limits and neighbours", "constant bias 1000.37",
                                       "inf, NaN, huge"};
  size_t offsets[N_CASES], total = 0;
  for (int c = 0; c < N_CASES; c++) {
    offsets[c] = total;
    total += sizes[c];
  }
  float *x = malloc(total * sizeof *x);
  const double *l = cls_histo_limits();
  for (int c = 0; c < N_CASES; c++) {
    float *t = x + offsets[c];
    for (size_t i = 0; i < sizes[c]; i++) {
      switch (c) {
        case 4: { /* each limit in [-1e6, 1e6] (1e-12 * 1.1^435 is about 1e6) with its float neighbours */
          int k = (CLS_HISTO_BUCKETS - 1) / 2 - 435 + (int)(i / 3);
          float f = (float)l[k];
          t[i] = i % 3 == 0 ? nextafterf(f, -INFINITY) : i % 3 == 1 ? f : nextafterf(f, INFINITY);
          break;
        }
        case 5: t[i] = 1000.37f + (float)(uniform() - 0.5) * 1e-3f; break;
        default: t[i] = (float)((uniform() - 0.5) * (c == 3 ? 0.2 : 2.0) * exp(-3.0 * uniform())); break;
      }
    }
  }
  float *special = x + offsets[6];
  const float specials[9] = {INFINITY, -INFINITY, NAN, 3e38f, -3e38f, 0.0f, -0.0f, 1e-13f, -1e-13f};
  memcpy(special, specials, sizeof specials);

  cls_tensor_stats *got = malloc(N_CASES * sizeof *got);
  /* The host statistics (async's) first. */
  for (int c = 0; c < N_CASES; c++) {
    cls_tensor_stats_host(x + offsets[c], sizes[c], &got[c]);
    char what[96];
    snprintf(what, sizeof what, "host: %s", names[c]);
    compare(what, &got[c], x + offsets[c], sizes[c], c != 6);
  }
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_stats");
  for (int di = 0; di < env.n_devices; di++) {
    int dev = env.devices[di];
    printf("device %s\n", tst_device_name(&env, dev));
    cls_stats_plan *p = NULL;
    cls_status st = cls_stats_create(env.engine, dev, N_CASES, &p);
    CHECK(st == CLS_OK, "create: %s", cls_engine_error(env.engine));
    if (!p) continue;
    cl_mem buf = tst_buffer(&env, dev, x, total * sizeof *x);
    cl_command_queue q = tst_queue(&env, dev);
    /* Slot 0 first takes another tensor, which the second use must replace entirely. */
    CHECK_INT(cls_stats_enqueue(p, q, 0, cls_buf_at(buf, offsets[3]), sizes[3]), CLS_OK);
    for (int c = 0; c < N_CASES; c++)
      CHECK_INT(cls_stats_enqueue(p, q, c, cls_buf_at(buf, offsets[c]), sizes[c]), CLS_OK);
    memset(got, 0xff, N_CASES * sizeof *got);
    CHECK_INT(cls_stats_read(p, q, N_CASES, got), CLS_OK);
    for (int c = 0; c < N_CASES; c++) compare(names[c], &got[c], x + offsets[c], sizes[c], c != 6);
    /* The special values: inf and NaN in the last bucket, -inf alone in the first. */
    CHECK_INT(got[6].buckets[CLS_HISTO_BUCKETS - 1], 3); /* +inf, NaN and 3e38 (past the last grown limit) */
    CHECK_INT(got[6].buckets[0], 1);
    CHECK(got[6].min == -INFINITY && got[6].max == INFINITY, "min %g max %g", got[6].min, got[6].max);
    /* Bad arguments. */
    CHECK_INT(cls_stats_enqueue(p, q, N_CASES, cls_buf_of(buf), 4), CLS_ERR_INVALID_ARGUMENT);
    CHECK_INT(cls_stats_enqueue(p, q, -1, cls_buf_of(buf), 4), CLS_ERR_INVALID_ARGUMENT);
    CHECK_INT(cls_stats_enqueue(p, q, 0, cls_buf_of(buf), 0), CLS_ERR_INVALID_ARGUMENT);
    CHECK_INT(cls_stats_read(p, q, N_CASES + 1, got), CLS_ERR_INVALID_ARGUMENT);
    clReleaseMemObject(buf);
    cls_stats_destroy(p);
  }
  cls_stats_plan *p = NULL;
  CHECK_INT(cls_stats_create(env.engine, env.devices[0], 0, &p), CLS_ERR_INVALID_ARGUMENT);
  tst_close_env(&env);
  free(got);
  free(x);
  return check_finish("test_stats");
}
