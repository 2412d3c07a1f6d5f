/* TensorFlow tensor bundles (see tf_bundle.h): the leveldb table of the index file read and
 * written, the BundleHeaderProto and BundleEntryProto messages decoded and encoded by hand, the
 * entries checked against the data file (bounds, sizes, CRC-32C), and the folder's `checkpoint`
 * text index. */
#include "base/tf_bundle.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "base/tfrecord.h"

#define TABLE_MAGIC 0xdb4775248b80fb57ull
#define FOOTER_SIZE 48
#define BLOCK_TRAILER 5
#define RESTART_INTERVAL 16
#define BLOCK_TARGET 65536
#define MAX_INDEX_BYTES ((size_t)1 << 30)
#define MAX_DATA_BYTES ((size_t)1 << 40)

size_t cls_tf_dtype_size(int dtype) {
  switch (dtype) {
    case CLS_TF_FLOAT: case CLS_TF_INT32: return 4;
    case CLS_TF_DOUBLE: case CLS_TF_INT64: return 8;
    case CLS_TF_UINT8: case CLS_TF_INT8: case CLS_TF_BOOL: return 1;
    case CLS_TF_INT16: return 2;
    default: return 0;
  }
}

int cls_tf_bundle_index_path(const char *prefix, char *path, size_t cap) {
  return snprintf(path, cap, "%s.index", prefix) < (int)cap;
}

int cls_tf_bundle_data_path(const char *prefix, char *path, size_t cap) {
  return snprintf(path, cap, "%s.data-00000-of-00001", prefix) < (int)cap;
}

/* ---- wire primitives ---- */

/* A tensor's bytes from its dtype and shape: 1, or 0 for a negative dimension or a size past INT64_MAX. */
static int tensor_bytes(int dtype, int ndim, const int64_t *shape, uint64_t *bytes) {
  uint64_t n = cls_tf_dtype_size(dtype);
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0 || (shape[d] && n > (uint64_t)INT64_MAX / (uint64_t)shape[d])) return 0;
    n *= (uint64_t)shape[d];
  }
  *bytes = n;
  return 1;
}

/* A base-128 varint of at most 10 bytes at p[*pos .. n): 1 and *pos moved past it, or 0. */
static int get_varint(const unsigned char *p, size_t n, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  for (int i = 0; i < 10; i++) {
    if (*pos >= n) return 0;
    const unsigned char b = p[(*pos)++];
    if (i == 9 && b > 1) return 0; /* more than 64 bits */
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *out = v;
      return 1;
    }
  }
  return 0;
}

/* A growing byte buffer; `bad` set once an allocation fails. */
typedef struct buf {
  unsigned char *p;
  size_t n, cap;
  int bad;
} buf;

static void put_bytes(buf *b, const void *src, size_t n) {
  if (b->bad) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 256;
    while (cap < b->n + n) cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) {
      b->bad = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, src, n);
  b->n += n;
}

static void put_varint(buf *b, uint64_t v) {
  unsigned char t[10];
  size_t n = 0;
  do {
    t[n] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) t[n] |= 0x80;
    n++;
  } while (v);
  put_bytes(b, t, n);
}

/* Protobuf: a varint field, a length-delimited field, a fixed32 field. */
static void pb_varint(buf *b, int field, uint64_t v) {
  put_varint(b, (uint64_t)field << 3);
  put_varint(b, v);
}

static void pb_bytes(buf *b, int field, const void *p, size_t n) {
  put_varint(b, (uint64_t)field << 3 | 2);
  put_varint(b, n);
  put_bytes(b, p, n);
}

static void pb_fixed32(buf *b, int field, uint32_t v) {
  unsigned char t[4];
  cls_put_le(t, v, 4);
  put_varint(b, (uint64_t)field << 3 | 5);
  put_bytes(b, t, 4);
}

/* One field of a message at p[*pos .. n): its number, wire type, varint value (types 0, 1, 5) or
 * bytes (type 2). 1, 0 at the message's end, -1 when malformed (the reason in *why). */
typedef struct pb_field {
  int number, wire;
  uint64_t value;
  const unsigned char *bytes;
  size_t len;
} pb_field;

