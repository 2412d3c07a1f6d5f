/* Reading model packages (clspeech/package.h): the whole file in memory, checked before anything in it
 * is used (magic, version, size, checksum, each section's bounds, alignment, order and name, the
 * metadata's numbers, the alphabet, every tensor's shape and values, the scorer's magic), then the
 * weights handed out in cls_model_layout order. The layout is package_format.h; the writer is
 * package_write.c. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "base/meta_number.h"
#include "clspeech/data.h"
#include "clspeech/package.h"
#include "model/package_format.h"

#define TEXT_CAP 256

typedef struct pkg_section {
  char name[PKG_NAME_BYTES];
  uint32_t dtype, ndim;
  int64_t shape[2];
  uint64_t offset, size;
} pkg_section;

struct cls_package {
  unsigned char *file;
  size_t size;
  char *name;
  pkg_section sec[PKG_MAX_SECTIONS];
  int tensor[CLS_MODEL_MAX_TENSORS]; /* the section of each parameter tensor (cls_model_layout_all) */
  char version[TEXT_CAP], source[TEXT_CAP];
  cls_package_info info;
};

static cls_status bad(cls_error *err, const char *name, const char *fmt, const char *detail) {
  return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %s%s", name, fmt, detail ? detail : "");
}

/* A reader below (metadata numbers, the alphabet) has said what is wrong: bad content, whatever its status. */
static cls_status content_error(cls_error *err) {
  if (err) err->status = CLS_ERR_INVALID_ARGUMENT;
  return CLS_ERR_INVALID_ARGUMENT;
}

/* The fixed header: magic, version, sizes, checksum; then the table's entries. */
static cls_status read_table(cls_package *p, cls_error *err) {
  const unsigned char *f = p->file;
  const char *name = p->name;
  if (p->size < PKG_MAGIC_BYTES || memcmp(f, PKG_MAGIC, PKG_MAGIC_BYTES))
    return bad(err, name, "not a clspeech model package (no .clsm magic bytes)", NULL);
  if (p->size < PKG_HEADER_BYTES) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: truncated: %zu bytes, the header alone is %d", name,
                         p->size, PKG_HEADER_BYTES);
  }
  const uint64_t version = cls_get_le(f + PKG_H_VERSION, 4);
  if (version != CLS_PACKAGE_VERSION) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "%s: model package format version %llu, this clspeech reads version %d", name,
                         (unsigned long long)version, CLS_PACKAGE_VERSION);
  }
  const uint64_t file_size = cls_get_le(f + PKG_H_FILE_SIZE, 8);
  if (file_size != p->size) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %s: the header says %llu bytes, the file has %zu", name,
                         file_size > p->size ? "truncated" : "trailing bytes", (unsigned long long)file_size,
                         p->size);
  }
  uint8_t sum[PKG_CHECKSUM_BYTES];
  cls_package_checksum(f, p->size, sum);
  if (memcmp(sum, f + PKG_H_CHECKSUM, sizeof sum)) return bad(err, name, "checksum mismatch (file corrupt or truncated)", NULL);
  const uint64_t n = cls_get_le(f + PKG_H_N_SECTIONS, 4);
  if (cls_get_le(f + PKG_H_HEADER_BYTES, 4) != PKG_HEADER_BYTES || cls_get_le(f + PKG_H_ENTRY_BYTES, 4) != PKG_ENTRY_BYTES)
    return bad(err, name, "malformed header (header or table entry size)", NULL);
  if (n < 1 || n > PKG_MAX_SECTIONS) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %llu sections (1..%d)", name, (unsigned long long)n,
                         PKG_MAX_SECTIONS);
  }
  const uint64_t table_end = PKG_HEADER_BYTES + n * PKG_ENTRY_BYTES;
  if (table_end > p->size) return bad(err, name, "truncated: the section table ends past the file", NULL);
  uint64_t end = table_end;
  for (int i = 0; i < (int)n; i++) {
    const unsigned char *e = f + PKG_HEADER_BYTES + (size_t)i * PKG_ENTRY_BYTES;
    pkg_section *s = &p->sec[i];
    if (!memchr(e, '\0', PKG_NAME_BYTES) || !e[0]) {
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: section %d has no name of 1..%d bytes", name, i,
                           PKG_NAME_BYTES - 1);
    }
    memcpy(s->name, e, PKG_NAME_BYTES);
    s->dtype = (uint32_t)cls_get_le(e + PKG_E_DTYPE, 4);
    s->ndim = (uint32_t)cls_get_le(e + PKG_E_NDIM, 4);
    for (int d = 0; d < 2; d++) s->shape[d] = (int64_t)cls_get_le(e + PKG_E_SHAPE + 8 * d, 8);
    s->offset = cls_get_le(e + PKG_E_OFFSET, 8);
    s->size = cls_get_le(e + PKG_E_SIZE, 8);
    for (int j = 0; j < i; j++)
      if (!strcmp(p->sec[j].name, s->name))
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: section \"%s\" appears twice", name, s->name);
    if (s->offset % PKG_ALIGN || s->offset < end || s->offset > p->size || s->size > p->size - s->offset) {
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                           "%s: section \"%s\" at bytes %llu..+%llu lies outside the file (%zu bytes), overlaps the "
                           "one before or is not %d-byte aligned",
                           name, s->name, (unsigned long long)s->offset, (unsigned long long)s->size, p->size,
                           PKG_ALIGN);
    }
    end = s->offset + s->size;
  }
  p->info.n_sections = (int)n;
  return CLS_OK;
}

