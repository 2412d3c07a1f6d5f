/* The n-gram model's binary form (layout in lm_binary.h): writing a loaded model as one file whose
 * sections are the model's own arrays (lm_model.h), and loading such a file by mapping it read-only
 * and pointing the model into the mapping, after checking the header, the checksum and every offset,
 * size, capacity and id, so that no file can make the model read outside it. cls_lm_load picks the
 * binary or the ARPA reader by the file's first bytes. */
#define _DEFAULT_SOURCE /* MAP_POPULATE */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "decode/lm_binary.h"
#include "decode/lm_model.h"

_Static_assert(sizeof(lm_bin_header) == 512, "the binary header is 512 bytes");
_Static_assert(sizeof(cls_lm_entry) == 16, "an n-gram table slot is 16 bytes");
_Static_assert(sizeof(LM_BIN_MAGIC) == 9, "the magic is 8 bytes");

/* ---- the checksum ---- */

#define CK_MUL 0x9fb21c651e98df25ull

static uint64_t ck_mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

static inline uint64_t ck_lane(uint64_t h, uint64_t w) {
  h = (h ^ w) * CK_MUL;
  return h ^ (h >> 29);
}

static void ck_blocks(uint64_t lane[4], const unsigned char *p, size_t blocks) {
  uint64_t a = lane[0], b = lane[1], c = lane[2], d = lane[3];
  for (size_t i = 0; i < blocks; i++, p += 32) {
    uint64_t w[4];
    memcpy(w, p, 32);
    a = ck_lane(a, w[0]);
    b = ck_lane(b, w[1]);
    c = ck_lane(c, w[2]);
    d = ck_lane(d, w[3]);
  }
  lane[0] = a, lane[1] = b, lane[2] = c, lane[3] = d;
}

void lm_bin_cksum_init(lm_bin_cksum *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < 4; i++) c->lane[i] = 0x243f6a8885a308d3ull * (uint64_t)(2 * i + 1);
}

void lm_bin_cksum_add(lm_bin_cksum *c, const void *data, size_t n) {
  const unsigned char *p = data;
  size_t have = (size_t)(c->bytes % 32);
  c->bytes += n;
  if (have) { /* complete the partial block first */
    size_t take = 32 - have < n ? 32 - have : n;
    memcpy(c->tail + have, p, take);
    p += take;
    n -= take;
    if (have + take < 32) return;
    ck_blocks(c->lane, c->tail, 1);
  }
  ck_blocks(c->lane, p, n / 32);
  memcpy(c->tail, p + n / 32 * 32, n % 32);
}

uint64_t lm_bin_cksum_final(const lm_bin_cksum *c) {
  uint64_t lane[4] = {c->lane[0], c->lane[1], c->lane[2], c->lane[3]};
  size_t have = (size_t)(c->bytes % 32);
  if (have) {
    unsigned char last[32] = {0};
    memcpy(last, c->tail, have);
    ck_blocks(lane, last, 1);
  }
  uint64_t h = ck_mix(c->bytes ^ 0x452821e638d01377ull);
  for (int i = 0; i < 4; i++) h = ck_mix(h ^ lane[i]) + (uint64_t)i;
  return h;
}

uint64_t lm_bin_checksum(const void *file, size_t size) {
  lm_bin_header h;
  memcpy(&h, file, sizeof h);
  h.checksum = 0;
  lm_bin_cksum c;
  lm_bin_cksum_init(&c);
  lm_bin_cksum_add(&c, &h, sizeof h);
  lm_bin_cksum_add(&c, (const unsigned char *)file + sizeof h, size - sizeof h);
  return lm_bin_cksum_final(&c);
}

/* ---- writing ---- */

static uint64_t round_up(uint64_t n) { return (n + LM_BIN_ALIGN - 1) / LM_BIN_ALIGN * LM_BIN_ALIGN; }

cls_status cls_lm_save_binary(const cls_lm *lm, const char *path, cls_error *err) {
  if (!lm || !path) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_lm_save_binary: model or path is NULL");
  static const unsigned char zeros[LM_BIN_ALIGN];
  lm_bin_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, LM_BIN_MAGIC, sizeof h.magic);
  h.version = CLS_LM_BINARY_VERSION;
  h.endian = LM_BIN_ENDIAN;
  h.header_bytes = sizeof h;
  h.size_t_bytes = sizeof(size_t);
  h.entry_bytes = sizeof(cls_lm_entry);
  h.order = lm->order;
  h.n_words = lm->n_words;
  h.bos = lm->bos;
  h.eos = lm->eos;
  h.unk = lm->unk;
  h.flags = lm->characters ? LM_BIN_FLAG_CHARACTERS : 0;
  for (int n = 1; n <= lm->order; n++) h.counts[n] = lm->counts[n];
  h.vocab_cap = lm->vocab_cap;
  h.arena_len = lm->arena_len;
  const void *data[LM_BIN_SECTIONS] = {lm->arena, lm->word_off, lm->vocab_slots, lm->uni_prob, lm->uni_backoff};
  uint64_t bytes[LM_BIN_SECTIONS] = {lm->arena_len, (uint64_t)lm->n_words * sizeof(size_t),
                                     lm->vocab_cap * sizeof(int32_t), (uint64_t)lm->n_words * sizeof(float),
                                     (uint64_t)lm->n_words * sizeof(float)};
  for (int n = 2; n <= lm->order; n++) {
    h.table_cap[n] = lm->tables[n].cap;
    data[LM_BIN_TABLE2 + n - 2] = lm->tables[n].slots;
    bytes[LM_BIN_TABLE2 + n - 2] = lm->tables[n].cap * sizeof(cls_lm_entry);
  }
  /* the chunks: the header, then each section and the zeros that pad it to the alignment */
  const void *chunk[1 + 2 * LM_BIN_SECTIONS];
  size_t chunk_bytes[1 + 2 * LM_BIN_SECTIONS];
  int n_chunks = 1;
  uint64_t off = sizeof h;
  for (int s = 0; s < LM_BIN_SECTIONS; s++) {
    if (!bytes[s]) continue;
    if (bytes[s] > SIZE_MAX) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: model too large", path);
    h.section[s].offset = off;
    h.section[s].bytes = bytes[s];
    chunk[n_chunks] = data[s];
    chunk_bytes[n_chunks++] = (size_t)bytes[s];
    if (round_up(bytes[s]) > bytes[s]) {
      chunk[n_chunks] = zeros;
      chunk_bytes[n_chunks++] = (size_t)(round_up(bytes[s]) - bytes[s]);
    }
    off += round_up(bytes[s]);
  }
  h.file_bytes = off;
  lm_bin_cksum c;
  lm_bin_cksum_init(&c);
  lm_bin_cksum_add(&c, &h, sizeof h); /* its checksum field still 0 */
  for (int i = 1; i < n_chunks; i++) lm_bin_cksum_add(&c, chunk[i], chunk_bytes[i]);
  h.checksum = lm_bin_cksum_final(&c);
  chunk[0] = &h;
  chunk_bytes[0] = sizeof h;
  return cls_write_atomic(path, chunk, chunk_bytes, n_chunks, err);
}

/* ---- reading ---- */

static cls_status bad(cls_error *err, const char *name, const char *fmt, ...) CLS_PRINTF(3, 4);
static cls_status bad(cls_error *err, const char *name, const char *fmt, ...) {
  cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: ", name);
  va_list ap;
  va_start(ap, fmt);
  cls_error_vadd(err, fmt, ap);
  va_end(ap);
  return CLS_ERR_INVALID_ARGUMENT;
}

