/* SHA-256 (FIPS 180-4), used for content keys of the kernel binary cache and to check the
 * integrity of cache entries. Incremental: init, update any number of times, final. */
#ifndef CLS_SHA256_H
#define CLS_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct cls_sha256 {
  uint32_t state[8];
  uint64_t length;       /* bytes hashed so far */
  uint8_t block[64];
  size_t fill;           /* bytes waiting in block */
} cls_sha256;

void cls_sha256_init(cls_sha256 *h);
void cls_sha256_update(cls_sha256 *h, const void *data, size_t n);
void cls_sha256_final(cls_sha256 *h, uint8_t digest[32]);
/* Lower-case hex of a digest: 64 characters and a terminating NUL. */
void cls_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif
