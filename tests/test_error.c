/* The caller-owned error value (cls_error, clspeech/base.h): set returns the status and formats the
 * text; add keeps the status; a text past CLS_ERROR_CAP is cut with the marker and stays
 * NUL-terminated; a NULL cls_error is accepted. */
#include <string.h>

#include "check.h"
#include "clspeech/base.h"

static cls_error e; /* 16 KiB: static rather than on the stack */

int main(void) {
  CHECK_INT(cls_error_set(&e, CLS_ERR_IO, "%s:%d: cannot read", "a.csv", 7), CLS_ERR_IO);
  CHECK_INT(e.status, CLS_ERR_IO);
  CHECK(strcmp(e.text, "a.csv:7: cannot read") == 0, "text \"%s\"", e.text);

  cls_error_add(&e, " (%d tries)", 3);
  CHECK(strcmp(e.text, "a.csv:7: cannot read (3 tries)") == 0, "added text \"%s\"", e.text);
  CHECK_INT(e.status, CLS_ERR_IO);

  cls_error_clear(&e);
  CHECK_INT(e.status, CLS_OK);
  CHECK_INT(strlen(e.text), 0);

  /* A text longer than the cap: cut, NUL-terminated, marked. */
  static char long_text[CLS_ERROR_CAP + 100];
  memset(long_text, 'x', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  cls_error_set(&e, CLS_ERR_BUILD, "%s", long_text);
  CHECK_INT(strlen(e.text), CLS_ERROR_CAP - 1);
  CHECK(strstr(e.text, "... (truncated)") != NULL, "no truncation marker at the end");
  cls_error_add(&e, "more");
  CHECK_INT(strlen(e.text), CLS_ERROR_CAP - 1);

  /* Adding to a nearly full text cuts the addition and marks the end. */
  cls_error_set(&e, CLS_ERR_BUILD, "%.*s", CLS_ERROR_CAP - 10, long_text);
  cls_error_add(&e, "0123456789abcdef");
  CHECK_INT(strlen(e.text), CLS_ERROR_CAP - 1);
  CHECK(strcmp(e.text + CLS_ERROR_CAP - 1 - strlen("... (truncated)"), "... (truncated)") == 0, "no marker at the end");

  /* NULL receives nothing and the status still comes back. */
  CHECK_INT(cls_error_set(NULL, CLS_ERR_OUT_OF_MEMORY, "x"), CLS_ERR_OUT_OF_MEMORY);
  cls_error_clear(NULL);
  cls_error_add(NULL, "x");
  return check_finish("test_error");
}
