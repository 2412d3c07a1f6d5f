/* The label alphabet (see clspeech/data.h): alphabet.txt parsing with DeepSpeech's rules (text read
 * through base/utf8.h), the UTF-8 bytes alphabet of --bytes_output_mode, transcript encoding with a
 * report of the missing characters, and decoding labels back to text. */
#include "clspeech/data.h"

#include "base/file_util.h"
#include "base/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct label {
  char text[CLS_UTF8_CHAR_CAP]; /* the codepoint in UTF-8, NUL-terminated */
  uint32_t cp;
  int line; /* where the file defines it */
} label;

typedef struct lookup {
  uint32_t cp;
  int index;
} lookup;

struct cls_alphabet {
  label *labels;
  int size;
  lookup *by_cp; /* [size] sorted by codepoint (the bytes alphabet: by byte) */
  bool bytes;    /* the UTF-8 bytes alphabet: label i is byte i+1 */
};

static int cmp_lookup(const void *a, const void *b) {
  uint32_t x = ((const lookup *)a)->cp, y = ((const lookup *)b)->cp;
  return x < y ? -1 : x > y;
}

void cls_alphabet_destroy(cls_alphabet *a) {
  if (!a) return;
  free(a->labels);
  free(a->by_cp);
  free(a);
}

/* The line as people see it in a message: at most 40 bytes, quoted, control bytes escaped. */
static void quote_line(const unsigned char *s, size_t len, char *out, size_t cap) {
  size_t o = 0;
  if (cap < 8) {
    if (cap) out[0] = '\0';
    return;
  }
  out[o++] = '"';
  for (size_t i = 0; i < len && i < 40 && o + 6 < cap; i++) {
    if (s[i] < 0x20 || s[i] == 0x7F) o += (size_t)snprintf(out + o, cap - o, "\\x%02X", s[i]);
    else out[o++] = (char)s[i];
  }
  if (len > 40 && o + 5 < cap) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o++] = '"';
  out[o] = '\0';
}

/* Line `line_no` (`l`, `n` bytes, not empty, not a comment) as the next label: exactly one Unicode
 * codepoint that no earlier line holds. */
static cls_status add_label(cls_alphabet *a, const unsigned char *l, size_t n, const char *name, int line_no,
                            cls_error *err) {
  uint32_t cp = 0;
  int k = cls_utf8_decode(l, n, &cp);
  char shown[64];
  quote_line(l, n, shown, sizeof shown);
  if (k == 0 || memchr(l, 0, n)) {
    cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the line %s is not valid UTF-8 text%s", name, line_no, shown,
                  k ? " (it holds a NUL byte)" : "");
    return CLS_ERR_INVALID_ARGUMENT;
  }
  if ((size_t)k != n) {
    int chars = 0;
    for (size_t i = 0; i < n;) {
      uint32_t c;
      int m = cls_utf8_decode(l + i, n - i, &c);
      i += m ? (size_t)m : 1;
      chars++;
    }
    cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                  "%s:%d: the line %s holds %d characters; each label must be exactly one Unicode codepoint "
                  "(check for stray spaces)", name, line_no, shown, chars);
    return CLS_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < a->size; i++) {
    if (a->labels[i].cp == cp) {
      char item[64];
      int32_t v = (int32_t)cp;
      cls_alphabet_describe_chars(&v, 1, item, sizeof item);
      cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                    "%s:%d: %s is already label %d (line %d); each character may appear once", name, line_no, item, i,
                    a->labels[i].line);
      return CLS_ERR_INVALID_ARGUMENT;
    }
  }
  label *lb = &a->labels[a->size++];
  cls_utf8_encode(cp, lb->text);
  lb->cp = cp;
  lb->line = line_no;
  return CLS_OK;
}

/* Fills the lookup table from the labels. */
static cls_status index_labels(cls_alphabet *a, const char *name, cls_error *err) {
  a->by_cp = malloc((size_t)a->size * sizeof *a->by_cp);
  if (!a->by_cp) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  for (int i = 0; i < a->size; i++) a->by_cp[i] = (lookup){a->labels[i].cp, i};
  qsort(a->by_cp, (size_t)a->size, sizeof *a->by_cp, cmp_lookup);
  return CLS_OK;
}

