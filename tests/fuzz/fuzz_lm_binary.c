/* libFuzzer target: the binary n-gram model reader (engine/decode/lm_binary.c, cls_lm_parse_binary),
 * from bytes in memory. An input whose header checksum field is 0 (the seeds' is) gets the right
 * checksum written in before the parse, so that mutations reach the structural checks behind it; an
 * input with any other checksum is parsed as it is (the checksum's own refusal). Nothing in the
 * library skips the checksum. On success the model is probed (fuzz_lm_probe.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/lm.h"
#include "decode/lm_binary.h"
#include "fuzz_lm_probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  const size_t at = offsetof(lm_bin_header, checksum);
  uint64_t sum = 0;
  if (size >= sizeof(lm_bin_header)) {
    memcpy(&sum, copy + at, sizeof sum);
    if (sum == 0) {
      sum = lm_bin_checksum(copy, size);
      memcpy(copy + at, &sum, sizeof sum);
    }
  }
  cls_error err;
  cls_lm *lm = NULL;
  cls_status st = cls_lm_parse_binary(copy, size, "fuzz.clm", &lm, &err);
  free(copy); /* the model holds a copy of its own */
  if (st != CLS_OK) {
    if (lm || !strstr(err.text, "fuzz.clm")) abort(); /* a failure leaves nothing and names the input */
    return 0;
  }
  if (cls_lm_is_mapped(lm)) abort();
  fuzz_lm_probe(lm);
  if (cls_lm_memory_bytes(lm) < size) abort();
  cls_lm_destroy(lm);
  return 0;
}
