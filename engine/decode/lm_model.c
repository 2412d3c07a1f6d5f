/* The word n-gram model in memory: its vocabulary (a string arena and an open-addressing table of
 * ids), the per-order hash tables of n-grams, scoring by ARPA backoff, and the accessors of
 * include/clspeech/lm.h. Reading ARPA text is lm_arpa.c's; the binary form is lm_binary.c's. */
#include "decode/lm_model.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint64_t lm_key_start(int32_t id) { return mix64((uint64_t)(uint32_t)id + 0x9e3779b97f4a7c15ull); }

uint64_t lm_key_extend(uint64_t key, int32_t id) {
  return mix64(key * 0xff51afd7ed558ccdull + (uint64_t)(uint32_t)id + 0x632be59bd9b4e019ull);
}

uint64_t lm_word_hash(const char *s, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then mixed */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return mix64(h ^ len);
}

bool lm_vocab_reserve(cls_lm *lm, int32_t n_words) {
  if (n_words < 1 || n_words > (1 << 30)) return false;
  uint64_t cap = 16;
  while (cap < (uint64_t)n_words * 2) cap <<= 1;
  lm->word_off = malloc((size_t)n_words * sizeof *lm->word_off);
  lm->uni_prob = malloc((size_t)n_words * sizeof *lm->uni_prob);
  lm->uni_backoff = malloc((size_t)n_words * sizeof *lm->uni_backoff);
  lm->vocab_slots = malloc(cap * sizeof *lm->vocab_slots);
  lm->arena_cap = (size_t)n_words * 8 + 64;
  lm->arena = malloc(lm->arena_cap);
  if (!lm->word_off || !lm->uni_prob || !lm->uni_backoff || !lm->vocab_slots || !lm->arena) return false;
  memset(lm->vocab_slots, 0xff, cap * sizeof *lm->vocab_slots);
  lm->vocab_cap = cap;
  lm->words_cap = n_words;
  return true;
}

int32_t lm_vocab_find(const cls_lm *lm, const char *word, size_t len) {
  if (!lm->vocab_cap) return -1;
  uint64_t mask = lm->vocab_cap - 1;
  for (uint64_t i = lm_word_hash(word, len) & mask;; i = (i + 1) & mask) {
    int32_t id = lm->vocab_slots[i];
    if (id < 0) return -1;
    size_t start = lm->word_off[id], stop = id + 1 < lm->n_words ? lm->word_off[id + 1] : lm->arena_len;
    if (stop - start - 1 == len && memcmp(lm->arena + start, word, len) == 0) return id;
  }
}

int32_t lm_vocab_add(cls_lm *lm, const char *word, size_t len) {
  if (lm->n_words >= lm->words_cap || memchr(word, '\0', len)) return -1;
  if (lm->arena_len + len + 1 > lm->arena_cap) {
    size_t cap = lm->arena_cap * 2 + len + 1;
    char *a = realloc(lm->arena, cap);
    if (!a) return -1;
    lm->arena = a;
    lm->arena_cap = cap;
  }
  int32_t id = lm->n_words++;
  lm->word_off[id] = lm->arena_len;
  memcpy(lm->arena + lm->arena_len, word, len);
  lm->arena[lm->arena_len + len] = '\0';
  lm->arena_len += len + 1;
  uint64_t mask = lm->vocab_cap - 1, i = lm_word_hash(word, len) & mask;
  while (lm->vocab_slots[i] >= 0) i = (i + 1) & mask;
  lm->vocab_slots[i] = id;
  return id;
}

/* The home slot of a key: its high 32 bits scaled to the capacity (a multiply, not a division). */
static uint64_t home(const cls_lm_table *t, uint64_t key) { return ((key >> 32) * t->cap) >> 32; }

bool lm_table_init(cls_lm_table *t, int64_t count) {
  if (count < 0 || count > ((int64_t)1 << 31)) return false; /* keeps cap below 2^32 for home() */
  t->cap = (uint64_t)count + (uint64_t)count / 2 + 1;
  t->slots = calloc(t->cap, sizeof *t->slots);
  return t->slots != NULL;
}

cls_lm_entry *lm_table_find(const cls_lm_table *t, uint64_t key) {
  if (!t->cap) return NULL;
  if (!key) key = 1;
  for (uint64_t i = home(t, key);; i = i + 1 == t->cap ? 0 : i + 1) {
    if (t->slots[i].key == key) return &t->slots[i];
    if (!t->slots[i].key) return NULL;
  }
}

cls_lm_entry *lm_table_insert(cls_lm_table *t, uint64_t key) {
  if (!key) key = 1;
  for (uint64_t i = home(t, key);; i = i + 1 == t->cap ? 0 : i + 1) {
    if (t->slots[i].key == key) return NULL;
    if (!t->slots[i].key) {
      t->slots[i].key = key;
      return &t->slots[i];
    }
  }
}

void cls_lm_destroy(cls_lm *lm) {
  if (!lm) return;
  if (lm->image) { /* the arrays point into the image */
    if (lm->image_mapped)
      munmap(lm->image, lm->image_bytes);
    else
      free(lm->image);
    free(lm);
    return;
  }
  free(lm->word_off);
  free(lm->arena);
  free(lm->vocab_slots);
  free(lm->uni_prob);
  free(lm->uni_backoff);
  for (int n = 0; n <= CLS_LM_MAX_ORDER; n++) free(lm->tables[n].slots);
  free(lm);
}

