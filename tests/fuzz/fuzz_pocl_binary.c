/* libFuzzer target: the structural check of PoCL program binaries, on an exact-size copy so that a
 * read past the end is reported. A verdict other than "broken" leaves the reason empty; "broken"
 * always gives one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/pocl_binary_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned char *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  static cls_error why;
  cls_pocl_binary_verdict v = cls_pocl_binary_check(copy, size, &why);
  if (v != CLS_POCL_BINARY_SOUND && v != CLS_POCL_BINARY_UNCHECKED && v != CLS_POCL_BINARY_BROKEN) abort();
  if ((v == CLS_POCL_BINARY_BROKEN) != (why.text[0] != '\0')) abort();
  if ((v == CLS_POCL_BINARY_BROKEN) != (why.status == CLS_ERR_IO)) abort();
  free(copy);
  return 0;
}