static int pb_next(const unsigned char *p, size_t n, size_t *pos, pb_field *f, const char **why) {
  if (*pos >= n) return 0;
  uint64_t key = 0;
  if (!get_varint(p, n, pos, &key)) return *why = "a bad varint (field key)", -1;
  if ((key >> 3) == 0 || (key >> 3) > 536870911u) return *why = "a field number out of range", -1;
  f->number = (int)(key >> 3);
  f->wire = (int)(key & 7);
  f->bytes = NULL;
  f->len = 0;
  switch (f->wire) {
    case 0:
      if (!get_varint(p, n, pos, &f->value)) return *why = "a bad varint", -1;
      return 1;
    case 1:
    case 5: {
      const size_t w = f->wire == 1 ? 8 : 4;
      if (n - *pos < w) return *why = "a truncated fixed-width field", -1;
      f->value = 0;
      for (size_t i = 0; i < w; i++) f->value |= (uint64_t)p[*pos + i] << (8 * i);
      *pos += w;
      return 1;
    }
    case 2:
      if (!get_varint(p, n, pos, &f->value)) return *why = "a bad varint (length)", -1;
      if (f->value > n - *pos) return *why = "a length past the end of its message", -1;
      f->bytes = p + *pos;
      f->len = (size_t)f->value;
      *pos += f->len;
      return 1;
    default:
      return *why = "an unsupported wire type", -1;
  }
}

/* ---- reading ---- */

static cls_status bad(cls_error *err, const char *file, const char *what, const char *detail) {
  return cls_error_set(err, CLS_ERR_IO, "%s: not a valid TensorFlow checkpoint index: %s%s%s", file, what,
                       detail ? ": " : "", detail ? detail : "");
}

/* The contents of the block `handle` (offset, size) of the table: checked trailer, no compression. */
static cls_status read_block(const unsigned char *t, size_t len, uint64_t off, uint64_t size, const char *file,
                             const char *what, const unsigned char **out, size_t *out_n, cls_error *err) {
  const size_t limit = len - FOOTER_SIZE;
  if (off > limit || size > limit - off || limit - off - size < BLOCK_TRAILER) {
    return cls_error_set(err, CLS_ERR_IO, "%s: the %s block (offset %llu, %llu bytes) lies outside the file", file,
                         what, (unsigned long long)off, (unsigned long long)size);
  }
  const unsigned char *b = t + off;
  const uint32_t want = (uint32_t)cls_get_le(b + size + 1, 4), have = cls_crc32c_mask(cls_crc32c(b, (size_t)size + 1));
  if (want != have) {
    return cls_error_set(err, CLS_ERR_IO, "%s: the %s block at offset %llu fails its CRC-32C (stored %08x, computed %08x)",
                         file, what, (unsigned long long)off, (unsigned)want, (unsigned)have);
  }
  if (b[size] == 1) {
    return cls_error_set(err, CLS_ERR_IO,
                         "%s: the %s block at offset %llu is snappy-compressed, which this reader does not handle "
                         "(TensorFlow writes bundles uncompressed)",
                         file, what, (unsigned long long)off);
  }
  if (b[size] != 0)
    return cls_error_set(err, CLS_ERR_IO, "%s: the %s block has an unknown compression type %d", file, what, b[size]);
  *out = b;
  *out_n = (size_t)size;
  return CLS_OK;
}

/* Walks a block's entries, calling fn(user, key, klen, value, vlen) for each. */
typedef cls_status (*entry_fn)(void *user, const unsigned char *key, size_t klen, const unsigned char *value,
                               size_t vlen, cls_error *err);

