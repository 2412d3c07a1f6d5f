/* The probe both n-gram model fuzz targets run on a model that loaded (fuzz_arpa.c, fuzz_lm_binary.c):
 * every word's id must come back from its spelling; each word is scored after histories over the
 * vocabulary (long, short, empty, out of range) and a sentence of the words with <s> and </s>, and one
 * of unknown words, so that a bad table or vocabulary is read where it would break. Aborts on a
 * contradiction. */
#ifndef CLS_FUZZ_LM_PROBE_H
#define CLS_FUZZ_LM_PROBE_H

#include <stdlib.h>
#include <string.h>

#include "clspeech/lm.h"

static void fuzz_lm_probe(const cls_lm *lm) {
  int32_t n = cls_lm_vocab_size(lm);
  if (n < 1 || cls_lm_order(lm) < 1 || cls_lm_order(lm) > CLS_LM_MAX_ORDER) abort();
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
}

#endif
