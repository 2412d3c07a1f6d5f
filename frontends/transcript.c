/* Transcripts from logits (see transcript.h). */
#include "transcript.h"

#include "clspeech/evaluate.h"

cls_beam_options transcript_beam_options(const train_flags *f) {
  cls_beam_options bo = cls_beam_options_default();
  bo.beam_width = f->beam_width;
  bo.cutoff_prob = f->cutoff_prob;
  bo.cutoff_top_n = f->cutoff_top_n;
  return bo;
}

cls_status transcript_begin(const train_flags *f, int n_classes, cls_ctc_decoder **out) {
  const cls_beam_options bo = transcript_beam_options(f);
  return cls_ctc_decoder_begin(n_classes, f->beam_width <= 1, &bo, out);
}
