/* TensorFlow's default histogram buckets and the host computation of a tensor's statistics (see
 * histogram.h). */
#include "base/histogram.h"

#include <float.h>
#include <math.h>
#include <pthread.h>

static double limits[CLS_HISTO_BUCKETS];
static float limits_float[CLS_HISTO_BUCKETS];
static pthread_once_t limits_once = PTHREAD_ONCE_INIT;

/* TF's InitDefaultBucketsInner: the positive limits grow by 10% from 1e-12 while below 1e20, then
   DBL_MAX; the negative ones mirror them; 0 in the middle. */
static void make_limits(void) {
  enum { SIDE = (CLS_HISTO_BUCKETS - 1) / 2 }; /* 775: 774 grown limits and DBL_MAX */
  double v = 1.0e-12;
  int k = 0;
  while (v < 1.0e20 && k < SIDE - 1) {
    limits[SIDE + 1 + k] = v;
    limits[SIDE - 1 - k] = -v;
    v *= 1.1;
    k++;
  }
  limits[CLS_HISTO_BUCKETS - 1] = DBL_MAX;
  limits[0] = -DBL_MAX;
  limits[SIDE] = 0.0;
  for (int i = 0; i < CLS_HISTO_BUCKETS; i++) {
    float f = (float)limits[i]; /* round to nearest; +-inf past FLT_MAX */
    if ((double)f < limits[i]) f = nextafterf(f, INFINITY);
    limits_float[i] = f;
  }
}

const double *cls_histo_limits(void) {
  pthread_once(&limits_once, make_limits);
  return limits;
}

const float *cls_histo_limits_float(void) {
  pthread_once(&limits_once, make_limits);
  return limits_float;
}

int cls_histo_bucket(double v) {
  const double *l = cls_histo_limits();
  int lo = 0, hi = CLS_HISTO_BUCKETS;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (l[mid] > v)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo < CLS_HISTO_BUCKETS ? lo : CLS_HISTO_BUCKETS - 1;
}

void cls_tensor_stats_host(const float *x, size_t n, cls_tensor_stats *s) {
  for (int b = 0; b < CLS_HISTO_BUCKETS; b++) s->buckets[b] = 0;
  s->n = (int64_t)n;
  s->shift = n ? (double)x[0] : 0.0;
  s->s1 = s->s2 = 0;
  s->min = INFINITY;
  s->max = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    double v = (double)x[i], d = v - s->shift;
    s->s1 += d;
    s->s2 += d * d;
    if (v < s->min) s->min = v;
    if (v > s->max) s->max = v;
    s->buckets[cls_histo_bucket(v)]++;
  }
}

double cls_tensor_stats_mean(const cls_tensor_stats *s) { return s->n ? s->shift + s->s1 / (double)s->n : 0.0; }

double cls_tensor_stats_stddev(const cls_tensor_stats *s) {
  if (!s->n) return 0.0;
  double m = s->s1 / (double)s->n, var = s->s2 / (double)s->n - m * m;
  return var > 0 ? sqrt(var) : 0.0;
}

double cls_tensor_stats_sum(const cls_tensor_stats *s) { return s->s1 + (double)s->n * s->shift; }

double cls_tensor_stats_sum_squares(const cls_tensor_stats *s) {
  return s->s2 + 2.0 * s->shift * s->s1 + (double)s->n * s->shift * s->shift;
}
