/* libFuzzer target: the binary n-gram model reader (engine/decode/lm_binary.c, cls_lm_parse_binary),
 * from bytes in memory. An input whose header checksum field is 0 (the seeds' is) gets the right
 * checksum written in before the parse, so that mutations reach the structural checks behind it; an
 * input with any other checksum is parsed as it is (the checksum's own refusal). Nothing in the
 * library skips the checksum. On success every word's id must come back from its spelling, and each
 * word is scored after histories over the vocabulary (long, short, out of range), and a sentence of
 * the words with <s> and </s>, so that a bad table or vocabulary is probed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/lm.h"
#include "decode/lm_binary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  const size_t at = offsetof(lm_bin_header, checksum);
  uint64_t sum = 0;
  if (size >= sizeof(lm_bin_header)) {
    memcpy(&sum, copy + at, sizeof sum);
    if (sum == 0) {
      sum = lm_bin_checksum(copy, size);
      memcpy(copy + at, &sum, sizeof sum);
    }
  }
  cls_error err;
  cls_lm *lm = NULL;
  cls_status st = cls_lm_parse_binary(copy, size, "fuzz.clm", &lm, &err);
  free(copy); /* the model holds a copy of its own */
  if (st != CLS_OK) {
    if (lm || !strstr(err.text, "fuzz.clm")) abort(); /* a failure leaves nothing and names the input */
    return 0;
  }
  int32_t n = cls_lm_vocab_size(lm);
  if (n < 1 || cls_lm_order(lm) < 1 || cls_lm_order(lm) > CLS_LM_MAX_ORDER || cls_lm_is_mapped(lm)) abort();
  char sentence[1024];
  size_t used = 0;
  for (int32_t id = 0; id < n && id < 256; id++) {
    const char *w = cls_lm_word(lm, id);
    if (!w || cls_lm_word_id(lm, w, strlen(w)) != id) abort();
    int32_t hist[CLS_LM_MAX_ORDER + 1];
    for (int k = 0; k <= CLS_LM_MAX_ORDER; k++) hist[k] = (id + k * 7) % n;
    (void)cls_lm_score(lm, hist, CLS_LM_MAX_ORDER + 1, id);
    (void)cls_lm_score(lm, hist + 3, 2, (id * 13) % n);
    (void)cls_lm_score(lm, hist, 0, -5);
    hist[1] = n + 3; /* out of range: scored as <unk> */
    (void)cls_lm_score(lm, hist, 3, id);
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
  (void)cls_lm_score_sentence(lm, "zz-not-a-word another", true, true, scores, 300, &n_scores, &n_oov);
  if (cls_lm_memory_bytes(lm) < size) abort();
  cls_lm_destroy(lm);
  return 0;
}
