/* Gradient reduction and batch split (see grad_reduce.h). */
#include "grad_reduce.h"

#include <math.h>
#include <stdlib.h>

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

void cls_batch_split(int n, int k, const double *speed, int *shares) {
  if (k <= 0) return;
  double total = 0;
  for (int i = 0; i < k; i++) total += speed && speed[i] > 0 && isfinite(speed[i]) ? speed[i] : 0;
  int given = 0;
  double *rest = malloc((size_t)k * sizeof *rest);
  for (int i = 0; i < k; i++) {
    double want = !speed || total <= 0 ? (double)n / k : n * (speed[i] > 0 && isfinite(speed[i]) ? speed[i] : 0) / total;
    shares[i] = (int)floor(want);
    if (rest) rest[i] = want - shares[i];
    given += shares[i];
  }
  /* Largest remainders first (ties to the lower index): fewer than k utterances are left over. */
  while (given < n) {
    int best = 0;
    for (int i = 1; i < k; i++)
      if (rest && rest[i] > rest[best]) best = i;
    shares[best]++;
    if (rest) rest[best] = -1.0;
    given++;
  }
  /* Everyone gets at least one utterance while there are enough: take from the largest share. */
  if (n >= k)
    for (int i = 0; i < k; i++)
      while (shares[i] < 1) {
        int big = 0;
        for (int j = 1; j < k; j++)
          if (shares[j] > shares[big]) big = j;
        shares[big]--;
        shares[i]++;
      }
  free(rest);
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
