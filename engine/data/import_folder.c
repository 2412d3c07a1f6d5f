/* `clspeech import folder` (see clspeech/internal/import.h): every audio file under a folder, at any
 * depth, with its transcript in a same-named .txt beside it, all into the train split. */
#include "clspeech/internal/import.h"

#include "data/import_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Folders deeper than this are not entered (a symlink loop ends there). */
#define MAX_DEPTH 32

static const char *const AUDIO_EXT[] = {".wav", ".flac", ".mp3", ".ogg", ".opus"};

/* The length of `name` without its audio extension, 0 when it has none. */
static size_t audio_stem(const char *name) {
  const size_t n = strlen(name);
  for (size_t i = 0; i < sizeof AUDIO_EXT / sizeof *AUDIO_EXT; i++) {
    const size_t e = strlen(AUDIO_EXT[i]);
    if (n > e && strcasecmp(name + n - e, AUDIO_EXT[i]) == 0) return n - e;
  }
  return 0;
}

static cls_status walk(const char *dir, int depth, int source, cls_import_list *list, cls_error *err) {
  char **names = NULL;
  int n = 0;
  cls_status st = cls_import_list_dir(dir, false, &names, &n, err);
  for (int i = 0; st == CLS_OK && i < n; i++) {
    char path[CLS_PATH_CAP], txt[CLS_PATH_CAP];
    if (names[i][0] == '.' || !cls_import_join(path, dir, names[i])) continue;
    if (cls_import_is_dir(path)) {
      if (depth < MAX_DEPTH) st = walk(path, depth + 1, source, list, err);
      continue;
    }
    const size_t stem = audio_stem(names[i]);
    if (!stem) continue;
    int w = snprintf(txt, sizeof txt, "%s/%.*s.txt", dir, (int)stem, names[i]);
    if (w <= 0 || w >= (int)sizeof txt) continue;
    char *text = NULL;
    size_t len = 0;
    if (cls_import_exists(txt)) {
      st = cls_import_read_text(txt, &text, &len, err);
      if (st != CLS_OK) break;
      /* One transcript a file: its line ends are spaces (normalisation collapses them). */
      for (size_t k = 0; k < len; k++)
        if (text[k] == '\n' || text[k] == '\r') text[k] = ' ';
      if (memchr(text, '\0', len)) {
        st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: holds a NUL byte", txt);
        free(text);
        break;
      }
    }
    st = cls_import_list_add(list, path, text, CLS_IMPORT_TRAIN, source, 0, err);
    free(text);
  }
  cls_import_names_free(names, n);
  return st;
}

cls_status cls_import_read_folder(const char *src, cls_import_list *list, cls_error *err) {
  char root[CLS_PATH_CAP];
  cls_status st = cls_import_absolute(src, root, err);
  if (st != CLS_OK) return st;
  if (!cls_import_is_dir(root)) return cls_error_set(err, CLS_ERR_IO, "%s: not a folder", root);
  int source = 0;
  const int before = list->n;
  st = cls_import_list_source(list, root, &source, err);
  if (st == CLS_OK) st = walk(root, 0, source, list, err);
  if (st == CLS_OK && list->n == before)
    st = cls_error_set(err, CLS_ERR_IO, "%s: no audio files (.wav, .flac, .mp3, .ogg, .opus) in it or below", root);
  return st;
}