static const char *const SECTION_NAME[LM_BIN_SECTIONS] = {
    "vocabulary arena", "word offsets", "vocabulary table", "unigram probabilities", "unigram backoffs",
    "2-gram table", "3-gram table", "4-gram table", "5-gram table", "6-gram table"};

/* The header's own fields, before anything else is trusted. */
static cls_status check_header(const lm_bin_header *h, const unsigned char *base, size_t size, const char *name,
                               cls_error *err) {
  if (h->endian != LM_BIN_ENDIAN) {
    if (h->endian == 0x04030201u) /* LM_BIN_ENDIAN's bytes reversed */
      return bad(err, name, "written on a machine of the other byte order; build the binary form from the ARPA file here");
    return bad(err, name, "bad byte-order mark (file corrupt)");
  }
  if (h->version != CLS_LM_BINARY_VERSION) {
    return bad(err, name, "binary language model format version %u, this clspeech reads version %d", h->version,
               CLS_LM_BINARY_VERSION);
  }
  if (h->header_bytes != sizeof *h || h->size_t_bytes != sizeof(size_t) || h->entry_bytes != sizeof(cls_lm_entry)) {
    return bad(err, name, "written for another machine (header %u, size_t %u, table slot %u bytes; here %zu, %zu, %zu)",
               h->header_bytes, h->size_t_bytes, h->entry_bytes, sizeof *h, sizeof(size_t), sizeof(cls_lm_entry));
  }
  if (h->file_bytes != size) {
    if (h->file_bytes > size)
      return bad(err, name, "truncated: %zu bytes of the %llu its header gives", size, (unsigned long long)h->file_bytes);
    return bad(err, name, "%zu bytes, but its header gives %llu (file corrupt)", size, (unsigned long long)h->file_bytes);
  }
  if (lm_bin_checksum(base, size) != h->checksum) return bad(err, name, "checksum mismatch (file corrupt or truncated)");
  return CLS_OK;
}

/* The numbers of the header and the sections' places, against each other and the file's size. */
static cls_status check_layout(const lm_bin_header *h, size_t size, const char *name, cls_error *err) {
  for (size_t i = 0; i < sizeof h->reserved; i++)
    if (h->reserved[i]) return bad(err, name, "reserved header byte %zu is not 0", i);
  if (h->flags & ~LM_BIN_FLAG_CHARACTERS) return bad(err, name, "unknown header flags 0x%X", (unsigned)h->flags);
  if (h->order < 1 || h->order > CLS_LM_MAX_ORDER) return bad(err, name, "order %d is outside 1..%d", h->order, CLS_LM_MAX_ORDER);
  if (h->n_words < 1 || h->n_words > (1 << 30)) return bad(err, name, "%d words in the vocabulary", h->n_words);
  if (h->counts[1] != h->n_words)
    return bad(err, name, "%lld unigrams for %d words", (long long)h->counts[1], h->n_words);
  if (h->counts[0] || h->table_cap[0] || h->table_cap[1]) return bad(err, name, "order 0 or 1 has a table");
  for (int n = 2; n < 8; n++) {
    if (n > h->order) {
      if (h->counts[n] || h->table_cap[n]) return bad(err, name, "%d-grams in a model of order %d", n, h->order);
      continue;
    }
    if (h->counts[n] < 0 || h->table_cap[n] > UINT32_MAX || (uint64_t)h->counts[n] >= h->table_cap[n]) {
      return bad(err, name, "%lld %d-grams in a table of %llu slots", (long long)h->counts[n], n,
                 (unsigned long long)h->table_cap[n]);
    }
  }
  int32_t nw = h->n_words;
  if (h->bos < 0 || h->bos >= nw || h->eos < 0 || h->eos >= nw || h->unk < 0 || h->unk >= nw)
    return bad(err, name, "<s>, </s> or <unk> (ids %d %d %d) outside the %d words", h->bos, h->eos, h->unk, nw);
  uint64_t vc = h->vocab_cap;
  if (vc < 2 || vc > ((uint64_t)1 << 32) || (vc & (vc - 1)) || vc <= (uint64_t)nw)
    return bad(err, name, "a vocabulary table of %llu slots for %d words", (unsigned long long)vc, nw);
  if (h->arena_len < (uint64_t)nw || h->arena_len > size)
    return bad(err, name, "a vocabulary arena of %llu bytes for %d words", (unsigned long long)h->arena_len, nw);
  uint64_t want[LM_BIN_SECTIONS] = {h->arena_len, (uint64_t)nw * sizeof(size_t), vc * sizeof(int32_t),
                                    (uint64_t)nw * sizeof(float), (uint64_t)nw * sizeof(float)};
  for (int n = 2; n <= CLS_LM_MAX_ORDER; n++) want[LM_BIN_TABLE2 + n - 2] = h->table_cap[n] * sizeof(cls_lm_entry);
  uint64_t end = sizeof *h;
  for (int s = 0; s < LM_BIN_SECTIONS; s++) {
    uint64_t off = h->section[s].offset, bytes = h->section[s].bytes;
    if (bytes != want[s]) {
      return bad(err, name, "the %s is %llu bytes, not the %llu the counts give", SECTION_NAME[s],
                 (unsigned long long)bytes, (unsigned long long)want[s]);
    }
    if (!bytes) {
      if (off) return bad(err, name, "the empty %s has an offset", SECTION_NAME[s]);
      continue;
    }
    if (off % LM_BIN_ALIGN || off < end || off > size || bytes > size - off) {
      return bad(err, name, "the %s (offset %llu, %llu bytes) is out of place in a file of %zu bytes", SECTION_NAME[s],
                 (unsigned long long)off, (unsigned long long)bytes, size);
    }
    end = off + bytes;
  }
  return CLS_OK;
}

