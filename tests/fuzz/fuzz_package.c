/* libFuzzer target: the model package reader (engine/model/package_read.c, cls_package_parse), from
 * bytes in memory. An input whose checksum field is all zeros (the seed's is) gets the right SHA-256
 * written in before the parse, so that mutations reach the structural checks behind it; an input with
 * any other checksum is parsed as it is (the checksum's own refusal). Nothing in the library skips the
 * checksum. On success everything the package hands out is read: the info, every section's name, the
 * weights (finite, as the reader promises), the alphabet and a scorer's model. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/data.h"
#include "clspeech/lm.h"
#include "clspeech/package.h"
#include "model/package_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  if (size) memcpy(copy, data, size);
  if (size >= PKG_HEADER_BYTES) {
    static const uint8_t zeros[PKG_CHECKSUM_BYTES];
    if (!memcmp(copy + PKG_H_CHECKSUM, zeros, sizeof zeros)) {
      uint8_t sum[PKG_CHECKSUM_BYTES];
      cls_package_checksum(copy, size, sum);
      memcpy(copy + PKG_H_CHECKSUM, sum, sizeof sum);
    }
  }
  cls_error err;
  cls_package *p = NULL;
  cls_status st = cls_package_parse(copy, size, "fuzz.clsm", &p, &err);
  free(copy); /* the package holds a copy of its own */
  if (st != CLS_OK) {
    if (p || !strstr(err.text, "fuzz.clsm")) abort(); /* a failure leaves nothing and names the input */
    return 0;
  }
  const cls_package_info *in = cls_package_get_info(p);
  if (in->n_params * sizeof(float) > size || in->alphabet_bytes > size || in->scorer_bytes > size) abort();
  if (in->n_tensors != CLS_MODEL_N_TENSORS || in->n_sections < in->n_tensors + 2) abort();
  for (int i = 0; i < in->n_sections; i++)
    if (!cls_package_section_name(p, i) || !*cls_package_section_name(p, i)) abort();
  float *w = malloc(in->n_params * sizeof(float));
  if (w) {
    if (cls_package_params(p, w, in->n_params, &err) != CLS_OK) abort();
    for (size_t i = 0; i < in->n_params; i++)
      if (!isfinite(w[i])) abort();
    free(w);
  }
  cls_alphabet *a = NULL;
  if (cls_alphabet_parse(in->alphabet, in->alphabet_bytes, "fuzz.clsm (alphabet)", &a, &err) != CLS_OK) abort();
  if (cls_alphabet_size(a) + 1 != in->model.n_classes) abort();
  cls_alphabet_destroy(a);
  if (in->scorer) {
    cls_lm *lm = NULL;
    if (cls_lm_parse_binary(in->scorer, in->scorer_bytes, "fuzz.clsm (scorer)", &lm, &err) == CLS_OK)
      cls_lm_destroy(lm);
  }
  cls_package_close(p);
  return 0;
}