static const pkg_section *find(const cls_package *p, const char *name) {
  for (int i = 0; i < p->info.n_sections; i++)
    if (!strcmp(p->sec[i].name, name)) return &p->sec[i];
  return NULL;
}

/* One "key=value" line of the meta section, NUL-terminated copies of the value in `value`. */
static const char *const meta_keys[] = {"clspeech_version", "source_checkpoint", "global_step", "n_hidden",
                                        "n_classes", "n_input", "n_context", "relu_clip", "audio_sample_rate",
                                        "feature_win_len", "feature_win_step", "lm_alpha", "lm_beta", "layer_norm"};
#define N_META_KEYS (int)(sizeof meta_keys / sizeof *meta_keys)

static cls_status read_meta(cls_package *p, char value[N_META_KEYS][TEXT_CAP], bool seen[N_META_KEYS], cls_error *err) {
  const pkg_section *s = find(p, PKG_SECTION_META);
  if (!s) return bad(err, p->name, "no \"meta\" section", NULL);
  const char *t = (const char *)p->file + s->offset, *stop = t + s->size;
  for (int no = 1; t < stop; no++) {
    const char *nl = memchr(t, '\n', (size_t)(stop - t));
    const char *line_end = nl ? nl : stop;
    const char *eq = memchr(t, '=', (size_t)(line_end - t));
    int k = -1;
    for (int i = 0; eq && i < N_META_KEYS; i++)
      if ((size_t)(eq - t) == strlen(meta_keys[i]) && !memcmp(t, meta_keys[i], (size_t)(eq - t))) k = i;
    if (k < 0 || seen[k] || (size_t)(line_end - eq - 1) >= TEXT_CAP) {
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                           "%s: meta line %d: expected a known key given once, \"=\" and a value under %d bytes",
                           p->name, no, TEXT_CAP);
    }
    const size_t len = (size_t)(line_end - eq - 1);
    memcpy(value[k], eq + 1, len);
    value[k][len] = '\0';
    if (strlen(value[k]) != len) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: meta line %d holds a NUL byte", p->name, no);
    seen[k] = true;
    t = nl ? nl + 1 : stop;
  }
  for (int i = 0; i < 11; i++) /* all but lm_alpha and lm_beta, which come with a scorer */
    if (!seen[i]) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: meta has no %s", p->name, meta_keys[i]);
  return CLS_OK;
}