/* The sections' contents: words, the vocabulary table, finite numbers, the n-gram tables. */
static cls_status check_content(const cls_lm *lm, const char *name, cls_error *err) {
  int32_t nw = lm->n_words;
  if (lm->arena[lm->arena_len - 1] != '\0') return bad(err, name, "the vocabulary arena does not end in a NUL");
  for (int32_t i = 0; i < nw; i++) {
    size_t start = lm->word_off[i], stop = i + 1 < nw ? lm->word_off[i + 1] : lm->arena_len;
    if ((i == 0 && start != 0) || start >= stop || stop > lm->arena_len)
      return bad(err, name, "word %d's offsets (%zu..%zu) are out of order or outside the arena of %zu bytes", i, start,
                 stop, lm->arena_len);
    const char *nul = memchr(lm->arena + start, '\0', stop - start);
    if (nul != lm->arena + stop - 1) return bad(err, name, "word %d is not one NUL-terminated string", i);
  }
  int64_t used = 0;
  for (uint64_t s = 0; s < lm->vocab_cap; s++) {
    int32_t id = lm->vocab_slots[s];
    if (id < -1 || id >= nw) return bad(err, name, "vocabulary slot %llu holds id %d", (unsigned long long)s, id);
    used += id >= 0;
  }
  if (used != nw) return bad(err, name, "the vocabulary table holds %lld ids for %d words", (long long)used, nw);
  for (int32_t i = 0; i < nw; i++) {
    const char *w = lm->arena + lm->word_off[i];
    size_t len = (i + 1 < nw ? lm->word_off[i + 1] : lm->arena_len) - lm->word_off[i] - 1;
    if (lm_vocab_find(lm, w, len) != i) return bad(err, name, "word %d is not found at its own id in the table", i);
    if (!isfinite(lm->uni_prob[i]) || !isfinite(lm->uni_backoff[i]))
      return bad(err, name, "word %d's unigram probability or backoff is not finite", i);
    if (lm->uni_prob[i] > 0.0f) /* refused as the ARPA reader refuses it */
      return bad(err, name, "the unigram '%s' has log10 probability %g, above 0 (a probability above 1)", w,
                 (double)lm->uni_prob[i]);
  }
  for (int n = 2; n <= lm->order; n++) {
    const cls_lm_table *t = &lm->tables[n];
    int64_t occupied = 0;
    for (uint64_t s = 0; s < t->cap; s++) {
      if (!t->slots[s].key) continue;
      occupied++;
      if (!isfinite(t->slots[s].prob) || !isfinite(t->slots[s].backoff))
        return bad(err, name, "a %d-gram's probability or backoff is not finite", n);
      if (t->slots[s].prob > 0.0f)
        return bad(err, name, "a %d-gram has log10 probability %g, above 0 (a probability above 1)", n,
                   (double)t->slots[s].prob);
    }
    if (occupied != lm->counts[n])
      return bad(err, name, "the %d-gram table holds %lld n-grams, not %lld", n, (long long)occupied, (long long)lm->counts[n]);
  }
  return CLS_OK;
}

