/* The tests' reference CTC arithmetic in double, written out plainly: log-sum-exp of two values, the
 * log-softmax of a row, and ln P(labels | logits) by the CTC forward recursion (test_decode.c,
 * test_scorer.c). */
#ifndef CLS_TEST_CTC_REFERENCE_H
#define CLS_TEST_CTC_REFERENCE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline double lse2(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  double m = fmax(a, b);
  return m + log(exp(a - m) + exp(b - m));
}

/* log-softmax of one row, in double */
static inline void log_softmax(const float *row, int C, double *out) {
  double m = -INFINITY, s = 0.0;
  for (int k = 0; k < C; k++) m = fmax(m, row[k]);
  for (int k = 0; k < C; k++) s += exp(row[k] - m);
  for (int k = 0; k < C; k++) out[k] = row[k] - m - log(s);
}

/* ln P(labels | logits) summed over every alignment: the CTC forward recursion in double. */
static inline double ctc_log_prob(const float *logits, int T, int C, size_t stride, const int32_t *labels, int L) {
  if (T == 0) return L == 0 ? 0.0 : -INFINITY;
  int S = 2 * L + 1; /* blank, label 0, blank, ..., label L-1, blank */
  double *a = malloc((size_t)S * sizeof *a), *nx = malloc((size_t)S * sizeof *nx), *l = malloc((size_t)C * sizeof *l);
  for (int t = 0; t < T; t++) {
    log_softmax(logits + (size_t)t * stride, C, l);
    for (int s = 0; s < S; s++) {
      double v;
      if (t == 0) {
        v = s < 2 ? 0.0 : -INFINITY;
      } else {
        v = a[s];
        if (s >= 1) v = lse2(v, a[s - 1]);
        if (s >= 2 && s % 2 && labels[s / 2] != labels[s / 2 - 1]) v = lse2(v, a[s - 2]);
      }
      nx[s] = v + l[s % 2 ? labels[s / 2] : C - 1];
    }
    memcpy(a, nx, (size_t)S * sizeof *a);
  }
  double r = S >= 2 ? lse2(a[S - 1], a[S - 2]) : a[S - 1];
  free(a);
  free(nx);
  free(l);
  return r;
}

#endif
