/* Transcripts from logits (see transcript.h). */
#include "transcript.h"

#include <stdlib.h>
#include <string.h>

cls_status transcript_begin(const train_flags *f, int n_classes, cls_ctc_decoder **out) {
  cls_beam_options bo = cls_beam_options_default();
  bo.beam_width = f->beam_width;
  bo.cutoff_prob = f->cutoff_prob;
  bo.cutoff_top_n = f->cutoff_top_n;
  return cls_ctc_decoder_begin(n_classes, f->beam_width <= 1, &bo, out);
}

/* The best result's labels as text into out[cap]. */
static cls_status best_text(cls_ctc_decoder *d, const cls_alphabet *alphabet, char **heap, char *out, size_t cap) {
  cls_beam_result best;
  int got = 0;
  cls_status st = cls_ctc_decoder_finish(d, &best, 1, &got);
  if (st == CLS_OK && heap) {
    cap = (size_t)(got > 0 ? best.length : 0) * 8 + 8; /* a label is one codepoint: at most 4 bytes */
    out = *heap = malloc(cap);
    if (!out) st = CLS_ERR_OUT_OF_MEMORY;
  }
  if (st == CLS_OK && cap) out[0] = '\0';
  if (st == CLS_OK && got > 0) st = cls_alphabet_decode(alphabet, best.labels, best.length, out, cap);
  cls_beam_results_free(&best, got);
  return st;
}

cls_status transcript_finish(cls_ctc_decoder *d, const cls_alphabet *alphabet, char **text) {
  *text = NULL;
  cls_status st = best_text(d, alphabet, text, NULL, 0);
  if (st != CLS_OK) {
    free(*text);
    *text = NULL;
  }
  return st;
}

cls_status transcript_decode(const cls_alphabet *alphabet, const train_flags *f, const float *logits, int frames,
                             int n_classes, size_t stride, char *out, size_t cap) {
  if (cap) out[0] = '\0';
  cls_ctc_decoder *d = NULL;
  cls_status st = transcript_begin(f, n_classes, &d);
  if (st == CLS_OK) st = cls_ctc_decoder_feed(d, logits, frames, stride);
  if (st == CLS_OK) st = best_text(d, alphabet, NULL, out, cap);
  cls_ctc_decoder_free(d);
  return st;
}
