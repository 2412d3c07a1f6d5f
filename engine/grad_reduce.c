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

/* Greedy fill for a step time tau: each tower in turn takes utterances while its padded work over
 * its speed stays within tau (at least one while enough are left). 1 when all n are placed. */
static int fill(const int *frames, int n, int k, const double *speed, double tau, int *shares) {
  int pos = 0;
  for (int i = 0; i < k; i++) {
    int keep_back = n >= k ? k - i - 1 : 0, take = 0, longest = 0;
    while (pos + take < n - keep_back) {
      int f = frames[pos + take] > longest ? frames[pos + take] : longest;
      if ((double)(take + 1) * f / speed[i] > tau && take >= (n >= k ? 1 : 0)) break;
      longest = f;
      take++;
    }
    shares[i] = take;
    pos += take;
  }
  return pos == n;
}

void cls_batch_split_work(const int *frames, int n, int k, const double *speed, int *shares) {
  double slowest = INFINITY;
  int longest = 1;
  for (int i = 0; i < k; i++)
    if (!(speed[i] > 0) || !isfinite(speed[i])) {
      cls_batch_split(n, k, NULL, shares);
      return;
    } else if (speed[i] < slowest) {
      slowest = speed[i];
    }
  for (int i = 0; i < n; i++)
    if (frames[i] > longest) longest = frames[i];
  double lo = 0, hi = (double)n * longest / slowest;
  for (int it = 0; it < 60; it++) {
    double mid = 0.5 * (lo + hi);
    if (fill(frames, n, k, speed, mid, shares)) hi = mid;
    else lo = mid;
  }
  fill(frames, n, k, speed, hi, shares);
}

double cls_batch_split_time(const int *frames, int k, const double *speed, const int *shares) {
  double worst = 0;
  for (int i = 0, u = 0; i < k; i++) {
    int longest = 0;
    for (int j = 0; j < shares[i]; j++, u++) longest = frames[u] > longest ? frames[u] : longest;
    double t = shares[i] ? (double)shares[i] * longest / speed[i] : 0;
    worst = t > worst ? t : worst;
  }
  return worst;
}
