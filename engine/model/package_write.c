/* Writing model packages (clspeech/package.h): a checkpoint's weights without its Adam slots, the
 * alphabet, the feature settings, the geometry, where it came from and an optional binary scorer,
 * laid out as package_format.h says, checksummed and written atomically. Reading is package_read.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "base/sha256.h"
#include "clspeech/clspeech.h"
#include "clspeech/data.h"
#include "clspeech/package.h"
#include "model/package_format.h"

#define MAX_SECTIONS (3 + CLS_MODEL_MAX_TENSORS)

typedef struct section {
  const char *name;
  int dtype, ndim;
  int64_t shape[2];
  const void *data;
  uint64_t size, offset;
} section;

static uint64_t round_up(uint64_t n) { return (n + PKG_ALIGN - 1) / PKG_ALIGN * PKG_ALIGN; }

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* The writer's inputs checked: features in range, the alphabet's labels the model's classes, the
 * scorer the binary form. */
static cls_status check_source(const cls_package_source *s, const cls_model_config *cfg, const char *alphabet,
                               size_t alphabet_len, const char *scorer, size_t scorer_len, cls_error *err) {
  if (s->audio_sample_rate < CLS_MFCC_MIN_RATE || s->audio_sample_rate > CLS_MFCC_MAX_RATE ||
      s->feature_win_len < 1 || s->feature_win_len > CLS_MFCC_MAX_MS || s->feature_win_step < 1 ||
      s->feature_win_step > CLS_MFCC_MAX_MS) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "model package: audio_sample_rate %d, feature_win_len %d, feature_win_step %d: out of range "
                         "(%d..%d Hz, 1..%d ms)",
                         s->audio_sample_rate, s->feature_win_len, s->feature_win_step, CLS_MFCC_MIN_RATE,
                         CLS_MFCC_MAX_RATE, CLS_MFCC_MAX_MS);
  }
  cls_alphabet *a = NULL;
  cls_status rc = cls_alphabet_parse(alphabet, alphabet_len, s->alphabet_path, &a, err);
  if (rc != CLS_OK) return rc;
  const int labels = cls_alphabet_size(a);
  cls_alphabet_destroy(a);
  if (labels + 1 != cfg->n_classes) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s has %d classes, but %s gives %d labels (+1 blank)",
                         s->checkpoint_path, cfg->n_classes, s->alphabet_path, labels);
  }
  if (scorer && (scorer_len < PKG_LM_MAGIC_BYTES || memcmp(scorer, PKG_LM_MAGIC, PKG_LM_MAGIC_BYTES))) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "%s: not clspeech's binary language model form (`clspeech lm --arpa_in FILE --out X.clm` "
                         "converts an ARPA file)",
                         s->scorer_path);
  }
  if (scorer && !(isfinite(s->lm_alpha) && isfinite(s->lm_beta))) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "model package: lm_alpha %g and lm_beta %g must be finite",
                         s->lm_alpha, s->lm_beta);
  }
  return CLS_OK;
}

/* The "meta" section's text. */
static int meta_text(char *text, size_t cap, const cls_package_source *s, const cls_model_config *cfg,
                     int64_t global_step, int with_scorer) {
  int n = snprintf(text, cap,
                   "clspeech_version=%s\nsource_checkpoint=%s\nglobal_step=%lld\nn_hidden=%d\nn_classes=%d\n"
                   "n_input=%d\nn_context=%d\nrelu_clip=%.9g\naudio_sample_rate=%d\nfeature_win_len=%d\n"
                   "feature_win_step=%d\n",
                   cls_version(), base_name(s->checkpoint_path), (long long)global_step, cfg->n_hidden,
                   cfg->n_classes, cfg->n_input, cfg->n_context, (double)cfg->relu_clip, s->audio_sample_rate,
                   s->feature_win_len, s->feature_win_step);
  if (with_scorer && n > 0 && (size_t)n < cap)
    n += snprintf(text + n, cap - (size_t)n, "lm_alpha=%.17g\nlm_beta=%.17g\n", s->lm_alpha, s->lm_beta);
  if (cfg->layer_norm && n > 0 && (size_t)n < cap) n += snprintf(text + n, cap - (size_t)n, "layer_norm=1\n");
  return n;
}

