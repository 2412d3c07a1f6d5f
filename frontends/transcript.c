/* Transcripts from logits (see transcript.h). */
#include "transcript.h"

#include <stdlib.h>
#include <string.h>

#include "clspeech/decode.h"

cls_status transcript_decode(const cls_alphabet *alphabet, const train_flags *f, const float *logits, int frames,
                             int n_classes, size_t stride, char *out, size_t cap) {
  if (cap) out[0] = '\0';
  if (f->beam_width <= 1) {
    int32_t *labels = malloc(((size_t)frames + 1) * sizeof *labels);
    int n = 0;
    cls_status st = labels ? cls_ctc_greedy_host(logits, frames, n_classes, stride, labels, &n) : CLS_ERR_OUT_OF_MEMORY;
    if (st == CLS_OK) st = cls_alphabet_decode(alphabet, labels, n, out, cap);
    free(labels);
    return st;
  }
  cls_beam_options bo = cls_beam_options_default();
  bo.beam_width = f->beam_width;
  bo.cutoff_prob = f->cutoff_prob;
  bo.cutoff_top_n = f->cutoff_top_n;
  cls_beam_result best;
  int got = 0;
  cls_status st = cls_ctc_beam_search(logits, frames, n_classes, stride, &bo, &best, 1, &got);
  if (st == CLS_OK && got > 0) st = cls_alphabet_decode(alphabet, best.labels, best.length, out, cap);
  cls_beam_results_free(&best, got);
  return st;
}