static cls_status walk_block(const unsigned char *b, size_t n, const char *file, const char *what, entry_fn fn,
                             void *user, cls_error *err) {
  if (n < 4) return bad(err, file, what, "a block shorter than its restart count");
  const uint32_t restarts = (uint32_t)cls_get_le(b + n - 4, 4);
  if (restarts == 0 || restarts > (n - 4) / 4) return bad(err, file, what, "a bad restart count");
  const size_t end = n - 4 - 4 * (size_t)restarts;
  for (uint32_t r = 0; r < restarts; r++) {
    const uint64_t at = cls_get_le(b + end + 4 * r, 4); /* an entry's start: inside the entries, or 0 when none */
    if (at > end || (at == end && end > 0)) return bad(err, file, what, "a restart point past the entries");
  }
  unsigned char *key = malloc(CLS_TF_MAX_NAME + 1);
  if (!key) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", file);
  size_t pos = 0, klen = 0;
  cls_status rc = CLS_OK;
  while (rc == CLS_OK && pos < end) {
    uint64_t shared = 0, unshared = 0, vlen = 0;
    if (!get_varint(b, end, &pos, &shared) || !get_varint(b, end, &pos, &unshared) ||
        !get_varint(b, end, &pos, &vlen)) {
      rc = bad(err, file, what, "a bad varint in a block entry");
    } else if (shared > klen) {
      rc = bad(err, file, what, "a key sharing more bytes than the previous key has");
    } else if (unshared > end - pos || vlen > end - pos - unshared) {
      rc = bad(err, file, what, "a block entry past the block's end");
    } else if (shared + unshared > CLS_TF_MAX_NAME) {
      rc = bad(err, file, what, "a key longer than 1024 bytes");
    } else {
      memcpy(key + shared, b + pos, (size_t)unshared);
      klen = (size_t)(shared + unshared);
      pos += (size_t)unshared;
      rc = fn(user, key, klen, b + pos, (size_t)vlen, err);
      pos += (size_t)vlen;
    }
  }
  free(key);
  return rc;
}

/* The state of one parse. */
typedef struct parse {
  const unsigned char *table;
  size_t table_len;
  const char *file;
  cls_tf_bundle *b;
  int cap, have_header;
  unsigned char last[CLS_TF_MAX_NAME + 1];
  size_t last_len;
  int any;
} parse;

static cls_status parse_header(parse *ps, const unsigned char *v, size_t n, cls_error *err) {
  size_t pos = 0;
  pb_field f;
  const char *why = NULL;
  uint64_t shards = 0, endian = 0;
  int r;
  while ((r = pb_next(v, n, &pos, &f, &why)) == 1) {
    if (f.number == 1 && f.wire == 0) shards = f.value;
    if (f.number == 2 && f.wire == 0) endian = f.value;
  }
  if (r < 0) return bad(err, ps->file, "the bundle header", why);
  if (endian != 0) return bad(err, ps->file, "the bundle header", "big-endian tensors are not handled");
  if (shards != 1) {
    return cls_error_set(err, CLS_ERR_IO, "%s: a bundle of %llu shards; only single-shard bundles are handled",
                         ps->file, (unsigned long long)shards);
  }
  ps->have_header = 1;
  return CLS_OK;
}

static cls_status parse_shape(parse *ps, const char *name, const unsigned char *v, size_t n, cls_tf_entry *e,
                              cls_error *err) {
  size_t pos = 0;
  pb_field f;
  const char *why = NULL;
  int r;
  while ((r = pb_next(v, n, &pos, &f, &why)) == 1) {
    if (f.number == 3 && f.wire == 0 && f.value)
      return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" has an unknown rank", ps->file, name);
    if (f.number != 2) continue;
    if (f.wire != 2) return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\": a malformed dimension", ps->file, name);
    if (e->ndim == CLS_TF_MAX_DIMS)
      return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" has more than %d dimensions", ps->file, name,
                           CLS_TF_MAX_DIMS);
    size_t dpos = 0;
    pb_field d;
    int64_t size = 0;
    while ((r = pb_next(f.bytes, f.len, &dpos, &d, &why)) == 1)
      if (d.number == 1 && d.wire == 0) size = (int64_t)d.value;
    if (r < 0) break;
    if (size < 0)
      return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" has dimension %d of size %lld", ps->file, name, e->ndim,
                           (long long)size);
    e->shape[e->ndim++] = size;
  }
  if (r < 0) return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\": a malformed shape: %s", ps->file, name, why);
  return CLS_OK;
}

