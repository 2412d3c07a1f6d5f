/* The language-model builder: counts the n-grams of a text corpus, applies interpolated modified
 * Kneser-Ney smoothing as KenLM's lmplz does, and writes the model as an ARPA file
 * (include/clspeech/lm_build.h). Host-only; everything is held in sorted arrays in memory. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "clspeech/lm_build.h"
#include "decode/lm_model.h"

enum { UNK = 0, BOS = 1, EOS = 2 };

/* One n-gram: up to 6 word ids (unused slots 0), compared lexicographically over all 6. */
typedef struct gram {
  uint32_t w[CLS_LM_MAX_ORDER];
} gram;

typedef struct order_table {
  size_t n_grams;
  gram *g;
  uint64_t *raw, *adj;
  uint8_t *keep; /* written to the ARPA file (not pruned, or needed by a kept higher-order n-gram) */
  double *prob, *bow;
} order_table;

typedef struct vocab {
  char **words;
  uint32_t n, cap;
  uint32_t *slots; /* open addressing: id + 1, 0 = empty */
  size_t n_slots;
} vocab;

cls_lm_build_options cls_lm_build_options_default(void) {
  cls_lm_build_options o = {5, 0, {0}, NULL, NULL, 0};
  return o;
}

static int gram_cmp(const void *a, const void *b) {
  const gram *x = a, *y = b;
  for (int i = 0; i < CLS_LM_MAX_ORDER; i++)
    if (x->w[i] != y->w[i]) return x->w[i] < y->w[i] ? -1 : 1;
  return 0;
}

static int vocab_grow(vocab *v) {
  size_t n_slots = v->n_slots ? v->n_slots * 2 : 1024;
  uint32_t *slots = calloc(n_slots, sizeof *slots);
  if (!slots) return -1;
  for (uint32_t id = 0; id < v->n; id++) {
    size_t s = lm_word_hash(v->words[id], strlen(v->words[id])) & (n_slots - 1);
    while (slots[s]) s = (s + 1) & (n_slots - 1);
    slots[s] = id + 1;
  }
  free(v->slots);
  v->slots = slots;
  v->n_slots = n_slots;
  return 0;
}

/* The id of the word s[0..len), added when new; -1 when out of memory. */
static int64_t vocab_id(vocab *v, const char *s, size_t len) {
  if ((size_t)(v->n + 1) * 2 > v->n_slots && vocab_grow(v)) return -1;
  size_t i = lm_word_hash(s, len) & (v->n_slots - 1);
  while (v->slots[i]) {
    const char *w = v->words[v->slots[i] - 1];
    if (strlen(w) == len && !memcmp(w, s, len)) return v->slots[i] - 1;
    i = (i + 1) & (v->n_slots - 1);
  }
  if (v->n == v->cap) {
    uint32_t cap = v->cap ? v->cap * 2 : 1024;
    char **words = realloc(v->words, cap * sizeof *words);
    if (!words) return -1;
    v->words = words;
    v->cap = cap;
  }
  char *copy = malloc(len + 1);
  if (!copy) return -1;
  memcpy(copy, s, len);
  copy[len] = 0;
  v->words[v->n] = copy;
  v->slots[i] = v->n + 1;
  return v->n++;
}

static void vocab_free(vocab *v) {
  for (uint32_t i = 0; i < v->n; i++) free(v->words[i]);
  free(v->words);
  free(v->slots);
}

static void table_free(order_table *t) {
  free(t->g);
  free(t->raw);
  free(t->adj);
  free(t->prob);
  free(t->bow);
  free(t->keep);
}

static void progress(const cls_lm_build_options *o, const char *fmt, ...) CLS_PRINTF(2, 3);
static void progress(const cls_lm_build_options *o, const char *fmt, ...) {
  if (!o->progress) return;
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  o->progress(o->user, buf);
}

/* The corpus as one stream of ids: every sentence is <s> w... </s>. */
typedef struct corpus {
  uint32_t *ids;
  size_t n, cap;
} corpus;

