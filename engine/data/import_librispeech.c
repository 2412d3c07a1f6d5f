/* `clspeech import librispeech` and `mls` (see clspeech/internal/import.h): LibriSpeech's subset
 * folders of SPEAKER/CHAPTER/SPEAKER-CHAPTER.trans.txt beside the chapter's FLAC files, and
 * Multilingual LibriSpeech's SPLIT/transcripts.txt with its audio under SPLIT/audio/SPEAKER/BOOK/. */
#include "clspeech/internal/import.h"

#include "data/import_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct keyed_reader {
  cls_import_list *list;
  const char *dir;  /* LibriSpeech: the chapter folder; MLS: SPLIT/audio */
  const char *file; /* the transcript file */
  int split, source;
  int mls;
} keyed_reader;

/* MLS: ID is SPEAKER_BOOK_UTTERANCE; the audio is audio/SPEAKER/BOOK/ID.flac, else .opus. 1 with
 * the path in out, 0 for an ID of another form, -1 for a path too long. */
static int mls_path(const char *audio, const char *id, char *out) {
  const char *a = strchr(id, '_');
  const char *b = a ? strchr(a + 1, '_') : NULL;
  if (!a || !b || a == id || b == a + 1) return 0;
  const char *ext[2] = {"flac", "opus"};
  for (int i = 0; i < 2; i++) {
    int w = snprintf(out, CLS_PATH_CAP, "%s/%.*s/%.*s/%s.%s", audio, (int)(a - id), id, (int)(b - a - 1), a + 1, id,
                     ext[i]);
    if (w <= 0 || w >= CLS_PATH_CAP) return -1;
    if (cls_import_exists(out)) return 1;
  }
  return 1; /* neither exists: the .opus path, which the check reports missing */
}

static cls_status keyed_row(void *user, int line, const char *id, const char *text, cls_error *err) {
  keyed_reader *r = user;
  char full[CLS_PATH_CAP];
  bool ok;
  if (r->mls) {
    const int found = mls_path(r->dir, id, full);
    ok = found > 0;
    if (found == 0) {
      cls_status st = cls_import_list_add(r->list, r->file, NULL, r->split, r->source, line, err);
      if (st == CLS_OK) {
        cls_import_row *row = &r->list->rows[r->list->n - 1];
        row->reason = CLS_IMPORT_MALFORMED;
        snprintf(row->detail, sizeof row->detail, "line %d: the ID \"%.80s\" is not SPEAKER_BOOK_UTTERANCE", line, id);
      }
      return st;
    }
  } else {
    int w = snprintf(full, sizeof full, "%s/%s.flac", r->dir, id);
    ok = w > 0 && w < (int)sizeof full;
  }
  if (!ok) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the audio's path is too long", r->file, line);
  return cls_import_list_add(r->list, full, text, r->split, r->source, line, err);
}

static cls_status read_keyed(const char *file, const char *dir, int split, int mls, cls_import_list *list,
                             cls_error *err) {
  char *text = NULL;
  size_t len = 0;
  keyed_reader r = {list, dir, file, split, 0, mls};
  cls_status st = cls_import_read_text(file, &text, &len, err);
  if (st == CLS_OK) st = cls_import_list_source(list, file, &r.source, err);
  if (st == CLS_OK) st = cls_import_parse_keyed(text, len, file, mls ? '\t' : ' ', keyed_row, &r, err);
  free(text);
  return st;
}

/* The split a LibriSpeech subset's folder name gives, -1 for none. */
static int subset_split(const char *name) {
  static const char *const prefix[CLS_IMPORT_SPLITS] = {"train", "dev", "test"};
  for (int i = 0; i < CLS_IMPORT_SPLITS; i++)
    if (strncmp(name, prefix[i], strlen(prefix[i])) == 0) return i;
  return -1;
}

/* One subset folder: SPEAKER/CHAPTER/SPEAKER-CHAPTER.trans.txt. */
static cls_status read_subset(const char *dir, int split, cls_import_list *list, cls_error *err) {
  char **speakers = NULL;
  int n_speakers = 0;
  cls_status st = cls_import_list_dir(dir, true, &speakers, &n_speakers, err);
  for (int i = 0; st == CLS_OK && i < n_speakers; i++) {
    char sdir[CLS_PATH_CAP];
    if (!cls_import_join(sdir, dir, speakers[i])) continue;
    char **chapters = NULL;
    int n_chapters = 0;
    st = cls_import_list_dir(sdir, true, &chapters, &n_chapters, err);
    for (int j = 0; st == CLS_OK && j < n_chapters; j++) {
      char cdir[CLS_PATH_CAP], trans[CLS_PATH_CAP];
      if (!cls_import_join(cdir, sdir, chapters[j])) continue;
      int w = snprintf(trans, sizeof trans, "%s/%s-%s.trans.txt", cdir, speakers[i], chapters[j]);
      if (w <= 0 || w >= (int)sizeof trans || !cls_import_exists(trans)) continue;
      st = read_keyed(trans, cdir, split, 0, list, err);
    }
    cls_import_names_free(chapters, n_chapters);
  }
  cls_import_names_free(speakers, n_speakers);
  return st;
}

cls_status cls_import_read_librispeech(const char *src, cls_import_list *list, cls_error *err) {
  char root[CLS_PATH_CAP];
  cls_status st = cls_import_absolute(src, root, err);
  if (st != CLS_OK) return st;
  const char *base = strrchr(root, '/');
  base = base ? base + 1 : root;
  const int n_before = list->n;
  if (subset_split(base) >= 0) {
    st = read_subset(root, subset_split(base), list, err);
  } else {
    char **subsets = NULL;
    int n = 0;
    st = cls_import_list_dir(root, true, &subsets, &n, err);
    for (int i = 0; st == CLS_OK && i < n; i++) {
      char dir[CLS_PATH_CAP];
      if (subset_split(subsets[i]) < 0 || !cls_import_join(dir, root, subsets[i])) continue;
      st = read_subset(dir, subset_split(subsets[i]), list, err);
    }
    cls_import_names_free(subsets, n);
  }
  if (st == CLS_OK && list->n == n_before)
    st = cls_error_set(err, CLS_ERR_IO,
                       "%s: no SUBSET/SPEAKER/CHAPTER/SPEAKER-CHAPTER.trans.txt (subsets named train-*, dev-*, test-*)",
                       root);
  return st;
}

cls_status cls_import_read_mls(const char *src, cls_import_list *list, cls_error *err) {
  char root[CLS_PATH_CAP];
  cls_status st = cls_import_absolute(src, root, err);
  if (st != CLS_OK) return st;
  int found = 0;
  for (int split = 0; split < CLS_IMPORT_SPLITS && st == CLS_OK; split++) {
    char file[CLS_PATH_CAP], audio[CLS_PATH_CAP];
    const char *name = cls_import_split_name((cls_import_split)split);
    int w1 = snprintf(file, sizeof file, "%s/%s/transcripts.txt", root, name);
    int w2 = snprintf(audio, sizeof audio, "%s/%s/audio", root, name);
    if (w1 <= 0 || w1 >= (int)sizeof file || w2 <= 0 || w2 >= (int)sizeof audio || !cls_import_exists(file)) continue;
    found++;
    st = read_keyed(file, audio, split, 1, list, err);
  }
  if (st == CLS_OK && !found)
    st = cls_error_set(err, CLS_ERR_IO, "%s: none of train/, dev/, test/ holds transcripts.txt: not an MLS folder", root);
  return st;
}
