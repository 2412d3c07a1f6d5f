/* The scorer's inside, for the beam search (decode.c): the vocabulary trie in arrays (each node's
 * children a run of (label, child) pairs sorted by label) and the word score. The public half is
 * include/clspeech/scorer.h. */
#ifndef CLS_DECODE_SCORER_TRIE_H
#define CLS_DECODE_SCORER_TRIE_H

#include <stdbool.h>
#include <stdint.h>

#include "clspeech/scorer.h"

struct cls_scorer {
  const cls_lm *lm;
  cls_lm *owned;       /* the model, when the scorer loaded it */
  int n_labels, space; /* labels 0..n_labels-1; the word boundary (-1: none, a character model) */
  bool characters;     /* cls_lm_characters: each word is one character, scored when it completes */
  bool bytes;          /* the labels are the 255 UTF-8 bytes (label i = byte i+1) */
  int32_t n_nodes;     /* node 0 is the root: no letter of the word yet */
  int32_t *first;      /* node i's children: pairs first[i] .. first[i+1]-1 */
  int32_t *word;       /* node i's word id in the model when its path spells a whole word, else -1 */
  int32_t *child_label, *child_node;
};

/* The child of trie node `at` by `label`, or -1 when no vocabulary word goes on that way. */
static inline int32_t scorer_child(const cls_scorer *s, int32_t at, int32_t label) {
  for (int32_t i = s->first[at]; i < s->first[at + 1]; i++) {
    if (s->child_label[i] == label) return s->child_node[i];
    if (s->child_label[i] > label) break;
  }
  return -1;
}

/* ln P(word | history) from the model (history oldest first, at most order-1 ids used), or
 * CLS_LM_OOV_SCORE when `word` or a word of the history is -1 (not a vocabulary word), as DeepSpeech. */
double scorer_word_ln_prob(const cls_scorer *s, const int32_t *history, int n_history, int32_t word);

#endif
