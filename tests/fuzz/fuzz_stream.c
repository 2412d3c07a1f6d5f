/* libFuzzer target: the bounded reads of files that are not regular (engine/base/file_util.c's
 * cls_read_stream_max and its callers, issue 45): the input goes through a pipe, read as
 * /dev/fd/N by cls_read_file_max under a small cap taken from the input, or by the model readers
 * that take pipes (cls_lm_load, cls_lm_load_arpa, cls_lm_load_binary, cls_package_open). The read
 * must stop at the cap, return exactly the bytes written, and a failure must name the path. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file_util.h"
#include "clspeech/lm.h"
#include "clspeech/package.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 || size > 60000) return 0; /* the whole input must fit the pipe's buffer */
  const int mode = data[0] % 5;
  const size_t max = (size_t)data[1] * 64; /* 0 .. 16320 bytes */
  const uint8_t *payload = data + 2;
  const size_t n = size - 2;
  int fds[2];
  if (pipe(fds) != 0) abort();
  if (n && write(fds[1], payload, n) != (ssize_t)n) abort();
  close(fds[1]);
  char path[64];
  snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
  cls_error err;
  cls_error_clear(&err);
  if (mode <= 1) {
    const bool stop_at_nul = mode == 1;
    char *out = NULL;
    size_t len = 0;
    cls_status st = cls_read_file_max(path, max, stop_at_nul, &out, &len, &err);
    const bool has_nul = stop_at_nul && memchr(payload, 0, n < max + 1 ? n : max + 1) != NULL;
    if (st == CLS_OK) {
      if (len > max || len > n || memcmp(out, payload, len) != 0) abort(); /* a prefix, within the cap */
      if (len < n && !has_nul) abort();                                     /* short only at a NUL */
    } else {
      if (out || !strstr(err.text, path) || n <= max) abort();
      if (!strstr(err.text, "the most this reader takes")) abort();
    }
    free(out);
  } else {
    cls_lm *lm = NULL;
    cls_package *pkg = NULL;
    cls_status st = mode == 2   ? cls_lm_load(path, &lm, &err)
                    : mode == 3 ? cls_lm_load_binary(path, &lm, &err)
                                : cls_package_open(path, &pkg, &err);
    if (st != CLS_OK && (lm || pkg || !strstr(err.text, path))) abort(); /* a failure leaves nothing, names the file */
    if (st == CLS_OK && !lm && !pkg) abort();
    cls_lm_destroy(lm);
    cls_package_close(pkg);
  }
  close(fds[0]);
  return 0;
}
