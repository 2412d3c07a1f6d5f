/* WER and CER as DeepSpeech's evaluation computes them: text split into codepoints (base/utf8.h), Levenshtein distance
 * over codepoints and over words (interned to integers through a small hash table), the corpus
 * figures, and the report's sample order and sections. */
#include "clspeech/decode.h"

#include "base/utf8.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

cls_status cls_levenshtein(const int32_t *a, int na, const int32_t *b, int nb, int *distance) {
  if (!distance || na < 0 || nb < 0 || (na > 0 && !a) || (nb > 0 && !b)) return CLS_ERR_INVALID_ARGUMENT;
  if (na < nb) { /* the row runs over the shorter sequence */
    const int32_t *ts = a;
    a = b;
    b = ts;
    int tn = na;
    na = nb;
    nb = tn;
  }
  int *row = malloc(((size_t)nb + 1) * sizeof *row);
  if (!row) return CLS_ERR_OUT_OF_MEMORY;
  for (int j = 0; j <= nb; j++) row[j] = j;
  for (int i = 1; i <= na; i++) {
    int diag = row[0]; /* row[i-1][j-1] */
    row[0] = i;
    for (int j = 1; j <= nb; j++) {
      int up = row[j]; /* row[i-1][j] */
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  *distance = row[nb];
  free(row);
  return CLS_OK;
}

cls_status cls_utf8_codepoints(const char *text, int32_t *out, int cap, int *n) {
  if (n) *n = 0;
  if (!text || !n || cap < 0 || (cap > 0 && !out)) return CLS_ERR_INVALID_ARGUMENT;
  const unsigned char *s = (const unsigned char *)text;
  const size_t len = strlen(text);
  int count = 0;
  for (size_t i = 0; i < len;) {
    uint32_t c = 0;
    int k = cls_utf8_decode(s + i, len - i, &c);
    if (k == 0 || count == INT_MAX) return CLS_ERR_INVALID_ARGUMENT;
    if (count < cap) out[count] = (int32_t)c;
    count++;
    i += (size_t)k;
  }
  *n = count;
  return CLS_OK;
}

bool cls_is_space(int32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* The codepoints of a text in a new array (*out, never NULL on success). */
static cls_status decode_alloc(const char *text, int32_t **out, int *n) {
  *out = NULL;
  cls_status st = cls_utf8_codepoints(text, NULL, 0, n);
  if (st != CLS_OK) return st;
  *out = malloc(((size_t)*n + 1) * sizeof **out);
  if (!*out) return CLS_ERR_OUT_OF_MEMORY;
  return cls_utf8_codepoints(text, *out, *n, n);
}

cls_status cls_char_distance(const char *a, const char *b, int *distance, int *length_a) {
  if (!a || !b || !distance) return CLS_ERR_INVALID_ARGUMENT;
  int32_t *ca = NULL, *cb = NULL;
  int na = 0, nb = 0;
  cls_status st = decode_alloc(a, &ca, &na);
  if (st == CLS_OK) st = decode_alloc(b, &cb, &nb);
  if (st == CLS_OK) st = cls_levenshtein(ca, na, cb, nb, distance);
  if (st == CLS_OK && length_a) *length_a = na;
  free(ca);
  free(cb);
  return st;
}

/* The words of a codepoint sequence: start and length of each maximal run of non-space codepoints. */
static int split_words(const int32_t *c, int n, int *start, int *len) {
  int w = 0;
  for (int i = 0; i < n;) {
    while (i < n && cls_is_space(c[i])) i++;
    if (i == n) break;
    int s = i;
    while (i < n && !cls_is_space(c[i])) i++;
    start[w] = s;
    len[w] = i - s;
    w++;
  }
  return w;
}

static uint32_t word_hash(const int32_t *c, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < n; i++) {
    uint32_t v = (uint32_t)c[i];
    for (int k = 0; k < 4; k++) {
      h ^= (v >> (8 * k)) & 0xffu;
      h *= 16777619u;
    }
  }
  return h;
}

/* Replaces each word by an integer, equal for equal words: the index of the word's first occurrence. */
static cls_status intern_words(const int32_t *cp, const int *start, const int *len, int n, int32_t *ids) {
  uint32_t cap = 16;
  while (cap < 2u * (uint32_t)n) cap *= 2;
  int *table = malloc(cap * sizeof *table);
  if (!table) return CLS_ERR_OUT_OF_MEMORY;
  memset(table, 0xff, cap * sizeof *table);
  for (int w = 0; w < n; w++) {
    uint32_t i = word_hash(cp + start[w], len[w]) & (cap - 1);
    for (;; i = (i + 1) & (cap - 1)) {
      int o = table[i];
      if (o < 0) {
        table[i] = w;
        ids[w] = w;
        break;
      }
      if (len[o] == len[w] && !memcmp(cp + start[o], cp + start[w], (size_t)len[w] * sizeof *cp)) {
        ids[w] = o;
        break;
      }
    }
  }
  free(table);
  return CLS_OK;
}

cls_status cls_word_distance(const char *a, const char *b, int *distance, int *words_a) {
  if (!a || !b || !distance) return CLS_ERR_INVALID_ARGUMENT;
  int32_t *ca = NULL, *cb = NULL, *cp = NULL, *ids = NULL;
  int *start = NULL, *len = NULL;
  int na = 0, nb = 0;
  cls_status st = decode_alloc(a, &ca, &na);
  if (st == CLS_OK) st = decode_alloc(b, &cb, &nb);
  if (st != CLS_OK) goto done;
  st = CLS_ERR_OUT_OF_MEMORY;
  /* Both texts in one array (words never span the two), so that their words share ids. */
  size_t total = (size_t)na + (size_t)nb + 1;
  cp = malloc(total * sizeof *cp);
  start = malloc(total * sizeof *start);
  len = malloc(total * sizeof *len);
  ids = malloc(total * sizeof *ids);
  if (!cp || !start || !len || !ids) goto done;
  memcpy(cp, ca, (size_t)na * sizeof *cp);
  cp[na] = ' ';
  memcpy(cp + na + 1, cb, (size_t)nb * sizeof *cp);
  int wa = split_words(cp, na, start, len);
  int wb = split_words(cp + na + 1, nb, start + wa, len + wa);
  for (int w = wa; w < wa + wb; w++) start[w] += na + 1;
  st = intern_words(cp, start, len, wa + wb, ids);
  if (st == CLS_OK) st = cls_levenshtein(ids, wa, ids + wa, wb, distance);
  if (st == CLS_OK && words_a) *words_a = wa;
done:
  free(ca);
  free(cb);
  free(cp);
  free(start);
  free(len);
  free(ids);
  return st;
}

static double rate(long long distance, long long length) {
  return (double)distance / (double)(length > 0 ? length : 1);
}

cls_status cls_wer_sample_compute(const char *ground_truth, const char *prediction, cls_wer_sample *out) {
  if (!out) return CLS_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  cls_status st = cls_char_distance(ground_truth, prediction, &out->char_distance, &out->char_length);
  if (st == CLS_OK) st = cls_word_distance(ground_truth, prediction, &out->word_distance, &out->word_length);
  if (st != CLS_OK) {
    memset(out, 0, sizeof *out);
    return st;
  }
  out->cer = rate(out->char_distance, out->char_length);
  out->wer = rate(out->word_distance, out->word_length);
  return CLS_OK;
}

void cls_wer_corpus(const cls_wer_sample *samples, int n, double *wer, double *cer) {
  long long wd = 0, wl = 0, cd = 0, cl = 0;
  for (int i = 0; samples && i < n; i++) {
    wd += samples[i].word_distance;
    wl += samples[i].word_length;
    cd += samples[i].char_distance;
    cl += samples[i].char_length;
  }
  if (wer) *wer = fmin(rate(wd, wl), 1.0);
  if (cer) *cer = fmin(rate(cd, cl), 1.0);
}

typedef struct report_key {
  double rate, loss;
  int index;
} report_key;

/* Loss, descending, with NaN highest. */
static int loss_cmp(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(b) - isnan(a);
  return a > b ? -1 : (a < b);
}

static int report_cmp(const void *pa, const void *pb) {
  const report_key *a = pa, *b = pb;
  if (a->rate != b->rate) return a->rate < b->rate ? -1 : 1;
  int c = loss_cmp(a->loss, b->loss);
  if (c) return c;
  return (a->index > b->index) - (a->index < b->index);
}

cls_status cls_report_order(const cls_wer_sample *samples, const double *losses, int n, bool by_cer, int *order) {
  if (n < 0 || (n > 0 && (!samples || !losses || !order))) return CLS_ERR_INVALID_ARGUMENT;
  if (n == 0) return CLS_OK;
  report_key *keys = malloc((size_t)n * sizeof *keys);
  if (!keys) return CLS_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < n; i++) {
    double r = by_cer ? samples[i].cer : samples[i].wer;
    keys[i].rate = isnan(r) ? INFINITY : r;
    keys[i].loss = losses[i];
    keys[i].index = i;
  }
  qsort(keys, (size_t)n, sizeof *keys, report_cmp);
  for (int i = 0; i < n; i++) order[i] = keys[i].index;
  free(keys);
  return CLS_OK;
}

/* Python's normalisation of a slice bound (step 1) for a sequence of length n. */
static int py_bound(long long v, int n) {
  if (v < 0) v += n;
  if (v < 0) return 0;
  return v > n ? n : (int)v;
}

static void py_slice(int n, long long start, long long stop, int *begin, int *end) {
  *begin = py_bound(start, n);
  *end = py_bound(stop, n);
  if (*end < *begin) *end = *begin;
}

cls_status cls_report_select(int n, int report_count, cls_report_sections *out) {
  if (!out || n < 0 || report_count < 0) return CLS_ERR_INVALID_ARGUMENT;
  long long N = report_count, mid = n / 2;
  py_slice(n, 0, N, &out->best_begin, &out->best_end);
  py_slice(n, mid - N / 2, mid + (N + 1) / 2, &out->median_begin, &out->median_end);
  py_slice(n, -N, n, &out->worst_begin, &out->worst_end); /* samples[-N:]; -0 is 0 */
  return CLS_OK;
}