/* Checks the file image at `base` (aligned to LM_BIN_ALIGN, `size` bytes) and makes a model whose
 * arrays point into it. The model takes the image (freed or unmapped with it) only on success. */
static cls_status adopt(unsigned char *base, size_t size, bool mapped, const char *name, cls_lm **out, cls_error *err) {
  lm_bin_header h;
  if (size < sizeof h)
    return bad(err, name, "%zu bytes: too short for a binary language model (its header alone is %zu)", size, sizeof h);
  memcpy(&h, base, sizeof h);
  if (memcmp(h.magic, LM_BIN_MAGIC, sizeof h.magic) != 0)
    return bad(err, name, "not a clspeech binary language model (its first bytes are not the magic)");
  cls_status st = check_header(&h, base, size, name, err);
  if (st == CLS_OK) st = check_layout(&h, size, name, err);
  if (st != CLS_OK) return st;
  cls_lm *lm = calloc(1, sizeof *lm);
  if (!lm) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  lm->order = h.order;
  lm->characters = (h.flags & LM_BIN_FLAG_CHARACTERS) != 0;
  for (int n = 1; n <= h.order; n++) lm->counts[n] = h.counts[n];
  lm->n_words = lm->words_cap = h.n_words;
  lm->arena = (char *)base + h.section[LM_BIN_ARENA].offset;
  lm->arena_len = lm->arena_cap = (size_t)h.arena_len;
  lm->word_off = (size_t *)(void *)(base + h.section[LM_BIN_WORD_OFF].offset);
  lm->vocab_slots = (int32_t *)(void *)(base + h.section[LM_BIN_VOCAB].offset);
  lm->vocab_cap = h.vocab_cap;
  lm->uni_prob = (float *)(void *)(base + h.section[LM_BIN_UNI_PROB].offset);
  lm->uni_backoff = (float *)(void *)(base + h.section[LM_BIN_UNI_BACKOFF].offset);
  for (int n = 2; n <= h.order; n++) {
    lm->tables[n].slots = (cls_lm_entry *)(void *)(base + h.section[LM_BIN_TABLE2 + n - 2].offset);
    lm->tables[n].cap = h.table_cap[n];
  }
  lm->bos = h.bos;
  lm->eos = h.eos;
  lm->unk = h.unk;
  st = check_content(lm, name, err);
  if (st != CLS_OK) {
    free(lm); /* the image stays the caller's */
    return st;
  }
  lm->image = base;
  lm->image_bytes = size;
  lm->image_mapped = mapped;
  *out = lm;
  return CLS_OK;
}

