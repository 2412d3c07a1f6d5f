/* SHA-256 through nettle (see sha256.h). No I/O. */
#include "base/sha256.h"

void cls_sha256_init(cls_sha256 *h) { sha256_init(&h->ctx); }

void cls_sha256_update(cls_sha256 *h, const void *data, size_t n) {
  if (n) sha256_update(&h->ctx, n, data);
}

void cls_sha256_final(cls_sha256 *h, uint8_t digest[32]) { sha256_digest(&h->ctx, SHA256_DIGEST_SIZE, digest); }

void cls_sha256_hex(const uint8_t digest[32], char hex[65]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  hex[64] = '\0';
}
