/* `clspeech import`'s transcript normalisation (cls_import_normalize, docs/import.md) against the same
 * rules computed with Python's unicodedata (tests/fixtures/import_normalize.txt, made by
 * tests/ref/make_import_normalize_fixture.py): every case under five flag sets, --normalize included;
 * and the first digit reported, and text that is not UTF-8 refused naming its byte. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clspeech/internal/import.h"

/* Hex (or "-" for empty) into out[cap]; 0 when malformed. */
static int unhex(const char *hex, char *out, size_t cap) {
  if (!strcmp(hex, "-")) {
    out[0] = '\0';
    return 1;
  }
  size_t n = strlen(hex);
  if (n % 2 || n / 2 >= cap) return 0;
  for (size_t i = 0; i < n / 2; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 0;
    out[i] = (char)v;
  }
  out[n / 2] = '\0';
  return 1;
}

int main(void) {
  FILE *f = fopen(CLS_FIXTURE_DIR "/import_normalize.txt", "r");
  CHECK(f != NULL, "cannot open the fixture");
  char line[2048];
  int cases = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    char flags[8], in_hex[1024], want_hex[1024];
    if (sscanf(line, "%7s %1023s %1023s", flags, in_hex, want_hex) != 3 || strlen(flags) != 4) {
      CHECK(0, "malformed fixture line: %s", line);
      continue;
    }
    char in[512], want[512];
    if (!unhex(in_hex, in, sizeof in) || !unhex(want_hex, want, sizeof want)) {
      CHECK(0, "malformed hex: %s", line);
      continue;
    }
    const cls_import_text_options o = {flags[0] == '1', flags[1] == '1', flags[2] == '1', flags[3] == '1'};
    char *got = NULL;
    cls_error err;
    CHECK(cls_import_normalize(in, &o, &got, NULL, &err) == CLS_OK, "\"%s\" refused: %s", in, err.text);
    CHECK(got && !strcmp(got, want), "flags %s, \"%s\": \"%s\", the reference \"%s\"", flags, in, got ? got : "",
          want);
    free(got);
    cases++;
  }
  if (f) fclose(f);
  CHECK(cases >= 100, "only %d cases read", cases);

  const cls_import_text_options plain = {false, false, false, false};
  char *got = NULL;
  uint32_t digit = 1;
  cls_error err;
  CHECK_INT(cls_import_normalize("room 12b", &plain, &got, &digit, &err), CLS_OK);
  CHECK(digit == '1', "first digit U+%04X", (unsigned)digit);
  free(got);
  got = NULL;
  CHECK_INT(cls_import_normalize("\xd9\xa3 arabic-indic", &plain, &got, &digit, &err), CLS_OK);
  CHECK(digit == 0x663, "an Arabic-Indic three: U+%04X", (unsigned)digit);
  free(got);
  got = NULL;
  CHECK_INT(cls_import_normalize("ok \xc3\x28 bad", &plain, &got, &digit, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "byte 3 (0xC3)");
  CHECK(got == NULL, "output on a refusal");
  return check_finish("test_import_normalize");
}
