/* Safetensors reading and atomic writing (see safetensors.h). Holds a JSON reader just big enough
 * for the header (objects, arrays, strings, integers); no other JSON is parsed by the engine. */
#include "base/safetensors.h"

#include "base/file_util.h"
#include "base/sha256.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *dtype_names[] = {"F32", "F64", "I32", "I64", "U8"};

const char *cls_dtype_name(cls_dtype d) {
  return (int)d >= 0 && (int)d < (int)(sizeof dtype_names / sizeof *dtype_names) ? dtype_names[d] : "?";
}

size_t cls_dtype_size(cls_dtype d) {
  switch (d) {
    case CLS_F32: case CLS_I32: return 4;
    case CLS_F64: case CLS_I64: return 8;
    case CLS_U8: return 1;
  }
  return 0;
}

int64_t cls_tensor_elements(const cls_tensor_info *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) {
    if (t->shape[i] < 0) return -1;
    if (t->shape[i] != 0 && n > INT64_MAX / t->shape[i]) return -1;
    n *= t->shape[i];
  }
  return n;
}

/* ---- header parser ---- */
typedef struct parser {
  const char *start, *p, *end;
  cls_error *err;
  const char *path;
  int failed;
} parser;

static void perr(parser *ps, const char *fmt, ...) {
  if (ps->failed) return;
  ps->failed = 1;
  char detail[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  cls_error_set(ps->err, CLS_ERR_IO, "%s: malformed safetensors header: %s", ps->path, detail);
}

static void skip_ws(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t')) ps->p++;
}

static int expect(parser *ps, char c) {
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == c) {
    ps->p++;
    return 1;
  }
  perr(ps, "expected '%c' at header byte %ld", c, (long)(ps->p - ps->start));
  return 0;
}

static int peek(parser *ps, char c) {
  skip_ws(ps);
  return ps->p < ps->end && *ps->p == c;
}

/* A JSON string, returned malloc'ed (escapes \" \\ \/ \n \t \r \b \f and \u00XX handled). */
static char *parse_string(parser *ps) {
  if (!expect(ps, '"')) return NULL;
  size_t cap = 32, n = 0;
  char *s = malloc(cap);
  while (s && ps->p < ps->end && *ps->p != '"') {
    char c = *ps->p++;
    if (c == '\\' && ps->p < ps->end) {
      char e = *ps->p++;
      switch (e) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'u': {
          unsigned v = 0;
          for (int i = 0; i < 4 && ps->p < ps->end; i++) {
            char h = *ps->p++;
            v = v * 16 + (unsigned)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
          }
          c = v < 128 ? (char)v : '?';
          break;
        }
        default: c = e;
      }
    }
    if (n + 2 > cap) {
      char *grown = realloc(s, cap *= 2);
      if (!grown) {
        free(s);
        s = NULL;
        break;
      }
      s = grown;
    }
    s[n++] = c;
  }
  if (!s) {
    perr(ps, "out of memory");
    return NULL;
  }
  s[n] = '\0';
  if (!expect(ps, '"')) {
    free(s);
    return NULL;
  }
  return s;
}

/* A non-negative decimal integer below 2^62, read within the header's bytes only (the header need
 * not end in a NUL, and may end the file on a digit). */
static int parse_int(parser *ps, int64_t *out) {
  skip_ws(ps);
  int64_t v = 0;
  const char *start = ps->p;
  while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
    if (v > (((int64_t)1 << 62) - 9) / 10) {
      perr(ps, "integer at header byte %ld too large", (long)(start - ps->start));
      return 0;
    }
    v = v * 10 + (*ps->p++ - '0');
  }
  if (ps->p == start) {
    perr(ps, "expected a non-negative integer at header byte %ld", (long)(start - ps->start));
    return 0;
  }
  *out = v;
  return 1;
}

static int parse_int_array(parser *ps, int64_t *out, int cap, int *n) {
  *n = 0;
  if (!expect(ps, '[')) return 0;
  if (peek(ps, ']')) return expect(ps, ']');
  do {
    int64_t v;
    if (!parse_int(ps, &v)) return 0;
    if (*n >= cap) {
      perr(ps, "more than %d dimensions", cap);
      return 0;
    }
    out[(*n)++] = v;
  } while (peek(ps, ',') && expect(ps, ','));
  return expect(ps, ']');
}

