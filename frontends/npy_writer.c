/* NumPy .npy writer (see npy_writer.h): magic, version 1.0, a little-endian header length, the
 * header dict padded with spaces to a 64-byte boundary, then the row-major float32 data. */
#include "npy_writer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int npy_write_f32(const char *path, const float *data, size_t rows, size_t cols, char *err, size_t err_cap) {
  char header[256];
  int n = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %zu), }", rows, cols);
  size_t total = 10 + (size_t)n + 1;
  size_t pad = (64 - total % 64) % 64;
  memset(header + n, ' ', pad);
  header[(size_t)n + pad] = '\n';
  size_t header_len = (size_t)n + pad + 1;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    snprintf(err, err_cap, "%s: cannot write: %s", path, strerror(errno));
    return -1;
  }
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(header_len & 0xff),
                           (unsigned char)(header_len >> 8)};
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, header_len, f) == header_len &&
           fwrite(data, sizeof *data, rows * cols, f) == rows * cols && fflush(f) == 0 && fsync(fileno(f)) == 0;
  int saved = errno;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    if (ok) saved = errno;
    unlink(tmp);
    snprintf(err, err_cap, "%s: cannot write: %s", path, strerror(saved));
    return -1;
  }
  return 0;
}