static int corpus_push(corpus *c, uint32_t id) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 65536;
    uint32_t *ids = realloc(c->ids, cap * sizeof *ids);
    if (!ids) return -1;
    c->ids = ids;
    c->cap = cap;
  }
  c->ids[c->n++] = id;
  return 0;
}

static cls_status oom(cls_error *err) { return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "lm: out of memory"); }

/* One line of `f` into *line (grown as needed), its '\n' kept: its length, -1 at the end of the file
 * (or on a read error, ferror tells) or out of memory (*oom set). A NUL byte ends the line there, kept
 * in it, so that an endless device of zeros (/dev/zero) is one byte, not a line without end. */
static ssize_t read_line(FILE *f, char **line, size_t *cap, bool *oom) {
  size_t n = 0;
  for (int c; (c = getc_unlocked(f)) != EOF;) {
    if (n + 2 > *cap) {
      size_t bigger = *cap ? *cap * 2 : 4096;
      char *p = realloc(*line, bigger);
      if (!p) {
        *oom = true;
        return -1;
      }
      *line = p;
      *cap = bigger;
    }
    (*line)[n++] = (char)c;
    if (c == '\n' || c == '\0') break;
  }
  if (n == 0) return -1;
  (*line)[n] = '\0';
  return (ssize_t)n;
}

/* Where the first word of the token line[b..e) ends: the token is one word, or with `characters` each
 * of its characters is one (an invalid UTF-8 byte is an error naming the line, in *status). */
static size_t token_word(const char *line, size_t b, size_t e, bool characters, const char *path,
                         unsigned long long line_no, cls_status *status, cls_error *err) {
  if (!characters) return e;
  uint32_t cp;
  int k = cls_utf8_decode((const unsigned char *)line + b, e - b, &cp);
  if (k > 0) return b + (size_t)k;
  *status = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                          "%s:%llu: byte %zu (0x%02X) is not valid UTF-8 (--characters splits the text into characters)",
                          path, line_no, b + 1, (unsigned char)line[b]);
  return e;
}

static cls_status read_corpus(const char *path, bool characters, vocab *v, corpus *c, cls_lm_build_stats *st,
                              cls_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  static const char *const specials[] = {"<unk>", "<s>", "</s>"};
  for (int i = 0; i < 3; i++)
    if (vocab_id(v, specials[i], strlen(specials[i])) != i) {
      fclose(f);
      return oom(err);
    }
  char *line = NULL;
  size_t line_cap = 0;
  ssize_t len;
  uint64_t line_no = 0;
  cls_status status = CLS_OK;
  bool no_memory = false;
  while (status == CLS_OK && (len = read_line(f, &line, &line_cap, &no_memory)) >= 0) {
    line_no++;
    if (memchr(line, '\0', (size_t)len)) { /* a word holding it could not be written as ARPA text */
      status = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%llu: a NUL byte: binary data, not text", path,
                             (unsigned long long)line_no);
      break;
    }
    size_t pos = 0, words = 0;
    while (status == CLS_OK) {
      while (pos < (size_t)len && lm_is_space(line[pos])) pos++;
      if (pos >= (size_t)len) break;
      size_t b = pos, token_end = pos;
      while (token_end < (size_t)len && !lm_is_space(line[token_end])) token_end++;
      pos = token_word(line, b, token_end, characters, path, (unsigned long long)line_no, &status, err);
      if (status != CLS_OK) break;
      if (!words && corpus_push(c, BOS)) status = oom(err);
      int64_t id = status == CLS_OK ? vocab_id(v, line + b, pos - b) : 0;
      if (id < 0) status = oom(err);
      else if (status == CLS_OK && id <= EOS) /* lmplz refuses all three too */
        status = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                               "%s:%llu: the word %s is reserved (sentences get <s> and </s> added; <unk> stands "
                               "for words outside the text)",
                               path, (unsigned long long)line_no, specials[id]);
      else if (status == CLS_OK && corpus_push(c, (uint32_t)id)) status = oom(err);
      words++;
    }
    /* a blank line is an empty sentence, <s> </s>, as lmplz counts it */
    if (status == CLS_OK && !words && corpus_push(c, BOS)) status = oom(err);
    if (status == CLS_OK) {
      if (corpus_push(c, EOS)) status = oom(err);
      st->sentences++;
      st->words += words;
    }
  }
  if (status == CLS_OK && no_memory) status = oom(err);
  if (status == CLS_OK && ferror(f)) status = cls_error_set(err, CLS_ERR_IO, "%s: read error: %s", path, strerror(errno));
  free(line);
  fclose(f);
  if (status == CLS_OK && !st->words)
    status = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: no words (an empty text cannot make a language model)", path);
  return status;
}

