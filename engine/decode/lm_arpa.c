/* Reading ARPA n-gram files into the model of lm_model.h: the `\data\` counts, one `\N-grams:`
 * section per order, `\end\`. Every malformed input is refused with the file and line named in the
 * cls_error; nothing past the given bytes is read (the text need not end in a NUL). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clspeech/base.h"
#include "base/file_util.h"
#include "decode/lm_model.h"

typedef struct reader {
  const char *name;
  const char *p, *end; /* the unread bytes */
  const char *ls, *le; /* the current line, without its line ending */
  long line;
} reader;

static bool next_line(reader *r) {
  if (r->p >= r->end) return false;
  const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
  r->ls = r->p;
  r->le = nl ? nl : r->end;
  r->p = nl ? nl + 1 : r->end;
  while (r->le > r->ls && (r->le[-1] == '\r' || r->le[-1] == ' ' || r->le[-1] == '\t')) r->le--;
  r->line++;
  return true;
}

static bool blank(const reader *r) {
  for (const char *c = r->ls; c < r->le; c++)
    if (*c != ' ' && *c != '\t' && *c != '\r') return false;
  return true;
}

static bool line_is(const reader *r, const char *s) {
  size_t n = strlen(s);
  return (size_t)(r->le - r->ls) == n && memcmp(r->ls, s, n) == 0;
}

static cls_status fail(cls_error *err, const reader *r, const char *fmt, ...) CLS_PRINTF(3, 4);
static cls_status fail(cls_error *err, const reader *r, const char *fmt, ...) {
  cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%ld: ", r->name, r->line);
  va_list ap;
  va_start(ap, fmt);
  cls_error_vadd(err, fmt, ap);
  va_end(ap);
  return CLS_ERR_INVALID_ARGUMENT;
}

/* A token of the current line: [s, s+len). */
typedef struct token {
  const char *s;
  size_t len;
} token;

/* Splits the current line at tabs and spaces into at most `cap` tokens; the count (cap + 1 when more). */
static int split(const reader *r, token *tok, int cap) {
  int n = 0;
  const char *c = r->ls;
  for (;;) {
    while (c < r->le && (*c == ' ' || *c == '\t')) c++;
    if (c >= r->le) return n;
    if (n == cap) return cap + 1;
    tok[n].s = c;
    while (c < r->le && *c != ' ' && *c != '\t') c++;
    tok[n].len = (size_t)(c - tok[n].s);
    n++;
  }
}

/* A decimal number filling the whole token: 0 when it is one and finite, 1 when not a number,
 * 2 when not finite. */
static int parse_number(token t, float *value) {
  char buf[64];
  if (t.len == 0 || t.len >= sizeof buf) return 1;
  memcpy(buf, t.s, t.len);
  buf[t.len] = '\0';
  char *endp = NULL;
  double v = strtod(buf, &endp);
  if (endp != buf + t.len) return 1;
  if (!isfinite(v) || !isfinite((float)v)) return 2;
  *value = (float)v;
  return 0;
}

/* Parses "ngram N=COUNT" (the line trimmed); false when it is not one. */
static bool parse_count_line(const reader *r, int *n, long long *count) {
  const char *c = r->ls;
  if (r->le - c < 6 || memcmp(c, "ngram", 5) != 0 || (c[5] != ' ' && c[5] != '\t')) return false;
  c += 5;
  while (c < r->le && (*c == ' ' || *c == '\t')) c++;
  long long vals[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    const char *start = c;
    while (c < r->le && *c >= '0' && *c <= '9') {
      if (vals[k] > 100000000000000LL) return false;
      vals[k] = vals[k] * 10 + (*c - '0');
      c++;
    }
    if (c == start) return false;
    if (k == 0) {
      while (c < r->le && (*c == ' ' || *c == '\t')) c++;
      if (c >= r->le || *c != '=') return false;
      c++;
      while (c < r->le && (*c == ' ' || *c == '\t')) c++;
    }
  }
  if (c != r->le || vals[0] > 1000) return false;
  *n = (int)vals[0];
  *count = vals[1];
  return true;
}

