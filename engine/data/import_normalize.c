/* Transcript normalisation for `clspeech import` (see clspeech/internal/import.h and docs/import.md):
 * strict UTF-8 (base/utf8.h), then utf8proc's NFKC, categories and lower case, a character at a time. */
#include "clspeech/internal/import.h"

#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

cls_status cls_import_normalize(const char *text, const cls_import_text_options *o, char **out, uint32_t *digit,
                                cls_error *err) {
  *out = NULL;
  if (digit) *digit = 0;
  const unsigned char *s = (const unsigned char *)text;
  const size_t len = strlen(text);
  cls_status st = cls_utf8_check(s, len, err);
  if (st != CLS_OK) return st;
  utf8proc_uint8_t *nfkc = NULL;
  const utf8proc_option_t form =
      UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT | (o->strip_marks ? UTF8PROC_STRIPMARK : 0);
  utf8proc_ssize_t n = len ? utf8proc_map(s, (utf8proc_ssize_t)len, &nfkc, form) : 0;
  if (n < 0) {
    return cls_error_set(err, n == UTF8PROC_ERROR_NOMEM ? CLS_ERR_OUT_OF_MEMORY : CLS_ERR_INVALID_ARGUMENT,
                         "NFKC: %s", utf8proc_errmsg(n));
  }
  /* Each character of the result takes at most its bytes in NFKC plus a lower-casing's growth (4 bytes). */
  char *r = malloc((size_t)n * 2 + CLS_UTF8_MAX + 1);
  if (!r) {
    free(nfkc);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "normalisation: out of memory");
  }
  size_t o_len = 0;
  int pending_space = 0;
  for (utf8proc_ssize_t i = 0; i < n;) {
    uint32_t cp = 0;
    int k = cls_utf8_decode(nfkc + i, (size_t)(n - i), &cp);
    if (!k) { /* utf8proc writes valid UTF-8; a byte it did not is dropped */
      i++;
      continue;
    }
    i += k;
    const utf8proc_category_t cat = utf8proc_category((utf8proc_int32_t)cp);
    int space = cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP ||
                cat == UTF8PROC_CATEGORY_CC;
    if (cat == UTF8PROC_CATEGORY_CF) continue;
    if (!space && !o->keep_punctuation) {
      if (cp == 0x2019 || cp == 0x02BC) cp = '\'';
      if (cat == UTF8PROC_CATEGORY_PD || cat == UTF8PROC_CATEGORY_PC) {
        space = 1;
      } else if (cp != '\'' && cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_SO) {
        continue; /* P* and S*: Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So, contiguous in utf8proc's order */
      }
    }
    if (space) {
      pending_space = o_len > 0;
      continue;
    }
    if (!o->keep_case) cp = (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp);
    if (digit && !*digit && utf8proc_category((utf8proc_int32_t)cp) == UTF8PROC_CATEGORY_ND) *digit = cp;
    if (pending_space) r[o_len++] = ' ';
    pending_space = 0;
    char enc[CLS_UTF8_CHAR_CAP];
    int e = cls_utf8_encode(cp, enc);
    memcpy(r + o_len, enc, (size_t)e);
    o_len += (size_t)e;
  }
  r[o_len] = '\0';
  free(nfkc);
  *out = r;
  return CLS_OK;
}