static int parse_tensor(parser *ps, cls_tensor_info *t) {
  if (!expect(ps, '{')) return 0;
  int have = 0;
  while (!ps->failed && !peek(ps, '}')) {
    char *key = parse_string(ps);
    if (!key || !expect(ps, ':')) {
      free(key);
      return 0;
    }
    if (!strcmp(key, "dtype")) {
      char *v = parse_string(ps);
      int found = 0;
      for (int i = 0; v && i < (int)(sizeof dtype_names / sizeof *dtype_names); i++)
        if (!strcmp(v, dtype_names[i])) {
          t->dtype = (cls_dtype)i;
          found = 1;
        }
      if (v && !found) perr(ps, "tensor \"%s\": unsupported dtype %s", t->name, v);
      free(v);
      have |= 1;
    } else if (!strcmp(key, "shape")) {
      parse_int_array(ps, t->shape, CLS_MAX_DIMS, &t->ndim);
      have |= 2;
    } else if (!strcmp(key, "data_offsets")) {
      int64_t off[2];
      int n = 0;
      if (parse_int_array(ps, off, 2, &n) && n == 2 && off[1] >= off[0]) {
        t->offset = (size_t)off[0];
        t->nbytes = (size_t)(off[1] - off[0]);
      } else {
        perr(ps, "tensor \"%s\": bad data_offsets", t->name);
      }
      have |= 4;
    } else {
      perr(ps, "tensor \"%s\": unknown field \"%s\"", t->name, key);
    }
    free(key);
    if (peek(ps, ',')) expect(ps, ',');
  }
  if (!ps->failed && have != 7) perr(ps, "tensor \"%s\" lacks dtype, shape or data_offsets", t->name);
  return !ps->failed && expect(ps, '}');
}

static int parse_metadata(parser *ps, cls_safetensors *st) {
  if (!expect(ps, '{')) return 0;
  while (!ps->failed && !peek(ps, '}')) {
    char *k = parse_string(ps);
    char *v = k && expect(ps, ':') ? parse_string(ps) : NULL;
    char **grown = v ? realloc(st->meta, (size_t)(st->n_meta + 1) * 2 * sizeof *grown) : NULL;
    if (!grown) {
      free(k);
      free(v);
      perr(ps, "bad __metadata__ (values must be strings)");
      return 0;
    }
    st->meta = grown;
    st->meta[2 * st->n_meta] = k;
    st->meta[2 * st->n_meta + 1] = v;
    st->n_meta++;
    if (peek(ps, ',')) expect(ps, ',');
  }
  return expect(ps, '}');
}

static int parse_header(parser *ps, cls_safetensors *st) {
  if (!expect(ps, '{')) return 0;
  while (!ps->failed && !peek(ps, '}')) {
    char *name = parse_string(ps);
    if (!name || !expect(ps, ':')) {
      free(name);
      return 0;
    }
    if (!strcmp(name, "__metadata__")) {
      free(name);
      if (!parse_metadata(ps, st)) return 0;
    } else {
      cls_tensor_info *grown = realloc(st->tensors, (size_t)(st->n_tensors + 1) * sizeof *grown);
      if (!grown) {
        free(name);
        perr(ps, "out of memory");
        return 0;
      }
      st->tensors = grown;
      cls_tensor_info *t = &st->tensors[st->n_tensors++];
      memset(t, 0, sizeof *t);
      t->name = name;
      if (!name[0] || strlen(name) > 1024) {
        perr(ps, "a tensor name is empty or longer than 1024 bytes");
        return 0;
      }
      for (const char *c = name; *c; c++)
        if ((unsigned char)*c < 0x20) {
          perr(ps, "tensor name \"%.60s\" holds a control character", name);
          return 0;
        }
      if (cls_safetensors_find(st, name) != t) {
        perr(ps, "tensor \"%.200s\" appears twice", name);
        return 0;
      }
      if (!parse_tensor(ps, t)) return 0;
    }
    if (peek(ps, ',')) expect(ps, ',');
  }
  return expect(ps, '}');
}

