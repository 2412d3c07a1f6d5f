/* Host-side CTC decoders: greedy decoding and the prefix beam search of DeepSpeech's ds_ctcdecoder,
 * with or without its language-model scorer (word or character models), over labels of characters or
 * of UTF-8 bytes (valid UTF-8 prefixes only), fed a chunk of frames at a time (cls_ctc_decoder) or a
 * whole utterance. The prefixes live in the trie of prefix_trie.c, each with its place in the
 * scorer's vocabulary trie and its word history beside it; beam_select.c ranks them. */
#include "clspeech/decode.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log_math.h"
#include "base/utf8.h"
#include "decode/beam_select.h"
#include "decode/prefix_trie.h"
#include "decode/scorer_trie.h"

cls_beam_options cls_beam_options_default(void) {
  cls_beam_options o = {1024, 1.0, 300, 1, NULL, CLS_LM_ALPHA_DEFAULT, CLS_LM_BETA_DEFAULT, NULL, NULL, 0, 0};
  return o;
}

void cls_beam_results_free(cls_beam_result *results, int n) {
  if (!results) return;
  for (int i = 0; i < n; i++) {
    free(results[i].labels);
    free(results[i].frames);
    memset(&results[i], 0, sizeof results[i]);
  }
}

/* ---- the search ---- */

typedef struct klass {
  double prob;
  double lp;
  int32_t k;
} klass;

static int klass_cmp(const void *pa, const void *pb) {
  const klass *a = pa, *b = pb;
  if (a->prob != b->prob) return a->prob > b->prob ? -1 : 1;
  return a->k < b->k ? -1 : (a->k > b->k);
}

/* An extension (parent, label) made in this frame that is not in the trie yet: it only becomes a
 * node if it survives the pruning (most do not). Each (parent, label) is made once per frame. */
typedef struct candidate {
  double nb;        /* log P(alignments ending in the new label) */
  double entry_lp;  /* log P(label) in this frame */
  int32_t parent, label;
  int32_t vocab;    /* with a scorer: the new node's place in the vocabulary trie */
} candidate;

/* With a scorer, each node's language-model state beside it (search.lms, indexed like the nodes): its
 * place in the vocabulary trie (the letters of its last word so far; 0 after a space) and the words
 * before it (<s> first), at most order-1 of them, which the next space scores the word against. */
typedef struct lm_state {
  int32_t vocab;
  int32_t n_hist;
  int32_t hist[CLS_LM_MAX_ORDER - 1];
  double space; /* lm_alpha * ln P(last word | hist) + lm_beta, once a space has extended the node; NaN before */
} lm_state;

typedef struct search {
  trie tr;
  klass *classes;
  int32_t *beam, *next;  /* the beam before this frame; the trie nodes alive after it */
  candidate *cand;
  ranked *rank;          /* index >= 0: a node; < 0: candidate ~index */
  size_t cap;            /* capacity of next, cand and rank */
  int32_t *done_labels, *done_frames; /* the committed start every prefix shares (see commit) */
  int n_done, cap_done;
  const cls_scorer *sc; /* NULL: no language model */
  double alpha, beta;
  const int32_t *hot_words; /* with a scorer: the hot-words' ids and boosts (cls_beam_options) */
  const double *hot_boosts;
  int n_hot_words;
  lm_state *lms;        /* with a scorer: capacity lms_cap >= tr.cap_nodes */
  int32_t lms_cap;
  bool utf8;            /* labels are UTF-8 bytes (label i = byte i+1): prefixes stay valid UTF-8 prefixes */
} search;

static void search_free(search *s) {
  free(s->tr.nodes);
  free(s->tr.free_list);
  free(s->tr.table);
  free(s->classes);
  free(s->beam);
  free(s->next);
  free(s->cand);
  free(s->rank);
  free(s->done_labels);
  free(s->done_frames);
  free(s->lms);
}

/* ---- the scorer's part ---- */

/* Appends `word` to a history, keeping the last order-1 words. */
static void push_history(const search *s, lm_state *n, int32_t word) {
  const int keep = cls_lm_order(s->sc->lm) - 1;
  if (keep <= 0) return;
  if (n->n_hist == keep) {
    memmove(n->hist, n->hist + 1, (size_t)(keep - 1) * sizeof *n->hist);
    n->n_hist--;
  }
  n->hist[n->n_hist++] = word;
}

