/* The reduction of the towers' gradients into one host buffer, g = sum_i w_i * g_i (w_i = n_i/N:
 * each tower's gradient is of its own mean loss), and the split of a global batch between towers
 * (equal counts, as DeepSpeech, or by measured speed and padded work).
 * Both are plain host arithmetic, deterministic (a fixed summation order), and unit-tested. */
#ifndef CLS_GRAD_REDUCE_H
#define CLS_GRAD_REDUCE_H

#include <stddef.h>

/* out[off .. off+count) = sum over k of w[k] * src[k][off ..], summed in k order (vectorised). */
void cls_grad_reduce(float *out, const float *const *src, const float *w, int n_src, size_t off, size_t count);

/* Splits n utterances between k towers: equal shares (speed NULL), else shares in proportion to
 * speed[k] (largest remainder), each tower at least one utterance while n >= k. shares[k] out. */
void cls_batch_split(int n, int k, const double *speed, int *shares);

/* Splits utterances with frames[n] into k contiguous ranges, in order, so that the slowest tower's
 * padded work (utterances x frames of its longest, over its speed[k]) is as small as it can be;
 * each tower gets at least one utterance while n >= k. shares[k] out. */
void cls_batch_split_work(const int *frames, int n, int k, const double *speed, int *shares);
/* The slowest tower's time for a split: max over towers of utterances x frames of the longest / speed. */
double cls_batch_split_time(const int *frames, int k, const double *speed, const int *shares);

#endif
