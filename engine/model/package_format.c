/* The model package's checksum and byte order (package_format.h); the writer and the reader keep the
 * rest of the layout. */
#include "model/package_format.h"

#include <string.h>

#include "base/sha256.h"

void cls_package_checksum(const void *file, size_t size, uint8_t out[PKG_CHECKSUM_BYTES]) {
  const unsigned char *p = file;
  static const unsigned char zeros[PKG_CHECKSUM_BYTES];
  cls_sha256 h;
  cls_sha256_init(&h);
  cls_sha256_update(&h, p, PKG_H_CHECKSUM);
  cls_sha256_update(&h, zeros, PKG_CHECKSUM_BYTES);
  cls_sha256_update(&h, p + PKG_HEADER_BYTES, size - PKG_HEADER_BYTES);
  cls_sha256_final(&h, out);
}

int cls_package_host_le(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}