/* Makes the language-model state of node `index`, the child of `parent` by `label` at place `vocab`
 * of the vocabulary trie: after a space the finished word joins the history. */
static cls_status lm_child(search *s, int32_t index, int32_t parent, int32_t label, int32_t vocab) {
  if (s->lms_cap < s->tr.cap_nodes) {
    lm_state *l = realloc(s->lms, (size_t)s->tr.cap_nodes * sizeof *l);
    if (!l) return CLS_ERR_OUT_OF_MEMORY;
    s->lms = l;
    s->lms_cap = s->tr.cap_nodes;
  }
  lm_state *n = &s->lms[index];
  if (parent < 0) { /* the root: the history is the start of the sentence */
    n->n_hist = 0;
    if (cls_lm_order(s->sc->lm) > 1) n->hist[n->n_hist++] = cls_lm_bos(s->sc->lm);
  } else {
    *n = s->lms[parent];
    if (s->sc->characters) { /* a completed character joins the history; its trie walk starts again */
      if (vocab > 0 && s->sc->word[vocab] >= 0) {
        push_history(s, n, s->sc->word[vocab]);
        vocab = 0;
      }
    } else if (label == s->sc->space) {
      push_history(s, n, s->sc->word[s->lms[parent].vocab]);
    }
  }
  n->vocab = vocab;
  n->space = NAN;
  return CLS_OK;
}

/* The vocabulary-trie place of the prefix `parent` extended by `label`, or -1 when that spelling is no
 * vocabulary word's (DeepSpeech's dictionary): a letter must continue some word, and a space may only
 * end a whole word (so never lead, nor follow another space). */
static int32_t lm_next_vocab(const search *s, int32_t parent, int32_t label) {
  const int32_t v = s->lms[parent].vocab;
  if (label == s->sc->space) return s->sc->word[v] >= 0 ? 0 : -1;
  return scorer_child(s->sc, v, label);
}

/* A character model's term for the character `word` completed after prefix `parent`: lm_alpha *
 * (ln P(word | the characters before) + its hot-word boosts) + lm_beta, as at a space. */
static double lm_char_score(const search *s, int32_t parent, int32_t word) {
  const lm_state *n = &s->lms[parent];
  double boost = 0.0;
  for (int i = 0; i < s->n_hot_words; i++) {
    for (int k = 0; k < n->n_hist; k++)
      if (n->hist[k] == s->hot_words[i]) boost += s->hot_boosts[i];
    if (word == s->hot_words[i]) boost += s->hot_boosts[i];
  }
  return s->alpha * (scorer_word_ln_prob(s->sc, n->hist, n->n_hist, word) + boost) + s->beta;
}

/* The UTF-8 state of prefix `p` from its last three bytes (the committed start supplies those the trie
 * no longer holds). */
static cls_utf8_state prefix_utf8_state(const search *s, int32_t p) {
  unsigned char tail[3];
  int k = 0;
  for (int32_t v = p; k < 3 && v > 0; v = s->tr.nodes[v].parent) tail[2 - k++] = (unsigned char)(s->tr.nodes[v].label + 1);
  for (int d = s->n_done - 1; k < 3 && d >= 0; d--) tail[2 - k++] = (unsigned char)(s->done_labels[d] + 1);
  return cls_utf8_state_of_tail(tail + 3 - k, k);
}

/* What extending `parent` by a space adds: lm_alpha * ln P(its last word | the words before) +
 * lm_beta (DeepSpeech scores a word when the space after it comes), computed once per node. */
static double lm_space_score(search *s, int32_t parent) {
  lm_state *n = &s->lms[parent];
  if (isnan(n->space)) {
    const int32_t word = s->sc->word[n->vocab];
    double boost = 0.0; /* the hot-words among the n-gram's words (ds_ctcdecoder 0.9.3's hot_boost) */
    for (int i = 0; i < s->n_hot_words; i++) {
      for (int k = 0; k < n->n_hist; k++)
        if (n->hist[k] == s->hot_words[i]) boost += s->hot_boosts[i];
      if (word == s->hot_words[i]) boost += s->hot_boosts[i];
    }
    n->space = s->alpha * (scorer_word_ln_prob(s->sc, n->hist, n->n_hist, word) + boost) + s->beta;
  }
  return n->space;
}

/* What the end of the utterance adds to a prefix that does not end in a space: its last word scored as
 * at a space, a word the vocabulary does not hold whole (a prefix of one) with DeepSpeech's OOV score.
 * 0 for the empty prefix and one that ends in a space. */
