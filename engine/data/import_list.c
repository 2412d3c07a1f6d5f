/* The rows `clspeech import` reads (see clspeech/internal/import.h): the list and its source files,
 * and the names of the splits and of the reasons a row is left out. */
#include "clspeech/internal/import.h"

#include <stdlib.h>
#include <string.h>

const char *cls_import_split_name(cls_import_split split) {
  switch (split) {
    case CLS_IMPORT_TRAIN: return "train";
    case CLS_IMPORT_DEV: return "dev";
    case CLS_IMPORT_TEST: return "test";
    default: return "?";
  }
}

static const char *const NAMES[CLS_IMPORT_REASONS][2] = {
    {"kept", "kept"},
    {"malformed", "malformed row of a transcript file"},
    {"no_transcript", "audio without a transcript"},
    {"duplicate", "audio file of an earlier row"},
    {"bad_text", "transcript not valid UTF-8"},
    {"empty_transcript", "empty transcript after normalisation"},
    {"digits", "digits in the transcript"},
    {"not_in_alphabet", "characters not in the alphabet"},
    {"audio_missing", "audio file missing"},
    {"audio_unreadable", "audio file unreadable"},
    {"too_short", "audio too short for its transcript"},
    {"too_long", "audio longer than --max_seconds"},
    {"too_slow", "fewer characters per second than --min_chars_per_second"},
};

const char *cls_import_reason_key(cls_import_reason r) {
  return r >= 0 && r < CLS_IMPORT_REASONS ? NAMES[r][0] : "?";
}

const char *cls_import_reason_name(cls_import_reason r) {
  return r >= 0 && r < CLS_IMPORT_REASONS ? NAMES[r][1] : "?";
}

void cls_import_list_free(cls_import_list *list) {
  if (!list) return;
  for (int i = 0; i < list->n; i++) {
    free(list->rows[i].path);
    free(list->rows[i].transcript);
  }
  for (int i = 0; i < list->n_sources; i++) free(list->sources[i]);
  free(list->rows);
  free(list->sources);
  memset(list, 0, sizeof *list);
}

static char *dup_or_null(const char *s, int *failed) {
  if (!s) return NULL;
  char *d = strdup(s);
  if (!d) *failed = 1;
  return d;
}

cls_status cls_import_list_add(cls_import_list *list, const char *path, const char *transcript, int split, int source,
                               int line, cls_error *err) {
  if (list->n == list->cap) {
    int cap = list->cap ? list->cap * 2 : 256;
    cls_import_row *r = realloc(list->rows, (size_t)cap * sizeof *r);
    if (!r) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "the import's rows: out of memory");
    list->rows = r;
    list->cap = cap;
  }
  cls_import_row *r = &list->rows[list->n];
  memset(r, 0, sizeof *r);
  int failed = 0;
  r->path = dup_or_null(path, &failed);
  r->transcript = dup_or_null(transcript, &failed);
  if (failed || !r->path) {
    free(r->path);
    free(r->transcript);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "the import's rows: out of memory");
  }
  r->split = split;
  r->source = source;
  r->line = line;
  list->n++;
  return CLS_OK;
}

cls_status cls_import_list_source(cls_import_list *list, const char *name, int *index, cls_error *err) {
  char **v = realloc(list->sources, (size_t)(list->n_sources + 1) * sizeof *v);
  if (!v) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "the import's sources: out of memory");
  list->sources = v;
  if (!(v[list->n_sources] = strdup(name))) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of memory");
  *index = list->n_sources++;
  return CLS_OK;
}
