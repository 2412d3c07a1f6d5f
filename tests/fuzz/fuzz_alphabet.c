/* libFuzzer target: alphabet parsing; on success the input's first line, as a transcript, is encoded
 * (missing characters listed and described) and the labels decoded back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cls_error err;
  cls_alphabet *a = NULL;
  if (cls_alphabet_parse((const char *)data, size, "fuzz alphabet", &a, &err) != CLS_OK) return 0;
  for (int i = 0; i < cls_alphabet_size(a); i++) (void)strlen(cls_alphabet_label(a, i));
  /* the bytes up to the first newline or NUL, as a transcript */
  size_t n = 0;
  while (n < size && n < 512 && data[n] != '\n' && data[n] != '\0') n++;
  char text[513];
  memcpy(text, data, n);
  text[n] = '\0';
  int32_t labels[513], missing[16];
  int count = 0, n_missing = 0;
  cls_status st = cls_alphabet_encode(a, text, labels, 513, &count, missing, 16, &n_missing);
  char out[4 * 513 + 1], described[512];
  if (st == CLS_OK) {
    if (cls_alphabet_decode(a, labels, count, out, sizeof out) != CLS_OK) abort(); /* what encodes decodes */
  } else {
    cls_alphabet_describe_chars(missing, n_missing < 16 ? n_missing : 16, described, sizeof described);
  }
  /* labels out of range must be refused, not read */
  int32_t bad[3] = {-1, cls_alphabet_size(a) + 1, 0};
  (void)cls_alphabet_decode(a, bad, 3, out, sizeof out);
  cls_alphabet_destroy(a);
  return 0;
}
