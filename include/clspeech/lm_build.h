/* clspeech public API, decode layer: building a word n-gram language model from a text corpus with
 * interpolated modified Kneser-Ney smoothing (what KenLM's lmplz does) and writing it as an ARPA file.
 * Host-only: no OpenCL. */
#ifndef CLSPEECH_LM_BUILD_H
#define CLSPEECH_LM_BUILD_H

#include <stdint.h>
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLS_LM_MAX_ORDER 6

typedef struct cls_lm_build_options {
  int order;             /* 1..CLS_LM_MAX_ORDER (lmplz -o; `clspeech lm` defaults to 5) */
  int discount_fallback; /* 1: an order whose counts-of-counts give no valid discounts (a tiny corpus)
                          * uses lmplz's --discount_fallback values 0.5, 1, 1.5; 0: that is an error */
  uint64_t prune[CLS_LM_MAX_ORDER]; /* lmplz --prune: an n-gram of order n >= 2 whose raw count is <= prune[n-1]
                          * is left out, unless a kept (n+1)-gram starts or ends with it; its adjusted count
                          * still counts in its context's total and goes to the context's backoff mass.
                          * prune[0] (unigrams) must be 0; all 0 = no pruning */
  void (*progress)(void *user, const char *message); /* stage messages for long runs; may be NULL */
  void *user;
  int characters;        /* 1: a character-level model (clspeech/lm.h's cls_lm_characters): every character
                          * of the text (a codepoint; whitespace is dropped) is a word, for text without
                          * spaces (Mandarin, Japanese); invalid UTF-8 is then an error naming the line.
                          * The ARPA text cannot say so: mark the loaded model with cls_lm_set_characters */
} cls_lm_build_options;

typedef struct cls_lm_build_stats {
  uint64_t sentences, words;                /* lines read (blank ones too), words in them */
  uint64_t ngrams[CLS_LM_MAX_ORDER];        /* n-grams written per order (unigrams: with <s>, </s>, <unk>) */
  double discount[CLS_LM_MAX_ORDER][3];     /* D1, D2, D3+ per order */
  uint64_t count_of_counts[CLS_LM_MAX_ORDER][4]; /* n1..n4 of the adjusted counts per order */
} cls_lm_build_stats;

/* Order 5, no discount fallback, no progress, words split on whitespace. */
cls_lm_build_options cls_lm_build_options_default(void);

/* Reads `text_path` (UTF-8, one sentence per line, words split on spaces and tabs; a blank line is
 * an empty sentence, <s> </s>, as lmplz counts it), counts its n-grams with <s> and </s> around every sentence, and writes the interpolated
 * modified Kneser-Ney model to `arpa_path` as lmplz would: adjusted (continuation) counts below the
 * highest order, discounts D1, D2, D3+ per order from the counts-of-counts, interpolation down to the
 * uniform distribution over the vocabulary (<unk> and </s> included, <s> not), <unk> with the
 * unigram's interpolated zero-count mass, <s> at log10 probability 0 (as lmplz writes it; it is never predicted), and log10 backoffs.
 * CLS_ERR_IO (file named) when a file cannot be read or written; CLS_ERR_INVALID_ARGUMENT for an order
 * outside 1..6, a text with no words, a line holding <s>, </s> or <unk> (file and
 * line named, as lmplz refuses them), a line holding a NUL byte (binary data, not text: file and line
 * named; the ARPA form has no way to write such a word), or
 * discounts that cannot be estimated without discount_fallback, or prune[0] != 0. `stats` may be NULL. */
cls_status cls_lm_build_arpa(const char *text_path, const char *arpa_path, const cls_lm_build_options *options,
                             cls_lm_build_stats *stats, cls_error *err);

/* The same model's ARPA text in memory: *text (malloc'ed, the caller's to free; not NUL-terminated
 * past *size) and *size, for cls_lm_parse_arpa and a writer, so that no path is read back. Errors as
 * above (CLS_ERR_OUT_OF_MEMORY when the text does not fit). */
cls_status cls_lm_build_arpa_text(const char *text_path, const cls_lm_build_options *options, char **text,
                                  size_t *size, cls_lm_build_stats *stats, cls_error *err);

#ifdef __cplusplus
}
#endif
#endif
