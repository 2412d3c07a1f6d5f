/* One utterance's transcript from its logits, as the commands decode it: DeepSpeech's CTC prefix
 * beam search (--beam_width, --cutoff_prob, --cutoff_top_n; no language model), or greedy decoding
 * with --beam_width 1, then the alphabet's labels as UTF-8 text. */
#ifndef CLS_TRANSCRIPT_H
#define CLS_TRANSCRIPT_H

#include <stddef.h>

#include "clspeech/data.h"
#include "train_flags.h"

/* logits: frames x C at the given stride (a time-major batch: logits + b*C, stride B*C). */
cls_status transcript_decode(const cls_alphabet *alphabet, const train_flags *flags, const float *logits, int frames,
                             int n_classes, size_t stride, char *out, size_t cap);

#endif
