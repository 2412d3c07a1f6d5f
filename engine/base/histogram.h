/* TensorFlow's histogram and a tensor's summary statistics (what `tf.summary.histogram` and
 * DeepSpeech's log_variable record): the default bucket limits, the bucket a value falls in (TF's
 * upper_bound rule), the statistics record that the device's reduction (ops/stats.h) and the host
 * computation below both fill, and the mean, standard deviation, sum and sum of squares derived from
 * it. Plain host arithmetic; no OpenCL. */
#ifndef CLS_HISTOGRAM_H
#define CLS_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "histogram_buckets.h"

/* TF's default limits, ascending: -DBL_MAX, -1e20-ish ... -1e-12, 0, 1e-12 ... 1e20-ish, DBL_MAX
 * (v = 1e-12; while (v < 1e20) { v *= 1.1 }, in double, as TF builds them). [CLS_HISTO_BUCKETS] */
const double *cls_histo_limits(void);

/* The limits as floats for a float comparison that decides exactly as TF's double one: each limit L
 * rounded up to the smallest float >= L (so that for a float v, v < L exactly when v < that float);
 * DBL_MAX becomes +inf, -DBL_MAX becomes -FLT_MAX. [CLS_HISTO_BUCKETS] */
const float *cls_histo_limits_float(void);

/* TF's Histogram::Add bucket: the index of the first limit greater than v (upper_bound). A value
 * at or past DBL_MAX (+inf) and NaN go to the last bucket (TF's index would run off the end). */
int cls_histo_bucket(double v);

/* The statistics of one tensor. Sums are kept about a shift c (the tensor's first value), so that
 * the variance of values far from 0 but close together (a bias) does not cancel away:
 * s1 = sum(v - c), s2 = sum((v - c)^2). */
typedef struct cls_tensor_stats {
  int64_t n;                          /* values */
  double shift;                       /* c */
  double s1, s2;
  double min, max;
  uint32_t buckets[CLS_HISTO_BUCKETS]; /* values per TF default bucket */
} cls_tensor_stats;

/* The statistics of x[0 .. n) (n >= 1) computed on the host in double: the reference the device's
 * reduction is tested against, and the async strategy's (whose tensors live on the host). */
void cls_tensor_stats_host(const float *x, size_t n, cls_tensor_stats *out);

double cls_tensor_stats_mean(const cls_tensor_stats *s);
/* sqrt(mean((v - mean)^2)): what DeepSpeech's log_variable computes (and misnames "sttdev"). */
double cls_tensor_stats_stddev(const cls_tensor_stats *s);
double cls_tensor_stats_sum(const cls_tensor_stats *s);
double cls_tensor_stats_sum_squares(const cls_tensor_stats *s);

#endif