static double lm_final_score(const search *s, int32_t index) {
  const node *n = &s->tr.nodes[index];
  if (!s->sc || n->depth == 0 || (!s->sc->characters && n->label == s->sc->space)) return 0.0;
  const lm_state *l = &s->lms[index];
  if (s->sc->characters && l->vocab == 0) return 0.0; /* its last character was scored as it completed */
  return s->alpha * scorer_word_ln_prob(s->sc, l->hist, l->n_hist, s->sc->word[l->vocab]) + s->beta;
}

/* Log-softmax of one frame into s->classes (all C), then pruned as ds_ctcdecoder's
 * get_pruned_log_probs does; returns the number kept, or -1 for a bad frame. */
static int frame_classes(search *s, const float *row, int C, const cls_beam_options *o, double *p_blank) {
  double norm = 0.0;
  if (cls_log_softmax_norm(row, C, &norm) != 0) return -1;
  for (int k = 0; k < C; k++) {
    s->classes[k].k = k;
    s->classes[k].lp = (double)row[k] - norm;
    s->classes[k].prob = exp(s->classes[k].lp);
  }
  *p_blank = s->classes[C - 1].prob;
  int n = C;
  if (o->cutoff_prob < 1.0) {
    qsort(s->classes, (size_t)C, sizeof *s->classes, klass_cmp);
    double cum = 0.0;
    n = 0;
    while (n < C) {
      cum += s->classes[n].prob;
      n++;
      if (cum >= o->cutoff_prob || n >= o->cutoff_top_n) break;
    }
  }
  /* A class of probability 0 adds nothing to any prefix. */
  int kept = 0;
  for (int i = 0; i < n; i++)
    if (s->classes[i].lp > -INFINITY) s->classes[kept++] = s->classes[i];
  return kept;
}

static cls_status ensure_capacity(search *s, size_t need) {
  if (need <= s->cap) return CLS_OK;
  int32_t *nx = realloc(s->next, need * sizeof *nx);
  if (!nx) return CLS_ERR_OUT_OF_MEMORY;
  s->next = nx;
  candidate *cd = realloc(s->cand, need * sizeof *cd);
  if (!cd) return CLS_ERR_OUT_OF_MEMORY;
  s->cand = cd;
  ranked *rk = realloc(s->rank, need * sizeof *rk);
  if (!rk) return CLS_ERR_OUT_OF_MEMORY;
  s->rank = rk;
  int32_t *bm = realloc(s->beam, need * sizeof *bm);
  if (!bm) return CLS_ERR_OUT_OF_MEMORY;
  s->beam = bm;
  s->cap = need;
  return CLS_OK;
}

/* Extends every prefix of the beam by every kept class at frame t: blank and repeat mass stay on the
 * prefix itself; a new label goes to the prefix's child when the trie has one (a node that had left
 * the beam is appended to `next`, *next_count counting), else to a new candidate. Returns the number of
 * candidates. `scored` (s->sc != NULL) is a constant in each of the two copies extend_beam makes, so
 * the search without a scorer pays nothing for it. */
