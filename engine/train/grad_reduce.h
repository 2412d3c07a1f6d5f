/* The reduction of the towers' gradients into one host buffer, g = sum_i w_i * g_i (w_i = n_i/N:
 * each tower's gradient is of its own mean loss), and the split of a global batch between towers
 * (equal counts, as DeepSpeech, or adjusted step by step until the towers finish together).
 * Both are plain host arithmetic, deterministic (a fixed summation order), and unit-tested. */
#ifndef CLS_GRAD_REDUCE_H
#define CLS_GRAD_REDUCE_H

#include <stddef.h>

/* out[off .. off+count) = sum over k of w[k] * src[k][off ..], summed in k order (vectorised). */
void cls_grad_reduce(float *out, const float *const *src, const float *w, int n_src, size_t off, size_t count);

/* Splits n utterances between k towers in equal shares (DeepSpeech's split; the first n % k towers
 * get one more). shares[k] out. */
void cls_batch_split(int n, int k, int *shares);

/* --balance auto's feedback step: given each tower's time ms[k] for its shares[k] in the last step,
 * moves one utterance from the tower that took longest to the one that took shortest when the
 * latter, one utterance heavier, would still finish first (each keeps at least one). Over steps the
 * towers' finish times meet, whatever each device's cost per utterance and fixed cost per step.
 * Returns 1 when it moved one. */
int cls_balance_adjust(int k, const double *ms, int *shares);

/* A tower whose measured speed earns it less than this many utterances of the batch (its speed's part
 * of the towers' summed speed, times the batch) takes none: one utterance would make every step wait for
 * it. Half an utterance: the share it would round to is zero. */
#define CLS_BALANCE_IDLE_BELOW 0.5
/* ... by the warm-up's probe alone (the first step), a stricter bound: the probe's two tiny frames time
 * fixed costs mostly, and measured two identical CPU sub-devices 10x apart (0.35 utterances of 4 earned),
 * a simulator 1000x to 7000x (0.0008 of 6 on a quiet machine). */
#define CLS_BALANCE_PROBE_IDLE_BELOW 0.05

/* --balance auto's idling: each tower with a share and a measured speed[k] (utterance-frames/s; 0: not
 * measured) that earns less than `below` utterances of `batch` hands its shares to the fastest tower
 * and takes none. The fastest is never idled; *fastest (may be NULL) receives it, the tower given their
 * shares (-1 when none has a share and a speed). Returns how many were idled. */
int cls_balance_idle(int k, const double *speed, int batch, double below, int *shares, int *fastest);

#endif
