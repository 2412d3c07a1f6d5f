/* libFuzzer target: the safetensors reader from bytes in memory; on success every tensor's data and
 * every metadata value is read (each must lie inside the file). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cls_error err;
  cls_safetensors *st = NULL;
  if (cls_safetensors_parse(data, size, "fuzz.safetensors", &st, &err) != CLS_OK) return 0;
  unsigned sum = 0;
  for (int i = 0; i < st->n_tensors; i++) {
    const cls_tensor_info *t = &st->tensors[i];
    if (cls_safetensors_find(st, t->name) != t) abort(); /* names are unique */
    const unsigned char *bytes = cls_safetensors_tensor_data(st, t);
    for (size_t k = 0; k < t->nbytes; k++) sum += bytes[k];
  }
  for (int i = 0; i < st->n_meta; i++) sum += (unsigned)strlen(cls_safetensors_meta(st, st->meta[2 * i]));
  (void)sum;
  cls_safetensors_free(st);
  return 0;
}