static cls_status parse_entry(parse *ps, const char *name, const unsigned char *v, size_t n, cls_tf_entry *e,
                              uint64_t *offset, uint64_t *size, uint64_t *crc, cls_error *err) {
  size_t pos = 0;
  pb_field f;
  const char *why = NULL;
  int r, have_crc = 0;
  uint64_t shard = 0;
  while ((r = pb_next(v, n, &pos, &f, &why)) == 1) {
    cls_status rc = CLS_OK;
    if (f.number == 1 && f.wire == 0) e->dtype = f.value > 1000 ? -1 : (int)f.value;
    if (f.number == 2 && f.wire == 2) rc = parse_shape(ps, name, f.bytes, f.len, e, err);
    if (f.number == 3 && f.wire == 0) shard = f.value;
    if (f.number == 4 && f.wire == 0) *offset = f.value;
    if (f.number == 5 && f.wire == 0) *size = f.value;
    if (f.number == 6 && f.wire == 5) *crc = f.value, have_crc = 1;
    if (f.number == 7)
      return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" is stored in slices, which are not handled", ps->file,
                           name);
    if (rc != CLS_OK) return rc;
  }
  if (r < 0) return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\": a malformed entry: %s", ps->file, name, why);
  if (!cls_tf_dtype_size(e->dtype))
    return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" has dtype %d, which this reader does not handle", ps->file,
                         name, e->dtype);
  if (shard != 0) return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" lies in shard %llu", ps->file, name,
                                       (unsigned long long)shard);
  if (!have_crc) return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" has no CRC-32C", ps->file, name);
  uint64_t need = 0;
  if (!tensor_bytes(e->dtype, e->ndim, e->shape, &need))
    return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\": its shape overflows", ps->file, name);
  if (need != *size) {
    return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" has %llu bytes, not the %llu its dtype and shape need",
                         ps->file, name, (unsigned long long)*size, (unsigned long long)need);
  }
  return CLS_OK;
}

/* One key/value of a data block: the header (key "") or a tensor's entry. Keys strictly increase. */
static cls_status on_data(void *user, const unsigned char *key, size_t klen, const unsigned char *v, size_t vlen,
                          cls_error *err) {
  parse *ps = user;
  if (ps->any) {
    const size_t common = klen < ps->last_len ? klen : ps->last_len;
    const int c = memcmp(key, ps->last, common);
    if (c < 0 || (c == 0 && klen <= ps->last_len)) return bad(err, ps->file, "keys out of order or repeated", NULL);
  }
  memcpy(ps->last, key, klen);
  ps->last_len = klen;
  ps->any = 1;
  if (klen == 0) return parse_header(ps, v, vlen, err);
  if (memchr(key, '\0', klen)) return bad(err, ps->file, "a tensor name holding a NUL byte", NULL);
  cls_tf_bundle *b = ps->b;
  if (b->n_entries == CLS_TF_MAX_ENTRIES) return bad(err, ps->file, "more than 100000 tensors", NULL);
  if (b->n_entries == ps->cap) {
    const int cap = ps->cap ? 2 * ps->cap : 64;
    cls_tf_entry *e = realloc(b->entries, (size_t)cap * sizeof *e);
    if (!e) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", ps->file);
    b->entries = e;
    ps->cap = cap;
  }
  cls_tf_entry *e = &b->entries[b->n_entries];
  memset(e, 0, sizeof *e);
  e->name = malloc(klen + 1);
  if (!e->name) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", ps->file);
  memcpy(e->name, key, klen);
  e->name[klen] = '\0';
  b->n_entries++;
  uint64_t offset = 0, size = 0, crc = 0;
  cls_status rc = parse_entry(ps, e->name, v, vlen, e, &offset, &size, &crc, err);
  if (rc != CLS_OK) return rc;
  e->nbytes = (size_t)size;
  if (!b->data_file) return CLS_OK;
  if (offset > b->data_size || size > b->data_size - offset) {
    return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" (offset %llu, %llu bytes) lies past the data file's %zu bytes",
                         ps->file, e->name, (unsigned long long)offset, (unsigned long long)size, b->data_size);
  }
  e->data = b->data_file + offset;
  const uint32_t have = cls_crc32c_mask(cls_crc32c(e->data, e->nbytes));
  if (have != (uint32_t)crc) {
    return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" fails its CRC-32C (stored %08x, computed %08x)", ps->file,
                         e->name, (unsigned)crc, (unsigned)have);
  }
  return CLS_OK;
}

