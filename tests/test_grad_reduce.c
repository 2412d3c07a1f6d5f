/* The host side of the hybrid step: the weighted reduction g = sum_i w_i g_i against a double
 * reference (the float sum in tower order, within 1 ulp of the exact sum per term), and the batch
 * splits: equal counts as DeepSpeech; by measured speed and padded work (utterances x frames of the
 * longest) for --balance auto, where the slowest tower's time must be within one utterance of the
 * best contiguous split found by trying them all. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "grad_reduce.h"

/* The best contiguous 2- or 3-way split by brute force: the smallest slowest-tower time. */
static double best_time(const int *f, int n, int k, const double *speed) {
  double best = INFINITY;
  for (int a = 1; a < n; a++)
    for (int b = k == 3 ? a + 1 : n; b <= n; b++) {
      int cuts[4] = {0, a, k == 3 ? b : n, n};
      if (k == 3 && b >= n) continue;
      double worst = 0;
      for (int i = 0; i < k; i++) {
        int longest = 0;
        for (int u = cuts[i]; u < cuts[i + 1]; u++) longest = f[u] > longest ? f[u] : longest;
        double t = (double)(cuts[i + 1] - cuts[i]) * longest / speed[i];
        worst = t > worst ? t : worst;
      }
      best = worst < best ? worst : best;
      if (k == 2) break;
    }
  return best;
}

static double split_time(const int *f, const int *shares, int k, const double *speed) {
  return cls_batch_split_time(f, k, speed, shares);
}

int main(void) {
  /* Reduction: three sources with weights 1/6, 2/6, 3/6. */
  enum { N = 10007 };
  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c), *out = malloc(N * sizeof *out);
  for (int i = 0; i < N; i++) {
    a[i] = sinf((float)i);
    b[i] = cosf(0.5f * (float)i);
    c[i] = (float)(i % 17) - 8.0f;
  }
  const float *src[3] = {a, b, c};
  const float w[3] = {1.0f / 6, 2.0f / 6, 3.0f / 6};
  cls_grad_reduce(out, src, w, 3, 0, N);
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double exact = (double)w[0] * a[i] + (double)w[1] * b[i] + (double)w[2] * c[i];
    double bound = 3 * 1.2e-7 * (fabs((double)w[0] * a[i]) + fabs((double)w[1] * b[i]) + fabs((double)w[2] * c[i]));
    double err = fabs(out[i] - exact) / (bound > 0 ? bound : 1);
    worst = err > worst ? err : worst;
  }
  printf("  reduction: worst error %.2f of a 3-ulp-per-term bound\n", worst);
  CHECK(worst <= 1.0, "reduction error %.3g of its bound", worst);
  /* A sub-range leaves the rest alone; one source with weight 1 copies exactly. */
  for (int i = 0; i < N; i++) out[i] = -1.0f;
  const float one = 1.0f;
  cls_grad_reduce(out, src, &one, 1, 100, 50);
  int exact_copy = 1;
  for (int i = 0; i < N; i++) exact_copy &= (i >= 100 && i < 150) ? out[i] == a[i] : out[i] == -1.0f;
  CHECK(exact_copy, "range [100, 150) copied exactly, the rest untouched");

  /* Equal split, DeepSpeech's: remainders go to the first towers. */
  int shares[3];
  cls_batch_split(8, 3, NULL, shares);
  CHECK(shares[0] == 3 && shares[1] == 3 && shares[2] == 2, "8 over 3: %d %d %d", shares[0], shares[1], shares[2]);
  cls_batch_split(2, 3, NULL, shares);
  CHECK(shares[0] + shares[1] + shares[2] == 2 && shares[2] == 0, "2 over 3 leaves one idle");
  const double twice[3] = {2.0, 1.0, 1.0};
  cls_batch_split(16, 3, twice, shares);
  CHECK(shares[0] == 8 && shares[1] == 4 && shares[2] == 4, "speed 2:1:1 -> %d %d %d", shares[0], shares[1], shares[2]);

  /* Work split: frames ascending as the loader sorts them. */
  int frames[16];
  for (int i = 0; i < 16; i++) frames[i] = 100 + 20 * i;
  const double speeds[4][3] = {{1, 1, 1}, {3, 1, 1}, {1, 3, 1}, {1, 1, 5}};
  for (int s = 0; s < 4; s++) {
    for (int k = 2; k <= 3; k++) {
      cls_batch_split_work(frames, 16, k, speeds[s], shares);
      int total = 0, each = 1;
      for (int i = 0; i < k; i++) {
        total += shares[i];
        each &= shares[i] >= 1;
      }
      double got = split_time(frames, shares, k, speeds[s]), best = best_time(frames, 16, k, speeds[s]);
      printf("  work split over %d towers, speeds %g:%g:%g (first %d used): %d %d %d, slowest %.0f, best %.0f\n", k,
             speeds[s][0], speeds[s][1], speeds[s][2], k, shares[0], shares[1], k == 3 ? shares[2] : 0, got, best);
      CHECK(total == 16 && each, "all 16 placed, each tower at least one");
      CHECK(got <= best * 1.0000001, "split time %.1f, best contiguous %.1f", got, best);
    }
  }
  /* Unmeasured speeds fall back to equal counts. */
  const double unknown[2] = {1.0, 0.0};
  cls_batch_split_work(frames, 16, 2, unknown, shares);
  CHECK(shares[0] == 8 && shares[1] == 8, "unmeasured: equal");
  free(a);
  free(b);
  free(c);
  free(out);
  return check_finish("test_grad_reduce");
}
