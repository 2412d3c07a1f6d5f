/* Ranking the beam search's entries (decode.c): the order of ds_ctcdecoder's prefix_compare made
 * total, and a selection of the k best of many (beam_select.c). */
#ifndef CLS_DECODE_BEAM_SELECT_H
#define CLS_DECODE_BEAM_SELECT_H

#include <stdint.h>

typedef struct ranked {
  double score;
  int32_t label;
  int32_t index;
} ranked;

/* qsort order: best first (higher score, then the smaller last label, then the smaller index). */
int ranked_cmp(const void *a, const void *b);

/* Moves the k best of v[0..n) (in no particular order) to v[0..k). Scores are finite. */
void select_best(ranked *v, int n, int k);

#endif
