/* The transcript files of the corpora `clspeech import` reads (see clspeech/internal/import.h): Common
 * Voice's TSV with a header row and quoted fields, and the keyed lines of LibriSpeech's trans.txt and
 * MLS's transcripts.txt. Text in memory; the caller reads the file bounded. */
#include "clspeech/internal/import.h"

#include <stdlib.h>
#include <string.h>

/* A growing field buffer. */
typedef struct field {
  char *s;
  size_t n, cap;
} field;

static int field_put(field *f, char c) {
  if (f->n + 1 >= f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 256;
    char *s = realloc(f->s, cap);
    if (!s) return 0;
    f->s = s;
    f->cap = cap;
  }
  f->s[f->n++] = c;
  f->s[f->n] = '\0';
  return 1;
}

typedef struct row {
  field *fields;
  int n, cap;
} row;

static void row_free(row *r) {
  for (int i = 0; i < r->cap; i++) free(r->fields[i].s);
  free(r->fields);
}

/* Starts field r->n (reusing an earlier row's buffer). */
static int row_next_field(row *r) {
  if (r->n == r->cap) {
    int cap = r->cap ? r->cap * 2 : 8;
    field *f = realloc(r->fields, (size_t)cap * sizeof *f);
    if (!f) return 0;
    memset(f + r->cap, 0, (size_t)(cap - r->cap) * sizeof *f);
    r->fields = f;
    r->cap = cap;
  }
  field *f = &r->fields[r->n++];
  f->n = 0;
  if (!f->s) {
    if (!(f->s = malloc(256))) return 0;
    f->cap = 256;
  }
  f->s[0] = '\0';
  return 1;
}

/* Reads one TSV record at s[*pos..len) into r; *line advances over the line ends it holds. */
static cls_status read_record(const char *s, size_t len, size_t *pos, int *line, row *r, const char *name,
                              cls_error *err) {
  r->n = 0;
  size_t p = *pos;
  const int start = *line;
  if (!row_next_field(r)) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  int at_field_start = 1;
  while (p < len) {
    char c = s[p];
    if (c == '\0')
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: holds a NUL byte", name, *line);
    if (at_field_start && c == '"') {
      p++;
      for (;;) {
        if (p >= len)
          return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the quote opened on this line never closes",
                               name, start);
        if (s[p] == '\0')
          return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: holds a NUL byte", name, *line);
        if (s[p] == '"') {
          if (p + 1 < len && s[p + 1] == '"') {
            p += 2;
            if (!field_put(&r->fields[r->n - 1], '"')) goto oom;
            continue;
          }
          p++;
          break;
        }
        if (s[p] == '\n') ++*line;
        if (!field_put(&r->fields[r->n - 1], s[p++])) goto oom;
      }
      at_field_start = 0;
      continue;
    }
    at_field_start = 0;
    if (c == '\t') {
      p++;
      if (!row_next_field(r)) goto oom;
      at_field_start = 1;
      continue;
    }
    if (c == '\n' || c == '\r') {
      if (c == '\r' && p + 1 < len && s[p + 1] == '\n') p++;
      p++;
      ++*line;
      *pos = p;
      return CLS_OK;
    }
    if (!field_put(&r->fields[r->n - 1], c)) goto oom;
    p++;
  }
  ++*line;
  *pos = p;
  return CLS_OK;
oom:
  return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
}

static int is_empty_record(const row *r) { return r->n == 1 && r->fields[0].n == 0; }

cls_status cls_import_parse_tsv(const char *text, size_t len, const char *name, cls_import_row_fn fn, void *user,
                                cls_error *err) {
  size_t pos = 0;
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) pos = 3;
  int line = 1, path_col = -1, sentence_col = -1, header_line = 0;
  row r = {0};
  cls_status st = CLS_OK;
  while (st == CLS_OK && pos < len) {
    const int start = line;
    st = read_record(text, len, &pos, &line, &r, name, err);
    if (st != CLS_OK || is_empty_record(&r)) continue;
    if (!header_line) {
      header_line = start;
      for (int i = 0; i < r.n; i++) {
        if (path_col < 0 && strcmp(r.fields[i].s, "path") == 0) path_col = i;
        if (sentence_col < 0 && strcmp(r.fields[i].s, "sentence") == 0) sentence_col = i;
      }
      if (path_col < 0 || sentence_col < 0)
        st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the header row names no '%s' column", name, start,
                           path_col < 0 ? "path" : "sentence");
      continue;
    }
    const char *path = path_col < r.n ? r.fields[path_col].s : NULL;
    const char *sentence = sentence_col < r.n ? r.fields[sentence_col].s : NULL;
    st = fn(user, start, path, sentence, err);
  }
  if (st == CLS_OK && !header_line)
    st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: empty, no header row naming 'path' and 'sentence'", name);
  row_free(&r);
  return st;
}

cls_status cls_import_parse_keyed(const char *text, size_t len, const char *name, char sep, cls_import_row_fn fn,
                                  void *user, cls_error *err) {
  size_t pos = 0;
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) pos = 3;
  char *buf = NULL;
  size_t cap = 0;
  cls_status st = CLS_OK;
  for (int line = 1; st == CLS_OK && pos < len; line++) {
    size_t e = pos;
    while (e < len && text[e] != '\n' && text[e] != '\r' && text[e] != '\0') e++;
    if (e < len && text[e] == '\0') {
      st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: holds a NUL byte", name, line);
      break;
    }
    const size_t n = e - pos;
    if (n + 2 > cap) {
      cap = n + 2 > 2 * cap ? n + 2 : 2 * cap;
      char *b = realloc(buf, cap);
      if (!b) {
        st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
        break;
      }
      buf = b;
    }
    memcpy(buf, text + pos, n);
    buf[n] = '\0';
    pos = e;
    if (pos < len && text[pos] == '\r') pos++;
    if (pos < len && text[pos] == '\n') pos++;
    if (n == 0) continue;
    if (buf[0] == sep) {
      st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the line starts with its separator, no ID before it",
                         name, line);
      break;
    }
    char *t = memchr(buf, sep, n);
    const char *transcript = "";
    if (t) {
      *t = '\0';
      transcript = t + 1;
    }
    st = fn(user, line, buf, transcript, err);
  }
  free(buf);
  return st;
}
