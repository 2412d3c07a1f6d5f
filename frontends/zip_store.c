/* A zip archive of whole files, stored without compression (see zip_store.h): for each file a local
 * header, its bytes and, after them all, the central directory and its end record (PKWARE's
 * APPNOTE.TXT, version 2.0 fields only: no zip64, so each file and the archive stay under 4 GiB).
 * CRC-32 is zip's (the reflected polynomial 0xEDB88320). Written by the output rule (cls_output); the
 * entries' dates are fixed, so that an archive depends on its files alone. */
#include "zip_store.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZIP_MAX 0xFFFFFFFFull
/* Every entry's date, 1980-01-01 00:00 (the earliest MS-DOS date): the same files give the same archive. */
#define DOS_DATE ((1u << 5) | 1u)

static uint32_t crc_table[256];

static void crc_init(void) {
  if (crc_table[1]) return;
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
}

static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n) {
  crc = ~crc;
  for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

static void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

typedef struct entry {
  uint32_t crc, size, offset;
} entry;

/* The file's bytes read through once: their CRC-32 and count, copied to `out` unless it is NULL. */
static cls_status pass(const char *path, FILE *out, uint32_t *crc, uint64_t *size, unsigned char *buf, size_t cap,
                       cls_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  *size = 0;
  *crc = 0;
  size_t n;
  int written = 1;
  while (written && (n = fread(buf, 1, cap, f)) > 0) {
    *crc = crc_update(*crc, buf, n);
    *size += n;
    written = !out || fwrite(buf, 1, n, out) == n;
  }
  const int bad = ferror(f);
  fclose(f);
  if (bad) return cls_error_set(err, CLS_ERR_IO, "%s: read error", path);
  return written ? CLS_OK : cls_error_set(err, CLS_ERR_IO, "write error");
}

/* The file's CRC-32 and size, read once before it is stored. */
static cls_status measure(const char *path, entry *e, unsigned char *buf, size_t cap, cls_error *err) {
  uint64_t size;
  cls_status st = pass(path, NULL, &e->crc, &size, buf, cap, err);
  if (st != CLS_OK) return st;
  if (size >= ZIP_MAX)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %llu bytes: a stored zip entry holds under 4 GiB", path,
                         (unsigned long long)size);
  e->size = (uint32_t)size;
  return CLS_OK;
}

/* The file's bytes after its local header; *offset advances past both. */
static cls_status store(FILE *out, const char *path, const char *name, entry *e, uint64_t *offset, unsigned char *buf,
                        size_t cap, cls_error *err) {
  const size_t name_len = strlen(name);
  unsigned char h[30] = {0};
  put32(h, 0x04034b50u);
  put16(h + 4, 20); /* version needed: 2.0 */
  put16(h + 12, DOS_DATE);
  put32(h + 14, e->crc);
  put32(h + 18, e->size);
  put32(h + 22, e->size);
  put16(h + 26, (unsigned)name_len);
  if (*offset + 30 + name_len + e->size >= ZIP_MAX)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "the archive would pass 4 GiB at %s", name);
  e->offset = (uint32_t)*offset;
  if (fwrite(h, 1, sizeof h, out) != sizeof h || fwrite(name, 1, name_len, out) != name_len)
    return cls_error_set(err, CLS_ERR_IO, "write error");
  uint64_t copied;
  uint32_t crc;
  cls_status st = pass(path, out, &crc, &copied, buf, cap, err);
  if (st != CLS_OK) return st;
  if (copied != e->size || crc != e->crc)
    return cls_error_set(err, CLS_ERR_IO, "%s changed while it was being archived", path);
  *offset += 30 + name_len + e->size;
  return CLS_OK;
}

static cls_status directory(FILE *out, const char *const *names, const entry *e, int n, uint64_t offset,
                            cls_error *err) {
  uint64_t size = 0;
  for (int i = 0; i < n; i++) {
    const size_t name_len = strlen(names[i]);
    unsigned char h[46] = {0};
    put32(h, 0x02014b50u);
    put16(h + 4, (3u << 8) | 20); /* made by: Unix, 2.0 */
    put16(h + 6, 20);
    put16(h + 14, DOS_DATE);
    put32(h + 16, e[i].crc);
    put32(h + 20, e[i].size);
    put32(h + 24, e[i].size);
    put16(h + 28, (unsigned)name_len);
    put32(h + 38, (uint32_t)(0100644u << 16)); /* a regular file, rw-r--r-- */
    put32(h + 42, e[i].offset);
    if (fwrite(h, 1, sizeof h, out) != sizeof h || fwrite(names[i], 1, name_len, out) != name_len)
      return cls_error_set(err, CLS_ERR_IO, "write error");
    size += sizeof h + name_len;
  }
  if (offset + size >= ZIP_MAX) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "the archive would pass 4 GiB");
  unsigned char end[22] = {0};
  put32(end, 0x06054b50u);
  put16(end + 8, (unsigned)n);
  put16(end + 10, (unsigned)n);
  put32(end + 12, (uint32_t)size);
  put32(end + 16, (uint32_t)offset);
  if (fwrite(end, 1, sizeof end, out) != sizeof end) return cls_error_set(err, CLS_ERR_IO, "write error");
  return CLS_OK;
}

cls_status zip_store_write(const char *zip_path, const char *dir, const char *const *names, int n, cls_error *err) {
  if (n < 1 || n > 0xFFFF) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %d files to archive", zip_path, n);
  crc_init();
  const size_t cap = (size_t)1 << 20;
  unsigned char *buf = malloc(cap);
  entry *e = calloc((size_t)n, sizeof *e);
  char path[CLS_PATH_CAP];
  cls_status st = buf && e ? CLS_OK : cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; st == CLS_OK && i < n; i++) {
    if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path)
      st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s/%s: the path is too long", dir, names[i]);
    else if (strlen(names[i]) > 0xFFFF)
      st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: the name is too long for zip", names[i]);
    else
      st = measure(path, &e[i], buf, cap, err);
  }
  cls_output *output = NULL;
  if (st == CLS_OK) st = cls_output_open(zip_path, &output, err);
  uint64_t offset = 0;
  for (int i = 0; st == CLS_OK && i < n; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    st = store(cls_output_file(output), path, names[i], &e[i], &offset, buf, cap, err);
  }
  if (st == CLS_OK) st = directory(cls_output_file(output), names, e, n, offset, err);
  if (output) {
    if (st == CLS_OK)
      st = cls_output_commit(output, zip_path, err);
    else
      cls_output_abort(output);
  }
  free(buf);
  free(e);
  return st;
}
