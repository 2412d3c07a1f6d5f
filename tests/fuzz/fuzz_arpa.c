/* libFuzzer target: the ARPA reader (engine/decode/lm_arpa.c), from bytes in memory; on success the
 * model is probed (fuzz_lm_probe.h), then it becomes a scorer over an
 * English alphabet (engine/decode/scorer.c) and decodes logits made from the input's bytes in the beam
 * search (every result must be a spelling the scorer allows). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/decode.h"
#include "clspeech/lm.h"
#include "clspeech/scorer.h"
#include "fuzz_lm_probe.h"

/* The model as a scorer: a short beam search over logits taken from the input's bytes. */
static void decode_with(const cls_lm *lm, const uint8_t *data, size_t size) {
  static const char *const labels[] = {" ", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
                                       "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "'"};
  enum { L = 28, C = L + 1, T = 24 };
  cls_scorer *sc = NULL;
  cls_error err;
  if (cls_scorer_create(lm, labels, L, &sc, NULL, &err) != CLS_OK) {
    if (sc) abort();
    return;
  }
  float x[T * C];
  for (int i = 0; i < T * C; i++) x[i] = (float)(data[(size_t)i % size] % 16) * 0.5f;
  cls_beam_options o = cls_beam_options_default();
  o.beam_width = 8;
  o.scorer = sc;
  cls_beam_result r[4];
  int n = 0;
  if (cls_ctc_beam_search(x, T, C, C, &o, r, 4, &n) != CLS_OK || n < 1) abort();
  for (int i = 0; i < n; i++) {
    bool valid = false;
    (void)cls_scorer_transcript_score(sc, r[i].labels, r[i].length, o.lm_alpha, o.lm_beta, &valid);
    if (!valid) abort(); /* the beam search only keeps spellings of the vocabulary */
  }
  cls_beam_results_free(r, n);
  cls_scorer_destroy(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cls_error err;
  cls_lm *lm = NULL;
  if (cls_lm_parse_arpa((const char *)data, size, "fuzz.arpa", &lm, &err) != CLS_OK) {
    if (lm || !strstr(err.text, "fuzz.arpa")) abort(); /* a failure leaves nothing and names the input */
    return 0;
  }
  if (cls_lm_vocab_size(lm) < 3) abort(); /* <unk>, <s>, </s> at least */
  fuzz_lm_probe(lm);
  (void)cls_lm_memory_bytes(lm);
  if (size > 0) decode_with(lm, data, size);
  cls_lm_destroy(lm);
  return 0;
}