/* Sorted, unique n-grams of order n with their raw counts (the length of each run once sorted). */
static cls_status count_order(const corpus *c, int n, order_table *t, cls_error *err) {
  size_t cap = c->n, m = 0;
  gram *all = malloc((cap ? cap : 1) * sizeof *all);
  uint64_t *raw = malloc((cap ? cap : 1) * sizeof *raw);
  if (!all || !raw) {
    free(all);
    free(raw);
    return oom(err);
  }
  size_t sent = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (c->ids[i] == BOS) sent = i;
    if (i + 1 < sent + (size_t)n) continue; /* fewer than n ids since the sentence's <s> */
    gram g = {{0}};
    for (int k = 0; k < n; k++) g.w[k] = c->ids[i + 1 - (size_t)n + (size_t)k];
    all[m++] = g;
  }
  qsort(all, m, sizeof *all, gram_cmp);
  size_t u = 0;
  for (size_t i = 0; i < m; i++) {
    if (!u || gram_cmp(&all[u - 1], &all[i])) {
      all[u] = all[i];
      raw[u++] = 1;
    } else {
      raw[u - 1]++;
    }
  }
  t->n_grams = u;
  gram *g = realloc(all, (u ? u : 1) * sizeof *all);
  t->g = g ? g : all;
  uint64_t *r = realloc(raw, (u ? u : 1) * sizeof *raw);
  t->raw = r ? r : raw;
  t->adj = calloc(u ? u : 1, sizeof *t->adj);
  t->prob = calloc(u ? u : 1, sizeof *t->prob);
  t->bow = calloc(u ? u : 1, sizeof *t->bow);
  t->keep = calloc(u + 1, sizeof *t->keep); /* + 1: room for <unk> */
  if (!t->adj || !t->prob || !t->bow || !t->keep) return oom(err);
  return CLS_OK;
}

