/* Streaming JSON writer (see json_writer.h). Output is valid JSON as long as calls are balanced. */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>

void json_init(json_writer *w, FILE *out) {
  w->out = out;
  w->depth = 0;
  w->need_comma[0] = false;
  w->after_key = false;
}

static void indent(json_writer *w) {
  fputc('\n', w->out);
  for (int i = 0; i < w->depth; i++) fputs("  ", w->out);
}

/* Separator and indentation before a value or key. */
static void before_item(json_writer *w) {
  if (w->after_key) {
    w->after_key = false;
    return;
  }
  if (w->depth > 0) {
    if (w->need_comma[w->depth]) fputc(',', w->out);
    indent(w);
  }
  w->need_comma[w->depth] = true;
}

static void open_scope(json_writer *w, char c) {
  before_item(w);
  fputc(c, w->out);
  if (w->depth < 31) w->depth++;
  w->need_comma[w->depth] = false;
}

static void close_scope(json_writer *w, char c) {
  bool had_items = w->need_comma[w->depth];
  if (w->depth > 0) w->depth--;
  if (had_items) indent(w);
  fputc(c, w->out);
  if (w->depth == 0) fputc('\n', w->out);
}

void json_begin_object(json_writer *w) { open_scope(w, '{'); }
void json_end_object(json_writer *w) { close_scope(w, '}'); }
void json_begin_array(json_writer *w) { open_scope(w, '['); }
void json_end_array(json_writer *w) { close_scope(w, ']'); }

static void write_escaped(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\n': fputs("\\n", out); break;
      case '\r': fputs("\\r", out); break;
      case '\t': fputs("\\t", out); break;
      default:
        if (*p < 0x20)
          fprintf(out, "\\u%04x", *p);
        else
          fputc(*p, out);
    }
  }
  fputc('"', out);
}

void json_key(json_writer *w, const char *key) {
  before_item(w);
  write_escaped(w->out, key);
  fputs(": ", w->out);
  w->after_key = true;
}

void json_string(json_writer *w, const char *s) {
  before_item(w);
  if (s)
    write_escaped(w->out, s);
  else
    fputs("null", w->out);
}

void json_int(json_writer *w, int64_t v) {
  before_item(w);
  fprintf(w->out, "%" PRId64, v);
}

void json_double(json_writer *w, double v) {
  before_item(w);
  if (isfinite(v))
    fprintf(w->out, "%.6g", v);
  else
    fputs("null", w->out);
}

void json_bool(json_writer *w, bool v) {
  before_item(w);
  fputs(v ? "true" : "false", w->out);
}

void json_null(json_writer *w) {
  before_item(w);
  fputs("null", w->out);
}