static inline __attribute__((always_inline)) int extend_beam_as(search *s, int t, int n_cls, int blank, int n_beam,
                                                                double cutoff, int *next_count, const bool scored) {
  trie *tr = &s->tr;
  int n_next = *next_count, n_cand = 0;
  for (int i = 0; i < n_beam; i++) {
    int32_t p = s->beam[i];
    node *pn = &tr->nodes[p];
    const cls_utf8_state u8 = s->utf8 ? prefix_utf8_state(s, p) : cls_utf8_state_start();
    for (int j = 0; j < n_cls; j++) {
      int32_t c = s->classes[j].k;
      double lp = s->classes[j].lp;
      if (scored && lp + pn->score < cutoff) continue; /* with a full beam: see search_step */
      if (c == blank) {
        pn->b_cur = cls_log_add(pn->b_cur, lp + pn->score);
        continue;
      }
      double extend;
      if (c == pn->label) {
        /* "aa" collapses to "a": the repeat stays in the prefix; "a-a" makes a new one. */
        pn->nb_cur = cls_log_add(pn->nb_cur, lp + pn->nb_prev);
        if (pn->b_prev == -INFINITY) continue;
        extend = lp + pn->b_prev;
      } else {
        extend = lp + pn->score;
      }
      if (s->utf8 && !cls_utf8_state_accepts(u8, (unsigned)c + 1)) continue; /* no UTF-8 text goes on so */
      int32_t child = pn->n_children ? table_find(tr, p, c) : -1; /* most prefixes have no children */
      int32_t vocab = 0;
      if (scored && s->sc->characters) {
        if ((vocab = scorer_child(s->sc, s->lms[p].vocab, c)) < 0) continue; /* spells no vocabulary character */
        if (s->sc->word[vocab] >= 0) extend += lm_char_score(s, p, s->sc->word[vocab]);
      } else if (scored) {
        if (child < 0 && (vocab = lm_next_vocab(s, p, c)) < 0) continue; /* no vocabulary word spelled so */
        if (c == s->sc->space) extend += lm_space_score(s, p);
      }
      if (child < 0) {
        candidate *cd = &s->cand[n_cand++];
        cd->nb = extend;
        cd->entry_lp = lp;
        cd->parent = p;
        cd->label = c;
        cd->vocab = vocab;
        continue;
      }
      node *cn = &tr->nodes[child];
      if (lp > cn->entry_lp) {
        cn->entry_lp = lp;
        cn->frame = t;
      }
      if (!cn->alive) {
        /* A node that had left the beam, kept only as an ancestor: it starts afresh. */
        cn->alive = 1;
        cn->b_prev = cn->nb_prev = cn->b_cur = cn->nb_cur = -INFINITY;
        s->next[n_next++] = child;
      }
      cn->nb_cur = cls_log_add(cn->nb_cur, extend);
    }
  }
  *next_count = n_next;
  return n_cand;
}

static int extend_beam(search *s, int t, int n_cls, int blank, int n_beam, double cutoff, int *next_count) {
  if (s->sc) return extend_beam_as(s, t, n_cls, blank, n_beam, cutoff, next_count, true);
  return extend_beam_as(s, t, n_cls, blank, n_beam, cutoff, next_count, false);
}

/* Moves the scores of the nodes of `next` on a frame and lists them, with the candidates, in s->rank
 * (a candidate's index as ~its index); entries of probability 0 are left out. Returns their number. */
static int rank_entries(search *s, int n_next, int n_cand) {
  trie *tr = &s->tr;
  int n_rank = 0;
  for (int i = 0; i < n_next; i++) {
    node *n = &tr->nodes[s->next[i]];
    n->b_prev = n->b_cur;
    n->nb_prev = n->nb_cur;
    n->b_cur = n->nb_cur = -INFINITY;
    n->score = cls_log_add(n->b_prev, n->nb_prev);
    if (n->score == -INFINITY) continue; /* probability 0: dropped below */
    s->rank[n_rank].score = n->score;
    s->rank[n_rank].label = n->label;
    s->rank[n_rank].index = s->next[i];
    n_rank++;
  }
  for (int i = 0; i < n_cand; i++) {
    if (s->cand[i].nb == -INFINITY) continue;
    s->rank[n_rank].score = s->cand[i].nb;
    s->rank[n_rank].label = s->cand[i].label;
    s->rank[n_rank].index = ~i;
    n_rank++;
  }
  return n_rank;
}

/* Keeps the first `kept` entries of s->rank as the beam: marks the surviving nodes and makes nodes of
 * the surviving candidates; then drops every other node of `next` (a dropped node's ancestors are
 * freed only once they are out of the beam and childless, so no node of `next` is freed before its
 * turn, and no parent of a new node at all). */
static cls_status keep_best(search *s, int t, int kept, int n_next) {
  trie *tr = &s->tr;
  for (int i = 0; i < kept; i++) {
    int32_t idx = s->rank[i].index;
    if (idx >= 0) {
      tr->nodes[idx].alive = 2;
      continue;
    }
    const candidate *cd = &s->cand[~idx];
    cls_status st = node_new(tr, cd->parent, cd->label, t, cd->entry_lp, &idx);
    if (st == CLS_OK && s->sc) st = lm_child(s, idx, cd->parent, cd->label, cd->vocab);
    if (st != CLS_OK) return st;
    node *n = &tr->nodes[idx];
    n->alive = 2;
    n->nb_prev = n->score = cd->nb;
    s->rank[i].index = idx;
  }
  for (int i = 0; i < n_next; i++)
    if (tr->nodes[s->next[i]].alive != 2) node_drop(tr, s->next[i]);
  for (int i = 0; i < kept; i++) {
    s->beam[i] = s->rank[i].index;
    tr->nodes[s->beam[i]].alive = 1;
  }
  return CLS_OK;
}