static long find(const order_table *t, const gram *key) {
  size_t lo = 0, hi = t->n_grams;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = gram_cmp(&t->g[mid], key);
    if (!c) return (long)mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/* Adjusted counts of order n < N: grams starting with <s> keep their raw count, the others get the
 * number of distinct words seen before them (the (n+1)-grams they end). */
static cls_status adjust_counts(order_table *t, const order_table *up, int n, cls_error *err) {
  gram *suf = malloc((up->n_grams ? up->n_grams : 1) * sizeof *suf);
  if (!suf) return oom(err);
  for (size_t i = 0; i < up->n_grams; i++) {
    gram g = {{0}};
    for (int k = 0; k < n; k++) g.w[k] = up->g[i].w[k + 1];
    suf[i] = g;
  }
  qsort(suf, up->n_grams, sizeof *suf, gram_cmp);
  size_t j = 0;
  for (size_t i = 0; i < t->n_grams; i++) {
    if (t->g[i].w[0] == BOS) {
      t->adj[i] = n == 1 ? 0 : t->raw[i]; /* the unigram <s> is no part of the distribution */
      continue;
    }
    while (j < up->n_grams && gram_cmp(&suf[j], &t->g[i]) < 0) j++;
    uint64_t k = 0;
    while (j < up->n_grams && !gram_cmp(&suf[j], &t->g[i])) k++, j++;
    t->adj[i] = k;
  }
  free(suf);
  return CLS_OK;
}

static double discount_of(const double d[3], uint64_t count) { return count >= 3 ? d[2] : d[count - 1]; }

/* The n-gram lmplz's adjust_counts sees last at order n: the greatest in suffix order (last word
 * first; word ids in order of first appearance after <unk> <s> </s>, as lmplz numbers them). */
static size_t suffix_last(const order_table *t, int n) {
  size_t best = 0;
  for (size_t i = 1; i < t->n_grams; i++)
    for (int k = n - 1; k >= 0; k--)
      if (t->g[i].w[k] != t->g[best].w[k]) {
        if (t->g[i].w[k] > t->g[best].w[k]) best = i;
        break;
      }
  return best;
}

/* n1..n4 and D1, D2, D3+ of order n. Below the highest order, lmplz (0.3.0's AdjustCounts::Run, the
 * loop after the main one) counts the last n-gram it flushes by its raw count instead of its adjusted
 * count; that n-gram is counted the same way here, so the discounts match lmplz's exactly. */
static cls_status discounts(const order_table *t, int n, int order, const cls_lm_build_options *o,
                            cls_lm_build_stats *st, cls_error *err) {
  uint64_t *nk = st->count_of_counts[n - 1];
  size_t last = n < order && t->n_grams ? suffix_last(t, n) : (size_t)-1;
  for (size_t i = 0; i < t->n_grams; i++) {
    if (n == 1 && t->g[i].w[0] == BOS) continue;
    uint64_t c = i == last ? t->raw[i] : t->adj[i];
    if (c >= 1 && c <= 4) nk[c - 1]++;
  }
  double *d = st->discount[n - 1];
  int ok = nk[0] && nk[1] && nk[2] && nk[3];
  if (ok) {
    double y = (double)nk[0] / ((double)nk[0] + 2.0 * (double)nk[1]);
    for (int k = 1; k <= 3; k++) {
      d[k - 1] = k - (k + 1) * y * (double)nk[k] / (double)nk[k - 1];
      if (!(d[k - 1] >= 0 && d[k - 1] <= k)) ok = 0;
    }
  }
  if (ok) return CLS_OK;
  if (!o->discount_fallback)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "lm: cannot estimate the %d-gram discounts from counts-of-counts n1..n4 = %llu %llu %llu %llu "
                         "(the text is too small or too uniform; --discount_fallback uses 0.5 1 1.5)",
                         n, (unsigned long long)nk[0], (unsigned long long)nk[1], (unsigned long long)nk[2],
                         (unsigned long long)nk[3]);
  d[0] = 0.5, d[1] = 1.0, d[2] = 1.5;
  return CLS_OK;
}

/* Which n-grams are written: every unigram; an n-gram of order n >= 2 when its raw count is above
 * prune[n-1] or a kept (n+1)-gram starts or ends with it (ARPA readers look both up). */
static void mark_kept(order_table *tabs, int order, const uint64_t *prune) {
  for (int n = order; n >= 1; n--) {
    order_table *t = &tabs[n - 1];
    for (size_t i = 0; i < t->n_grams; i++) {
      if (n == 1 || t->raw[i] > prune[n - 1]) t->keep[i] = 1;
      if (n == 1 || !t->keep[i]) continue;
      gram pre = t->g[i], suf = {{0}};
      pre.w[n - 1] = 0;
      for (int q = 0; q < n - 1; q++) suf.w[q] = t->g[i].w[q + 1];
      long a = find(&tabs[n - 2], &pre), b = find(&tabs[n - 2], &suf);
      if (a >= 0) tabs[n - 2].keep[a] = 1;
      if (b >= 0) tabs[n - 2].keep[b] = 1;
    }
  }
}