/* One index block entry: the handle of a data block, walked. */
static cls_status on_index(void *user, const unsigned char *key, size_t klen, const unsigned char *v, size_t vlen,
                           cls_error *err) {
  (void)key;
  (void)klen;
  parse *ps = user;
  size_t pos = 0;
  uint64_t off = 0, size = 0;
  if (!get_varint(v, vlen, &pos, &off) || !get_varint(v, vlen, &pos, &size))
    return bad(err, ps->file, "the index block", "a bad varint in a block handle");
  const unsigned char *block = NULL;
  size_t n = 0;
  cls_status rc = read_block(ps->table, ps->table_len, off, size, ps->file, "data", &block, &n, err);
  return rc == CLS_OK ? walk_block(block, n, ps->file, "a data block", on_data, ps, err) : rc;
}

static cls_status on_meta(void *user, const unsigned char *key, size_t klen, const unsigned char *v, size_t vlen,
                          cls_error *err) {
  (void)user, (void)key, (void)klen, (void)v, (void)vlen, (void)err;
  return CLS_OK; /* filter blocks are not used and not needed */
}

/* Parses the table; takes the data file (may be NULL) into the bundle. */
static cls_status parse_owned(const unsigned char *t, size_t len, unsigned char *data, size_t data_len,
                              const char *file, cls_tf_bundle **out, cls_error *err) {
  *out = NULL;
  cls_tf_bundle *b = calloc(1, sizeof *b);
  if (!b) {
    free(data);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", file);
  }
  b->data_file = data;
  b->data_size = data_len;
  parse *ps = calloc(1, sizeof *ps);
  if (!ps) {
    cls_tf_bundle_free(b);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", file);
  }
  ps->table = t;
  ps->table_len = len;
  ps->file = file;
  ps->b = b;
  cls_status rc = CLS_OK;
  uint64_t magic = 0;
  if (len < FOOTER_SIZE) rc = bad(err, file, "shorter than the 48-byte footer", NULL);
  for (int i = 0; rc == CLS_OK && i < 8; i++) magic |= (uint64_t)t[len - 8 + (size_t)i] << (8 * i);
  if (rc == CLS_OK && magic != TABLE_MAGIC) rc = bad(err, file, "the footer's magic number is wrong", NULL);
  uint64_t h[4] = {0};
  size_t pos = 0;
  const unsigned char *footer = rc == CLS_OK ? t + len - FOOTER_SIZE : NULL;
  for (int i = 0; rc == CLS_OK && i < 4; i++)
    if (!get_varint(footer, FOOTER_SIZE - 8, &pos, &h[i])) rc = bad(err, file, "a bad varint in the footer", NULL);
  const unsigned char *block = NULL;
  size_t n = 0;
  if (rc == CLS_OK) rc = read_block(t, len, h[0], h[1], file, "metaindex", &block, &n, err);
  if (rc == CLS_OK) rc = walk_block(block, n, file, "the metaindex block", on_meta, ps, err);
  if (rc == CLS_OK) rc = read_block(t, len, h[2], h[3], file, "index", &block, &n, err);
  if (rc == CLS_OK) rc = walk_block(block, n, file, "the index block", on_index, ps, err);
  if (rc == CLS_OK && !ps->have_header) rc = bad(err, file, "no bundle header (key \"\")", NULL);
  free(ps);
  if (rc != CLS_OK) {
    cls_tf_bundle_free(b);
    return rc;
  }
  *out = b;
  return CLS_OK;
}

cls_status cls_tf_bundle_parse(const void *index, size_t index_len, const void *data, size_t data_len,
                               const char *name, cls_tf_bundle **out, cls_error *err) {
  unsigned char *copy = NULL;
  if (data) {
    copy = malloc(data_len ? data_len : 1);
    if (!copy) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    if (data_len) memcpy(copy, data, data_len);
  }
  return parse_owned(index, index_len, copy, data_len, name, out, err);
}

