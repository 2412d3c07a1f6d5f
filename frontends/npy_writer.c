/* NumPy .npy writer (see npy_writer.h): magic, version 1.0, a little-endian header length, the
 * header dict padded with spaces to a 64-byte boundary, then the row-major float32 data. */
#include "npy_writer.h"

#include <stdio.h>
#include <string.h>

#include "clspeech/base.h"

int npy_write_f32(const char *path, const float *data, size_t rows, size_t cols, cls_error *err) {
  char header[256];
  int n = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %zu), }", rows, cols);
  size_t total = 10 + (size_t)n + 1;
  size_t pad = (64 - total % 64) % 64;
  memset(header + n, ' ', pad);
  header[(size_t)n + pad] = '\n';
  size_t header_len = (size_t)n + pad + 1;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(header_len & 0xff),
                           (unsigned char)(header_len >> 8)};
  const void *chunks[3] = {pre, header, data};
  size_t sizes[3] = {10, header_len, rows * cols * sizeof *data};
  return cls_write_atomic(path, chunks, sizes, 3, err) == CLS_OK ? 0 : -1;
}