/* Interpolated probabilities of order n, and the backoffs of their contexts (order n-1). */
static void interpolate(order_table *tabs, int n, const double d[3], double uniform) {
  order_table *t = &tabs[n - 1];
  size_t i = 0;
  while (i < t->n_grams) {
    size_t e = i;
    double sum = 0, mass = 0;
    while (e < t->n_grams && (n == 1 || !memcmp(t->g[e].w, t->g[i].w, (size_t)(n - 1) * sizeof(uint32_t)))) {
      if (t->adj[e]) {
        sum += (double)t->adj[e];
        mass += t->keep[e] ? discount_of(d, t->adj[e]) : (double)t->adj[e];
      }
      e++;
    }
    double gamma = sum > 0 ? mass / sum : 1.0;
    for (size_t k = i; k < e; k++) {
      double lower = uniform;
      if (n > 1) {
        gram s = {{0}};
        for (int q = 0; q < n - 1; q++) s.w[q] = t->g[k].w[q + 1];
        long at = find(&tabs[n - 2], &s);
        lower = at >= 0 ? tabs[n - 2].prob[at] : 0;
      }
      if (!t->keep[k]) continue;
      double u = t->adj[k] ? ((double)t->adj[k] - discount_of(d, t->adj[k])) / sum : 0;
      t->prob[k] = (n == 1 && t->g[k].w[0] == BOS) ? 0 : u + gamma * lower;
    }
    if (n > 1) {
      gram h = {{0}};
      for (int q = 0; q < n - 1; q++) h.w[q] = t->g[i].w[q];
      long at = find(&tabs[n - 2], &h);
      if (at >= 0) tabs[n - 2].bow[at] = gamma;
    }
    i = e;
  }
}

/* `kept[n-1]`: how many n-grams of order n are marked to be written (cls_lm_build_stats.ngrams). */
static void write_arpa(FILE *f, const order_table *tabs, int order, const uint64_t *kept, const vocab *v) {
  fprintf(f, "\\data\\\n");
  for (int n = 1; n <= order; n++) fprintf(f, "ngram %d=%zu\n", n, (size_t)kept[n - 1]);
  for (int n = 1; n <= order; n++) {
    const order_table *t = &tabs[n - 1];
    fprintf(f, "\n\\%d-grams:\n", n);
    for (size_t i = 0; i < t->n_grams; i++) {
      if (!t->keep[i]) continue;
      double lp = (n == 1 && t->g[i].w[0] == BOS) ? 0.0 : log10(t->prob[i]); /* lmplz writes 0 */
      fprintf(f, "%.7g\t", lp);
      for (int k = 0; k < n; k++) fprintf(f, "%s%s", k ? " " : "", v->words[t->g[i].w[k]]);
      if (n < order) fprintf(f, "\t%.7g", t->bow[i] > 0 ? log10(t->bow[i]) : 0.0);
      fputc('\n', f);
    }
  }
  fprintf(f, "\n\\end\\\n");
}

/* Adds <unk> (id 0, so first in order) to the unigrams with raw count 0. */
static cls_status add_unk(order_table *t, cls_error *err) {
  size_t m = t->n_grams + 1;
  gram *g = realloc(t->g, m * sizeof *g);
  if (!g) return oom(err);
  t->g = g;
  uint64_t *raw = realloc(t->raw, m * sizeof *raw);
  if (!raw) return oom(err);
  t->raw = raw;
  uint64_t *adj = realloc(t->adj, m * sizeof *adj);
  if (!adj) return oom(err);
  t->adj = adj;
  double *prob = realloc(t->prob, m * sizeof *prob);
  if (!prob) return oom(err);
  t->prob = prob;
  double *bow = realloc(t->bow, m * sizeof *bow);
  if (!bow) return oom(err);
  t->bow = bow;
  memmove(t->g + 1, t->g, t->n_grams * sizeof *g);
  memmove(t->raw + 1, t->raw, t->n_grams * sizeof *raw);
  t->g[0] = (gram){{UNK}};
  t->raw[0] = 0;
  t->n_grams = m;
  return CLS_OK; /* keep was allocated with room for one more */
}

/* The model of `text_path` built and written as ARPA to `to` (the output file, or a stream in memory);
   `what` names it in the progress line. */