cls_status cls_lm_parse_binary(const void *data, size_t size, const char *name, cls_lm **out, cls_error *err) {
  if (!out) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_lm_parse_binary: out is NULL");
  *out = NULL;
  if (!name) name = "binary language model";
  if (!data && size) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_lm_parse_binary: data is NULL");
  if (size >= 8 && memcmp(data, LM_BIN_MAGIC, 8) != 0)
    return bad(err, name, "not a clspeech binary language model (its first bytes are not the magic)");
  if (size < sizeof(lm_bin_header))
    return bad(err, name, "%zu bytes: too short for a binary language model (its header alone is %zu)", size,
               sizeof(lm_bin_header));
  unsigned char *copy = aligned_alloc(LM_BIN_ALIGN, (size_t)round_up(size));
  if (!copy) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", name, size);
  memcpy(copy, data, size);
  cls_status st = adopt(copy, size, false, name, out, err);
  if (st != CLS_OK) free(copy);
  return st;
}

cls_status cls_lm_load_binary(const char *path, cls_lm **out, cls_error *err) {
  if (!out || !path) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_lm_load_binary: path or out is NULL");
  *out = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size >= sizeof(lm_bin_header) &&
      (uint64_t)sb.st_size <= SIZE_MAX) {
    size_t size = (size_t)sb.st_size;
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE; /* the checksum reads every page: fault them in at once */
#endif
    void *map = mmap(NULL, size, PROT_READ, flags, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return cls_error_set(err, CLS_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
    cls_status st = adopt(map, size, true, path, out, err);
    if (st != CLS_OK) {
      munmap(map, size);
      return st;
    }
    (void)posix_madvise(map, size, POSIX_MADV_RANDOM); /* scoring probes the tables at random */
    return CLS_OK;
  }
  /* not a regular file (a pipe), or too short to be one: read it, from the same descriptor (a pipe's
   * bytes go with it when it is closed), up to its cap (no further than its first bytes when they are
   * not the magic), and check a copy */
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  char *buf = NULL;
  size_t len = 0;
  cls_status rst = cls_read_stream_magic(f, path, LM_BIN_MAGIC, 8, CLS_LM_BINARY_MAX_READ_BYTES, &buf, &len, err);
  fclose(f);
  if (rst != CLS_OK) return rst;
  cls_status st = cls_lm_parse_binary(buf, len, path, out, err);
  free(buf);
  return st;
}

cls_status cls_lm_load(const char *path, cls_lm **out, cls_error *err) {
  if (!out || !path) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_lm_load: path or out is NULL");
  *out = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) { /* a file: its first bytes tell, then the reader opens it */
    char magic[8];
    ssize_t got = pread(fd, magic, sizeof magic, 0);
    close(fd);
    if (got == (ssize_t)sizeof magic && memcmp(magic, LM_BIN_MAGIC, sizeof magic) == 0)
      return cls_lm_load_binary(path, out, err);
    return cls_lm_load_arpa(path, out, err);
  }
  /* a pipe or device can be read once, from this descriptor: its first bytes tell the form, then the
   * rest is read up to that form's cap (ARPA text to its first NUL byte, which the ARPA reader refuses) */
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  char head[8];
  size_t got = fread(head, 1, sizeof head, f);
  const bool binary = got == sizeof head && memcmp(head, LM_BIN_MAGIC, sizeof head) == 0;
  char *buf = NULL;
  size_t len = 0;
  cls_status st = cls_read_stream_max(f, path, head, got, binary ? CLS_LM_BINARY_MAX_READ_BYTES : CLS_LM_ARPA_MAX_STREAM_BYTES,
                                      !binary, &buf, &len, err);
  fclose(f);
  if (st != CLS_OK) return st;
  st = binary ? cls_lm_parse_binary(buf, len, path, out, err) : cls_lm_parse_arpa(buf, len, path, out, err);
  free(buf);
  return st;
}

bool cls_lm_is_mapped(const cls_lm *lm) { return lm && lm->image && lm->image_mapped; }

bool cls_lm_characters(const cls_lm *lm) { return lm && lm->characters; }

void cls_lm_set_characters(cls_lm *lm, bool characters) {
  if (lm) lm->characters = characters;
}
