/* libFuzzer target: TensorFlow's tensor-bundle reader (base/tf_bundle.h) from bytes in memory. The
 * input is a 4-byte little-endian length N, then N bytes of the .index file, then the data file; on
 * success every entry's bytes are read (each must lie inside the data file) and found by name. Also
 * the `checkpoint` text index parser on the whole input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/tf_bundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1), name[256];
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  if (cls_tf_checkpoint_index_parse(text, name, sizeof name) && strlen(name) >= sizeof name) abort();
  free(text);
  if (size < 4) return 0;
  const size_t n = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
  if (n > size - 4) return 0;
  cls_error err;
  cls_tf_bundle *b = NULL;
  if (cls_tf_bundle_parse(data + 4, n, data + 4 + n, size - 4 - n, "fuzz.index", &b, &err) != CLS_OK) return 0;
  unsigned sum = 0;
  for (int i = 0; i < b->n_entries; i++) {
    const cls_tf_entry *e = &b->entries[i];
    if (cls_tf_bundle_find(b, e->name) != e) abort(); /* names are unique and sorted */
    for (size_t k = 0; k < e->nbytes; k++) sum += e->data[k];
  }
  (void)sum;
  cls_tf_bundle_free(b);
  return 0;
}
