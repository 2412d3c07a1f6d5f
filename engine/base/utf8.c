/* Strict UTF-8 decoding, checking and encoding (engine/base/utf8.h). */
#include "base/utf8.h"

static int is_character(uint32_t v) { return v <= 0x10FFFF && (v < 0xD800 || v > 0xDFFF); }

int cls_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp) {
  if (len == 0) return 0;
  const unsigned lead = s[0];
  if (lead < 0x80) {
    *cp = lead;
    return 1;
  }
  int n;
  uint32_t v, min;
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2, v = lead & 0x1F, min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3, v = lead & 0x0F, min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4, v = lead & 0x07, min = 0x10000;
  } else {
    return 0; /* a continuation byte, 0xC0/0xC1 (always overlong) or 0xF5..0xFF */
  }
  if ((size_t)n > len) return 0;
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0; /* also a NUL inside the sequence */
    v = v << 6 | (uint32_t)(s[i] & 0x3F);
  }
  if (v < min || !is_character(v)) return 0;
  *cp = v;
  return n;
}

cls_status cls_utf8_check(const unsigned char *s, size_t len, cls_error *err) {
  for (size_t i = 0; i < len;) {
    uint32_t cp;
    const int k = cls_utf8_decode(s + i, len - i, &cp);
    if (!k) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "byte %zu (0x%02X) is not valid UTF-8", i, s[i]);
    i += (size_t)k;
  }
  return CLS_OK;
}

int cls_utf8_encode(uint32_t cp, char out[CLS_UTF8_CHAR_CAP]) {
  int n;
  if (!is_character(cp)) {
    n = 0;
  } else if (cp < 0x80) {
    out[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    out[0] = (char)(0xC0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  out[n] = '\0';
  return n;
}
