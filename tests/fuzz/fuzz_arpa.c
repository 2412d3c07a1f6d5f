/* libFuzzer target: the ARPA reader (engine/decode/lm_arpa.c), from bytes in memory; on success every
 * word's id must come back from its spelling, and each word is scored after the histories the model's
 * own words make, and a sentence of them with <s> and </s>. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/lm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cls_error err;
  cls_lm *lm = NULL;
  if (cls_lm_parse_arpa((const char *)data, size, "fuzz.arpa", &lm, &err) != CLS_OK) {
    if (lm || !strstr(err.text, "fuzz.arpa")) abort(); /* a failure leaves nothing and names the input */
    return 0;
  }
  int32_t n = cls_lm_vocab_size(lm);
  if (n < 3 || cls_lm_order(lm) < 1 || cls_lm_order(lm) > CLS_LM_MAX_ORDER) abort();
  char sentence[1024];
  size_t used = 0;
  for (int32_t id = 0; id < n && id < 256; id++) {
    const char *w = cls_lm_word(lm, id);
    if (!w || cls_lm_word_id(lm, w, strlen(w)) != id) abort();
    int32_t hist[CLS_LM_MAX_ORDER + 1];
    for (int k = 0; k <= CLS_LM_MAX_ORDER; k++) hist[k] = (id + k * 7) % n;
    (void)cls_lm_score(lm, hist, CLS_LM_MAX_ORDER + 1, id);
    (void)cls_lm_score(lm, hist, 0, -5);
    size_t len = strlen(w);
    if (used + len + 2 < sizeof sentence) {
      memcpy(sentence + used, w, len);
      used += len;
      sentence[used++] = ' ';
    }
  }
  sentence[used] = '\0';
  float scores[300];
  int n_scores = 0, n_oov = 0;
  (void)cls_lm_score_sentence(lm, sentence, true, true, scores, 300, &n_scores, &n_oov);
  (void)cls_lm_memory_bytes(lm);
  cls_lm_destroy(lm);
  return 0;
}
