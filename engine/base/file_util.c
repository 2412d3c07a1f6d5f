/* Atomic file writing, whole-file reading, making folders, the cache folder's place and on/off
 * settings (see file_util.h). */
#include "base/file_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cls_status cls_write_atomic(const char *path, const void *const *chunks, const size_t *sizes, int n, char *err,
                            size_t err_cap) {
  static _Atomic unsigned counter;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), counter++);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    snprintf(err, err_cap, "%s: cannot write: %s", tmp, strerror(errno));
    return CLS_ERR_IO;
  }
  int ok = 1;
  for (int i = 0; ok && i < n; i++) ok = sizes[i] == 0 || fwrite(chunks[i], 1, sizes[i], f) == sizes[i];
  ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
  int saved = errno;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    if (ok) saved = errno;
    unlink(tmp);
    snprintf(err, err_cap, "%s: cannot write: %s", path, strerror(saved));
    return CLS_ERR_IO;
  }
  return CLS_OK;
}

cls_status cls_read_file(const char *path, char **out, size_t *out_len, char *err, size_t err_cap) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, err_cap, "%s: cannot open: %s", path, strerror(errno));
    return CLS_ERR_IO;
  }
  size_t len = 0, cap = 1 << 16;
  char *buf = malloc(cap);
  while (buf) {
    if (len == cap) {
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  int failed = ferror(f), saved = errno;
  fclose(f);
  if (!buf) {
    snprintf(err, err_cap, "%s: out of memory", path);
    return CLS_ERR_OUT_OF_MEMORY;
  }
  if (failed) {
    free(buf);
    snprintf(err, err_cap, "%s: cannot read: %s", path, strerror(saved));
    return CLS_ERR_IO;
  }
  *out = buf;
  *out_len = len;
  return CLS_OK;
}


cls_status cls_make_dirs(const char *path) {
  char buf[4096];
  size_t len = strlen(path);
  if (len == 0) {
    errno = ENOENT;
    return CLS_ERR_IO;
  }
  if (len >= sizeof buf) {
    errno = ENAMETOOLONG;
    return CLS_ERR_IO;
  }
  memcpy(buf, path, len + 1);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    int rc = mkdir(buf, 0755);
    *p = '/';
    if (rc != 0 && errno != EEXIST) return CLS_ERR_IO;
  }
  return mkdir(buf, 0755) != 0 && errno != EEXIST ? CLS_ERR_IO : CLS_OK;
}

bool cls_setting_off(const char *v) {
  return v && (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "OFF") || !strcmp(v, "no") || !strcmp(v, "false"));
}

bool cls_cache_dir_resolve(const char *dir, const char *xdg_cache_home, const char *home, const char *leaf,
                           char *out, size_t cap) {
  if (!cap) return false;
  int n;
  if (dir && *dir)
    n = snprintf(out, cap, "%s", dir);
  else if (xdg_cache_home && *xdg_cache_home)
    n = snprintf(out, cap, "%s/clspeech/%s", xdg_cache_home, leaf);
  else if (home && *home)
    n = snprintf(out, cap, "%s/.cache/clspeech/%s", home, leaf);
  else
    n = -1;
  if (n <= 0 || (size_t)n >= cap) {
    out[0] = '\0';
    return false;
  }
  return true;
}