/* Header, table, sections and padding as chunks, the checksum over them, then the atomic write. */
static cls_status write_sections(const char *path, section *sec, int n, uint64_t *file_bytes, cls_error *err) {
  static const unsigned char zeros[PKG_ALIGN];
  const size_t head = PKG_HEADER_BYTES + (size_t)n * PKG_ENTRY_BYTES;
  unsigned char *h = calloc(1, head);
  if (!h) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  uint64_t off = round_up(head);
  for (int i = 0; i < n; i++) {
    sec[i].offset = off;
    off = round_up(off + sec[i].size);
  }
  const uint64_t total = sec[n - 1].offset + sec[n - 1].size;
  if (total > CLS_PACKAGE_MAX_BYTES) { /* the reader would refuse it */
    free(h);
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "%s: the package would be %llu bytes, above the %llu a package may have", path,
                         (unsigned long long)total, (unsigned long long)CLS_PACKAGE_MAX_BYTES);
  }
  memcpy(h, PKG_MAGIC, PKG_MAGIC_BYTES);
  cls_put_le(h + PKG_H_VERSION, CLS_PACKAGE_VERSION, 4);
  cls_put_le(h + PKG_H_HEADER_BYTES, PKG_HEADER_BYTES, 4);
  cls_put_le(h + PKG_H_N_SECTIONS, (uint64_t)n, 4);
  cls_put_le(h + PKG_H_ENTRY_BYTES, PKG_ENTRY_BYTES, 4);
  cls_put_le(h + PKG_H_FILE_SIZE, total, 8);
  for (int i = 0; i < n; i++) {
    unsigned char *e = h + PKG_HEADER_BYTES + (size_t)i * PKG_ENTRY_BYTES;
    snprintf((char *)e, PKG_NAME_BYTES, "%s", sec[i].name);
    cls_put_le(e + PKG_E_DTYPE, (uint64_t)sec[i].dtype, 4);
    cls_put_le(e + PKG_E_NDIM, (uint64_t)sec[i].ndim, 4);
    for (int d = 0; d < 2; d++) cls_put_le(e + PKG_E_SHAPE + 8 * d, (uint64_t)sec[i].shape[d], 8);
    cls_put_le(e + PKG_E_OFFSET, sec[i].offset, 8);
    cls_put_le(e + PKG_E_SIZE, sec[i].size, 8);
  }
  const void *chunks[2 + 2 * MAX_SECTIONS];
  size_t sizes[2 + 2 * MAX_SECTIONS];
  int k = 0;
  uint64_t at = 0;
  chunks[k] = h, sizes[k++] = head, at = head;
  for (int i = 0; i < n; i++) {
    if (sec[i].offset > at) chunks[k] = zeros, sizes[k++] = (size_t)(sec[i].offset - at);
    chunks[k] = sec[i].data, sizes[k++] = (size_t)sec[i].size;
    at = sec[i].offset + sec[i].size;
  }
  /* the checksum over the chunks, its own field still zero */
  cls_sha256 sha;
  cls_sha256_init(&sha);
  for (int i = 0; i < k; i++) cls_sha256_update(&sha, chunks[i], sizes[i]);
  uint8_t digest[32];
  cls_sha256_final(&sha, digest);
  memcpy(h + PKG_H_CHECKSUM, digest, sizeof digest);
  cls_status rc = cls_write_atomic(path, chunks, sizes, k, err);
  free(h);
  *file_bytes = total;
  return rc;
}