/* Reads section `n` (its header line already read) of `count` lines. */
static cls_status read_section(cls_lm *lm, reader *r, int n, cls_error *err) {
  token tok[CLS_LM_MAX_ORDER + 2];
  int64_t count = lm->counts[n], seen = 0;
  int32_t ids[CLS_LM_MAX_ORDER];
  long header = r->line;
  for (;;) {
    if (!next_line(r)) {
      return fail(err, r, "the file ends in the %d-grams section (begun at line %ld) after %lld of its %lld n-grams; "
                  "truncated?", n, header, (long long)seen, (long long)count);
    }
    if (blank(r) || *r->ls == '\\') break;
    if (seen == count)
      return fail(err, r, "more %d-grams than the %lld \\data\\ declares", n, (long long)count);
    int nt = split(r, tok, n + 2);
    float prob = 0.0f, backoff = 0.0f;
    int st = nt > 0 ? parse_number(tok[0], &prob) : 1;
    if (st == 1) return fail(err, r, "a %d-gram line must start with a log10 probability", n);
    if (st == 2) return fail(err, r, "the log10 probability is not finite");
    int words = nt - 1;
    if (nt == n + 2 && n < lm->order) {
      st = parse_number(tok[n + 1], &backoff);
      if (st == 2) return fail(err, r, "the log10 backoff is not finite");
      if (st == 0) words = n;
    }
    if (words != n) {
      return fail(err, r, "a line of the %d-grams section holds %s%d words, not %d", n, nt > n + 2 ? "more than " : "",
                  nt > n + 2 ? n + 1 : words, n);
    }
    if (prob > 0.0f) /* KenLM refuses this too: P above 1, which no smoothing gives */
      return fail(err, r, "the %d-gram '%.*s' has log10 probability %g, above 0 (a probability above 1)", n,
                  (int)(tok[n].s + tok[n].len - tok[1].s), tok[1].s, (double)prob);
    for (int i = 0; i < n; i++) {
      if (n == 1) {
        if (lm_vocab_find(lm, tok[1].s, tok[1].len) >= 0)
          return fail(err, r, "the unigram '%.*s' appears twice", (int)tok[1].len, tok[1].s);
        ids[0] = lm_vocab_add(lm, tok[1].s, tok[1].len);
        if (ids[0] < 0) {
          if (memchr(tok[1].s, '\0', tok[1].len)) return fail(err, r, "a word holds a NUL byte");
          cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s:%ld: out of memory for the vocabulary", r->name, r->line);
          return CLS_ERR_OUT_OF_MEMORY;
        }
        lm->uni_prob[ids[0]] = prob;
        lm->uni_backoff[ids[0]] = backoff;
      } else {
        ids[i] = lm_vocab_find(lm, tok[1 + i].s, tok[1 + i].len);
        if (ids[i] < 0)
          return fail(err, r, "the word '%.*s' is not among the unigrams", (int)tok[1 + i].len, tok[1 + i].s);
      }
    }
    if (n > 1) {
      uint64_t key = lm_key_start(ids[n - 1]);
      for (int i = n - 2; i >= 0; i--) key = lm_key_extend(key, ids[i]);
      cls_lm_entry *e = lm_table_insert(&lm->tables[n], key);
      if (!e) return fail(err, r, "a %d-gram appears twice", n);
      e->prob = prob;
      e->backoff = backoff;
    }
    seen++;
  }
  if (seen != count) {
    return fail(err, r, "the %d-grams section (begun at line %ld) ends after %lld n-grams, but \\data\\ declares %lld",
                n, header, (long long)seen, (long long)count);
  }
  return CLS_OK;
}

/* Adds <unk>, <s> or </s> when missing, with log10 probability -100 (KenLM's choice). */
static void add_special(cls_lm *lm, const char *word, int32_t *id) {
  *id = lm_vocab_find(lm, word, strlen(word));
  if (*id >= 0) return;
  *id = lm_vocab_add(lm, word, strlen(word)); /* room reserved */
  lm->uni_prob[*id] = -100.0f;
  lm->uni_backoff[*id] = 0.0f;
  lm->counts[1]++;
}

