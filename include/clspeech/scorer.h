/* clspeech public API, decode layer: the language-model scorer of the prefix beam search, as
 * DeepSpeech 0.9's Scorer: a word n-gram model (lm.h) joined to the label alphabet by a trie of the
 * model's vocabulary spelled in labels (DeepSpeech's dictionary FST), so that the beam search keeps
 * only spellings of vocabulary words and scores each word as it ends. Host-only: no OpenCL. A scorer
 * is read-only once made: several decoders on several threads may share it. */
#ifndef CLSPEECH_SCORER_H
#define CLSPEECH_SCORER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base.h"
#include "lm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DeepSpeech 0.9's defaults for the weights of the scorer's terms (--lm_alpha, --lm_beta). */
#define CLS_LM_ALPHA_DEFAULT 0.931289039105002
#define CLS_LM_BETA_DEFAULT 1.1834137581510284
/* ln P of a word the model does not know (DeepSpeech's OOV_SCORE), before lm_alpha. */
#define CLS_LM_OOV_SCORE (-1000.0)

typedef struct cls_scorer cls_scorer;

/* What making a scorer found in the model's vocabulary. */
typedef struct cls_scorer_info {
  int64_t words;          /* vocabulary words spelled in the trie (<s>, </s>, <unk> never are) */
  int64_t skipped;        /* words left out: a character outside the alphabet */
  char skipped_examples[128]; /* the first few of them, quoted and comma-separated ("" if none) */
  int64_t trie_nodes;     /* nodes of the vocabulary trie */
  size_t memory_bytes;    /* the trie's host memory (the model's is cls_lm_memory_bytes) */
} cls_scorer_info;

/* A scorer over `lm` (borrowed: it must outlive the scorer) for an alphabet of n_labels labels,
 * labels[i] the UTF-8 text of label i (the classes 0..n_labels-1 of the decoder; the blank is
 * not among them). Every label must be one codepoint, and one of them a space (" "): the word
 * boundary. Each vocabulary word is spelled codepoint by codepoint in labels; a word with a
 * character no label has is skipped and counted in `info` (may be NULL).
 * CLS_ERR_INVALID_ARGUMENT (text in `err`) for an alphabet without a space, a label that is not one
 * codepoint or appears twice, or a model none of whose words can be spelled; CLS_ERR_OUT_OF_MEMORY. */
cls_status cls_scorer_create(const cls_lm *lm, const char *const *labels, int n_labels, cls_scorer **out,
                             cls_scorer_info *info, cls_error *err);
/* A character-level model (cls_lm_characters, DeepSpeech's scorer in UTF-8 mode): each vocabulary word
 * must be one character (the others are skipped and counted), the alphabet needs no space, and the
 * beam search scores a character, lm_alpha * ln P(char | the characters before) + lm_beta, at the
 * label that completes it, with no space between characters (a space label, if the alphabet has
 * one, is never emitted). With the UTF-8 bytes alphabet (clspeech/data.h's cls_alphabet_bytes: 255
 * labels, label i the one byte i+1, recognized from the labels) the characters are spelled in their
 * bytes and a prefix may only grow along the bytes of vocabulary characters; the bytes alphabet
 * with a word model is CLS_ERR_INVALID_ARGUMENT ("... build it with `clspeech lm --characters`"). */
/* The same over the model in `path` (ARPA or the binary form: cls_lm_load), which the scorer then owns. */
cls_status cls_scorer_load(const char *path, const char *const *labels, int n_labels, cls_scorer **out,
                           cls_scorer_info *info, cls_error *err);
/* NULL is a no-op. Frees the model too when the scorer owns it. */
void cls_scorer_destroy(cls_scorer *scorer);

const cls_lm *cls_scorer_lm(const cls_scorer *scorer);
int cls_scorer_labels(const cls_scorer *scorer);
int cls_scorer_space_label(const cls_scorer *scorer); /* -1: none (a character model may lack it) */
bool cls_scorer_characters(const cls_scorer *scorer); /* its model is character-level */

/* The scorer's terms for a whole transcript of labels (what the beam search adds to ln P(labels |
 * logits) for it): for each word ended by a space, lm_alpha * ln P(word | the words before it, from
 * <s>) + lm_beta, and the same for a last word not followed by a space; a word out of the vocabulary
 * scores CLS_LM_OOV_SCORE in place of ln P, and so do the order-1 words after it (DeepSpeech scores any n-gram
 * holding an unknown word so). *valid (may be NULL) says whether the beam search can
 * reach these labels at all: words of the vocabulary separated by single spaces, no leading space,
 * the last word at least a prefix of a vocabulary word. A character model: each character scored
 * where it completes, an unfinished one at the end with CLS_LM_OOV_SCORE; valid when every label
 * continues the spelling of a vocabulary character. */
double cls_scorer_transcript_score(const cls_scorer *scorer, const int32_t *labels, int n, double lm_alpha,
                                   double lm_beta, bool *valid);

#ifdef __cplusplus
}
#endif
#endif
