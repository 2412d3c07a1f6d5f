/* Atomic file writing and whole-file reading (see file_util.h). */
#include "base/file_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

