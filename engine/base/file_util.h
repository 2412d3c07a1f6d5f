/* Small file helpers shared by every writer and reader of files (checkpoints, caches, .npy): the
 * atomic write (declared in clspeech/base.h: temporary file in the same folder, fsync, rename, so
 * that a crash leaves either the old file or the new one), whole-file reads, and little-endian
 * integer encoding for binary headers. */
#ifndef CLS_FILE_UTIL_H
#define CLS_FILE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/base.h"

/* Reads the whole file into *out (malloc'ed, not NUL-terminated; *out_len bytes). CLS_ERR_IO with
 * `err` naming the file when it cannot be opened or read. */
cls_status cls_read_file(const char *path, char **out, size_t *out_len, char *err, size_t err_cap);

static inline void cls_put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t cls_get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

#endif