cls_status cls_tf_bundle_read(const char *prefix, int with_data, cls_tf_bundle **out, cls_error *err) {
  char index_path[4096], data_path[4096];
  *out = NULL;
  if (!cls_tf_bundle_index_path(prefix, index_path, sizeof index_path) ||
      !cls_tf_bundle_data_path(prefix, data_path, sizeof data_path))
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: the path is too long", prefix);
  char *index = NULL, *data = NULL;
  size_t index_len = 0, data_len = 0;
  cls_status rc = cls_read_file_max(index_path, MAX_INDEX_BYTES, false, &index, &index_len, err);
  if (rc == CLS_OK && with_data) rc = cls_read_file_max(data_path, MAX_DATA_BYTES, false, &data, &data_len, err);
  if (rc == CLS_OK && with_data && !data) data = malloc(1); /* an empty data file */
  if (rc == CLS_OK && with_data && !data) rc = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", data_path);
  if (rc == CLS_OK) {
    rc = parse_owned((const unsigned char *)index, index_len, (unsigned char *)data, data_len, index_path, out, err);
    data = NULL;
  }
  free(index);
  free(data);
  return rc;
}

void cls_tf_bundle_free(cls_tf_bundle *b) {
  if (!b) return;
  for (int i = 0; i < b->n_entries; i++) free(b->entries[i].name);
  free(b->entries);
  free(b->data_file);
  free(b);
}