int cls_lm_order(const cls_lm *lm) { return lm ? lm->order : 0; }

int64_t cls_lm_count(const cls_lm *lm, int n) { return lm && n >= 1 && n <= lm->order ? lm->counts[n] : 0; }

size_t cls_lm_memory_bytes(const cls_lm *lm) {
  if (!lm) return 0;
  if (lm->image) return sizeof *lm + lm->image_bytes;
  size_t bytes = sizeof *lm + lm->arena_cap + (size_t)lm->words_cap * (sizeof *lm->word_off + 2 * sizeof(float)) +
                 lm->vocab_cap * sizeof *lm->vocab_slots;
  for (int n = 2; n <= lm->order; n++) bytes += lm->tables[n].cap * sizeof(cls_lm_entry);
  return bytes;
}

int32_t cls_lm_vocab_size(const cls_lm *lm) { return lm ? lm->n_words : 0; }

int32_t cls_lm_word_id(const cls_lm *lm, const char *word, size_t len) {
  return lm && word ? lm_vocab_find(lm, word, len) : -1;
}

int32_t cls_lm_lookup(const cls_lm *lm, const char *word, size_t len, bool *oov) {
  int32_t id = cls_lm_word_id(lm, word, len);
  if (oov) *oov = id < 0;
  return id < 0 ? (lm ? lm->unk : -1) : id;
}

const char *cls_lm_word(const cls_lm *lm, int32_t id) {
  return lm && id >= 0 && id < lm->n_words ? lm->arena + lm->word_off[id] : NULL;
}

int32_t cls_lm_bos(const cls_lm *lm) { return lm ? lm->bos : -1; }
int32_t cls_lm_eos(const cls_lm *lm) { return lm ? lm->eos : -1; }
int32_t cls_lm_unk(const cls_lm *lm) { return lm ? lm->unk : -1; }

float cls_lm_score(const cls_lm *lm, const int32_t *history, int n_history, int32_t word) {
  if (!lm) return 0.0f;
  if (word < 0 || word >= lm->n_words) word = lm->unk;
  int m_max = history && n_history > 0 ? n_history : 0;
  if (m_max > lm->order - 1) m_max = lm->order - 1;
  float prob = lm->uni_prob[word], backoff = 0.0f;
  uint64_t key_ngram = lm_key_start(word), key_context = 0;
  /* Walk the history back: at m words of context, the n-gram (context, word) replaces the best
   * probability so far when present (and drops the backoffs of the shorter contexts); when absent,
   * the context's backoff joins the sum. */
  for (int m = 1; m <= m_max; m++) {
    int32_t c = history[n_history - m];
    if (c < 0 || c >= lm->n_words) c = lm->unk;
    key_ngram = lm_key_extend(key_ngram, c);
    key_context = m == 1 ? lm_key_start(c) : lm_key_extend(key_context, c);
    const cls_lm_entry *e = lm_table_find(&lm->tables[m + 1], key_ngram);
    if (e) {
      prob = e->prob;
      backoff = 0.0f;
    } else if (m == 1) {
      backoff += lm->uni_backoff[c];
    } else {
      const cls_lm_entry *ctx = lm_table_find(&lm->tables[m], key_context);
      if (ctx) backoff += ctx->backoff;
    }
  }
  return prob + backoff;
}

float cls_lm_score_words(const cls_lm *lm, const char *const *history, int n_history, const char *word, bool *oov) {
  int32_t ids[CLS_LM_MAX_ORDER];
  int n = 0;
  for (int i = n_history - (CLS_LM_MAX_ORDER - 1); i < n_history; i++)
    if (i >= 0 && history && history[i]) ids[n++] = cls_lm_lookup(lm, history[i], strlen(history[i]), NULL);
  int32_t w = cls_lm_lookup(lm, word ? word : "", word ? strlen(word) : 0, oov);
  return cls_lm_score(lm, ids, n, w);
}

double cls_lm_score_sentence(const cls_lm *lm, const char *sentence, bool bos, bool eos, float *per_word, int cap,
                             int *n_scores, int *n_oov) {
  int32_t hist[CLS_LM_MAX_ORDER];
  int nh = 0, count = 0, oovs = 0;
  double total = 0.0;
  if (lm && bos) hist[nh++] = lm->bos;
  const char *p = sentence ? sentence : "";
  for (;;) {
    while (*p && lm_is_space(*p)) p++;
    int32_t w;
    if (*p) {
      const char *s = p;
      while (*p && !lm_is_space(*p)) p++;
      bool oov = false;
      w = cls_lm_lookup(lm, s, (size_t)(p - s), &oov);
      oovs += oov;
    } else if (eos && lm) {
      w = lm->eos;
      eos = false;
    } else {
      break;
    }
    float s = cls_lm_score(lm, hist, nh, w);
    if (per_word && count < cap) per_word[count] = s;
    count++;
    total += s;
    if (nh == CLS_LM_MAX_ORDER) {
      memmove(hist, hist + 1, (CLS_LM_MAX_ORDER - 1) * sizeof *hist);
      nh--;
    }
    hist[nh++] = w;
  }
  if (n_scores) *n_scores = count;
  if (n_oov) *n_oov = oovs;
  return total;
}
