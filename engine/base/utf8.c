/* Strict UTF-8 decoding, checking and encoding, and the state of a prefix built a byte at a time
 * (engine/base/utf8.h). */
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

cls_utf8_state cls_utf8_state_start(void) {
  cls_utf8_state s = {0, 0, 0, 0};
  return s;
}

bool cls_utf8_state_accepts(cls_utf8_state s, unsigned b) {
  if (s.need) return b >= s.lo && b <= s.hi;
  return (b >= 0x01 && b <= 0x7F) || (b >= 0xC2 && b <= 0xF4);
}

cls_utf8_state cls_utf8_state_push(cls_utf8_state s, unsigned b) {
  cls_utf8_state n = {0, 0, 0x80, 0xBF};
  if (s.need) {
    if (s.need > 1) {
      n.need = (uint8_t)(s.need - 1);
      n.have = (uint8_t)(s.have + 1);
    }
    return n;
  }
  if (b < 0xC2) return n;
  n.have = 1;
  n.need = b <= 0xDF ? 1 : b <= 0xEF ? 2 : 3;
  if (b == 0xE0) n.lo = 0xA0;
  else if (b == 0xED) n.hi = 0x9F;
  else if (b == 0xF0) n.lo = 0x90;
  else if (b == 0xF4) n.hi = 0x8F;
  return n;
}

cls_utf8_state cls_utf8_state_of_tail(const unsigned char *tail, int n) {
  cls_utf8_state s = cls_utf8_state_start();
  int p = n - 1;
  while (p >= 0 && p >= n - 3 && (tail[p] & 0xC0) == 0x80) p--;
  if (p < 0 || (tail[p] & 0xC0) == 0x80 || tail[p] < 0x80) return s; /* whole */
  for (int i = p; i < n; i++) s = cls_utf8_state_push(s, tail[i]);
  return s;
}