static cls_status make_bytes(const char *name, cls_alphabet **out, cls_error *err) {
  *out = NULL;
  cls_alphabet *a = calloc(1, sizeof *a);
  if (a) a->labels = calloc(255, sizeof *a->labels);
  if (!a || !a->labels) {
    cls_alphabet_destroy(a);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  }
  a->bytes = true;
  a->size = 255;
  for (int i = 0; i < 255; i++) {
    a->labels[i].text[0] = (char)(i + 1);
    a->labels[i].cp = (uint32_t)(i + 1);
    a->labels[i].line = 1;
  }
  cls_status st = index_labels(a, name, err);
  if (st != CLS_OK) {
    cls_alphabet_destroy(a);
    return st;
  }
  *out = a;
  return CLS_OK;
}

/* The rest of a file that began with CLS_ALPHABET_BYTES_LINE: only comments and empty lines may follow. */
static cls_status parse_bytes(const unsigned char *s, size_t len, const char *name, cls_alphabet **out,
                              cls_error *err) {
  *out = NULL;
  int line_no = 1;
  for (size_t pos = 0; pos < len;) {
    if (s[pos] == '\r' && pos + 1 < len && s[pos + 1] == '\n') pos++;
    pos++; /* the line end */
    if (pos >= len) break;
    line_no++;
    size_t e = pos;
    while (e < len && s[e] != '\n' && s[e] != '\r') e++;
    if (e > pos && s[pos] != '#')
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                           "%s:%d: a bytes alphabet (its first line says --bytes_output_mode) holds no labels; only "
                           "comments may follow", name, line_no);
    pos = e;
  }
  return make_bytes(name, out, err);
}

cls_status cls_alphabet_bytes(cls_alphabet **out, cls_error *err) {
  return make_bytes("the UTF-8 bytes alphabet", out, err);
}

bool cls_alphabet_is_bytes(const cls_alphabet *a) { return a && a->bytes; }

cls_status cls_alphabet_parse(const char *text, size_t len, const char *name, cls_alphabet **out, cls_error *err) {
  *out = NULL;
  const unsigned char *s = (const unsigned char *)text;
  size_t pos = 0;
  if (len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) pos = 3;
  const size_t marker = strlen(CLS_ALPHABET_BYTES_LINE);
  if (len - pos >= marker && !memcmp(s + pos, CLS_ALPHABET_BYTES_LINE, marker) &&
      (len - pos == marker || s[pos + marker] == '\n' || s[pos + marker] == '\r'))
    return parse_bytes(s + pos + marker, len - pos - marker, name, out, err);
  /* At most one label per line: count line ends for the allocation. */
  size_t max_labels = 1;
  for (size_t i = pos; i < len; i++)
    if (s[i] == '\n' || s[i] == '\r') max_labels++;
  cls_alphabet *a = calloc(1, sizeof *a);
  if (a) a->labels = malloc(max_labels * sizeof *a->labels);
  if (!a || !a->labels) {
    cls_alphabet_destroy(a);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  }
  int line_no = 0;
  while (pos < len) {
    size_t b = pos, e = pos;
    while (e < len && s[e] != '\n' && s[e] != '\r') e++;
    pos = e;
    if (pos < len && s[pos] == '\r') pos++;
    if (pos < len && s[pos] == '\n') pos++;
    line_no++;
    const unsigned char *l = s + b;
    size_t n = e - b;
    unsigned char hash = '#';
    if (n == 2 && l[0] == '\\' && l[1] == '#') {
      l = &hash;
      n = 1;
    } else if (n > 0 && l[0] == '#') {
      continue;
    }
    if (n == 0) continue;
    cls_status st = add_label(a, l, n, name, line_no, err);
    if (st != CLS_OK) {
      cls_alphabet_destroy(a);
      return st;
    }
  }
  if (a->size == 0) {
    cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: holds no labels (every line is empty or a comment)", name);
    cls_alphabet_destroy(a);
    return CLS_ERR_INVALID_ARGUMENT;
  }
  cls_status ist = index_labels(a, name, err);
  if (ist != CLS_OK) {
    cls_alphabet_destroy(a);
    return ist;
  }
  *out = a;
  return CLS_OK;
}

cls_status cls_alphabet_load(const char *path, cls_alphabet **out, cls_error *err) {
  *out = NULL;
  char *buf = NULL;
  size_t len = 0;
  cls_status st = cls_read_file_max(path, CLS_ALPHABET_MAX_BYTES, false, &buf, &len, err);
  if (st != CLS_OK) return st;
  st = cls_alphabet_parse(buf, len, path, out, err);
  free(buf);
  return st;
}

