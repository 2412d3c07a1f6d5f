/* Log-space helpers the host CTC loss (engine/ops/ctc_host.c) and the CTC decoders (engine/decode)
 * share: the sum of two probabilities given as logarithms, and a frame's log-softmax normalizer with
 * the refusal of frames no distribution can come from. Pure C, double precision. */
#ifndef CLS_BASE_LOG_MATH_H
#define CLS_BASE_LOG_MATH_H

#include <math.h>

/* ln(e^a + e^b), exact at -inf (either or both). */
static inline double cls_log_add(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* ln(sum_k e^row[k]) over C classes into *norm (so that row[k] - *norm is the log-softmax); 0, or -1
 * when a value is NaN or +inf or every value is -inf. */
static inline int cls_log_softmax_norm(const float *row, int C, double *norm) {
  double m = -INFINITY, sum = 0.0;
  for (int k = 0; k < C; k++) {
    if (isnan(row[k]) || row[k] == INFINITY) return -1;
    if (row[k] > m) m = row[k];
  }
  if (m == -INFINITY) return -1;
  for (int k = 0; k < C; k++) sum += exp((double)row[k] - m);
  *norm = m + log(sum);
  return 0;
}

#endif
