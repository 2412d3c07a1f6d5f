/* The language-model scorer (include/clspeech/scorer.h): the trie of the model's vocabulary spelled
 * in alphabet labels (or, for a character model over the UTF-8 bytes labels, in bytes), built once
 * from the model's words, and the score DeepSpeech's decoder adds at each word boundary. The beam
 * search's use of it is decode.c's. */
#include "decode/scorer_trie.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "decode/lm_model.h"

#define LN_10 2.30258509299404568402

/* ---- the alphabet: codepoint -> label ---- */

typedef struct label_of {
  uint32_t codepoint;
  int32_t label;
} label_of;

static int label_of_cmp(const void *pa, const void *pb) {
  const label_of *a = pa, *b = pb;
  return (a->codepoint > b->codepoint) - (a->codepoint < b->codepoint);
}

static cls_status alphabet_map(const char *const *labels, int n_labels, label_of *map, int *space, bool need_space,
                               cls_error *err) {
  *space = -1;
  for (int i = 0; i < n_labels; i++) {
    const char *l = labels[i] ? labels[i] : "";
    size_t len = strlen(l);
    uint32_t cp = 0;
    int used = cls_utf8_decode((const unsigned char *)l, len, &cp);
    if (used == 0 || (size_t)used != len)
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "scorer: alphabet label %d (\"%s\") is not one character", i,
                           l);
    map[i].codepoint = cp;
    map[i].label = i;
    if (cp == ' ') *space = i;
  }
  qsort(map, (size_t)n_labels, sizeof *map, label_of_cmp);
  for (int i = 1; i < n_labels; i++)
    if (map[i].codepoint == map[i - 1].codepoint)
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "scorer: alphabet labels %d and %d are the same character",
                           map[i - 1].label, map[i].label);
  if (*space < 0 && need_space)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "scorer: the alphabet has no space label; a word language model needs one between words");
  return CLS_OK;
}

static int32_t find_label(const label_of *map, int n, uint32_t cp) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (map[mid].codepoint == cp) return map[mid].label;
    if (map[mid].codepoint < cp) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* ---- building the trie ---- */

/* While building, children are lists (first child, next sibling); cls_scorer keeps sorted runs. */
typedef struct build_node {
  int32_t child, sibling, label, word;
} build_node;

typedef struct builder {
  build_node *nodes;
  int32_t n, cap;
} builder;

static int32_t builder_add(builder *b, int32_t label) {
  if (b->n == b->cap) {
    if (b->cap > INT32_MAX / 2) return -1;
    int32_t cap = b->cap ? b->cap * 2 : 1024;
    build_node *nodes = realloc(b->nodes, (size_t)cap * sizeof *nodes);
    if (!nodes) return -1;
    b->nodes = nodes;
    b->cap = cap;
  }
  b->nodes[b->n] = (build_node){-1, -1, label, -1};
  return b->n++;
}

/* The child of `node` by `label`, made when missing; -1 when out of memory. */
static int32_t builder_child(builder *b, int32_t node, int32_t label) {
  for (int32_t c = b->nodes[node].child; c >= 0; c = b->nodes[c].sibling)
    if (b->nodes[c].label == label) return c;
  int32_t c = builder_add(b, label);
  if (c < 0) return -1;
  b->nodes[c].sibling = b->nodes[node].child;
  b->nodes[node].child = c;
  return c;
}

/* The label of the codepoint at w[*i..len) (advancing *i), or -1 when it is not UTF-8, has no label or
 * is the space. */
static int32_t next_label(const char *w, size_t len, size_t *i, const label_of *map, int n_labels, int space) {
  uint32_t cp = 0;
  int used = cls_utf8_decode((const unsigned char *)w + *i, len - *i, &cp);
  if (used == 0) return -1;
  *i += (size_t)used;
  int32_t l = find_label(map, n_labels, cp);
  return l == space ? -1 : l;
}

/* Whether the labels are the UTF-8 bytes alphabet's: 255 of them, label i the one byte i+1. */
static bool bytes_labels(const char *const *labels, int n_labels) {
  if (n_labels != 255) return false;
  for (int i = 0; i < n_labels; i++)
    if (!labels[i] || (unsigned char)labels[i][0] != i + 1 || labels[i][1]) return false;
  return true;
}

/* A character model's word `id` (one character, else 0: skipped) spelled in its UTF-8 bytes. */
static int add_bytes_word(builder *b, const char *w, int32_t id) {
  const size_t len = strlen(w);
  uint32_t cp;
  if (len == 0 || (size_t)cls_utf8_decode((const unsigned char *)w, len, &cp) != len) return 0;
  int32_t node = 0;
  for (size_t i = 0; i < len; i++) {
    node = builder_child(b, node, (int32_t)(unsigned char)w[i] - 1);
    if (node < 0) return -1;
  }
  b->nodes[node].word = id;
  return 1;
}

/* Spells word `id` into the trie: 1 when added, 0 when a character has no label (or, for a character
 * model, the word is not one character), -1 out of memory. */
