/* SHA-256 (FIPS 180-4), used for content keys of the kernel binary cache, the GEMM tuning and feature
 * cache files, and to check the integrity of their entries. Incremental: init, update any number of
 * times, final. The hashing itself is nettle's (Debian nettle-dev): a plain context on the stack, no
 * allocation, nothing that can fail; this header only keeps the engine's names and adds the hex form. */
#ifndef CLS_SHA256_H
#define CLS_SHA256_H

#include <nettle/sha2.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cls_sha256 {
  struct sha256_ctx ctx;
} cls_sha256;

void cls_sha256_init(cls_sha256 *h);
void cls_sha256_update(cls_sha256 *h, const void *data, size_t n);
/* Writes the digest; `h` is then initialised afresh (nettle's rule). */
void cls_sha256_final(cls_sha256 *h, uint8_t digest[32]);
/* Lower-case hex of a digest: 64 characters and a terminating NUL. */
void cls_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif
