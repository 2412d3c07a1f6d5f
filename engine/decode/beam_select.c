/* The beam search's ranking (beam_select.h): ds_ctcdecoder's prefix order and the selection of the
 * beam_width best of a frame's extensions. */
#include "decode/beam_select.h"

#include <stdlib.h>

/* The order of ds_ctcdecoder's prefix_compare (higher score, then the smaller last label), made total
 * by the node index. */
static int ranked_before(const ranked *a, const ranked *b) {
  if (a->score != b->score) return a->score > b->score;
  if (a->label != b->label) return a->label < b->label;
  return a->index < b->index;
}

int ranked_cmp(const void *pa, const void *pb) {
  const ranked *a = pa, *b = pb;
  return ranked_before(a, b) ? -1 : (ranked_before(b, a) ? 1 : 0);
}

static void ranked_swap(ranked *a, ranked *b) {
  ranked t = *a;
  *a = *b;
  *b = t;
}

static int double_desc(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a < b) - (a > b);
}

/* Moves the k best of v[0..n) (in no particular order) to v[0..k). Scores are finite. When k is a
 * small part of n (a full beam: about W*C candidates for W places), a threshold from a sample first
 * moves to the front the items that can be among the k best (at least k of them score >= tau, so an
 * item below tau cannot); then a quickselect with a median-of-three pivot, switching to a full sort of
 * the remaining range if it recurses too deep. */
void select_best(ranked *v, int n, int k) {
  enum { SAMPLE = 256 };
  if (n >= 4 * SAMPLE && n > 8 * k) {
    double sample[SAMPLE];
    for (int i = 0; i < SAMPLE; i++) sample[i] = v[(size_t)i * (size_t)n / SAMPLE].score;
    qsort(sample, SAMPLE, sizeof *sample, double_desc);
    int j = (int)(2.0 * k * SAMPLE / n) + 4; /* about twice the expected rank of the k-th best */
    if (j < SAMPLE) {
      double tau = sample[j];
      int m = 0;
      for (int i = 0; i < n; i++)
        if (v[i].score >= tau) ranked_swap(&v[i], &v[m++]);
      if (m >= k) n = m;
    }
  }
  int lo = 0, hi = n - 1, budget = 64;
  while (hi > lo) {
    if (--budget == 0) {
      qsort(v + lo, (size_t)(hi - lo + 1), sizeof *v, ranked_cmp);
      return;
    }
    int mid = lo + (hi - lo) / 2;
    if (ranked_before(&v[mid], &v[lo])) ranked_swap(&v[mid], &v[lo]);
    if (ranked_before(&v[hi], &v[lo])) ranked_swap(&v[hi], &v[lo]);
    if (ranked_before(&v[hi], &v[mid])) ranked_swap(&v[hi], &v[mid]);
    ranked pivot = v[mid];
    int store = lo;
    for (int i = lo; i <= hi; i++)
      if (ranked_before(&v[i], &pivot)) ranked_swap(&v[i], &v[store++]);
    /* v[lo..store) are better than the pivot (keys are distinct); the pivot goes right after them. */
    for (int i = store; i <= hi; i++)
      if (v[i].index == pivot.index) {
        ranked_swap(&v[i], &v[store]);
        break;
      }
    if (store == k - 1 || store == k) return;
    if (store < k) lo = store + 1;
    else hi = store - 1;
  }
}
