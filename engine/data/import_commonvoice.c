/* `clspeech import commonvoice` (see clspeech/internal/import.h): a Common Voice release folder's
 * train.tsv, dev.tsv and test.tsv (validated.tsv, other.tsv and invalidated.tsv are not read), each
 * row's clip under clips/. */
#include "clspeech/internal/import.h"

#include "data/import_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cv_reader {
  cls_import_list *list;
  const char *clips; /* SRC/clips */
  const char *tsv;
  int split, source;
} cv_reader;

static cls_status cv_row(void *user, int line, const char *path, const char *sentence, cls_error *err) {
  cv_reader *r = user;
  if (!path || !path[0]) {
    cls_status st = cls_import_list_add(r->list, r->tsv, NULL, r->split, r->source, line, err);
    if (st == CLS_OK) {
      cls_import_row *row = &r->list->rows[r->list->n - 1];
      row->reason = CLS_IMPORT_MALFORMED;
      snprintf(row->detail, sizeof row->detail, "line %d has no 'path' field", line);
    }
    return st;
  }
  char full[CLS_PATH_CAP];
  if (!cls_import_join(full, r->clips, path))
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the clip's path is too long", r->tsv, line);
  return cls_import_list_add(r->list, full, sentence, r->split, r->source, line, err);
}

cls_status cls_import_read_commonvoice(const char *src, cls_import_list *list, cls_error *err) {
  char root[CLS_PATH_CAP], clips[CLS_PATH_CAP], tsv[CLS_PATH_CAP];
  cls_status st = cls_import_absolute(src, root, err);
  if (st != CLS_OK) return st;
  if (!cls_import_join(clips, root, "clips") || !cls_import_is_dir(clips))
    return cls_error_set(err, CLS_ERR_IO, "%s: no clips/ folder: not a Common Voice release folder", root);
  int found = 0;
  for (int split = 0; split < CLS_IMPORT_SPLITS && st == CLS_OK; split++) {
    char name[16];
    snprintf(name, sizeof name, "%s.tsv", cls_import_split_name((cls_import_split)split));
    if (!cls_import_join(tsv, root, name) || !cls_import_exists(tsv)) continue;
    found++;
    char *text = NULL;
    size_t len = 0;
    cv_reader r = {list, clips, tsv, split, 0};
    st = cls_import_read_text(tsv, &text, &len, err);
    if (st == CLS_OK) st = cls_import_list_source(list, tsv, &r.source, err);
    if (st == CLS_OK) st = cls_import_parse_tsv(text, len, tsv, cv_row, &r, err);
    free(text);
  }
  if (st == CLS_OK && !found)
    st = cls_error_set(err, CLS_ERR_IO, "%s: none of train.tsv, dev.tsv, test.tsv: not a Common Voice release folder",
                       root);
  return st;
}