/* Checks and indexes st->file (st->file_size bytes, or with header_only the length and header):
 * the header against the file's size, every tensor's offsets and byte count. Frees st on an error. */
static cls_status parse_loaded(cls_safetensors *st, const char *path, bool header_only, cls_safetensors **out,
                               cls_error *err) {
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; i--) header_len = header_len << 8 | st->file[i];
  if (header_len > st->file_size - 8) {
    cls_error_set(err, CLS_ERR_IO,
                  "%s: header length %llu exceeds the file (%zu bytes): not a safetensors file, or truncated", path,
                  (unsigned long long)header_len, st->file_size);
    cls_safetensors_free(st);
    return CLS_ERR_IO;
  }
  const char *header = (const char *)st->file + 8;
  parser ps = {header, header, header + header_len, err, path, 0};
  parse_header(&ps, st);
  st->data = header_only ? NULL : st->file + 8 + header_len;
  size_t data_size = st->file_size - 8 - (size_t)header_len;
  for (int i = 0; i < st->n_tensors && !ps.failed; i++) {
    cls_tensor_info *t = &st->tensors[i];
    const int64_t elements = cls_tensor_elements(t);
    const size_t size = cls_dtype_size(t->dtype);
    if (t->offset > data_size || t->nbytes > data_size - t->offset)
      perr(&ps, "tensor \"%s\" lies past the end of the data (file truncated?)", t->name);
    else if (elements < 0 || (uint64_t)elements > SIZE_MAX / size || (size_t)elements * size != t->nbytes)
      perr(&ps, "tensor \"%s\": %zu bytes do not match its shape and dtype", t->name, t->nbytes);
  }
  if (ps.failed) {
    cls_safetensors_free(st);
    return CLS_ERR_IO;
  }
  *out = st;
  return CLS_OK;
}

/* Reads the file (all of it, or with header_only its length and header), then parses and checks the
 * header against the file's size. */
static cls_status read_safetensors(const char *path, bool header_only, cls_safetensors **out, cls_error *err) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    fclose(f);
    return cls_error_set(err, CLS_ERR_IO, "%s: not a regular file", path);
  }
  cls_safetensors *st = calloc(1, sizeof *st);
  long size = sb.st_size > (off_t)LONG_MAX ? -1 : (long)sb.st_size;
  unsigned char len8[8];
  uint64_t want = (uint64_t)(size > 0 ? size : 0); /* bytes to read: the whole file, or 8 + the header */
  if (header_only && st && size >= 8 && fread(len8, 1, 8, f) == 8) {
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = header_len << 8 | len8[i];
    if (header_len <= (uint64_t)size - 8) want = 8 + header_len; /* else the check below names it */
    rewind(f);
  }
  if (st && size >= 8) st->file = malloc((size_t)want);
  if (!st || size < 8 || !st->file || fread(st->file, 1, (size_t)want, f) != (size_t)want) {
    fclose(f);
    cls_error_set(err, CLS_ERR_IO, "%s: %s", path,
                  size >= 0 && size < 8 ? "too short to be a safetensors file" : "cannot read");
    cls_safetensors_free(st);
    return CLS_ERR_IO;
  }
  fclose(f);
  st->file_size = (size_t)size;
  return parse_loaded(st, path, header_only, out, err);
}

cls_status cls_safetensors_read(const char *path, cls_safetensors **out, cls_error *err) {
  return read_safetensors(path, false, out, err);
}

cls_status cls_safetensors_read_header(const char *path, cls_safetensors **out, cls_error *err) {
  return read_safetensors(path, true, out, err);
}

cls_status cls_safetensors_parse(const void *bytes, size_t len, const char *name, cls_safetensors **out,
                                 cls_error *err) {
  *out = NULL;
  if (len < 8) return cls_error_set(err, CLS_ERR_IO, "%s: too short to be a safetensors file", name);
  cls_safetensors *st = calloc(1, sizeof *st);
  if (st) st->file = malloc(len);
  if (!st || !st->file) {
    cls_safetensors_free(st);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  }
  memcpy(st->file, bytes, len);
  st->file_size = len;
  return parse_loaded(st, name, false, out, err);
}