/* The metadata's numbers whole (or finite) and in range. */
static cls_status read_numbers(cls_package *p, char value[N_META_KEYS][TEXT_CAP], bool seen[N_META_KEYS],
                               cls_error *err) {
  long long v[11] = {0};
  const struct { int key; long long lo, hi; } ints[] = {
      {2, 0, INT64_MAX},        {3, 1, CLS_MODEL_MAX_WIDTH}, {4, 2, CLS_MODEL_MAX_WIDTH}, {5, 1, CLS_MODEL_MAX_WIDTH},
      {6, 0, 1024},             {8, CLS_MFCC_MIN_RATE, CLS_MFCC_MAX_RATE}, {9, 1, CLS_MFCC_MAX_MS},
      {10, 1, CLS_MFCC_MAX_MS}};
  cls_status rc = CLS_OK;
  for (size_t i = 0; rc == CLS_OK && i < sizeof ints / sizeof *ints; i++)
    rc = cls_meta_parse_int(p->name, meta_keys[ints[i].key], value[ints[i].key], ints[i].lo, ints[i].hi,
                            &v[ints[i].key], err);
  double clip = 0, alpha = 0, beta = 0;
  long long layer_norm = 0; /* written only for a --layer_norm model */
  if (rc == CLS_OK && seen[13]) rc = cls_meta_parse_int(p->name, "layer_norm", value[13], 0, 1, &layer_norm, err);
  if (rc == CLS_OK) rc = cls_meta_parse_real(p->name, "relu_clip", value[7], FLT_MIN, FLT_MAX, &clip, err);
  const bool scorer = find(p, PKG_SECTION_SCORER) != NULL;
  if (rc == CLS_OK && scorer && (!seen[11] || !seen[12]))
    rc = bad(err, p->name, "a scorer without lm_alpha and lm_beta in meta", NULL);
  if (rc == CLS_OK && scorer) rc = cls_meta_parse_real(p->name, "lm_alpha", value[11], -1e6, 1e6, &alpha, err);
  if (rc == CLS_OK && scorer) rc = cls_meta_parse_real(p->name, "lm_beta", value[12], -1e6, 1e6, &beta, err);
  if (rc != CLS_OK) return content_error(err);
  cls_package_info *in = &p->info;
  memcpy(p->version, value[0], TEXT_CAP);
  memcpy(p->source, value[1], TEXT_CAP);
  in->clspeech_version = p->version;
  in->source_checkpoint = p->source;
  in->global_step = v[2];
  in->model = (cls_model_config){(int)v[5], (int)v[6], (int)v[3], (int)v[4], (float)clip, (int)layer_norm};
  in->audio_sample_rate = (int)v[8];
  in->feature_win_len = (int)v[9];
  in->feature_win_step = (int)v[10];
  in->lm_alpha = alpha;
  in->lm_beta = beta;
  return CLS_OK;
}

/* Every section known; the parameter tensors of the geometry's shapes with finite values; the
 * alphabet of n_classes - 1 labels; the scorer's magic. */
static cls_status check_sections(cls_package *p, cls_error *err) {
  cls_package_info *in = &p->info;
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  const int n_views = cls_model_layout_all(&in->model, views, &in->n_params);
  for (int t = 0; t < CLS_MODEL_MAX_TENSORS; t++) p->tensor[t] = -1;
  const int le = cls_package_host_le();
  for (int i = 0; i < in->n_sections; i++) {
    const pkg_section *s = &p->sec[i];
    int t = -1;
    for (int k = 0; k < n_views; k++)
      if (!strcmp(s->name, views[k].name)) t = k;
    if (t < 0) {
      if (strcmp(s->name, PKG_SECTION_META) && strcmp(s->name, PKG_SECTION_ALPHABET) && strcmp(s->name, PKG_SECTION_SCORER))
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: unknown section \"%s\"", p->name, s->name);
      if (s->dtype != PKG_DTYPE_BYTES)
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: section \"%s\" is not bytes", p->name, s->name);
      continue;
    }
    const cls_param_view *v = &views[t];
    const int64_t want1 = v->ndim > 1 ? v->shape[1] : 0;
    if (s->dtype != PKG_DTYPE_F32 || s->ndim != (uint32_t)v->ndim || s->shape[0] != v->shape[0] || s->shape[1] != want1 ||
        s->size != v->count * sizeof(float)) {
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                           "%s: tensor \"%s\" is dtype %u, %u dims [%lld, %lld], %llu bytes; this model's (n_hidden "
                           "%d, n_classes %d) is float32 [%lld, %lld], %zu bytes",
                           p->name, s->name, s->dtype, s->ndim, (long long)s->shape[0], (long long)s->shape[1],
                           (unsigned long long)s->size, in->model.n_hidden, in->model.n_classes,
                           (long long)v->shape[0], (long long)want1, v->count * sizeof(float));
    }
    const unsigned char *b = p->file + s->offset;
    size_t k = 0;
    if (le) { /* the fast look first: the exponent bits of every value at once */
      uint32_t all = 0;
      for (; k < v->count; k++) {
        uint32_t bits;
        memcpy(&bits, b + 4 * k, 4);
        if ((bits & 0x7f800000u) == 0x7f800000u) all = 1;
      }
      k = all ? 0 : v->count;
    }
    for (; k < v->count; k++) {
      const uint32_t bits = (uint32_t)cls_get_le(b + 4 * k, 4);
      if ((bits & 0x7f800000u) == 0x7f800000u) {
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: tensor \"%s\" holds %s at element %zu", p->name,
                             s->name, bits & 0x007fffffu ? "NaN" : "infinity", k);
      }
    }
    p->tensor[t] = i;
    in->n_tensors++;
  }
  for (int t = 0; t < n_views; t++)
    if (p->tensor[t] < 0)
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: no tensor \"%s\"", p->name, views[t].name);
  const pkg_section *a = find(p, PKG_SECTION_ALPHABET);
  if (!a) return bad(err, p->name, "no \"alphabet\" section", NULL);
  in->alphabet = (const char *)p->file + a->offset;
  in->alphabet_bytes = (size_t)a->size;
  char what[CLS_PATH_CAP];
  snprintf(what, sizeof what, "%s (alphabet)", p->name);
  cls_alphabet *alphabet = NULL;
  cls_status rc = cls_alphabet_parse(in->alphabet, in->alphabet_bytes, what, &alphabet, err);
  if (rc != CLS_OK) return content_error(err);
  const int labels = cls_alphabet_size(alphabet);
  cls_alphabet_destroy(alphabet);
  if (labels + 1 != in->model.n_classes) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %d classes, but its alphabet has %d labels (+1 blank)",
                         p->name, in->model.n_classes, labels);
  }
  const pkg_section *sc = find(p, PKG_SECTION_SCORER);
  if (sc) {
    if (sc->size < PKG_LM_MAGIC_BYTES || memcmp(p->file + sc->offset, PKG_LM_MAGIC, PKG_LM_MAGIC_BYTES))
      return bad(err, p->name, "the scorer section is not a binary language model", NULL);
    in->scorer = p->file + sc->offset;
    in->scorer_bytes = (size_t)sc->size;
  }
  return CLS_OK;
}