static int add_word(builder *b, const label_of *map, int n_labels, int space, bool one_char, const char *w,
                    int32_t id) {
  const size_t len = strlen(w);
  uint32_t cp;
  if (len == 0) return 0;
  if (one_char && (size_t)cls_utf8_decode((const unsigned char *)w, len, &cp) != len) return 0;
  for (size_t i = 0; i < len;) /* every character first: a word is added whole or not at all */
    if (next_label(w, len, &i, map, n_labels, space) < 0) return 0;
  int32_t node = 0;
  for (size_t i = 0; i < len;) {
    node = builder_child(b, node, next_label(w, len, &i, map, n_labels, space));
    if (node < 0) return -1;
  }
  b->nodes[node].word = id;
  return 1;
}

static int pair_cmp(const void *pa, const void *pb) {
  const int32_t *a = pa, *b = pb;
  return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Renumbers the built trie breadth-first into the scorer's arrays, each run of children sorted. */
static cls_status freeze(const builder *b, cls_scorer *s) {
  s->n_nodes = b->n;
  s->first = malloc(((size_t)b->n + 1) * sizeof *s->first);
  s->word = malloc((size_t)b->n * sizeof *s->word);
  s->child_label = malloc((size_t)b->n * sizeof *s->child_label);
  s->child_node = malloc((size_t)b->n * sizeof *s->child_node);
  int32_t *order = malloc((size_t)b->n * sizeof *order); /* new index -> built node */
  int32_t(*pairs)[2] = malloc((size_t)b->n * sizeof *pairs);
  cls_status st = CLS_ERR_OUT_OF_MEMORY;
  if (s->first && s->word && s->child_label && s->child_node && order && pairs) {
    int32_t head = 0, tail = 0, edges = 0;
    order[tail++] = 0;
    for (; head < tail; head++) {
      const build_node *bn = &b->nodes[order[head]];
      s->first[head] = edges;
      s->word[head] = bn->word;
      int k = 0;
      for (int32_t c = bn->child; c >= 0; c = b->nodes[c].sibling) {
        pairs[k][0] = b->nodes[c].label;
        pairs[k][1] = c;
        k++;
      }
      qsort(pairs, (size_t)k, sizeof *pairs, pair_cmp);
      for (int i = 0; i < k; i++) {
        s->child_label[edges] = pairs[i][0];
        s->child_node[edges++] = tail; /* the child gets the next number in breadth-first order */
        order[tail++] = pairs[i][1];
      }
    }
    s->first[b->n] = edges;
    st = CLS_OK;
  }
  free(order);
  free(pairs);
  return st;
}

static void note_skipped(cls_scorer_info *info, const char *w) {
  info->skipped++;
  size_t used = strlen(info->skipped_examples), room = sizeof info->skipped_examples - used;
  if (info->skipped > 3 || room < strlen(w) + 5) return;
  snprintf(info->skipped_examples + used, room, "%s\"%s\"", used ? ", " : "", w);
}

cls_status cls_scorer_create(const cls_lm *lm, const char *const *labels, int n_labels, cls_scorer **out,
                             cls_scorer_info *info, cls_error *err) {
  cls_scorer_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  if (out) *out = NULL;
  if (!lm || !labels || n_labels < 1 || !out)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "scorer: no model or no alphabet");
  label_of *map = malloc((size_t)n_labels * sizeof *map);
  cls_scorer *s = calloc(1, sizeof *s);
  builder b = {0};
  if (!map || !s || builder_add(&b, -1) < 0) {
    free(map);
    free(s);
    free(b.nodes);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "scorer: out of memory");
  }
  s->lm = lm;
  s->n_labels = n_labels;
  s->characters = cls_lm_characters(lm);
  s->bytes = bytes_labels(labels, n_labels);
  s->space = -1;
  cls_status st = CLS_OK;
  if (s->bytes && !s->characters)
    st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                       "scorer: the UTF-8 bytes alphabet (--bytes_output_mode) needs a character-level scorer, "
                       "whose words are single characters: build it with `clspeech lm --characters`");
  else if (!s->bytes)
    st = alphabet_map(labels, n_labels, map, &s->space, !s->characters, err);
  const int32_t n_words = cls_lm_vocab_size(lm);
  for (int32_t id = 0; st == CLS_OK && id < n_words; id++) {
    if (id == cls_lm_bos(lm) || id == cls_lm_eos(lm) || id == cls_lm_unk(lm)) continue;
    int r = s->bytes ? add_bytes_word(&b, cls_lm_word(lm, id), id)
                     : add_word(&b, map, n_labels, s->space, s->characters, cls_lm_word(lm, id), id);
    if (r < 0) st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "scorer: out of memory");
    else if (r == 0) note_skipped(info, cls_lm_word(lm, id));
    else info->words++;
  }
  if (st == CLS_OK && info->words == 0)
    st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                       "scorer: none of the model's %lld words can be spelled in the alphabet (e.g. %s)",
                       (long long)info->skipped, info->skipped_examples);
  if (st == CLS_OK && freeze(&b, s) != CLS_OK) st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "scorer: out of memory");
  free(map);
  free(b.nodes);
  if (st != CLS_OK) {
    cls_scorer_destroy(s);
    return st;
  }
  info->trie_nodes = s->n_nodes;
  info->memory_bytes = sizeof *s + ((size_t)s->n_nodes * 4 + 1) * sizeof(int32_t);
  *out = s;
  return CLS_OK;
}

