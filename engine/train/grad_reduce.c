/* Gradient reduction, the equal batch split and the balance feedback (see grad_reduce.h). */
#include "train/grad_reduce.h"

void cls_grad_reduce(float *restrict out, const float *const *src, const float *w, int n_src, size_t off,
                     size_t count) {
  enum { BLOCK = 4096 }; /* floats per pass, so that out stays in cache across the sources */
  for (size_t b = off; b < off + count; b += BLOCK) {
    size_t end = b + BLOCK < off + count ? b + BLOCK : off + count;
    const float *restrict s0 = src[0];
    const float w0 = w[0];
    for (size_t i = b; i < end; i++) out[i] = w0 * s0[i];
    for (int k = 1; k < n_src; k++) {
      const float *restrict s = src[k];
      const float wk = w[k];
      for (size_t i = b; i < end; i++) out[i] += wk * s[i];
    }
  }
}

void cls_batch_split(int n, int k, int *shares) {
  for (int i = 0; i < k; i++) shares[i] = n / k + (i < n % k);
}

int cls_balance_adjust(int k, const double *ms, int *shares) {
  int slow = -1, fast = -1;
  for (int i = 0; i < k; i++) {
    if (shares[i] <= 0 || !(ms[i] > 0)) continue;
    if (slow < 0 || ms[i] > ms[slow]) slow = i;
    if (fast < 0 || ms[i] < ms[fast]) fast = i;
  }
  /* Worth it when the fast tower, with one more utterance (its time per utterance so far, an
     overestimate when part of its time is fixed), still finishes before the slow one does now;
     the same test keeps a settled split from moving back. */
  if (slow < 0 || slow == fast || shares[slow] <= 1 || ms[fast] * (1.0 + 1.0 / shares[fast]) >= ms[slow]) return 0;
  shares[slow]--;
  shares[fast]++;
  return 1;
}

int cls_balance_idle(int k, const double *speed, int batch, double below, int *shares, int *fastest) {
  double total = 0;
  int fast = -1;
  for (int i = 0; i < k; i++) {
    if (!(speed[i] > 0)) continue;
    total += speed[i];
    if (shares[i] > 0 && (fast < 0 || speed[i] > speed[fast])) fast = i;
  }
  if (fastest) *fastest = fast;
  int idled = 0;
  for (int i = 0; fast >= 0 && i < k; i++) {
    if (i == fast || shares[i] <= 0 || !(speed[i] > 0) || (double)batch * speed[i] / total >= below)
      continue;
    shares[fast] += shares[i];
    shares[i] = 0;
    idled++;
  }
  return idled;
}