const cls_tf_entry *cls_tf_bundle_find(const cls_tf_bundle *b, const char *name) {
  int lo = 0, hi = b->n_entries - 1;
  while (lo <= hi) { /* the entries are in byte order */
    const int mid = lo + (hi - lo) / 2, c = strcmp(b->entries[mid].name, name);
    if (c == 0) return &b->entries[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

/* ---- writing ---- */

/* A block being built: entries with shared prefixes, a restart every RESTART_INTERVAL. */
typedef struct block {
  buf b;
  uint32_t restarts[CLS_TF_MAX_ENTRIES / RESTART_INTERVAL + 2];
  int n_restarts, count;
  char last[CLS_TF_MAX_NAME + 1];
  size_t last_len;
} block;

static void block_add(block *bl, const char *key, size_t klen, const unsigned char *v, size_t vlen) {
  size_t shared = 0;
  if (bl->count % RESTART_INTERVAL == 0) {
    bl->restarts[bl->n_restarts++] = (uint32_t)bl->b.n;
  } else {
    while (shared < klen && shared < bl->last_len && key[shared] == bl->last[shared]) shared++;
  }
  put_varint(&bl->b, shared);
  put_varint(&bl->b, klen - shared);
  put_varint(&bl->b, vlen);
  put_bytes(&bl->b, key + shared, klen - shared);
  put_bytes(&bl->b, v, vlen);
  memcpy(bl->last, key, klen);
  bl->last_len = klen;
  bl->count++;
}

/* Appends the finished block and its trailer to `file`; its handle into handle (varints). */
static void block_finish(block *bl, buf *file, buf *handle) {
  if (bl->n_restarts == 0) bl->restarts[bl->n_restarts++] = 0;
  unsigned char t[4];
  for (int i = 0; i < bl->n_restarts; i++) {
    cls_put_le(t, bl->restarts[i], 4);
    put_bytes(&bl->b, t, 4);
  }
  cls_put_le(t, (uint32_t)bl->n_restarts, 4);
  put_bytes(&bl->b, t, 4);
  const size_t size = bl->b.n;
  put_bytes(&bl->b, "\0", 1);
  if (!bl->b.bad) cls_put_le(t, cls_crc32c_mask(cls_crc32c(bl->b.p, size + 1)), 4);
  put_bytes(&bl->b, t, 4);
  put_varint(handle, file->n);
  put_varint(handle, size);
  put_bytes(file, bl->b.p, bl->b.n);
  file->bad |= bl->b.bad;
  bl->b.n = 0;
  bl->n_restarts = 0;
  bl->count = 0;
  bl->last_len = 0;
}

/* Ends the data block `bl` into `file` and lists it in the index block `ix` under its last key
 * (which sorts at or after every key of the block and before every later one). */
static void end_data_block(block *bl, block *ix, buf *file, buf *handle) {
  char last[CLS_TF_MAX_NAME + 1];
  const size_t last_len = bl->last_len;
  memcpy(last, bl->last, last_len);
  handle->n = 0;
  block_finish(bl, file, handle);
  block_add(ix, last, last_len, handle->p, handle->n);
}

/* order[0 .. n) sorted by the tensors' names (a merge sort through tmp[n]). */
static void sort_by_name(const cls_tf_tensor *t, int *order, int *tmp, int n) {
  for (int width = 1; width < n; width *= 2) {
    for (int lo = 0; lo < n; lo += 2 * width) {
      const int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int a = lo, b = mid, k = lo;
      while (a < mid || b < hi)
        tmp[k++] = b >= hi || (a < mid && strcmp(t[order[a]].name, t[order[b]].name) <= 0) ? order[a++] : order[b++];
    }
    memcpy(order, tmp, (size_t)n * sizeof *order);
  }
}

cls_status cls_tf_bundle_write(const char *prefix, const cls_tf_tensor *t, int n, cls_error *err) {
  char index_path[4096], data_path[4096];
  if (!cls_tf_bundle_index_path(prefix, index_path, sizeof index_path) ||
      !cls_tf_bundle_data_path(prefix, data_path, sizeof data_path))
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: the path is too long", prefix);
  if (n < 0 || n > CLS_TF_MAX_ENTRIES) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %d tensors", prefix, n);
  int *order = malloc((size_t)(n ? n : 1) * sizeof *order), *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
  uint64_t *offsets = malloc((size_t)(n ? n : 1) * sizeof *offsets);
  const void **chunks = malloc((size_t)(n ? n : 1) * sizeof *chunks);
  size_t *sizes = malloc((size_t)(n ? n : 1) * sizeof *sizes);
  block *bl = calloc(1, sizeof *bl), *ix = calloc(1, sizeof *ix);
  buf file = {0}, handle = {0}, entry = {0}, shape = {0}, dim = {0}, meta_handle = {0}, index_handle = {0};
  cls_status rc = order && tmp && offsets && chunks && sizes && bl && ix ? CLS_OK
                                                            : cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", prefix);
  uint64_t at = 0;
  for (int i = 0; rc == CLS_OK && i < n; i++) {
    const size_t len = t[i].name ? strlen(t[i].name) : 0;
    uint64_t bytes = 0;
    if (!len || len > CLS_TF_MAX_NAME || !cls_tf_dtype_size(t[i].dtype) || t[i].ndim < 0 ||
        t[i].ndim > CLS_TF_MAX_DIMS || !tensor_bytes(t[i].dtype, t[i].ndim, t[i].shape, &bytes) ||
        bytes > SIZE_MAX || (bytes && !t[i].data) || at > UINT64_MAX - bytes) {
      rc = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: tensor %d (\"%s\") cannot be written", prefix, i,
                         t[i].name ? t[i].name : "");
      break;
    }
    order[i] = i;
    offsets[i] = at;
    chunks[i] = t[i].data;
    sizes[i] = (size_t)bytes;
    at += bytes;
  }
  if (rc == CLS_OK) {
    sort_by_name(t, order, tmp, n);
    for (int i = 1; rc == CLS_OK && i < n; i++)
      if (!strcmp(t[order[i]].name, t[order[i - 1]].name))
        rc = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: tensor \"%s\" given twice", prefix, t[order[i]].name);
  }
  if (rc == CLS_OK) {
    /* the header: num_shards 1, little-endian (0, the default), version { producer 1 } */
    pb_varint(&entry, 1, 1);
    const unsigned char version[2] = {0x08, 0x01};
    pb_bytes(&entry, 3, version, sizeof version);
    block_add(bl, "", 0, entry.p, entry.n);
    for (int k = 0; k < n; k++) {
      const int i = order[k];
      entry.n = shape.n = 0;
      for (int d = 0; d < t[i].ndim; d++) {
        dim.n = 0;
        if (t[i].shape[d]) pb_varint(&dim, 1, (uint64_t)t[i].shape[d]);
        pb_bytes(&shape, 2, dim.p, dim.n);
      }
      pb_varint(&entry, 1, (uint64_t)t[i].dtype);
      pb_bytes(&entry, 2, shape.p, shape.n);
      if (offsets[i]) pb_varint(&entry, 4, offsets[i]);
      if (sizes[i]) pb_varint(&entry, 5, sizes[i]);
      pb_fixed32(&entry, 6, cls_crc32c_mask(cls_crc32c(t[i].data, sizes[i])));
      block_add(bl, t[i].name, strlen(t[i].name), entry.p, entry.n);
      if (bl->b.n >= BLOCK_TARGET && k + 1 < n) end_data_block(bl, ix, &file, &handle);
    }
    /* the last data block, the metaindex (no entries), the index */
    end_data_block(bl, ix, &file, &handle);
    block_finish(bl, &file, &meta_handle);
    block_finish(ix, &file, &index_handle);
    unsigned char footer[FOOTER_SIZE] = {0};
    buf f = {0};
    put_bytes(&f, meta_handle.p, meta_handle.n);
    put_bytes(&f, index_handle.p, index_handle.n);
    if (!f.bad) memcpy(footer, f.p, f.n);
    free(f.p);
    for (int i = 0; i < 8; i++) footer[40 + i] = (unsigned char)(TABLE_MAGIC >> (8 * i));
    put_bytes(&file, footer, sizeof footer);
    if (file.bad || entry.bad || shape.bad || dim.bad || handle.bad || ix->b.bad || meta_handle.bad ||
        index_handle.bad)
      rc = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", prefix);
  }
  if (rc == CLS_OK) rc = cls_write_atomic(data_path, chunks, sizes, n, err);
  if (rc == CLS_OK) {
    const void *c[1] = {file.p};
    size_t s[1] = {file.n};
    rc = cls_write_atomic(index_path, c, s, 1, err);
  }
  free(order);
  free(tmp);
  free(offsets);
  free(chunks);
  free(sizes);
  free(bl ? bl->b.p : NULL);
  free(bl);
  free(ix ? ix->b.p : NULL);
  free(ix);
  free(file.p);
  free(handle.p);
  free(entry.p);
  free(shape.p);
  free(dim.p);
  free(index_handle.p);
  free(meta_handle.p);
  return rc;
}

/* ---- the folder's `checkpoint` file ---- */

cls_status cls_tf_checkpoint_index_write(const char *dir, const char *name, cls_error *err) {
  char path[4096], text[2200];
  if (strlen(name) > 1000 || strpbrk(name, "\"\\\n/") || snprintf(path, sizeof path, "%s/checkpoint", dir) >= (int)sizeof path)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: cannot name \"%s\" in its checkpoint file", dir, name);
  const int n = snprintf(text, sizeof text, "model_checkpoint_path: \"%s\"\nall_model_checkpoint_paths: \"%s\"\n", name,
                         name);
  const void *chunks[1] = {text};
  size_t sizes[1] = {(size_t)n};
  return cls_write_atomic(path, chunks, sizes, 1, err);
}

int cls_tf_checkpoint_index_parse(const char *text, char *name, size_t cap) {
  static const char key[] = "model_checkpoint_path:";
  for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, key, sizeof key - 1)) continue;
    p += sizeof key - 1;
    while (*p == ' ' || *p == '\t') p++;
    if (*p++ != '"') return 0;
    const char *end = p;
    while (*end && *end != '"' && *end != '\\' && *end != '\n' && (unsigned char)*end >= 0x20) end++;
    if (*end != '"') return 0; /* escapes and unterminated strings are not taken */
    const char *base = p;
    for (const char *c = p; c < end; c++)
      if (*c == '/') base = c + 1;
    const size_t len = (size_t)(end - base);
    if (!len || len >= cap || (len == 1 && base[0] == '.') || (len == 2 && !strncmp(base, "..", 2))) return 0;
    memcpy(name, base, len);
    name[len] = '\0';
    return 1;
  }
  return 0;
}