cls_status cls_scorer_load(const char *path, const char *const *labels, int n_labels, cls_scorer **out,
                           cls_scorer_info *info, cls_error *err) {
  if (out) *out = NULL;
  cls_lm *lm = NULL;
  cls_status st = cls_lm_load(path, &lm, err);
  if (st != CLS_OK) return st;
  st = cls_scorer_create(lm, labels, n_labels, out, info, err);
  if (st != CLS_OK) {
    cls_lm_destroy(lm);
    return st;
  }
  (*out)->owned = lm;
  return CLS_OK;
}

void cls_scorer_destroy(cls_scorer *s) {
  if (!s) return;
  cls_lm_destroy(s->owned);
  free(s->first);
  free(s->word);
  free(s->child_label);
  free(s->child_node);
  free(s);
}

const cls_lm *cls_scorer_lm(const cls_scorer *s) { return s ? s->lm : NULL; }
int cls_scorer_labels(const cls_scorer *s) { return s ? s->n_labels : 0; }
int cls_scorer_space_label(const cls_scorer *s) { return s ? s->space : -1; }
bool cls_scorer_characters(const cls_scorer *s) { return s && s->characters; }

/* ---- scoring ---- */

double scorer_word_ln_prob(const cls_scorer *s, const int32_t *history, int n_history, int32_t word) {
  if (word < 0) return CLS_LM_OOV_SCORE;
  for (int i = 0; i < n_history; i++)
    if (history[i] < 0) return CLS_LM_OOV_SCORE; /* DeepSpeech: any word of the n-gram out of the vocabulary */
  return (double)cls_lm_score(s->lm, history, n_history, word) * LN_10;
}

/* The history a transcript is scored with: `word` after the last `keep` (the LM's order - 1) words. */
static void push_word(int32_t *hist, int *nh, int keep, int32_t word) {
  if (keep <= 0) return;
  if (*nh == keep) {
    memmove(hist, hist + 1, (size_t)(*nh - 1) * sizeof *hist);
    (*nh)--;
  }
  hist[(*nh)++] = word;
}

/* cls_scorer_transcript_score of a character model: a word is scored where its last label completes it. */
static double characters_score(const cls_scorer *s, const int32_t *labels, int n, double lm_alpha, double lm_beta,
                               bool *valid) {
  bool ok = true;
  double total = 0.0;
  int32_t hist[CLS_LM_MAX_ORDER];
  int nh = 0;
  const int keep = cls_lm_order(s->lm) - 1;
  if (keep > 0) hist[nh++] = cls_lm_bos(s->lm);
  int32_t node = 0;
  for (int i = 0; i < n; i++) {
    node = node >= 0 && labels[i] >= 0 && labels[i] < s->n_labels ? scorer_child(s, node, labels[i]) : -1;
    if (node < 0) ok = false;
    if (node <= 0 || s->word[node] < 0) continue;
    total += lm_alpha * scorer_word_ln_prob(s, hist, nh, s->word[node]) + lm_beta;
    push_word(hist, &nh, keep, s->word[node]);
    node = 0;
  }
  if (node != 0) total += lm_alpha * CLS_LM_OOV_SCORE + lm_beta; /* an unfinished character at the end */
  if (valid) *valid = ok;
  return total;
}

double cls_scorer_transcript_score(const cls_scorer *s, const int32_t *labels, int n, double lm_alpha,
                                   double lm_beta, bool *valid) {
  if (s->characters) return characters_score(s, labels, n, lm_alpha, lm_beta, valid);
  bool ok = true;
  double total = 0.0;
  int32_t hist[CLS_LM_MAX_ORDER];
  int nh = 0;
  const int keep = cls_lm_order(s->lm) - 1;
  if (keep > 0) hist[nh++] = cls_lm_bos(s->lm);
  int32_t node = 0; /* the trie node of the word so far; -1 once it has left the vocabulary */
  for (int i = 0; i <= n; i++) {
    const bool end = i == n;
    if (!end && labels[i] != s->space) {
      if (labels[i] < 0 || labels[i] >= s->n_labels) ok = false;
      node = node >= 0 && labels[i] >= 0 ? scorer_child(s, node, labels[i]) : -1;
      if (node < 0) ok = false;
      continue;
    }
    if (end && (n == 0 || labels[n - 1] == s->space)) break; /* no word left to score */
    const int32_t w = node >= 0 ? s->word[node] : -1;
    if (!end && (w < 0 || i == 0 || labels[i - 1] == s->space)) ok = false; /* a space after no whole word */
    total += lm_alpha * scorer_word_ln_prob(s, hist, nh, w) + lm_beta;
    push_word(hist, &nh, keep, w); /* -1 when out of the vocabulary: the next order-1 words score CLS_LM_OOV_SCORE */
    node = 0;
  }
  if (valid) *valid = ok;
  return total;
}
