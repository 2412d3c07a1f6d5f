/* The n-gram model's layout in memory, shared by the ARPA reader (lm_arpa.c), the binary form
 * (lm_binary.c, which writes these arrays as they are and points them into a mapped file) and the
 * model's own code (lm_model.c: vocabulary, hash tables, scoring). Unigrams are arrays indexed by word id; each
 * higher order is an open-addressing table of 64-bit hashes of the word-id sequence (linear probing,
 * load <= 2/3), 16 bytes per n-gram: no words are stored past the vocabulary. */
#ifndef CLS_DECODE_LM_MODEL_H
#define CLS_DECODE_LM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clspeech/lm.h"

typedef struct cls_lm_entry {
  uint64_t key; /* 0 = empty slot */
  float prob;
  float backoff;
} cls_lm_entry;

typedef struct cls_lm_table {
  cls_lm_entry *slots;
  uint64_t cap;
} cls_lm_table;

struct cls_lm {
  int order;
  int64_t counts[CLS_LM_MAX_ORDER + 1];
  /* vocabulary: words NUL-terminated in `arena`, word i at arena + word_off[i] */
  int32_t n_words, words_cap;
  size_t *word_off;
  char *arena;
  size_t arena_len, arena_cap;
  int32_t *vocab_slots; /* word id or -1 */
  uint64_t vocab_cap;   /* a power of two */
  float *uni_prob, *uni_backoff;
  cls_lm_table tables[CLS_LM_MAX_ORDER + 1]; /* orders 2..order */
  int32_t bos, eos, unk;
  bool characters; /* cls_lm_characters (the binary form's header flag) */
  /* NULL when each array above was malloc'd (the ARPA reader's model); else the one block that holds
   * them all, a binary file's image (lm_binary.c): mapped read-only (image_mapped, munmap'd with the
   * model) or a malloc'd copy (freed with it). */
  void *image;
  size_t image_bytes;
  bool image_mapped;
};

/* The key of an n-gram (w1 .. wk) is built from its last word back: lm_key_start(wk), then
 * lm_key_extend with w(k-1) .. w1, so a scorer extends one key as it walks the history back. */
uint64_t lm_key_start(int32_t id);
uint64_t lm_key_extend(uint64_t key, int32_t id);

/* The bytes that separate words in a text (the C locale's isspace, whatever the locale): the builder
 * reading its corpus and cls_lm_score_sentence splitting a sentence split alike. */
static inline bool lm_is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The hash of the `len` bytes at `s` that places a word in a vocabulary table (this one's, and
 * lm_build.c's while it numbers the words of a text). */
uint64_t lm_word_hash(const char *s, size_t len);

/* Room for `n_words` words (ids, unigram arrays, the vocabulary table). false when out of memory. */
bool lm_vocab_reserve(cls_lm *lm, int32_t n_words);
/* The id of the `len` bytes at `word`, or -1. */
int32_t lm_vocab_find(const cls_lm *lm, const char *word, size_t len);
/* Adds a word not yet present (within the reserved room); its id, or -1 when out of memory. */
int32_t lm_vocab_add(cls_lm *lm, const char *word, size_t len);

/* A table for `count` n-grams; false when out of memory. */
bool lm_table_init(cls_lm_table *t, int64_t count);
/* The entry of `key`, or NULL. */
cls_lm_entry *lm_table_find(const cls_lm_table *t, uint64_t key);
/* Inserts `key` (the table must have room): the new entry, or NULL when `key` is there already. */
cls_lm_entry *lm_table_insert(cls_lm_table *t, uint64_t key);

#endif
