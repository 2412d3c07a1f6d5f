/* The binary form of the n-gram model (lm_binary.c): its header's layout and its checksum, for the
 * tests and the fuzz target, which build or repair files of their own. The public calls are in
 * include/clspeech/lm.h. */
#ifndef CLS_DECODE_LM_BINARY_H
#define CLS_DECODE_LM_BINARY_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/lm.h"

/* The sections of a file, in this order: the vocabulary arena, the word offsets (size_t each), the
 * vocabulary table (int32 ids, -1 empty), the unigram log10 probabilities and backoffs (float each),
 * then the n-gram tables of orders 2..6 (cls_lm_entry slots; empty above the model's order). */
enum {
  LM_BIN_ARENA,
  LM_BIN_WORD_OFF,
  LM_BIN_VOCAB,
  LM_BIN_UNI_PROB,
  LM_BIN_UNI_BACKOFF,
  LM_BIN_TABLE2, /* order n at LM_BIN_TABLE2 + n - 2 */
  LM_BIN_SECTIONS = LM_BIN_TABLE2 + CLS_LM_MAX_ORDER - 1
};

#define LM_BIN_MAGIC "\x89" "CLSLM\r\n" /* 8 bytes: a non-text first byte, then a line ending to catch text-mode copies */
#define LM_BIN_ENDIAN 0x01020304u
#define LM_BIN_ALIGN 64
#define LM_BIN_FLAG_CHARACTERS 1u /* cls_lm_characters: every word is one character */

/* The file's first 512 bytes, in the writing machine's byte order (the endian field tells). */
typedef struct lm_bin_header {
  char magic[8];
  uint32_t version;      /* CLS_LM_BINARY_VERSION */
  uint32_t endian;       /* LM_BIN_ENDIAN */
  uint32_t header_bytes; /* sizeof(lm_bin_header) */
  uint32_t size_t_bytes; /* sizeof(size_t): the word offsets are size_t */
  uint32_t entry_bytes;  /* sizeof(cls_lm_entry) */
  int32_t order;
  uint64_t file_bytes;
  uint64_t checksum; /* lm_bin_checksum of the whole file, this field read as 0 */
  int32_t n_words, bos, eos, unk;
  int64_t counts[8];      /* [n] for n = 1..order; the others 0 */
  uint64_t vocab_cap;     /* the vocabulary table's slots, a power of two */
  uint64_t arena_len;     /* bytes of the arena */
  uint64_t table_cap[8];  /* [n]: slots of order n's table (2..order); the others 0 */
  struct {
    uint64_t offset, bytes; /* offset a multiple of LM_BIN_ALIGN; both 0 for an empty section */
  } section[LM_BIN_SECTIONS];
  uint32_t flags;        /* LM_BIN_FLAG_*; no other bit may be set */
  uint8_t reserved[140]; /* 0 */
} lm_bin_header;

/* A streaming checksum: 4 lanes of 64-bit multiply-xorshift over little 8-byte words, combined at the
 * end with the length (a last partial block is padded with zeros). The bytes may come in pieces of
 * any sizes: the result depends on the bytes alone. */
typedef struct lm_bin_cksum {
  uint64_t lane[4];
  uint64_t bytes;          /* added so far */
  unsigned char tail[32];  /* the bytes past the last whole 32-byte block */
} lm_bin_cksum;

void lm_bin_cksum_init(lm_bin_cksum *c);
void lm_bin_cksum_add(lm_bin_cksum *c, const void *data, size_t n);
uint64_t lm_bin_cksum_final(const lm_bin_cksum *c);

/* The checksum of a whole file of `size` bytes (size >= sizeof(lm_bin_header)): the header with its
 * checksum field read as 0, then the rest. */
uint64_t lm_bin_checksum(const void *file, size_t size);

#endif
