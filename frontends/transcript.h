/* One utterance's transcript from its logits, as the commands decode it: DeepSpeech's CTC prefix
 * beam search (--beam_width, --cutoff_prob, --cutoff_top_n; no language model), or greedy decoding
 * with --beam_width 1, then the alphabet's labels as UTF-8 text (cls_ctc_decoder_transcript). */
#ifndef CLS_TRANSCRIPT_H
#define CLS_TRANSCRIPT_H

#include "clspeech/data.h"
#include "clspeech/decode.h"
#include "train_flags.h"

/* The beam search's options from the flags; a beam_width <= 1 means greedy decoding (as
 * cls_eval_request.beam takes it). */
cls_beam_options transcript_beam_options(const train_flags *flags);

/* A decoder fed a chunk of frames at a time (cls_ctc_decoder_feed) and finished by the engine's
 * cls_ctc_decoder_transcript, which writes the text into a malloc'd string (the caller frees it). */
cls_status transcript_begin(const train_flags *flags, int n_classes, cls_ctc_decoder **out);

#endif
