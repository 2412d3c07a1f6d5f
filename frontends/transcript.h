/* One utterance's transcript from its logits, as the commands decode it: DeepSpeech's CTC prefix
 * beam search (--beam_width, --cutoff_prob, --cutoff_top_n; no language model), or greedy decoding
 * with --beam_width 1, then the alphabet's labels as UTF-8 text. */
#ifndef CLS_TRANSCRIPT_H
#define CLS_TRANSCRIPT_H

#include <stddef.h>

#include "clspeech/data.h"
#include "clspeech/decode.h"
#include "train_flags.h"

/* logits: frames x C at the given stride (a time-major batch: logits + b*C, stride B*C). */
cls_status transcript_decode(const cls_alphabet *alphabet, const train_flags *flags, const float *logits, int frames,
                             int n_classes, size_t stride, char *out, size_t cap);

/* The same decoder fed a chunk of frames at a time (cls_ctc_decoder_feed) and finished by
 * transcript_finish, which writes the text into a malloc'd *text (the caller frees it). */
cls_status transcript_begin(const train_flags *flags, int n_classes, cls_ctc_decoder **out);
cls_status transcript_finish(cls_ctc_decoder *decoder, const cls_alphabet *alphabet, char **text);

#endif
