/* The structural check of PoCL program binaries (see pocl_binary_check.h).
 *
 * Layout of format versions 9 to 12, every integer little-endian:
 *   header   "poclbin\0", u64 device id, u32 version, u32 kernel count, u64 flags, u32 root entry
 *            count, the program's build hash (41 bytes), and from version 10, when flag bit 1 is set,
 *            u64 bytes of program-scope variables
 *   root     per root entry: u64 byte count (never 0), then that many bytes of file records
 *   kernel   per kernel: u64 record size (from the record's start), u64 size of its file records
 *            (the record's last bytes), u32 argument-info size, u32 name length, the name, metadata
 *   file     u32 name length (never 0), the name relative to the program's folder, u32 content
 *            length, the content */
#include "device/pocl_binary_check.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/file_util.h"

#define MAGIC "poclbin"   /* with its NUL: 8 bytes */
#define FIRST_VERSION 9u  /* PoCL 3.x writes 9 */
#define LAST_VERSION 12u
#define BUILD_HASH_BYTES 41
#define FLAG_PROGRAM_SCOPE_VARS 2u

typedef struct reader {
  const unsigned char *p;
  size_t left;
} reader;

static bool take(reader *r, size_t n, const unsigned char **out) {
  if (n > r->left) return false;
  if (out) *out = r->p;
  r->p += n;
  r->left -= n;
  return true;
}

static bool take_u32(reader *r, uint64_t *v) {
  const unsigned char *p;
  if (!take(r, 4, &p)) return false;
  *v = cls_get_le(p, 4);
  return true;
}

static bool take_u64(reader *r, uint64_t *v) {
  const unsigned char *p;
  if (!take(r, 8, &p)) return false;
  *v = cls_get_le(p, 8);
  return true;
}

static cls_pocl_binary_verdict broken(cls_error *why, const char *fmt, ...) CLS_PRINTF(2, 3);
static cls_pocl_binary_verdict broken(cls_error *why, const char *fmt, ...) {
  cls_error_clear(why);
  va_list ap;
  va_start(ap, fmt);
  cls_error_vadd(why, fmt, ap);
  va_end(ap);
  if (why) why->status = CLS_ERR_IO;
  return CLS_POCL_BINARY_BROKEN;
}

/* A name that climbs out of the program's folder ("..", as a whole component). */
static bool climbs_out(const unsigned char *name, size_t len) {
  for (size_t i = 0; i + 1 < len; i++)
    if (name[i] == '.' && name[i + 1] == '.' && (i == 0 || name[i - 1] == '/') && (i + 2 == len || name[i + 2] == '/'))
      return true;
  return false;
}

/* A file or kernel name for a message: at most 64 bytes, anything but printable ASCII as '?'. */
static const char *shown(const unsigned char *name, uint64_t len, char out[68]) {
  size_t n = len > 64 ? 64 : (size_t)len, i;
  for (i = 0; i < n; i++) out[i] = name[i] >= 0x20 && name[i] < 0x7f ? (char)name[i] : '?';
  if (len > 64) out[i++] = '.', out[i++] = '.', out[i++] = '.';
  out[i] = '\0';
  return out;
}

typedef struct files_seen {
  bool program_bc; /* a non-empty /program.bc */
} files_seen;

/* Reads `bytes` of file records; false with `why` set when they do not parse to the byte. */
static bool check_files(reader *r, uint64_t bytes, bool empty_content_ok, files_seen *seen, const char *where,
                        cls_error *why) {
  if (bytes > r->left) {
    broken(why, "%s claims %llu bytes of files, past the binary's end", where, (unsigned long long)bytes);
    return false;
  }
  reader f = {r->p, (size_t)bytes};
  for (int k = 1; f.left > 0; k++) {
    uint64_t name_len = 0, content_len = 0;
    const unsigned char *name = NULL;
    if (!take_u32(&f, &name_len) || !take(&f, (size_t)name_len, &name) || !take_u32(&f, &content_len) ||
        !take(&f, (size_t)content_len, NULL)) {
      broken(why, "%s: file %d runs past its end", where, k);
      return false;
    }
    if (name_len == 0) {
      broken(why, "%s: file %d has no name", where, k);
      return false;
    }
    char text[68];
    if (climbs_out(name, (size_t)name_len)) {
      broken(why, "%s: file %d (%s) names a place outside the program's folder", where, k,
             shown(name, name_len, text));
      return false;
    }
    if (content_len == 0 && !empty_content_ok) {
      broken(why, "%s: file %d (%s) is empty: probably being rewritten when PoCL read its cache", where, k,
             shown(name, name_len, text));
      return false;
    }
    if (name_len == 11 && !memcmp(name, "/program.bc", 11) && content_len > 0) seen->program_bc = true;
  }
  take(r, (size_t)bytes, NULL);
  return true;
}