/* Takes `file` (malloc'ed, `size` bytes): the package on success, freed on failure. */
static cls_status take(unsigned char *file, size_t size, const char *name, cls_package **out, cls_error *err) {
  cls_package *p = calloc(1, sizeof *p);
  char *copy = malloc(strlen(name) + 1);
  if (!p || !copy) {
    free(p);
    free(copy);
    free(file);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  }
  strcpy(copy, name);
  p->file = file, p->size = size, p->name = copy;
  p->info.version = CLS_PACKAGE_VERSION;
  p->info.file_bytes = size;
  char value[N_META_KEYS][TEXT_CAP];
  bool seen[N_META_KEYS] = {false};
  cls_status rc = read_table(p, err);
  if (rc == CLS_OK) rc = read_meta(p, value, seen, err);
  if (rc == CLS_OK) rc = read_numbers(p, value, seen, err);
  if (rc == CLS_OK) rc = check_sections(p, err);
  if (rc != CLS_OK) {
    cls_package_close(p);
    return rc;
  }
  *out = p;
  return CLS_OK;
}

cls_status cls_package_open(const char *path, cls_package **out, cls_error *err) {
  if (out) *out = NULL;
  if (!path || !out) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_package_open: path or out is NULL");
  char *file = NULL;
  size_t size = 0;
  cls_status rc = cls_read_file_magic(path, PKG_MAGIC, PKG_MAGIC_BYTES, (size_t)CLS_PACKAGE_MAX_BYTES, &file, &size, err);
  if (rc != CLS_OK) return rc;
  return take((unsigned char *)file, size, path, out, err);
}

cls_status cls_package_parse(const void *data, size_t size, const char *name, cls_package **out, cls_error *err) {
  if (out) *out = NULL;
  if ((!data && size) || !name || !out)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "cls_package_parse: data, name or out is NULL");
  unsigned char *copy = malloc(size ? size : 1);
  if (!copy) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  if (size) memcpy(copy, data, size);
  return take(copy, size, name, out, err);
}

void cls_package_close(cls_package *p) {
  if (!p) return;
  free(p->file);
  free(p->name);
  free(p);
}

const cls_package_info *cls_package_get_info(const cls_package *p) { return p ? &p->info : NULL; }

const char *cls_package_section_name(const cls_package *p, int i) {
  return p && i >= 0 && i < p->info.n_sections ? p->sec[i].name : NULL;
}

cls_status cls_package_params(const cls_package *p, float *params, size_t n, cls_error *err) {
  if (!p || !params || n != p->info.n_params) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %zu parameters asked for, the package holds %zu",
                         p ? p->name : "(no package)", n, p ? p->info.n_params : 0);
  }
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  const int n_views = cls_model_layout_all(&p->info.model, views, NULL);
  const int le = cls_package_host_le();
  for (int t = 0; t < n_views; t++) {
    const unsigned char *b = p->file + p->sec[p->tensor[t]].offset;
    float *dst = params + views[t].offset;
    if (le) {
      memcpy(dst, b, views[t].count * sizeof(float));
    } else {
      for (size_t k = 0; k < views[t].count; k++) {
        const uint32_t bits = (uint32_t)cls_get_le(b + 4 * k, 4);
        memcpy(&dst[k], &bits, 4);
      }
    }
  }
  return CLS_OK;
}

const char *cls_package_name(const cls_package *p) { return p ? p->name : ""; }