static cls_status build(const char *text_path, FILE *to, const char *what,
                        const cls_lm_build_options *options, cls_lm_build_stats *stats, cls_error *err) {
  cls_lm_build_options o = options ? *options : cls_lm_build_options_default();
  cls_lm_build_stats local;
  cls_lm_build_stats *st = stats ? stats : &local;
  memset(st, 0, sizeof *st);
  if (o.order < 1 || o.order > CLS_LM_MAX_ORDER)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "lm: order %d is outside 1..%d", o.order, CLS_LM_MAX_ORDER);
  if (o.prune[0])
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "lm: unigrams cannot be pruned (the first prune threshold must be 0)");
  vocab v = {0};
  corpus c = {0};
  order_table tabs[CLS_LM_MAX_ORDER];
  memset(tabs, 0, sizeof tabs);
  progress(&o, "reading %s", text_path);
  cls_status status = read_corpus(text_path, o.characters != 0, &v, &c, st, err);
  if (status == CLS_OK)
    progress(&o, "%llu sentences, %llu words, %u word types", (unsigned long long)st->sentences,
             (unsigned long long)st->words, v.n - 3);
  for (int n = 1; status == CLS_OK && n <= o.order; n++) {
    progress(&o, "counting %d-grams", n);
    status = count_order(&c, n, &tabs[n - 1], err);
  }
  /* <unk> is a unigram with count 0 unless the text spells it */
  if (status == CLS_OK && find(&tabs[0], &(gram){{UNK}}) < 0) status = add_unk(&tabs[0], err);
  free(c.ids);
  for (int n = o.order; status == CLS_OK && n >= 1; n--) {
    order_table *t = &tabs[n - 1];
    if (n == o.order) {
      for (size_t i = 0; i < t->n_grams; i++) t->adj[i] = (n == 1 && t->g[i].w[0] == BOS) ? 0 : t->raw[i];
    } else {
      status = adjust_counts(t, &tabs[n], n, err);
    }
    if (status == CLS_OK) status = discounts(t, n, o.order, &o, st, err);
  }
  if (status == CLS_OK) mark_kept(tabs, o.order, o.prune);
  for (int n = 1; status == CLS_OK && n <= o.order; n++) {
    progress(&o, "interpolating %d-grams", n);
    memset(tabs[n - 1].bow, 0, tabs[n - 1].n_grams * sizeof(double));
    /* uniform over the unigrams but <s> */
    interpolate(tabs, n, st->discount[n - 1], 1.0 / (double)(tabs[0].n_grams - 1));
    for (size_t i = 0; i < tabs[n - 1].n_grams; i++) st->ngrams[n - 1] += tabs[n - 1].keep[i];
  }
  if (status == CLS_OK) {
    progress(&o, "writing %s", what);
    write_arpa(to, tabs, o.order, st->ngrams, &v); /* a write error is found when `to` is closed */
  }
  for (int n = 0; n < CLS_LM_MAX_ORDER; n++) table_free(&tabs[n]);
  vocab_free(&v);
  return status;
}

cls_status cls_lm_build_arpa(const char *text_path, const char *arpa_path, const cls_lm_build_options *options,
                             cls_lm_build_stats *stats, cls_error *err) {
  if (!text_path || !arpa_path)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "lm: a text path and an output path are required");
  cls_output *out = NULL; /* the output rule (clspeech/base.h) */
  cls_status st = cls_output_open(arpa_path, &out, err);
  if (st != CLS_OK) return st;
  st = build(text_path, cls_output_file(out), arpa_path, options, stats, err);
  if (st != CLS_OK) {
    cls_output_abort(out);
    return st;
  }
  return cls_output_commit(out, arpa_path, err);
}

cls_status cls_lm_build_arpa_text(const char *text_path, const cls_lm_build_options *options, char **text,
                                  size_t *size, cls_lm_build_stats *stats, cls_error *err) {
  *text = NULL;
  *size = 0;
  if (!text_path) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "lm: a text path is required");
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) return oom(err);
  cls_status st = build(text_path, mem, "the ARPA text in memory", options, stats, err);
  const int closed = fclose(mem) == 0;
  if (st == CLS_OK && !closed) st = oom(err);
  if (st != CLS_OK) {
    free(buf);
    return st;
  }
  *text = buf;
  *size = len;
  return CLS_OK;
}
