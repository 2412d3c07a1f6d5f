/* The RFC 4180 reader (see csv.h): one record at a time into a growing buffer of NUL-terminated
 * fields, tracking the line of every position for messages; and the one field writer
 * (cls_csv_write_field, clspeech/data.h). */
#include "data/csv.h"

#include "clspeech/data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cls_status cls_csv_open(cls_csv *c, const char *name, const char *text, size_t len, cls_error *err) {
  memset(c, 0, sizeof *c);
  c->name = name;
  c->s = text;
  c->len = len;
  c->line = 1;
  const char *nul = memchr(text, '\0', len);
  if (nul) {
    for (const char *p = text; p < nul; p++)
      if (*p == '\n' || (*p == '\r' && p[1] != '\n')) c->line++;
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: holds a NUL byte; this is not a CSV text file", name,
                         c->line);
  }
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) c->pos = 3;
  return CLS_OK;
}

int cls_csv_fields(const cls_csv *c) { return c->n_fields; }

const char *cls_csv_field(const cls_csv *c, int i) { return c->buf + c->off[i]; }

void cls_csv_close(cls_csv *c) {
  free(c->buf);
  free(c->off);
  c->buf = NULL;
  c->off = NULL;
}

static int csv_push(cls_csv *c, char ch) {
  if (c->buf_len == c->buf_cap) {
    size_t cap = c->buf_cap ? c->buf_cap * 2 : 256;
    char *b = realloc(c->buf, cap);
    if (!b) return 0;
    c->buf = b;
    c->buf_cap = cap;
  }
  c->buf[c->buf_len++] = ch;
  return 1;
}

static int csv_end_field(cls_csv *c, size_t start) {
  if (!csv_push(c, '\0')) return 0;
  if (c->n_fields == c->off_cap) {
    int cap = c->off_cap ? c->off_cap * 2 : 8;
    size_t *o = realloc(c->off, (size_t)cap * sizeof *o);
    if (!o) return 0;
    c->off = o;
    c->off_cap = cap;
  }
  c->off[c->n_fields++] = start;
  return 1;
}

static int at_eol(const cls_csv *c) { return c->pos < c->len && (c->s[c->pos] == '\r' || c->s[c->pos] == '\n'); }

/* Consumes one line end (CRLF, CR or LF) at pos; `keep` appends it to the current field. */
static int csv_eol(cls_csv *c, int keep) {
  if (c->s[c->pos] == '\r') {
    if (keep && !csv_push(c, '\r')) return 0;
    c->pos++;
  }
  if (c->pos < c->len && c->s[c->pos] == '\n') {
    if (keep && !csv_push(c, '\n')) return 0;
    c->pos++;
  }
  c->line++;
  return 1;
}


cls_status cls_csv_record(cls_csv *c, bool *have, int *line, cls_error *err) {
  *have = false;
  while (at_eol(c)) csv_eol(c, 0);
  if (c->pos >= c->len) return CLS_OK;
  *line = c->line;
  c->buf_len = 0;
  c->n_fields = 0;
  for (;;) {
    size_t start = c->buf_len;
    if (c->pos < c->len && c->s[c->pos] == '"') {
      const int open_line = c->line;
      c->pos++;
      for (;;) {
        if (c->pos >= c->len) {
          return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                               "%s:%d: unterminated quoted field: the quote opened on this line is never closed",
                               c->name, open_line);
        }
        char ch = c->s[c->pos];
        if (ch == '"') {
          if (c->pos + 1 < c->len && c->s[c->pos + 1] == '"') {
            if (!csv_push(c, '"')) goto oom;
            c->pos += 2;
            continue;
          }
          c->pos++;
          break;
        }
        if (ch == '\r' || ch == '\n') {
          if (!csv_eol(c, 1)) goto oom;
          continue;
        }
        if (!csv_push(c, ch)) goto oom;
        c->pos++;
      }
      if (c->pos < c->len && c->s[c->pos] != ',' && !at_eol(c)) {
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                             "%s:%d: text after the closing quote of field %d "
                             "(a quote inside a quoted field is written \"\")",
                             c->name, c->line, c->n_fields + 1);
      }
    } else {
      while (c->pos < c->len && c->s[c->pos] != ',' && !at_eol(c)) {
        if (!csv_push(c, c->s[c->pos])) goto oom;
        c->pos++;
      }
    }
    if (!csv_end_field(c, start)) goto oom;
    if (c->pos < c->len && c->s[c->pos] == ',') {
      c->pos++;
      continue;
    }
    if (at_eol(c)) csv_eol(c, 0);
    *have = true;
    return CLS_OK;
  }
oom:
  return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", c->name);
}

void cls_csv_write_field(FILE *f, const char *field) {
  if (!strpbrk(field, ",\"\r\n")) {
    fputs(field, f);
    return;
  }
  fputc('"', f);
  for (const char *s = field; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}
