/* Strict UTF-8 (engine/base/utf8.c) against Python's codec: every case of tests/fixtures/utf8_cases.txt
 * (tests/ref/make_utf8_fixture.py) decodes to Python's codepoints or is refused where Python refuses it,
 * and the three readers built on it agree with it: WER/CER's cls_utf8_codepoints, an alphabet line
 * (cls_alphabet_parse) and a scorer label (cls_scorer_create). Encoding round-trips every valid case. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "check.h"
#include "clspeech/data.h"
#include "clspeech/decode.h"
#include "clspeech/lm.h"
#include "clspeech/scorer.h"

typedef struct utf8_case {
  unsigned char bytes[16];
  size_t n;
  int ok;
  uint32_t cp[8];
  int n_cp;
} utf8_case;

static int parse_line(char *line, utf8_case *c) {
  char *hex = strtok(line, " \n"), *verdict = strtok(NULL, " \n"), *cps = strtok(NULL, " \n");
  if (!hex || !verdict || strlen(hex) % 2 || strlen(hex) / 2 > sizeof c->bytes) return 0;
  c->n = strlen(hex) / 2;
  for (size_t i = 0; i < c->n; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 0;
    c->bytes[i] = (unsigned char)v;
  }
  c->ok = strcmp(verdict, "ok") == 0;
  c->n_cp = 0;
  for (char *t = cps ? strtok(cps, ",") : NULL; t && c->n_cp < 8; t = strtok(NULL, ","))
    c->cp[c->n_cp++] = (uint32_t)strtoul(t, NULL, 16);
  return c->ok ? c->n_cp > 0 : strcmp(verdict, "bad") == 0;
}

/* The whole string through cls_utf8_decode: 1 with its codepoints when every byte is consumed. */
static int decode_all(const utf8_case *c, uint32_t *cp, int *n_cp) {
  *n_cp = 0;
  for (size_t i = 0; i < c->n;) {
    int k = cls_utf8_decode(c->bytes + i, c->n - i, &cp[*n_cp]);
    if (k == 0 || *n_cp == 8) return 0;
    (*n_cp)++;
    i += (size_t)k;
  }
  return 1;
}

static void check_case(const utf8_case *c, const char *hex, const cls_lm *lm) {
  uint32_t cp[8];
  int n_cp;
  int ok = decode_all(c, cp, &n_cp);
  CHECK(ok == c->ok, "%s: decoded %s, Python says %s", hex, ok ? "ok" : "bad", c->ok ? "ok" : "bad");
  if (ok && c->ok) {
    CHECK(n_cp == c->n_cp && memcmp(cp, c->cp, (size_t)n_cp * sizeof *cp) == 0, "%s: codepoints differ", hex);
    char back[16 * CLS_UTF8_CHAR_CAP] = "";
    size_t at = 0;
    for (int i = 0; i < n_cp; i++) at += (size_t)cls_utf8_encode(cp[i], back + at);
    CHECK(at == c->n && memcmp(back, c->bytes, c->n) == 0, "%s: encoding does not round-trip", hex);
  }
  if (memchr(c->bytes, 0, c->n)) return; /* the readers below take NUL-terminated text */
  char text[17];
  memcpy(text, c->bytes, c->n);
  text[c->n] = '\0';
  int32_t cps[8];
  int n = 0;
  cls_status st = cls_utf8_codepoints(text, cps, 8, &n);
  CHECK((st == CLS_OK) == c->ok, "%s: cls_utf8_codepoints says %d, Python %s", hex, (int)st, c->ok ? "ok" : "bad");
  /* one non-ASCII character: an alphabet line and a scorer label take it exactly when it is valid */
  if (c->bytes[0] < 0x80 || (c->ok && c->n_cp != 1)) return;
  char alpha[64];
  int len = snprintf(alpha, sizeof alpha, " \na\n%s\n", text);
  cls_alphabet *a = NULL;
  cls_error err;
  st = cls_alphabet_parse(alpha, (size_t)len, "utf8-case", &a, &err);
  CHECK((st == CLS_OK) == c->ok, "%s: the alphabet line gives %d, Python says %s", hex, (int)st, c->ok ? "ok" : "bad");
  cls_alphabet_destroy(a);
  const char *labels[] = {" ", "a", text};
  cls_scorer *s = NULL;
  st = cls_scorer_create(lm, labels, 3, &s, NULL, &err);
  CHECK((st == CLS_OK) == c->ok, "%s: the scorer label gives %d, Python says %s", hex, (int)st, c->ok ? "ok" : "bad");
  cls_scorer_destroy(s);
}

int main(void) {
  const char arpa[] = "\\data\\\nngram 1=3\n\n\\1-grams:\n-1.0\t<s>\n-1.0\t</s>\n-0.5\ta\n\n\\end\\\n";
  cls_lm *lm = NULL;
  cls_error err;
  CHECK_INT(cls_lm_parse_arpa(arpa, sizeof arpa - 1, "utf8-lm", &lm, &err), CLS_OK);
  FILE *f = fopen(CLS_FIXTURE_DIR "/utf8_cases.txt", "r");
  CHECK(f != NULL, "cannot open %s", CLS_FIXTURE_DIR "/utf8_cases.txt");
  int cases = 0, valid = 0;
  char line[256];
  while (f && lm && fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    char hex[64];
    snprintf(hex, sizeof hex, "%.*s", (int)strcspn(line, " "), line);
    utf8_case c;
    if (!parse_line(line, &c)) {
      CHECK(0, "utf8_cases.txt: malformed line %s", hex);
      continue;
    }
    check_case(&c, hex, lm);
    cases++;
    valid += c.ok;
  }
  if (f) fclose(f);
  CHECK(cases > 4000 && valid > 900, "only %d cases (%d valid) read", cases, valid);
  /* encoding refuses what is not a character */
  char out[CLS_UTF8_CHAR_CAP];
  CHECK(cls_utf8_encode(0xD800, out) == 0 && out[0] == '\0', "a surrogate encoded");
  CHECK(cls_utf8_encode(0x110000, out) == 0 && out[0] == '\0', "U+110000 encoded");
  cls_lm_destroy(lm);
  printf("test_utf8: %d cases, %d valid\n", cases, valid);
  return check_finish("test_utf8");
}
