/* libFuzzer target: a kernel cache entry file's check (magic, version, length against the real size,
 * SHA-256 of the payload). An input whose first byte is odd gets the right digest written in, so
 * that the length rules behind it are reached too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "device/kernel_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  unsigned char *entry = malloc(size - 1 ? size - 1 : 1);
  if (!entry) return 0;
  memcpy(entry, data + 1, size - 1);
  const size_t len = size - 1;
  if ((data[0] & 1) && len >= 56) {
    cls_sha256 h;
    cls_sha256_init(&h);
    cls_sha256_update(&h, entry + 56, len - 56);
    cls_sha256_final(&h, entry + 24);
  }
  size_t n = 0;
  if (cls_kernel_cache_entry_check(entry, len, &n) && n != len - 56) abort(); /* the payload is the rest */
  free(entry);
  return 0;
}