int cls_alphabet_size(const cls_alphabet *a) { return a ? a->size : 0; }

bool cls_alphabet_differs(const cls_alphabet *a, const cls_alphabet *b, cls_error *why) {
  if (cls_alphabet_is_bytes(a) != cls_alphabet_is_bytes(b)) {
    cls_error_set(why, CLS_ERR_INVALID_ARGUMENT, "%s against %s",
                  cls_alphabet_is_bytes(a) ? "the UTF-8 bytes alphabet" : "an alphabet of characters",
                  cls_alphabet_is_bytes(b) ? "the UTF-8 bytes alphabet" : "an alphabet of characters");
    return true;
  }
  if (cls_alphabet_size(a) != cls_alphabet_size(b)) {
    cls_error_set(why, CLS_ERR_INVALID_ARGUMENT, "%d labels against %d", cls_alphabet_size(a), cls_alphabet_size(b));
    return true;
  }
  for (int i = 0; i < cls_alphabet_size(a); i++)
    if (strcmp(cls_alphabet_label(a, i), cls_alphabet_label(b, i))) {
      cls_error_set(why, CLS_ERR_INVALID_ARGUMENT, "label %d is \"%s\" against \"%s\"", i, cls_alphabet_label(a, i),
                    cls_alphabet_label(b, i));
      return true;
    }
  return false;
}

const char *cls_alphabet_label(const cls_alphabet *a, int i) {
  return a && i >= 0 && i < a->size ? a->labels[i].text : NULL;
}

