/* The file helpers of `clspeech import`'s layout readers (see import_files.h). */
#define _XOPEN_SOURCE 700 /* realpath, beside the build's _POSIX_C_SOURCE */
#include "data/import_files.h"

#include "base/file_util.h"
#include "clspeech/internal/import.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool cls_import_join(char *out, const char *dir, const char *name) {
  int w = snprintf(out, CLS_PATH_CAP, "%s/%s", dir, name);
  return w > 0 && w < CLS_PATH_CAP;
}

cls_status cls_import_absolute(const char *src, char *out, cls_error *err) {
  _Static_assert(CLS_PATH_CAP >= PATH_MAX, "realpath writes up to PATH_MAX bytes");
  if (!realpath(src, out)) return cls_error_set(err, CLS_ERR_IO, "%s: %s", src, strerror(errno));
  return CLS_OK;
}

bool cls_import_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool cls_import_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void cls_import_names_free(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

cls_status cls_import_list_dir(const char *dir, bool dirs_only, char ***names, int *n, cls_error *err) {
  *names = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return cls_error_set(err, CLS_ERR_IO, "%s: cannot read the folder: %s", dir, strerror(errno));
  char **v = NULL;
  int count = 0, cap = 0;
  struct dirent *e;
  cls_status st = CLS_OK;
  while ((e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (dirs_only) {
      char p[CLS_PATH_CAP];
      if (!cls_import_join(p, dir, e->d_name) || !cls_import_is_dir(p)) continue;
    }
    if (count == cap) {
      cap = cap ? cap * 2 : 64;
      char **w = realloc(v, (size_t)cap * sizeof *w);
      if (!w) {
        st = CLS_ERR_OUT_OF_MEMORY;
        break;
      }
      v = w;
    }
    if (!(v[count] = strdup(e->d_name))) {
      st = CLS_ERR_OUT_OF_MEMORY;
      break;
    }
    count++;
  }
  closedir(d);
  if (st != CLS_OK) {
    cls_import_names_free(v, count);
    return cls_error_set(err, st, "%s: out of memory listing the folder", dir);
  }
  if (count) qsort(v, (size_t)count, sizeof *v, cmp_names);
  *names = v;
  *n = count;
  return CLS_OK;
}

cls_status cls_import_read_text(const char *path, char **text, size_t *len, cls_error *err) {
  char *raw = NULL;
  size_t n = 0;
  cls_status st = cls_read_file_max(path, CLS_IMPORT_TEXT_MAX_BYTES, true, &raw, &n, err);
  if (st != CLS_OK) return st;
  char *t = realloc(raw, n + 1);
  if (!t) {
    free(raw);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  t[n] = '\0';
  *text = t;
  *len = n;
  return CLS_OK;
}
