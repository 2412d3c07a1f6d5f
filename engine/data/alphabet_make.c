/* An alphabet made from transcripts (see clspeech/data.h, cls_alphabet_counts): the count of every
 * codepoint (text read through base/utf8.h) in pages of 256 codepoints made when first needed, and
 * the alphabet.txt text that cls_alphabet_parse reads back, written by the output rule. */
#include "clspeech/data.h"

#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_BITS 8
#define PAGE_SIZE (1u << PAGE_BITS)
#define N_PAGES ((0x10FFFFu >> PAGE_BITS) + 1)

struct cls_alphabet_counts {
  int64_t *pages[N_PAGES]; /* counts of codepoints page << 8 .. (page << 8) + 255, NULL: none yet */
  int size;                /* distinct codepoints counted */
  /* The ascending list, rebuilt when `size` has changed since (`sorted_size`). */
  uint32_t *sorted;
  int sorted_size;
};

cls_status cls_alphabet_counts_create(cls_alphabet_counts **out, cls_error *err) {
  *out = calloc(1, sizeof **out);
  if (!*out) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "the alphabet's counts: out of memory");
  return CLS_OK;
}

void cls_alphabet_counts_destroy(cls_alphabet_counts *c) {
  if (!c) return;
  for (unsigned p = 0; p < N_PAGES; p++) free(c->pages[p]);
  free(c->sorted);
  free(c);
}

/* A codepoint no alphabet.txt line can hold: the line ends and NUL. */
static int unwritable(uint32_t cp) { return cp == 0 || cp == '\n' || cp == '\r'; }

cls_status cls_alphabet_counts_add(cls_alphabet_counts *c, const char *utf8, size_t len, cls_error *err) {
  const unsigned char *s = (const unsigned char *)utf8;
  /* First the checks, so that a refused text counts nothing. */
  cls_status st = cls_utf8_check(s, len, err);
  if (st != CLS_OK) return st;
  for (size_t i = 0; i < len;) {
    uint32_t cp = 0;
    const int k = cls_utf8_decode(s + i, len - i, &cp);
    if (unwritable(cp))
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                           "byte %zu is U+%04X, which an alphabet.txt line cannot hold as a label", i, (unsigned)cp);
    unsigned p = cp >> PAGE_BITS;
    if (!c->pages[p]) {
      c->pages[p] = calloc(PAGE_SIZE, sizeof *c->pages[p]);
      if (!c->pages[p]) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "the alphabet's counts: out of memory");
    }
    i += (size_t)k;
  }
  for (size_t i = 0; i < len;) {
    uint32_t cp = 0;
    i += (size_t)cls_utf8_decode(s + i, len - i, &cp);
    int64_t *n = &c->pages[cp >> PAGE_BITS][cp & (PAGE_SIZE - 1)];
    if ((*n)++ == 0) c->size++;
  }
  return CLS_OK;
}

int cls_alphabet_counts_size(const cls_alphabet_counts *c) { return c ? c->size : 0; }

/* The ascending list of the counted codepoints, NULL when out of memory. */
static const uint32_t *sorted(cls_alphabet_counts *c) {
  if (c->sorted && c->sorted_size == c->size) return c->sorted;
  uint32_t *v = malloc((size_t)(c->size ? c->size : 1) * sizeof *v);
  if (!v) return NULL;
  int n = 0;
  for (unsigned p = 0; p < N_PAGES; p++) {
    if (!c->pages[p]) continue;
    for (unsigned j = 0; j < PAGE_SIZE; j++)
      if (c->pages[p][j] > 0) v[n++] = p << PAGE_BITS | j;
  }
  free(c->sorted);
  c->sorted = v;
  c->sorted_size = n;
  return v;
}

uint32_t cls_alphabet_counts_codepoint(const cls_alphabet_counts *c, int i) {
  if (!c || i < 0 || i >= c->size) return 0;
  const uint32_t *v = sorted((cls_alphabet_counts *)c);
  return v ? v[i] : 0;
}

int64_t cls_alphabet_counts_count(const cls_alphabet_counts *c, int i) {
  if (!c || i < 0 || i >= c->size) return 0;
  const uint32_t *v = sorted((cls_alphabet_counts *)c);
  return v ? c->pages[v[i] >> PAGE_BITS][v[i] & (PAGE_SIZE - 1)] : 0;
}

static const char HEADER[] =
    "# An alphabet made from the transcripts of a data set by clspeech: one label a line, sorted by\n"
    "# codepoint, each after a comment giving its codepoint and how often the transcripts hold it.\n"
    "# A line that starts with # is a comment; the line \\# is the label '#'; a line of one space is\n"
    "# the space label.\n";
static const char FOOTER[] = "# The last (non-comment) line ends with a newline.\n";

cls_status cls_alphabet_counts_format(const cls_alphabet_counts *c, char **text, size_t *len, cls_error *err) {
  *text = NULL;
  *len = 0;
  if (!c || c->size == 0)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "no characters to make an alphabet of (no transcripts)");
  const uint32_t *v = sorted((cls_alphabet_counts *)c);
  /* A label takes at most "# U+10FFFF count 9223372036854775807\n" and "\\#\n" or 4 bytes and a newline. */
  size_t cap = sizeof HEADER + sizeof FOOTER + (size_t)c->size * 48;
  char *out = v ? malloc(cap) : NULL;
  if (!out) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "the alphabet's text: out of memory");
  size_t o = (size_t)snprintf(out, cap, "%s", HEADER);
  for (int i = 0; i < c->size; i++) {
    const uint32_t cp = v[i];
    o += (size_t)snprintf(out + o, cap - o, "# U+%04X count %lld\n", (unsigned)cp,
                          (long long)c->pages[cp >> PAGE_BITS][cp & (PAGE_SIZE - 1)]);
    if (cp == '#') {
      o += (size_t)snprintf(out + o, cap - o, "\\#\n");
    } else {
      char ch[CLS_UTF8_CHAR_CAP];
      cls_utf8_encode(cp, ch);
      o += (size_t)snprintf(out + o, cap - o, "%s\n", ch);
    }
  }
  o += (size_t)snprintf(out + o, cap - o, "%s", FOOTER);
  *text = out;
  *len = o;
  return CLS_OK;
}

cls_status cls_alphabet_counts_write(const cls_alphabet_counts *c, const char *path, cls_error *err) {
  char *text = NULL;
  size_t len = 0;
  cls_status st = cls_alphabet_counts_format(c, &text, &len, err);
  if (st != CLS_OK) return cls_error_wrap(err, st, err, "%s: ", path);
  const void *chunks[1] = {text};
  st = cls_write_atomic(path, chunks, &len, 1, err);
  free(text);
  return st;
}

cls_status cls_alphabet_make(const char *const *transcripts, int n, const char *path, cls_error *err) {
  cls_alphabet_counts *c = NULL;
  cls_status st = cls_alphabet_counts_create(&c, err);
  for (int i = 0; st == CLS_OK && i < n; i++) {
    st = cls_alphabet_counts_add(c, transcripts[i], strlen(transcripts[i]), err);
    if (st != CLS_OK) st = cls_error_wrap(err, st, err, "%s: transcript %d: ", path, i);
  }
  if (st == CLS_OK) st = cls_alphabet_counts_write(c, path, err);
  cls_alphabet_counts_destroy(c);
  return st;
}