/* One frame: extends every prefix of the beam by every kept class, then keeps the beam_width best.
 * With a scorer and a full beam, ds_ctcdecoder skips the extensions whose score before the language
 * model, log P(class) + the prefix's score, is below the worst prefix's score + log P(blank) -
 * max(0, lm_beta): they could hardly beat that prefix followed by a blank. */
static cls_status search_step(search *s, int t, int n_cls, int blank, double p_blank, int beam_width, int *n_beam) {
  cls_status st = ensure_capacity(s, (size_t)*n_beam * (size_t)(n_cls + 1));
  if (st != CLS_OK) return st;
  double cutoff = -INFINITY;
  if (s->sc && *n_beam == beam_width) {
    double worst = INFINITY;
    for (int i = 0; i < *n_beam; i++)
      if (s->tr.nodes[s->beam[i]].score < worst) worst = s->tr.nodes[s->beam[i]].score;
    cutoff = worst + log(p_blank) - fmax(0.0, s->beta);
  }
  int n_next = 0;
  for (int i = 0; i < *n_beam; i++) s->next[n_next++] = s->beam[i];
  const int n_cand = extend_beam(s, t, n_cls, blank, *n_beam, cutoff, &n_next);
  const int n_rank = rank_entries(s, n_next, n_cand);
  if (n_rank > beam_width) select_best(s->rank, n_rank, beam_width);
  int kept = n_rank < beam_width ? n_rank : beam_width;
  st = keep_best(s, t, kept, n_next);
  if (st != CLS_OK) return st;
  *n_beam = kept;
  return CLS_OK;
}

/* Commits the start that every prefix of the beam shares, so that the trie holds the prefixes' recent
 * labels, not the whole transcript (an hour of audio is about 100k labels; a trie that large makes
 * every lookup a cache miss). From the root down, while a node is out of the beam and has one child,
 * the path is common to every prefix: its nodes' labels and frames move to done_labels/done_frames and
 * the nodes are freed, the first node kept becoming the root's child. Depths stay absolute, so a
 * prefix's first depth - n_done labels are in the trie. Called at fixed frames (not per feed) so that
 * node indices, which break exact ties, do not depend on the chunking. */
static cls_status commit(search *s, int C) {
  trie *tr = &s->tr;
  if (tr->nodes[0].alive || tr->nodes[0].n_children != 1) return CLS_OK;
  int32_t first = -1, x = 0;
  for (;;) {
    if (x != 0 && (tr->nodes[x].alive || tr->nodes[x].n_children != 1)) break;
    int32_t child = -1;
    for (int32_t c = 0; c < C - 1 && child < 0; c++) child = table_find(tr, x, c);
    if (child < 0) return CLS_OK; /* cannot happen: n_children says there is one */
    if (x == 0) first = child;
    x = child;
  }
  if (x == first) return CLS_OK; /* nothing between the root and the first node kept */
  const int add = tr->nodes[x].depth - 1 - s->n_done;
  if (s->n_done + add > s->cap_done) {
    int cap = s->cap_done ? s->cap_done : 256;
    while (cap < s->n_done + add) cap *= 2;
    int32_t *l = realloc(s->done_labels, (size_t)cap * sizeof *l);
    if (!l) return CLS_ERR_OUT_OF_MEMORY;
    s->done_labels = l;
    int32_t *f = realloc(s->done_frames, (size_t)cap * sizeof *f);
    if (!f) return CLS_ERR_OUT_OF_MEMORY;
    s->done_frames = f;
    s->cap_done = cap;
  }
  for (int32_t v = tr->nodes[x].parent; v > 0;) {
    const int32_t parent = tr->nodes[v].parent;
    const int at = tr->nodes[v].depth - 1;
    s->done_labels[at] = tr->nodes[v].label;
    s->done_frames[at] = tr->nodes[v].frame;
    table_remove(tr, v);
    tr->nodes[v].parent = -2;
    tr->free_list[tr->n_free++] = v;
    v = parent;
  }
  s->n_done += add;
  table_remove(tr, x);
  tr->nodes[x].parent = 0;
  table_put(tr, x);
  return CLS_OK;
}