static cls_status parse(cls_lm *lm, reader *r, cls_error *err) {
  /* a NUL byte: binary data (a device of zeros, a compressed file), not ARPA text; its line named */
  const char *nul = memchr(r->p, '\0', (size_t)(r->end - r->p));
  if (nul) {
    long line = 1;
    for (const char *c = r->p; (c = memchr(c, '\n', (size_t)(nul - c))) != NULL; c++) line++;
    r->line = line;
    return fail(err, r, "a NUL byte: binary data, not ARPA text");
  }
  /* \data\, after any lines of preamble */
  for (;;) {
    if (!next_line(r)) return fail(err, r, "no \\data\\ line: not an ARPA file");
    if (line_is(r, "\\data\\")) break;
  }
  long data_line = r->line;
  int order = 0;
  for (;;) {
    if (!next_line(r)) return fail(err, r, "the file ends in the \\data\\ section; truncated?");
    if (blank(r)) {
      if (order) break;
      continue;
    }
    if (*r->ls == '\\' && order) break;
    int n;
    long long count;
    if (!parse_count_line(r, &n, &count)) return fail(err, r, "expected \"ngram N=COUNT\" in the \\data\\ section");
    if (n != order + 1) return fail(err, r, "ngram %d follows ngram %d; the orders must run 1, 2, 3...", n, order);
    if (n > CLS_LM_MAX_ORDER) return fail(err, r, "order %d: at most %d is supported", n, CLS_LM_MAX_ORDER);
    /* every n-gram line takes at least 2n+2 bytes */
    if (count > (long long)((r->end - r->ls) / (2 * n + 2)) + 1)
      return fail(err, r, "ngram %d=%lld: more n-grams than the rest of the file can hold; truncated?", n, count);
    if (n == 1 && count < 1) return fail(err, r, "ngram 1=0: a model needs unigrams");
    lm->counts[n] = count;
    order = n;
  }
  if (!order) return fail(err, r, "the \\data\\ section (line %ld) declares no n-gram counts", data_line);
  lm->order = order;
  if (!lm_vocab_reserve(lm, (int32_t)lm->counts[1] + 3)) {
    cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld unigrams", r->name,
                  (long long)lm->counts[1]);
    return CLS_ERR_OUT_OF_MEMORY;
  }
  for (int n = 2; n <= order; n++) {
    if (!lm_table_init(&lm->tables[n], lm->counts[n])) {
      cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld %d-grams", r->name,
                    (long long)lm->counts[n], n);
      return CLS_ERR_OUT_OF_MEMORY;
    }
  }
  bool header_read = *r->ls == '\\';
  for (int n = 1; n <= order; n++) {
    char want[32];
    snprintf(want, sizeof want, "\\%d-grams:", n);
    if (!header_read) {
      do {
        if (!next_line(r)) return fail(err, r, "the file ends before the %s section; truncated?", want);
      } while (blank(r));
    }
    header_read = false;
    if (!line_is(r, want)) return fail(err, r, "expected the %s section header", want);
    cls_status st = read_section(lm, r, n, err);
    if (st != CLS_OK) return st;
    header_read = *r->ls == '\\';
  }
  if (!header_read) {
    do {
      if (!next_line(r)) return fail(err, r, "the file ends without \\end\\; truncated?");
    } while (blank(r));
  }
  if (!line_is(r, "\\end\\")) return fail(err, r, "expected \\end\\ after the %d-grams section", order);
  add_special(lm, "<unk>", &lm->unk);
  add_special(lm, "<s>", &lm->bos);
  add_special(lm, "</s>", &lm->eos);
  return CLS_OK;
}

cls_status cls_lm_parse_arpa(const char *text, size_t size, const char *name, cls_lm **out, cls_error *err) {
  if (!out) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_lm_parse_arpa: out is NULL");
  *out = NULL;
  if (!text && size) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_lm_parse_arpa: text is NULL");
  cls_lm *lm = calloc(1, sizeof *lm);
  if (!lm) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name ? name : "ARPA text");
  reader r = {name ? name : "ARPA text", text ? text : "", (text ? text : "") + size, NULL, NULL, 0};
  cls_status st = parse(lm, &r, err);
  if (st != CLS_OK) {
    cls_lm_destroy(lm);
    return st;
  }
  *out = lm;
  return CLS_OK;
}

cls_status cls_lm_load_arpa(const char *path, cls_lm **out, cls_error *err) {
  if (!out || !path) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_lm_load_arpa: path or out is NULL");
  *out = NULL;
  /* A regular file is mapped (read once, in order: no copy of the text beside the model); anything
   * else (a pipe, a file that cannot be mapped) is read into memory, up to its cap (a NUL byte ends
   * the read: the parser then names its line). */
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 && (uint64_t)sb.st_size <= SIZE_MAX) {
    void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      close(fd);
      (void)posix_madvise(map, (size_t)sb.st_size, POSIX_MADV_SEQUENTIAL);
      cls_status st = cls_lm_parse_arpa(map, (size_t)sb.st_size, path, out, err);
      munmap(map, (size_t)sb.st_size);
      return st;
    }
  }
  /* the same descriptor: a pipe's bytes would go with it if it were closed and the path opened again */
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  char *buf = NULL;
  size_t len = 0;
  cls_status rst = cls_read_stream_max(f, path, NULL, 0, CLS_LM_ARPA_MAX_STREAM_BYTES, true, &buf, &len, err);
  fclose(f);
  if (rst != CLS_OK) return rst;
  cls_status st = cls_lm_parse_arpa(buf, len, path, out, err);
  free(buf);
  return st;
}
