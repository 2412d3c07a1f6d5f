/* libFuzzer target: import's transcript readers (Common Voice's TSV, LibriSpeech's and MLS's keyed
 * lines) over the same bytes, each field handed back NUL-terminated and normalised; the alphabet made
 * from the normalised texts parses back with as many labels as it counted. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/data.h"
#include "clspeech/internal/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cls_status on_row(void *user, int line, const char *key, const char *text, cls_error *err) {
  (void)err;
  if (line < 1) abort();
  cls_alphabet_counts *c = user;
  if (key) (void)strlen(key);
  if (!text) return CLS_OK;
  const cls_import_text_options o = {false, false, false, (text[0] & 1) != 0}; /* both forms */
  char *norm = NULL;
  uint32_t digit = 0;
  if (cls_import_normalize(text, &o, &norm, &digit, NULL) == CLS_OK) {
    (void)cls_alphabet_counts_add(c, norm, strlen(norm), NULL);
    free(norm);
  }
  return CLS_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cls_alphabet_counts *c = NULL;
  if (cls_alphabet_counts_create(&c, NULL) != CLS_OK) return 0;
  const char *text = (const char *)data;
  (void)cls_import_parse_tsv(text, size, "fuzz.tsv", on_row, c, NULL);
  (void)cls_import_parse_keyed(text, size, "fuzz.trans.txt", ' ', on_row, c, NULL);
  (void)cls_import_parse_keyed(text, size, "fuzz/transcripts.txt", '\t', on_row, c, NULL);
  char *alphabet = NULL;
  size_t len = 0;
  if (cls_alphabet_counts_format(c, &alphabet, &len, NULL) == CLS_OK) {
    cls_alphabet *a = NULL;
    if (cls_alphabet_parse(alphabet, len, "made", &a, NULL) != CLS_OK) abort();
    if (cls_alphabet_size(a) != cls_alphabet_counts_size(c)) abort();
    cls_alphabet_destroy(a);
    free(alphabet);
  }
  cls_alphabet_counts_destroy(c);
  return 0;
}