void cls_safetensors_free(cls_safetensors *st) {
  if (!st) return;
  for (int i = 0; i < st->n_tensors; i++) free(st->tensors[i].name);
  for (int i = 0; i < 2 * st->n_meta; i++) free(st->meta[i]);
  free(st->tensors);
  free(st->meta);
  free(st->file);
  free(st);
}

const cls_tensor_info *cls_safetensors_find(const cls_safetensors *st, const char *name) {
  for (int i = 0; st && i < st->n_tensors; i++)
    if (!strcmp(st->tensors[i].name, name)) return &st->tensors[i];
  return NULL;
}

const void *cls_safetensors_tensor_data(const cls_safetensors *st, const cls_tensor_info *t) {
  return st->data + t->offset;
}

const char *cls_safetensors_meta(const cls_safetensors *st, const char *key) {
  for (int i = 0; st && i < st->n_meta; i++)
    if (!strcmp(st->meta[2 * i], key)) return st->meta[2 * i + 1];
  return NULL;
}

/* ---- writer ---- */
static void json_escaped(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", (unsigned char)*s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

cls_status cls_safetensors_write(const char *path, const cls_tensor_desc *tensors, int n, const char *const *meta,
                                 int n_meta, cls_error *err) {
  return cls_safetensors_write_hashed(path, tensors, n, meta, n_meta, NULL, err);
}

cls_status cls_safetensors_write_hashed(const char *path, const cls_tensor_desc *tensors, int n,
                                        const char *const *meta, int n_meta, uint8_t digest[32], cls_error *err) {
  char *header = NULL;
  size_t header_size = 0;
  FILE *h = open_memstream(&header, &header_size);
  if (!h) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  fputc('{', h);
  if (n_meta > 0) {
    fputs("\"__metadata__\":{", h);
    for (int i = 0; i < n_meta; i++) {
      if (i) fputc(',', h);
      json_escaped(h, meta[2 * i]);
      fputc(':', h);
      json_escaped(h, meta[2 * i + 1]);
    }
    fputc('}', h);
  }
  size_t offset = 0;
  for (int i = 0; i < n; i++) {
    const cls_tensor_desc *t = &tensors[i];
    int64_t count = 1;
    for (int d = 0; d < t->ndim; d++) count *= t->shape[d];
    size_t bytes = (size_t)count * cls_dtype_size(t->dtype);
    if (i || n_meta > 0) fputc(',', h);
    json_escaped(h, t->name);
    fprintf(h, ":{\"dtype\":\"%s\",\"shape\":[", dtype_names[t->dtype]);
    for (int d = 0; d < t->ndim; d++) fprintf(h, "%s%lld", d ? "," : "", (long long)t->shape[d]);
    fprintf(h, "],\"data_offsets\":[%zu,%zu]}", offset, offset + bytes);
    offset += bytes;
  }
  fputc('}', h);
  /* Pad the header with spaces to a multiple of 8 bytes, so the data section is aligned. */
  while (ftell(h) % 8) fputc(' ', h);
  fclose(h); /* sets header and header_size */

  unsigned char len[8];
  cls_put_le(len, header_size, 8);
  const void **chunks = malloc((size_t)(n + 2) * sizeof *chunks);
  size_t *sizes = malloc((size_t)(n + 2) * sizeof *sizes);
  if (!chunks || !sizes) {
    free(chunks);
    free(sizes);
    free(header);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  chunks[0] = len;
  sizes[0] = 8;
  chunks[1] = header;
  sizes[1] = header_size;
  for (int i = 0; i < n; i++) {
    int64_t count = 1;
    for (int d = 0; d < tensors[i].ndim; d++) count *= tensors[i].shape[d];
    chunks[i + 2] = tensors[i].data;
    sizes[i + 2] = (size_t)count * cls_dtype_size(tensors[i].dtype);
  }
  if (digest) {
    cls_sha256 hash;
    cls_sha256_init(&hash);
    for (int i = 0; i < n + 2; i++) cls_sha256_update(&hash, chunks[i], sizes[i]);
    cls_sha256_final(&hash, digest);
  }
  cls_status st = cls_write_atomic(path, chunks, sizes, n + 2, err);
  free(chunks);
  free(sizes);
  free(header);
  return st;
}
