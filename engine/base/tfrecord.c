/* TFRecord framing and CRC-32C (see tfrecord.h). */
#include "base/tfrecord.h"

#include <isa-l/crc.h>
#include <limits.h>

#include "base/file_util.h"

uint32_t cls_crc32c(const void *data, size_t n) {
  /* crc32_iscsi takes and returns the running register without the final inversion. */
  unsigned int crc = 0xffffffffu;
  unsigned char *p = (unsigned char *)(uintptr_t)data; /* ISA-L's prototype lacks const; it only reads */
  while (n > 0) {
    int chunk = n > (size_t)INT_MAX ? INT_MAX : (int)n;
    crc = crc32_iscsi(p, chunk, crc);
    p += chunk;
    n -= (size_t)chunk;
  }
  return crc ^ 0xffffffffu;
}

uint32_t cls_crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

void cls_tfrecord_header(uint64_t n, unsigned char h[CLS_TFRECORD_HEADER]) {
  cls_put_le(h, n, 8);
  cls_put_le(h + 8, cls_crc32c_mask(cls_crc32c(h, 8)), 4);
}

void cls_tfrecord_footer(const void *data, size_t n, unsigned char f[CLS_TFRECORD_FOOTER]) {
  cls_put_le(f, cls_crc32c_mask(cls_crc32c(data, n)), 4);
}

cls_status cls_tfrecord_write(FILE *f, const void *data, size_t n) {
  unsigned char h[CLS_TFRECORD_HEADER], t[CLS_TFRECORD_FOOTER];
  cls_tfrecord_header(n, h);
  cls_tfrecord_footer(data, n, t);
  if (fwrite(h, 1, sizeof h, f) != sizeof h || (n && fwrite(data, 1, n, f) != n) ||
      fwrite(t, 1, sizeof t, f) != sizeof t)
    return CLS_ERR_IO;
  return CLS_OK;
}

cls_tfrecord_read cls_tfrecord_next(const unsigned char *buf, size_t len, size_t *pos, const unsigned char **data,
                                    size_t *n) {
  size_t at = *pos;
  if (at > len || len - at < CLS_TFRECORD_HEADER) return CLS_TFRECORD_END;
  const unsigned char *h = buf + at;
  uint64_t size = cls_get_le(h, 8);
  if ((uint32_t)cls_get_le(h + 8, 4) != cls_crc32c_mask(cls_crc32c(h, 8))) return CLS_TFRECORD_DAMAGED;
  size_t left = len - at - CLS_TFRECORD_HEADER;
  if (size > left || left - size < CLS_TFRECORD_FOOTER) return CLS_TFRECORD_END;
  const unsigned char *d = h + CLS_TFRECORD_HEADER;
  if ((uint32_t)cls_get_le(d + size, 4) != cls_crc32c_mask(cls_crc32c(d, (size_t)size))) return CLS_TFRECORD_DAMAGED;
  *data = d;
  *n = (size_t)size;
  *pos = at + CLS_TFRECORD_HEADER + (size_t)size + CLS_TFRECORD_FOOTER;
  return CLS_TFRECORD_RECORD;
}
