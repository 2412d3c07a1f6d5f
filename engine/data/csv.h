/* An RFC 4180 CSV reader over text in memory, with line numbers for messages: quoted fields (with ""
 * for a quote and line ends inside), CRLF, CR or LF line ends, empty lines skipped, a UTF-8
 * byte-order mark ignored, a NUL byte refused. It knows nothing of DeepSpeech's columns
 * (dataset.c reads those). */
#ifndef CLS_CSV_H
#define CLS_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "clspeech/base.h"

typedef struct cls_csv {
  const char *name;  /* the file, for messages */
  const char *s;     /* the text [len] (not owned) */
  size_t len, pos;
  int line;          /* the line at pos, from 1 */
  char *buf;         /* the current record's fields, each NUL-terminated */
  size_t buf_len, buf_cap;
  size_t *off;       /* [n_fields] start of each field in buf */
  int n_fields, off_cap;
} cls_csv;

/* Starts reading `text` [len] (kept, not copied). CLS_ERR_INVALID_ARGUMENT with `err` naming the
 * file and line when the text holds a NUL byte (not a CSV text file). */
cls_status cls_csv_open(cls_csv *c, const char *name, const char *text, size_t len, cls_error *err);
/* Reads the next record. CLS_OK with *have true and *line the record's first line, or CLS_OK with
 * *have false at the end of the text; otherwise the status (CLS_ERR_INVALID_ARGUMENT for a malformed
 * record, CLS_ERR_OUT_OF_MEMORY) with *have false and `err` naming the file and line. */
cls_status cls_csv_record(cls_csv *c, bool *have, int *line, cls_error *err);
/* The current record's fields. */
int cls_csv_fields(const cls_csv *c);
const char *cls_csv_field(const cls_csv *c, int i);
/* Frees the record buffers (not the text). */
void cls_csv_close(cls_csv *c);

#endif
