/* The caller-owned error value (cls_error, clspeech/base.h): set returns the status and formats the
 * text; add keeps the status; wrap passes an inner error up with context in front and its status kept
 * (into another error or in place, CLS_OK untouched, a missing text named by the status); a text past
 * CLS_ERROR_CAP is cut with the marker and stays NUL-terminated; a NULL cls_error is accepted; every
 * status has a name of its own. */
#include <string.h>

#include "check.h"
#include "clspeech/base.h"

static cls_error e, outer;

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

  /* Wrapping keeps the inner status and puts the context in front. */
  cls_error_set(&e, CLS_ERR_INVALID_ARGUMENT, "a.csv:3: a row of 2 fields");
  CHECK_INT(cls_error_wrap(&outer, CLS_ERR_INVALID_ARGUMENT, &e, "starting the %s loader: ", "train"),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(outer.status, CLS_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(outer.text, "starting the train loader: a.csv:3: a row of 2 fields") == 0, "wrapped \"%s\"", outer.text);
  CHECK(strcmp(e.text, "a.csv:3: a row of 2 fields") == 0, "inner changed: \"%s\"", e.text);
  /* The status the inner call returned is the one kept, NULL fmt adds nothing. */
  CHECK_INT(cls_error_wrap(&outer, CLS_ERR_IO, &e, NULL), CLS_ERR_IO);
  CHECK(strcmp(outer.text, "a.csv:3: a row of 2 fields") == 0, "passed up \"%s\"", outer.text);
  /* In place: the context goes in front of the error's own text. */
  CHECK_INT(cls_error_wrap(&e, e.status, &e, "epoch %d: ", 4), CLS_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(e.text, "epoch 4: a.csv:3: a row of 2 fields") == 0, "in place \"%s\"", e.text);
  /* CLS_OK changes nothing. */
  CHECK_INT(cls_error_wrap(&outer, CLS_OK, &e, "never: "), CLS_OK);
  CHECK(strcmp(outer.text, "a.csv:3: a row of 2 fields") == 0, "CLS_OK wrote \"%s\"", outer.text);
  /* No inner text: the status's name stands in. */
  cls_error_clear(&e);
  CHECK_INT(cls_error_wrap(&outer, CLS_ERR_OUT_OF_MEMORY, &e, "loading: "), CLS_ERR_OUT_OF_MEMORY);
  CHECK(strcmp(outer.text, "loading: CLS_ERR_OUT_OF_MEMORY: out of host memory") == 0, "no inner text \"%s\"",
        outer.text);
  CHECK_INT(cls_error_wrap(&outer, CLS_ERR_DEVICE_OUT_OF_MEMORY, NULL, "x: "), CLS_ERR_DEVICE_OUT_OF_MEMORY);
  CHECK(strcmp(outer.text, "x: CLS_ERR_DEVICE_OUT_OF_MEMORY: out of device memory") == 0, "NULL inner \"%s\"",
        outer.text);
  /* A full inner text wrapped in place: the tail is cut, the marker at the end, the context in front. */
  cls_error_set(&e, CLS_ERR_BUILD, "%s", long_text);
  cls_error_wrap(&e, CLS_ERR_BUILD, &e, "tower 2: ");
  CHECK_INT(strlen(e.text), CLS_ERROR_CAP - 1);
  CHECK(strncmp(e.text, "tower 2: xxx", 12) == 0, "no context in front: \"%.20s\"", e.text);
  CHECK(strcmp(e.text + CLS_ERROR_CAP - 1 - strlen("... (truncated)"), "... (truncated)") == 0, "no marker at the end");
  /* A context longer than the cap is cut and marked too. */
  cls_error_set(&e, CLS_ERR_IO, "inner");
  cls_error_wrap(&outer, CLS_ERR_IO, &e, "%s", long_text);
  CHECK_INT(strlen(outer.text), CLS_ERROR_CAP - 1);
  CHECK(strstr(outer.text, "... (truncated)") != NULL, "a long context left no marker");
  cls_error_wrap(NULL, CLS_ERR_IO, &e, "x");

  /* Every status has a name of its own (host and device memory apart). */
  for (int a = CLS_OK; a <= CLS_ERR_DEVICE_OUT_OF_MEMORY; a++) {
    CHECK(strcmp(cls_status_string((cls_status)a), "unknown cls_status") != 0, "status %d has no name", a);
    for (int b = CLS_OK; b < a; b++)
      CHECK(strcmp(cls_status_string((cls_status)a), cls_status_string((cls_status)b)) != 0, "statuses %d and %d", a, b);
  }

  /* NULL receives nothing and the status still comes back. */
  CHECK_INT(cls_error_set(NULL, CLS_ERR_OUT_OF_MEMORY, "x"), CLS_ERR_OUT_OF_MEMORY);
  cls_error_clear(NULL);
  cls_error_add(NULL, "x");
  return check_finish("test_error");
}
