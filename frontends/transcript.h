/* One utterance's transcript from its logits, as the commands decode it: DeepSpeech's CTC prefix
 * beam search (--beam_width, --cutoff_prob, --cutoff_top_n, and the language model of --scorer_path
 * weighted by --lm_alpha and --lm_beta), or greedy decoding with --beam_width 1, then the alphabet's
 * labels as UTF-8 text (cls_ctc_decoder_transcript). */
#ifndef CLS_TRANSCRIPT_H
#define CLS_TRANSCRIPT_H

#include "clspeech/data.h"
#include "clspeech/decode.h"
#include "clspeech/lm.h"
#include "train_flags.h"

/* --scorer_path loaded into flags->scorer for this alphabet (nothing when it is ""), with a line on
 * stderr saying what was loaded and which words the alphabet cannot spell; 0, or CLI_EXIT_FAILURE
 * after printing why. The caller frees it with transcript_scorer_free. */
int transcript_scorer_load(train_flags *flags, const cls_alphabet *alphabet, const char *command);
void transcript_scorer_free(train_flags *flags);
/* The same over a binary language model's `size` bytes (a model package's scorer; `name` stands for
 * it in messages): the model parsed into *lm, which the caller frees with cls_lm_destroy after
 * transcript_scorer_free. */
int transcript_scorer_from_binary(train_flags *flags, const cls_alphabet *alphabet, const void *bytes, size_t size,
                                  const char *name, const char *command, cls_lm **lm);

/* The beam search's options from the flags (the scorer included once loaded); a beam_width <= 1 means greedy decoding (as
 * cls_eval_request.beam takes it). */
cls_beam_options transcript_beam_options(const train_flags *flags);

/* A decoder fed a chunk of frames at a time (cls_ctc_decoder_feed) and finished by the engine's
 * cls_ctc_decoder_transcript, which writes the text into a malloc'd string (the caller frees it). */
cls_status transcript_begin(const train_flags *flags, int n_classes, cls_ctc_decoder **out);

#endif