/* The results: the best max_results prefixes of the beam, best first, with their labels and frames. */
static cls_status collect(search *s, int n_beam, cls_beam_result *results, int max_results, int *n_results) {
  trie *tr = &s->tr;
  for (int i = 0; i < n_beam; i++) {
    s->rank[i].score = tr->nodes[s->beam[i]].score + lm_final_score(s, s->beam[i]);
    s->rank[i].label = tr->nodes[s->beam[i]].label;
    s->rank[i].index = s->beam[i];
  }
  qsort(s->rank, (size_t)n_beam, sizeof *s->rank, ranked_cmp);
  int n = n_beam < max_results ? n_beam : max_results;
  for (int i = 0; i < n; i++) {
    const node *leaf = &tr->nodes[s->rank[i].index];
    cls_beam_result *r = &results[i];
    r->length = leaf->depth;
    r->log_prob = s->rank[i].score;
    if (leaf->depth > 0) {
      r->labels = malloc((size_t)leaf->depth * sizeof *r->labels);
      r->frames = malloc((size_t)leaf->depth * sizeof *r->frames);
      if (!r->labels || !r->frames) {
        cls_beam_results_free(results, i + 1);
        return CLS_ERR_OUT_OF_MEMORY;
      }
      int j = leaf->depth;
      for (int32_t v = s->rank[i].index; v > 0; v = tr->nodes[v].parent) {
        j--;
        r->labels[j] = tr->nodes[v].label;
        r->frames[j] = tr->nodes[v].frame;
      }
      if (j > 0) { /* j == s->n_done: the committed start */
        memcpy(r->labels, s->done_labels, (size_t)j * sizeof *r->labels);
        memcpy(r->frames, s->done_frames, (size_t)j * sizeof *r->frames);
      }
      if (s->utf8) { /* an unfinished last character is left out: the result is whole UTF-8 characters */
        const cls_utf8_state u8 = prefix_utf8_state(s, s->rank[i].index);
        if (u8.need) r->length -= u8.have;
      }
    }
  }
  *n_results = n;
  return CLS_OK;
}

/* ---- the decoder: begin, feed, finish ---- */

struct cls_ctc_decoder {
  int C, greedy;
  cls_beam_options o;
  int64_t t;         /* frames fed so far */
  cls_status failed; /* the first error; every later call returns it */
  /* greedy */
  int prev;          /* the previous frame's argmax (-1 before the first frame) */
  int32_t *labels, *frames;
  int n_labels, cap_labels;
  /* beam */
  search s;
  int n_beam, expanding;
};

void cls_ctc_decoder_free(cls_ctc_decoder *d) {
  if (!d) return;
  search_free(&d->s);
  free(d->labels);
  free(d->frames);
  free(d);
}