cls_pocl_binary_verdict cls_pocl_binary_check(const unsigned char *binary, size_t size, cls_error *why) {
  cls_error_clear(why);
  reader r = {binary, size};
  const unsigned char *magic = NULL;
  uint64_t device_id, version, n_kernels, flags, n_root;
  if (!binary || !take(&r, 8, &magic) || memcmp(magic, MAGIC, 8) != 0) return CLS_POCL_BINARY_UNCHECKED;
  if (!take_u64(&r, &device_id) || !take_u32(&r, &version)) return broken(why, "the header is cut short");
  if (version < FIRST_VERSION || version > LAST_VERSION) return CLS_POCL_BINARY_UNCHECKED;
  if (!take_u32(&r, &n_kernels) || !take_u64(&r, &flags) || !take_u32(&r, &n_root) ||
      !take(&r, BUILD_HASH_BYTES, NULL) ||
      (version >= 10 && (flags & FLAG_PROGRAM_SCOPE_VARS) && !take(&r, 8, NULL)))
    return broken(why, "the header is cut short");
  /* Version 9 (PoCL 3.x) writes no empty files: one is taken as unfinished, a rebuild being the safe
     side (PoCL 3.1 runs a binary with an empty kernel file, and aborts later on an empty program.bc).
     Later versions write empty files on purpose. */
  const bool empty_content_ok = version >= 10;
  files_seen seen = {false};
  char where[64];
  if (n_root == 0) return broken(why, "no root entry: program.bc was missing when PoCL read its cache");
  for (uint64_t i = 0; i < n_root; i++) {
    uint64_t bytes = 0;
    if (!take_u64(&r, &bytes)) return broken(why, "root entry %llu is cut short", (unsigned long long)i + 1);
    if (bytes == 0)
      return broken(why, "root entry %llu is empty: program.bc was missing when PoCL read its cache",
                    (unsigned long long)i + 1);
    snprintf(where, sizeof where, "root entry %llu", (unsigned long long)i + 1);
    if (!check_files(&r, bytes, empty_content_ok, &seen, where, why)) return CLS_POCL_BINARY_BROKEN;
  }
  if (!seen.program_bc) return broken(why, "no program.bc among the root entries");
  for (uint64_t k = 0; k < n_kernels; k++) {
    const unsigned char *start = r.p;
    const size_t left = r.left;
    uint64_t record, files, arginfo, name_len;
    const unsigned char *name = NULL;
    if (!take_u64(&r, &record) || !take_u64(&r, &files) || !take_u32(&r, &arginfo) || !take_u32(&r, &name_len) ||
        !take(&r, (size_t)name_len, &name))
      return broken(why, "kernel %llu of %llu is cut short", (unsigned long long)k + 1,
                    (unsigned long long)n_kernels);
    const uint64_t fixed = 24 + name_len;
    if (name_len == 0) return broken(why, "kernel %llu has no name", (unsigned long long)k + 1);
    char text[68];
    if (record > left || record < fixed || files > record - fixed)
      return broken(why, "kernel %llu (%s): record of %llu bytes with %llu bytes of files does not fit",
                    (unsigned long long)k + 1, shown(name, name_len, text), (unsigned long long)record,
                    (unsigned long long)files);
    reader files_at = {start + (record - files), (size_t)files};
    snprintf(where, sizeof where, "kernel %llu", (unsigned long long)k + 1);
    if (!check_files(&files_at, files, empty_content_ok, &seen, where, why)) return CLS_POCL_BINARY_BROKEN;
    r.p = start + record;
    r.left = left - (size_t)record;
  }
  if (r.left != 0)
    return broken(why, "%zu bytes follow the last of %llu kernels", r.left, (unsigned long long)n_kernels);
  return CLS_POCL_BINARY_SOUND;
}