cls_status cls_package_write(const char *path, const cls_package_source *s, cls_package_summary *summary,
                             cls_error *err) {
  if (!path || !s || !s->checkpoint_path || !s->alphabet_path)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "model package: no output, checkpoint or alphabet path");
  cls_model_config cfg;
  cls_status rc = cls_checkpoint_peek_model(s->checkpoint_path, &cfg, err);
  if (rc != CLS_OK) return rc;
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  size_t n_params = 0;
  const int n_views = cls_model_layout_all(&cfg, views, &n_params);
  float *params = malloc(n_params * sizeof(float));
  char *alphabet = NULL, *scorer = NULL;
  size_t alphabet_len = 0, scorer_len = 0;
  cls_checkpoint_vars vars;
  if (!params) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu parameters", path, n_params);
  rc = cls_checkpoint_load(s->checkpoint_path, &cfg, params, NULL, NULL, &vars, NULL, 0, err);
  if (rc == CLS_OK) rc = cls_read_file_max(s->alphabet_path, CLS_ALPHABET_MAX_BYTES, false, &alphabet, &alphabet_len, err);
  const int with_scorer = s->scorer_path && *s->scorer_path;
  /* (a scorer larger than a package may be cannot be packaged: the package's cap bounds the read) */
  if (rc == CLS_OK && with_scorer)
    rc = cls_read_file_magic(s->scorer_path, PKG_LM_MAGIC, PKG_LM_MAGIC_BYTES, CLS_PACKAGE_MAX_BYTES, &scorer,
                             &scorer_len, err);
  if (rc == CLS_OK) rc = check_source(s, &cfg, alphabet, alphabet_len, scorer, scorer_len, err);
  if (rc == CLS_OK && !cls_package_host_le()) { /* the format is little-endian */
    for (size_t i = 0; i < n_params; i++) {
      unsigned char b[4];
      memcpy(b, &params[i], 4);
      const unsigned char r[4] = {b[3], b[2], b[1], b[0]};
      memcpy(&params[i], r, 4);
    }
  }
  char meta[2048];
  section sec[MAX_SECTIONS];
  int n = 0;
  if (rc == CLS_OK) {
    const int len = meta_text(meta, sizeof meta, s, &cfg, vars.global_step, with_scorer);
    if (len < 0 || (size_t)len >= sizeof meta)
      rc = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: the checkpoint's name is too long", s->checkpoint_path);
    sec[n++] = (section){PKG_SECTION_META, PKG_DTYPE_BYTES, 0, {0, 0}, meta, (uint64_t)(len > 0 ? len : 0), 0};
    sec[n++] = (section){PKG_SECTION_ALPHABET, PKG_DTYPE_BYTES, 0, {0, 0}, alphabet, alphabet_len, 0};
    for (int i = 0; i < n_views; i++)
      sec[n++] = (section){views[i].name, PKG_DTYPE_F32, views[i].ndim, {views[i].shape[0], views[i].ndim > 1 ? views[i].shape[1] : 0},
                           params + views[i].offset, views[i].count * sizeof(float), 0};
    if (with_scorer) sec[n++] = (section){PKG_SECTION_SCORER, PKG_DTYPE_BYTES, 0, {0, 0}, scorer, scorer_len, 0};
  }
  uint64_t bytes = 0;
  if (rc == CLS_OK) rc = write_sections(path, sec, n, &bytes, err);
  if (rc == CLS_OK && summary) {
    summary->file_bytes = bytes;
    summary->n_tensors = n_views;
    summary->n_params = n_params;
    summary->global_step = vars.global_step;
    summary->scorer_bytes = with_scorer ? scorer_len : 0;
  }
  free(params);
  free(alphabet);
  free(scorer);
  return rc;
}

cls_status cls_package_write_from_dir(const char *path, const char *dir, cls_load_mode mode, const char *scorer_path,
                                      double lm_alpha, double lm_beta, cls_package_summary *summary, cls_error *err) {
  char checkpoint[CLS_PATH_CAP], alphabet[CLS_PATH_CAP];
  cls_status rc = cls_checkpoint_choose(dir, mode, checkpoint, sizeof checkpoint, NULL, err);
  if (rc != CLS_OK) return rc;
  int rate = 0, len = 0, step = 0, found = 0;
  rc = cls_checkpoint_read_features(dir, &rate, &len, &step, &found, err);
  if (rc != CLS_OK) return rc;
  if (!found) {
    return cls_error_set(err, CLS_ERR_IO, "%s/%s: no such file (a folder from before it: give the feature settings)",
                         dir, CLS_CHECKPOINT_FEATURES);
  }
  snprintf(alphabet, sizeof alphabet, "%s/%s", dir, CLS_CHECKPOINT_ALPHABET);
  const cls_package_source src = {checkpoint, alphabet, rate, len, step, scorer_path, lm_alpha, lm_beta};
  return cls_package_write(path, &src, summary, err);
}