cls_status cls_ctc_decoder_begin(int C, int greedy, const cls_beam_options *options, cls_ctc_decoder **out) {
  if (out) *out = NULL;
  if (!out || C < 1) return CLS_ERR_INVALID_ARGUMENT;
  cls_beam_options o = options ? *options : cls_beam_options_default();
  if (!greedy && (o.beam_width < 1 || !(o.cutoff_prob > 0.0 && o.cutoff_prob <= 1.0) || o.cutoff_top_n < 1))
    return CLS_ERR_INVALID_ARGUMENT;
  if (!greedy && o.scorer && (cls_scorer_labels(o.scorer) != C - 1 || !isfinite(o.lm_alpha) || !isfinite(o.lm_beta)))
    return CLS_ERR_INVALID_ARGUMENT;
  if ((o.utf8_bytes && C != 256) || (!greedy && o.scorer && o.scorer->bytes && !o.utf8_bytes))
    return CLS_ERR_INVALID_ARGUMENT;
  if (!greedy && (o.n_hot_words < 0 || (o.n_hot_words > 0 && (!o.hot_words || !o.hot_boosts))))
    return CLS_ERR_INVALID_ARGUMENT;
  for (int i = 0; !greedy && o.scorer && i < o.n_hot_words; i++)
    if (o.hot_words[i] < 0 || o.hot_words[i] >= cls_lm_vocab_size(cls_scorer_lm(o.scorer)) ||
        !isfinite(o.hot_boosts[i]))
      return CLS_ERR_INVALID_ARGUMENT;
  cls_ctc_decoder *d = calloc(1, sizeof *d);
  if (!d) return CLS_ERR_OUT_OF_MEMORY;
  d->C = C;
  d->greedy = greedy != 0;
  d->o = o;
  d->prev = -1;
  if (d->greedy) {
    *out = d;
    return CLS_OK;
  }
  search *s = &d->s;
  s->tr.cap_nodes = 1024;
  s->tr.nodes = malloc((size_t)s->tr.cap_nodes * sizeof *s->tr.nodes);
  s->tr.free_list = malloc((size_t)s->tr.cap_nodes * sizeof *s->tr.free_list);
  s->tr.table_mask = 2048 - 1;
  s->tr.table = malloc(2048 * sizeof *s->tr.table);
  s->classes = malloc((size_t)C * sizeof *s->classes);
  cls_status st = CLS_ERR_OUT_OF_MEMORY;
  if (s->tr.nodes && s->tr.free_list && s->tr.table && s->classes && ensure_capacity(s, 64) == CLS_OK) {
    memset(s->tr.table, 0xff, 2048 * sizeof *s->tr.table);
    int32_t root;
    st = node_new(&s->tr, -1, -1, -1, 0.0, &root);
    s->sc = o.scorer;
    s->alpha = o.lm_alpha;
    s->beta = o.lm_beta;
    s->hot_words = o.hot_words;
    s->hot_boosts = o.hot_boosts;
    s->n_hot_words = o.n_hot_words;
    s->utf8 = o.utf8_bytes != 0;
    if (st == CLS_OK && s->sc) st = lm_child(s, root, -1, -1, 0);
    if (st == CLS_OK) {
      s->tr.nodes[root].alive = 1;
      s->tr.nodes[root].b_prev = 0.0;
      s->tr.nodes[root].score = 0.0;
      s->beam[0] = root;
      d->n_beam = 1;
      d->expanding = !o.delay_expansion;
    }
  }
  if (st != CLS_OK) {
    cls_ctc_decoder_free(d);
    return st;
  }
  *out = d;
  return CLS_OK;
}

static cls_status greedy_feed(cls_ctc_decoder *d, const float *logits, int T, size_t stride) {
  const int C = d->C;
  for (int t = 0; t < T; t++) {
    const float *row = logits + (size_t)t * stride;
    int best = 0;
    for (int k = 0; k < C; k++) {
      if (isnan(row[k])) return CLS_ERR_INVALID_ARGUMENT;
      if (row[k] > row[best]) best = k;
    }
    if (best != C - 1 && best != d->prev) {
      if (d->n_labels == d->cap_labels) {
        if (d->cap_labels > INT32_MAX / 2) return CLS_ERR_OUT_OF_MEMORY;
        int cap = d->cap_labels ? 2 * d->cap_labels : 256;
        int32_t *l = realloc(d->labels, (size_t)cap * sizeof *l);
        if (!l) return CLS_ERR_OUT_OF_MEMORY;
        d->labels = l;
        int32_t *f = realloc(d->frames, (size_t)cap * sizeof *f);
        if (!f) return CLS_ERR_OUT_OF_MEMORY;
        d->frames = f;
        d->cap_labels = cap;
      }
      d->labels[d->n_labels] = best;
      d->frames[d->n_labels++] = (int32_t)(d->t + t);
    }
    d->prev = best;
  }
  return CLS_OK;
}

static cls_status beam_feed(cls_ctc_decoder *d, const float *logits, int T, size_t stride) {
  for (int t = 0; t < T; t++) {
    double p_blank = 0.0;
    int n_cls = frame_classes(&d->s, logits + (size_t)t * stride, d->C, &d->o, &p_blank);
    if (n_cls < 0) return CLS_ERR_INVALID_ARGUMENT;
    if (!d->expanding && p_blank < 0.999) d->expanding = 1;
    if (!d->expanding) continue;
    cls_status st = search_step(&d->s, (int)(d->t + t), n_cls, d->C - 1, p_blank, d->o.beam_width, &d->n_beam);
    if (st == CLS_OK && ((d->t + t + 1) & 255) == 0) st = commit(&d->s, d->C);
    if (st != CLS_OK) return st;
  }
  return CLS_OK;
}