int cls_alphabet_index(const cls_alphabet *a, uint32_t cp) {
  int lo = 0, hi = a->size - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    uint32_t m = a->by_cp[mid].cp;
    if (m == cp) return a->by_cp[mid].index;
    if (m < cp) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* The bytes alphabet's encoding: a label per byte when the text is valid UTF-8; else each invalid byte
 * is written as label -1 (as cls_alphabet_encode writes a missing character) and reported as missing
 * (distinct, as -byte). */
static cls_status encode_bytes(const unsigned char *s, size_t len, int32_t *labels, int cap, int *n,
                               int32_t *missing, int missing_cap, int *n_missing) {
  bool bad[256] = {false};
  int n_found = 0, count = 0;
  for (size_t i = 0; i < len;) {
    uint32_t cp;
    int k = cls_utf8_decode(s + i, len - i, &cp);
    if (k == 0) {
      if (labels && count < cap) labels[count] = -1;
      count++;
      if (!bad[s[i]]) {
        bad[s[i]] = true;
        if (missing && n_found < missing_cap) missing[n_found] = -(int32_t)s[i];
        n_found++;
      }
      i++;
      continue;
    }
    for (int j = 0; j < k; j++, count++)
      if (labels && count < cap) labels[count] = (int32_t)s[i + (size_t)j] - 1;
    i += (size_t)k;
  }
  if (n) *n = count;
  if (n_missing) *n_missing = n_found;
  return n_found == 0 && count <= cap ? CLS_OK : CLS_ERR_INVALID_ARGUMENT;
}

cls_status cls_alphabet_encode(const cls_alphabet *a, const char *utf8, int32_t *labels, int cap, int *n,
                               int32_t *missing, int missing_cap, int *n_missing) {
  const unsigned char *s = (const unsigned char *)utf8;
  const size_t len = strlen(utf8);
  int32_t *found = NULL; /* distinct missing values, allocated at the first one */
  int n_found = 0, count = 0;
  if (a->bytes) return encode_bytes(s, len, labels, cap, n, missing, missing_cap, n_missing);
  for (size_t i = 0; i < len;) {
    uint32_t cp;
    int k = cls_utf8_decode(s + i, len - i, &cp);
    int32_t bad = 0;
    int idx = -1;
    if (k == 0) {
      bad = -(int32_t)s[i];
      k = 1;
    } else {
      idx = cls_alphabet_index(a, cp);
      if (idx < 0) bad = (int32_t)cp;
    }
    i += (size_t)k;
    if (count < cap && labels) labels[count] = idx;
    count++;
    if (idx >= 0) continue;
    if (!found && !(found = malloc(len * sizeof *found))) {
      if (n) *n = count;
      if (n_missing) *n_missing = 0;
      return CLS_ERR_OUT_OF_MEMORY;
    }
    int seen = 0;
    for (int j = 0; j < n_found && !seen; j++) seen = found[j] == bad;
    if (seen) continue;
    if (missing && n_found < missing_cap) missing[n_found] = bad;
    found[n_found++] = bad;
  }
  free(found);
  if (n) *n = count;
  if (n_missing) *n_missing = n_found;
  return n_found == 0 && count <= cap ? CLS_OK : CLS_ERR_INVALID_ARGUMENT;
}

/* Characters shown by code only: controls, and spaces or marks that would be invisible in quotes. */
static int invisible(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD || cp == 0x034F || (cp >= 0x2000 && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF;
}

static void describe_one(int32_t v, char *out, size_t cap) {
  if (v < 0) {
    snprintf(out, cap, "invalid UTF-8 byte 0x%02X", (unsigned)-v);
  } else if (invisible((uint32_t)v) || v > 0x10FFFF) {
    snprintf(out, cap, "U+%04X", (unsigned)v);
  } else {
    char u[CLS_UTF8_CHAR_CAP];
    cls_utf8_encode((uint32_t)v, u);
    snprintf(out, cap, "'%s' (U+%04X)", u, (unsigned)v);
  }
}

size_t cls_alphabet_describe_chars(const int32_t *chars, int n, char *out, size_t cap) {
  if (cap == 0) return 0;
  out[0] = '\0';
  size_t pos = 0;
  for (int i = 0; i < n; i++) {
    char item[48];
    describe_one(chars[i], item, sizeof item);
    const size_t sep = i ? 2 : 0, il = strlen(item);
    /* Room for this item, and unless it is the last, for a closing ", ..." should the next not fit. */
    const size_t tail = i + 1 < n ? 5 : 0;
    if (pos + sep + il + tail < cap) {
      memcpy(out + pos, ", ", sep);
      memcpy(out + pos + sep, item, il + 1);
      pos += sep + il;
      continue;
    }
    const char *more = i ? ", ..." : "...";
    size_t ml = strlen(more);
    if (pos + ml >= cap) ml = cap - 1 - pos;
    memcpy(out + pos, more, ml);
    pos += ml;
    out[pos] = '\0';
    break;
  }
  return pos;
}

/* The bytes alphabet's decoding: whole valid characters only (see clspeech/data.h). */
static cls_status decode_bytes(const int32_t *labels, int n, char *out, size_t cap) {
  size_t pos = 0;
  unsigned char ch[CLS_UTF8_MAX];
  cls_utf8_state st = cls_utf8_state_start();
  for (int i = 0; i < n; i++) {
    if (labels[i] < 0 || labels[i] >= 255) return CLS_ERR_INVALID_ARGUMENT;
    const unsigned b = (unsigned)labels[i] + 1;
    if (!cls_utf8_state_accepts(st, b)) {
      st = cls_utf8_state_start(); /* the unfinished character is dropped; b is read afresh */
      if (!cls_utf8_state_accepts(st, b)) continue;
    }
    ch[st.have] = (unsigned char)b;
    const int have = st.have + 1;
    st = cls_utf8_state_push(st, b);
    if (st.need) continue;
    if (pos + (size_t)have >= cap) return CLS_ERR_INVALID_ARGUMENT;
    memcpy(out + pos, ch, (size_t)have);
    pos += (size_t)have;
    out[pos] = '\0';
  }
  return CLS_OK;
}

cls_status cls_alphabet_decode(const cls_alphabet *a, const int32_t *labels, int n, char *out, size_t cap) {
  if (cap == 0) return CLS_ERR_INVALID_ARGUMENT;
  size_t pos = 0;
  out[0] = '\0';
  if (a->bytes) return decode_bytes(labels, n, out, cap);
  for (int i = 0; i < n; i++) {
    if (labels[i] < 0 || labels[i] >= a->size) return CLS_ERR_INVALID_ARGUMENT;
    const char *t = a->labels[labels[i]].text;
    size_t l = strlen(t);
    if (pos + l >= cap) return CLS_ERR_INVALID_ARGUMENT;
    memcpy(out + pos, t, l + 1);
    pos += l;
  }
  return CLS_OK;
}
