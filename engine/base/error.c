/* The caller-owned error value (cls_error in clspeech/base.h): setting, clearing, adding text after,
 * and wrapping an inner error in context with its status kept; always NUL-terminated and cut with a
 * marker when CLS_ERROR_CAP is reached. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "clspeech/base.h"

static const char truncated[] = "\n... (truncated)";

/* The text's length; a text without a NUL (never set) counts as full. */
static size_t text_length(const cls_error *err) {
  const char *end = memchr(err->text, '\0', CLS_ERROR_CAP);
  return end ? (size_t)(end - err->text) : CLS_ERROR_CAP - 1;
}

/* Formats at text + used; marks the end when the text did not fit. */
static void write_at(cls_error *err, size_t used, const char *fmt, va_list ap) {
  if (used >= CLS_ERROR_CAP - 1) return;
  int n = vsnprintf(err->text + used, CLS_ERROR_CAP - used, fmt, ap);
  if (n >= 0 && (size_t)n >= CLS_ERROR_CAP - used)
    memcpy(err->text + CLS_ERROR_CAP - sizeof truncated, truncated, sizeof truncated);
}

cls_status cls_error_set(cls_error *err, cls_status status, const char *fmt, ...) {
  if (!err) return status;
  err->status = status;
  va_list ap;
  va_start(ap, fmt);
  write_at(err, 0, fmt, ap);
  va_end(ap);
  return status;
}

void cls_error_clear(cls_error *err) {
  if (!err) return;
  err->status = CLS_OK;
  err->text[0] = '\0';
}

void cls_error_add(cls_error *err, const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  write_at(err, text_length(err), fmt, ap);
  va_end(ap);
}

void cls_error_vadd(cls_error *err, const char *fmt, va_list ap) {
  if (!err) return;
  write_at(err, text_length(err), fmt, ap);
}

cls_status cls_error_wrap(cls_error *err, cls_status status, const cls_error *inner, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cls_status st = cls_error_vwrap(err, status, inner, fmt, ap);
  va_end(ap);
  return st;
}

cls_status cls_error_vwrap(cls_error *err, cls_status status, const cls_error *inner, const char *fmt, va_list ap) {
  if (!err || status == CLS_OK) return status;
  char context[CLS_ERROR_CAP] = "";
  if (fmt) vsnprintf(context, sizeof context, fmt, ap);
  const bool own = inner && text_length(inner) > 0;
  const char *tail = own ? inner->text : cls_status_string(status);
  const size_t room = CLS_ERROR_CAP - 1, head = strlen(context), whole = own ? text_length(inner) : strlen(tail);
  /* The inner text moves behind the context (memmove: it may be err's own), then the context goes in front. */
  const size_t kept = head < room ? (whole < room - head ? whole : room - head) : 0;
  memmove(err->text + head, tail, kept);
  memcpy(err->text, context, head);
  err->text[head + kept] = '\0';
  if (head + whole > room) memcpy(err->text + CLS_ERROR_CAP - sizeof truncated, truncated, sizeof truncated);
  err->status = status;
  return status;
}