cls_status cls_ctc_decoder_feed(cls_ctc_decoder *d, const float *logits, int T, size_t stride) {
  if (!d) return CLS_ERR_INVALID_ARGUMENT;
  if (d->failed != CLS_OK) return d->failed;
  if (T < 0 || (T > 0 && (!logits || stride < (size_t)d->C)) || d->t + T > INT32_MAX)
    return d->failed = CLS_ERR_INVALID_ARGUMENT;
  cls_status st = d->greedy ? greedy_feed(d, logits, T, stride) : beam_feed(d, logits, T, stride);
  d->t += T;
  return d->failed = st;
}

/* Greedy labels of UTF-8 bytes cut down to whole valid characters, in place (as clspeech/data.h's
 * bytes alphabet decodes): a byte that cannot start a character is dropped, an unfinished character
 * is dropped where the next byte does not continue it (that byte read afresh) and at the end.
 * Returns the labels kept. */
static int whole_characters(int32_t *labels, int32_t *frames, int n) {
  int kept = 0; /* whole characters fill [0, kept); an unfinished one follows (never past i) */
  cls_utf8_state st = cls_utf8_state_start();
  for (int i = 0; i < n; i++) {
    const unsigned b = (unsigned)labels[i] + 1;
    if (!cls_utf8_state_accepts(st, b)) {
      st = cls_utf8_state_start();
      if (!cls_utf8_state_accepts(st, b)) continue;
    }
    const int at = kept + st.have;
    labels[at] = labels[i];
    frames[at] = frames[i];
    st = cls_utf8_state_push(st, b);
    if (st.need == 0) kept = at + 1;
  }
  return kept;
}

cls_status cls_ctc_decoder_finish(cls_ctc_decoder *d, cls_beam_result *results, int max_results, int *n_results) {
  if (n_results) *n_results = 0;
  if (!d || !n_results || !results || max_results < 1) return CLS_ERR_INVALID_ARGUMENT;
  if (d->failed != CLS_OK) return d->failed;
  memset(results, 0, (size_t)max_results * sizeof *results);
  if (!d->greedy) return collect(&d->s, d->n_beam, results, max_results, n_results);
  cls_beam_result *r = &results[0];
  r->length = d->n_labels;
  if (d->n_labels > 0) {
    r->labels = malloc((size_t)d->n_labels * sizeof *r->labels);
    r->frames = malloc((size_t)d->n_labels * sizeof *r->frames);
    if (!r->labels || !r->frames) {
      cls_beam_results_free(results, 1);
      return CLS_ERR_OUT_OF_MEMORY;
    }
    memcpy(r->labels, d->labels, (size_t)d->n_labels * sizeof *r->labels);
    memcpy(r->frames, d->frames, (size_t)d->n_labels * sizeof *r->frames);
    if (d->o.utf8_bytes) r->length = whole_characters(r->labels, r->frames, r->length);
  }
  *n_results = 1;
  return CLS_OK;
}

/* ---- whole utterances ---- */

cls_status cls_ctc_greedy_host(const float *logits, int T, int C, size_t stride, int32_t *out, int *n_out) {
  if (n_out) *n_out = 0;
  if (T < 0 || C < 1 || !n_out || (T > 0 && (!logits || !out || stride < (size_t)C))) return CLS_ERR_INVALID_ARGUMENT;
  cls_ctc_decoder *d = NULL;
  cls_status st = cls_ctc_decoder_begin(C, 1, NULL, &d);
  if (st == CLS_OK) st = cls_ctc_decoder_feed(d, logits, T, stride);
  if (st == CLS_OK && d->n_labels > 0) memcpy(out, d->labels, (size_t)d->n_labels * sizeof *out);
  if (st == CLS_OK) *n_out = d->n_labels;
  cls_ctc_decoder_free(d);
  return st;
}

cls_status cls_ctc_beam_search(const float *logits, int T, int C, size_t stride, const cls_beam_options *options,
                               cls_beam_result *results, int max_results, int *n_results) {
  if (n_results) *n_results = 0;
  if (!n_results || !results || max_results < 1 || T < 0 || C < 1 || (T > 0 && (!logits || stride < (size_t)C)))
    return CLS_ERR_INVALID_ARGUMENT;
  memset(results, 0, (size_t)max_results * sizeof *results);
  cls_ctc_decoder *d = NULL;
  cls_status st = cls_ctc_decoder_begin(C, 0, options, &d);
  if (st == CLS_OK) st = cls_ctc_decoder_feed(d, logits, T, stride);
  if (st == CLS_OK) st = cls_ctc_decoder_finish(d, results, max_results, n_results);
  cls_ctc_decoder_free(d);
  return st;
}
