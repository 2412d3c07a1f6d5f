/* Checkpoint files and folders (see clspeech/model.h): the mapping of the flat parameters, the Adam
 * state and DeepSpeech's scalar variables onto named safetensors tensors, the model's geometry and
 * the caller's uninterpreted entries in the metadata (loaded whole, or without the layers a transfer
 * drops: DeepSpeech's --drop_source_layers), DeepSpeech's train/best_dev series (their indexes the
 * single truth: a file of a series its index does not list is an orphan, swept; each file's SHA-256
 * recorded in its index at the save and checked at every load), the one
 * choice of the checkpoint to load (a TensorFlow bundle, when a folder's index is TensorFlow's, read by
 * checkpoint_tf.c), and the folder's description for inference (alphabet,
 * features). */
#include "clspeech/model.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file_util.h"
#include "base/meta_number.h"
#include "base/safetensors.h"
#include "base/sha256.h"
#include "base/tf_bundle.h"
#include "clspeech/data.h"
#include "clspeech/features.h"

#define N_TENSORS (3 * CLS_MODEL_MAX_TENSORS + 4)

/* The checkpoint's own metadata keys, which a caller's entries may not reuse. */
static const char *const own_keys[] = {"format", "n_hidden", "n_classes", "n_input", "n_context", "relu_clip",
                                       "adam_step", "layer_norm"};

static cls_status check_caller_keys(const cls_checkpoint_meta *meta, int n_meta, cls_error *err) {
  if (n_meta < 0 || n_meta > CLS_CHECKPOINT_MAX_META || (n_meta > 0 && !meta)) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "checkpoint metadata: %d entries (at most %d)", n_meta,
                         CLS_CHECKPOINT_MAX_META);
  }
  for (int i = 0; i < n_meta; i++) {
    if (!meta[i].key || !meta[i].key[0])
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "checkpoint metadata entry %d has no key", i);
    for (size_t k = 0; k < sizeof own_keys / sizeof *own_keys; k++)
      if (!strcmp(meta[i].key, own_keys[k])) {
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "checkpoint metadata key \"%s\" is the checkpoint's own",
                             own_keys[k]);
      }
    for (int j = 0; j < i; j++)
      if (!strcmp(meta[i].key, meta[j].key)) {
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "checkpoint metadata key \"%s\" is given twice",
                             meta[i].key);
      }
  }
  return CLS_OK;
}

/* cls_checkpoint_save, with the file's SHA-256 in digest[32] (may be NULL). */
static cls_status save_hashed(const char *path, const cls_model_config *cfg, const float *params, const float *m,
                              const float *v, const cls_checkpoint_vars *s, const cls_checkpoint_meta *extra,
                              int n_extra, uint8_t *digest, cls_error *err);

cls_status cls_checkpoint_save(const char *path, const cls_model_config *cfg, const float *params, const float *m,
                               const float *v, const cls_checkpoint_vars *s, const cls_checkpoint_meta *extra,
                               int n_extra, cls_error *err) {
  return save_hashed(path, cfg, params, m, v, s, extra, n_extra, NULL, err);
}

static cls_status save_hashed(const char *path, const cls_model_config *cfg, const float *params, const float *m,
                              const float *v, const cls_checkpoint_vars *s, const cls_checkpoint_meta *extra,
                              int n_extra, uint8_t *digest, cls_error *err) {
  cls_status rc = check_caller_keys(extra, n_extra, err);
  if (rc != CLS_OK) return rc;
  for (int i = 0; i < n_extra; i++)
    if (!memchr(extra[i].value, '\0', sizeof extra[i].value)) {
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                           "checkpoint metadata %s: the value has no end within %d bytes", extra[i].key,
                           CLS_CHECKPOINT_META_VALUE);
    }
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  const int n_views = cls_model_layout_all(cfg, views, NULL);
  cls_tensor_desc t[N_TENSORS];
  char names[2 * CLS_MODEL_MAX_TENSORS][160];
  int n = 0;
  for (int i = 0; i < n_views; i++) {
    const cls_param_view *pv = &views[i];
    const float *sources[3] = {params, m, v};
    for (int k = 0; k < 3; k++) {
      const char *name = pv->name;
      if (k > 0) {
        snprintf(names[2 * i + k - 1], sizeof names[0], "%s/%s", pv->name, k == 1 ? "Adam" : "Adam_1");
        name = names[2 * i + k - 1];
      }
      cls_tensor_desc d = {name, CLS_F32, pv->ndim, {pv->shape[0], pv->shape[1]}, sources[k] + pv->offset};
      t[n++] = d;
    }
  }
  float b1p = s->adam.beta1_power, b2p = s->adam.beta2_power, lr = s->learning_rate;
  int64_t step = s->global_step;
  cls_tensor_desc scalars[4] = {{"beta1_power", CLS_F32, 0, {0}, &b1p},
                                {"beta2_power", CLS_F32, 0, {0}, &b2p},
                                {"global_step", CLS_I64, 0, {0}, &step},
                                {"learning_rate", CLS_F32, 0, {0}, &lr}};
  for (int i = 0; i < 4; i++) t[n++] = scalars[i];
  char hidden[32], classes[32], adam_step[32], in[32], ctx[32], clip[32];
  snprintf(hidden, sizeof hidden, "%d", cfg->n_hidden);
  snprintf(classes, sizeof classes, "%d", cfg->n_classes);
  snprintf(adam_step, sizeof adam_step, "%lld", (long long)s->adam.step);
  snprintf(in, sizeof in, "%d", cfg->n_input);
  snprintf(ctx, sizeof ctx, "%d", cfg->n_context);
  snprintf(clip, sizeof clip, "%.9g", (double)cfg->relu_clip);
  /* The format first, then the caller's entries, then the model's (the order files had before the
   * trainer's entries became the caller's). */
  const char *meta[2 * (8 + CLS_CHECKPOINT_MAX_META)];
  int k = 0;
  meta[k++] = "format";
  meta[k++] = "clspeech-checkpoint-1";
  for (int i = 0; i < n_extra; i++) {
    meta[k++] = extra[i].key;
    meta[k++] = extra[i].value;
  }
  const char *model_meta[] = {"n_hidden", hidden, "n_classes", classes, "adam_step", adam_step,
                              "n_input",  in,     "n_context", ctx,     "relu_clip", clip};
  for (size_t i = 0; i < sizeof model_meta / sizeof *model_meta; i++) meta[k++] = model_meta[i];
  if (cfg->layer_norm) { /* only then: a checkpoint without the norms reads as before */
    meta[k++] = "layer_norm";
    meta[k++] = "1";
  }
  return cls_safetensors_write_hashed(path, t, n, meta, k / 2, digest, err);
}

static const char *meta_or(const cls_safetensors *st, const char *key, const char *fallback) {
  const char *v = cls_safetensors_meta(st, key);
  return v ? v : fallback;
}

/* Metadata integer `key` (or `fallback` when absent): a whole decimal number in [lo, hi], else an
 * error naming the file and the key. */
static cls_status meta_int(const cls_safetensors *st, const char *path, const char *key, const char *fallback,
                           long long lo, long long hi, long long *out, cls_error *err) {
  return cls_meta_parse_int(path, key, meta_or(st, key, fallback), lo, hi, out, err);
}

/* Metadata number `key`: finite, in [lo, hi]. */
static cls_status meta_real(const cls_safetensors *st, const char *path, const char *key, const char *fallback,
                            double lo, double hi, double *out, cls_error *err) {
  return cls_meta_parse_real(path, key, meta_or(st, key, fallback), lo, hi, out, err);
}

/* Tensor `name`: present, of `dtype` and of exactly this shape (ndim 0: a scalar), copied to out. */
static cls_status load_tensor(const cls_safetensors *st, const char *path, const char *name, cls_dtype dtype, int ndim,
                              const int64_t *shape, void *out, cls_error *err) {
  const cls_tensor_info *t = cls_safetensors_find(st, name);
  if (!t) return cls_error_set(err, CLS_ERR_IO, "%s: checkpoint has no tensor \"%s\"", path, name);
  int same = t->ndim == ndim;
  for (int d = 0; same && d < ndim; d++) same = t->shape[d] == shape[d];
  if (t->dtype != dtype || !same) {
    char want[64] = "", have[160] = "";
    for (int d = 0; d < ndim; d++)
      snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? ", " : "", (long long)shape[d]);
    for (int d = 0; d < t->ndim; d++)
      snprintf(have + strlen(have), sizeof have - strlen(have), "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" is %s [%s]; this model's is %s [%s]", path, name,
                         cls_dtype_name(t->dtype), have, cls_dtype_name(dtype), want);
  }
  memcpy(out, cls_safetensors_tensor_data(st, t), t->nbytes);
  return CLS_OK;
}

/* Every value finite (a NaN or infinite weight or Adam moment would train on as NaN). */
static cls_status check_finite(const char *path, const char *name, const float *x, size_t n, cls_error *err) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) {
      return cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" holds %s at element %zu", path, name,
                           isnan(x[i]) ? "NaN" : "infinity", i);
    }
  return CLS_OK;
}

static bool index_entry_ok(const char *line);
static const char *index_name(const char *kind);

/* ---- the index's digests: after the names, a line "sha256 NAME HEX" for each file it lists ---- */

/* Whether `line` is a digest line; its name and lower-case hex into name[256] and hex[65]. */
static bool digest_line(const char *line, char *name, char *hex) {
  char n[256], h[80];
  if (strncmp(line, "sha256 ", 7) || sscanf(line + 7, "%255s %79s", n, h) != 2) return false;
  if (!index_entry_ok(n) || strlen(h) != 64 || strspn(h, "0123456789abcdef") != 64) return false;
  snprintf(name, 256, "%s", n);
  memcpy(hex, h, 65); /* 64 digits, checked above, and the NUL */
  return true;
}

/* The SHA-256 that the index of `kind` in `dir` records for `file`: 1 (hex[65] filled) or 0. */
static int index_digest(const char *dir, const char *kind, const char *file, char *hex) {
  char index[CLS_PATH_CAP], line[512], name[256], h[65];
  if (snprintf(index, sizeof index, "%s/%s", dir, index_name(kind)) >= (int)sizeof index) return 0;
  FILE *f = fopen(index, "r");
  if (!f) return 0;
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (digest_line(line, name, h) && !strcmp(name, file)) {
      memcpy(hex, h, 65);
      found = 1;
    }
  }
  fclose(f);
  return found;
}

/* The digest the folder's indexes record for the checkpoint `path` (DIR/NAME): 1 (hex filled), or 0
 * when neither lists one (a checkpoint saved before digests, or a file outside the series). */
static int recorded_digest(const char *path, char *hex, char *index_path, size_t cap) {
  char dir[CLS_PATH_CAP];
  const char *slash = strrchr(path, '/'), *file = slash ? slash + 1 : path;
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == path)
    snprintf(dir, sizeof dir, "/");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  static const char *const kinds[] = {"train", "best_dev"};
  for (int k = 0; k < 2; k++)
    if (index_digest(dir, kinds[k], file, hex))
      return snprintf(index_path, cap, "%s/%s", dir, index_name(kinds[k])) < (int)cap;
  return 0;
}

int cls_checkpoint_has_digest(const char *path) {
  char hex[65], index[CLS_PATH_CAP];
  return recorded_digest(path, hex, index, sizeof index);
}

/* The bytes read against the digest the index records: CLS_OK when they agree or none is recorded,
 * else CLS_ERR_IO naming the file, both digests and the index. */
static cls_status verify_digest(const char *path, const cls_safetensors *st, cls_error *err) {
  char want[65], index[CLS_PATH_CAP];
  if (!recorded_digest(path, want, index, sizeof index)) return CLS_OK;
  cls_sha256 h;
  uint8_t d[32];
  char have[65];
  cls_sha256_init(&h);
  cls_sha256_update(&h, st->file, st->file_size);
  cls_sha256_final(&h, d);
  cls_sha256_hex(d, have);
  if (!strcmp(have, want)) return CLS_OK;
  return cls_error_set(err, CLS_ERR_IO,
                       "%s: checksum mismatch: its SHA-256 is %s, but %s recorded %s when it was saved; the file "
                       "changed since (a disk or copy error, or an edit)",
                       path, have, index, want);
}

cls_status cls_checkpoint_load(const char *path, const cls_model_config *cfg, float *params, float *m, float *v,
                               cls_checkpoint_vars *s, cls_checkpoint_meta *extra, int n_extra, cls_error *err) {
  return cls_checkpoint_load_dropping(path, cfg, 0, params, m, v, s, extra, n_extra, err);
}

/* The parameter tensors before `first_dropped` are loaded, the rest left as the caller put them. */
cls_status cls_checkpoint_load_dropping(const char *path, const cls_model_config *cfg, int n_drop, float *params,
                                        float *m, float *v, cls_checkpoint_vars *s, cls_checkpoint_meta *extra,
                                        int n_extra, cls_error *err) {
  const int first_dropped = cls_model_first_dropped(n_drop);
  if (first_dropped < 0) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "drop_source_layers is %d; it must lie in 0 .. %d", n_drop,
                         CLS_MODEL_MAX_DROP);
  }
  cls_status rc = check_caller_keys(extra, n_extra, err);
  if (rc != CLS_OK) return rc;
  if (cls_checkpoint_is_tf(path)) { /* a TensorFlow bundle: no metadata */
    for (int i = 0; i < n_extra; i++) extra[i].found = 0, extra[i].value[0] = '\0';
    return cls_checkpoint_tf_load(path, cfg, n_drop, 0, params, m, v, s, NULL, err);
  }
  cls_safetensors *st = NULL;
  rc = cls_safetensors_read(path, &st, err);
  if (rc == CLS_OK) rc = verify_digest(path, st, err);
  if (rc != CLS_OK) {
    cls_safetensors_free(st);
    return rc;
  }
  long long layer_norm = 0;
  rc = meta_int(st, path, "layer_norm", "0", 0, 1, &layer_norm, err);
  if (rc == CLS_OK && layer_norm != (cfg->layer_norm != 0))
    rc = cls_error_set(err, CLS_ERR_IO, "%s: the checkpoint was trained %s --layer_norm; this model %s it",
                       path, layer_norm ? "with" : "without", cfg->layer_norm ? "has" : "lacks");
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  const int n_views = cls_model_layout_all(cfg, views, NULL);
  char name[200];
  for (int i = 0; rc == CLS_OK && i < n_views; i++) {
    const cls_param_view *pv = &views[i];
    if (cls_model_tensor_layer(i) >= first_dropped) continue; /* a layer's LayerNorm tensors go with it */
    rc = load_tensor(st, path, pv->name, CLS_F32, pv->ndim, pv->shape, params + pv->offset, err);
    if (rc == CLS_OK) rc = check_finite(path, pv->name, params + pv->offset, pv->count, err);
    if (rc == CLS_OK && m) {
      snprintf(name, sizeof name, "%s/Adam", pv->name);
      rc = load_tensor(st, path, name, CLS_F32, pv->ndim, pv->shape, m + pv->offset, err);
      if (rc == CLS_OK) rc = check_finite(path, name, m + pv->offset, pv->count, err);
    }
    if (rc == CLS_OK && v) {
      snprintf(name, sizeof name, "%s/Adam_1", pv->name);
      rc = load_tensor(st, path, name, CLS_F32, pv->ndim, pv->shape, v + pv->offset, err);
      if (rc == CLS_OK) rc = check_finite(path, name, v + pv->offset, pv->count, err);
      for (size_t k = 0; rc == CLS_OK && k < pv->count; k++)
        if (v[pv->offset + k] < 0) {
          rc = cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" holds a negative second moment at element %zu", path,
                             name, k);
        }
    }
  }
  memset(s, 0, sizeof *s);
  if (rc == CLS_OK) rc = load_tensor(st, path, "beta1_power", CLS_F32, 0, NULL, &s->adam.beta1_power, err);
  if (rc == CLS_OK) rc = load_tensor(st, path, "beta2_power", CLS_F32, 0, NULL, &s->adam.beta2_power, err);
  if (rc == CLS_OK) rc = load_tensor(st, path, "global_step", CLS_I64, 0, NULL, &s->global_step, err);
  if (rc == CLS_OK) rc = load_tensor(st, path, "learning_rate", CLS_F32, 0, NULL, &s->learning_rate, err);
  /* beta^t lies in [0, 1): 0 once it underflows after many steps, never 1 or more (the bias
   * correction divides by 1 - beta^t). */
  const struct { const char *name; float value; } powers[2] = {{"beta1_power", s->adam.beta1_power},
                                                               {"beta2_power", s->adam.beta2_power}};
  for (int i = 0; rc == CLS_OK && i < 2; i++)
    if (!(powers[i].value >= 0 && powers[i].value < 1)) {
      rc = cls_error_set(err, CLS_ERR_IO, "%s: tensor \"%s\" is %g; it must lie in [0, 1)", path, powers[i].name,
                         (double)powers[i].value);
    }
  if (rc == CLS_OK && !(isfinite(s->learning_rate) && s->learning_rate >= 0)) {
    rc = cls_error_set(err, CLS_ERR_IO, "%s: tensor \"learning_rate\" is %g; it must be finite and not negative", path,
                       (double)s->learning_rate);
  }
  if (rc == CLS_OK && s->global_step < 0) {
    rc = cls_error_set(err, CLS_ERR_IO, "%s: tensor \"global_step\" is %lld; it must not be negative", path,
                       (long long)s->global_step);
  }
  long long adam_step = 0;
  if (rc == CLS_OK) rc = meta_int(st, path, "adam_step", "0", 0, INT64_MAX, &adam_step, err);
  if (rc == CLS_OK) s->adam.step = adam_step;
  for (int i = 0; rc == CLS_OK && i < n_extra; i++) {
    const char *text = cls_safetensors_meta(st, extra[i].key);
    extra[i].found = text != NULL;
    if (text && strlen(text) >= sizeof extra[i].value) {
      rc = cls_error_set(err, CLS_ERR_IO, "%s: metadata %s is \"%.40s...\", longer than %d characters", path,
                         extra[i].key, text, (int)sizeof extra[i].value - 1);
    } else {
      snprintf(extra[i].value, sizeof extra[i].value, "%s", text ? text : "");
    }
  }
  cls_safetensors_free(st);
  return rc;
}

static const char *index_name(const char *kind) { return strcmp(kind, "best_dev") ? "checkpoint" : "best_dev_checkpoint"; }

/* An index line names a checkpoint file in the folder: letters, digits, '_', '-' and '.', not
 * starting with '.', ending in ".safetensors" (never "..", a path or a special name). */
static bool index_entry_ok(const char *line) {
  const size_t len = strlen(line), ext = strlen(".safetensors");
  if (len <= ext || len > 200 || line[0] == '.' || strcmp(line + len - ext, ".safetensors")) return false;
  for (const char *c = line; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
          *c == '-' || *c == '.'))
      return false;
  return true;
}

cls_status cls_checkpoint_find(const char *dir, const char *kind, char *path, size_t path_cap, cls_error *err) {
  char index[CLS_PATH_CAP];
  snprintf(index, sizeof index, "%s/%s", dir, index_name(kind));
  FILE *f = fopen(index, "r");
  if (!f) return cls_error_set(err, CLS_ERR_IO, "%s: no %s checkpoint (%s)", dir, kind, strerror(errno));
  char line[1024] = "", text[4096] = "", tf_name[256];
  const size_t got_text = fread(text, 1, sizeof text - 1, f);
  text[got_text] = '\0';
  fclose(f);
  if (cls_tf_checkpoint_index_parse(text, tf_name, sizeof tf_name)) { /* TensorFlow's index: a bundle */
    snprintf(path, path_cap, "%s/%s", dir, tf_name);
    if (cls_checkpoint_is_tf(path)) return CLS_OK;
    return cls_error_set(err, CLS_ERR_IO, "%s names the TensorFlow checkpoint %s, but %s.index is missing", index,
                         tf_name, path);
  }
  snprintf(line, sizeof line, "%.*s", (int)strcspn(text, "\n"), text);
  char *got = got_text ? line : NULL;
  line[strcspn(line, "\r\n")] = '\0';
  if (!got || !index_entry_ok(line)) {
    return cls_error_set(err, CLS_ERR_IO,
                         "%s: malformed index file (the first line must name a .safetensors file in the folder)",
                         index);
  }
  snprintf(path, path_cap, "%s/%s", dir, line);
  return CLS_OK;
}

cls_status cls_checkpoint_save_in(const char *dir, const char *kind, int max_to_keep, const cls_model_config *cfg,
                                  const float *params, const float *m, const float *v, const cls_checkpoint_vars *state,
                                  const cls_checkpoint_meta *meta, int n_meta, char *saved_path, size_t path_cap,
                                  cls_error *err) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    return cls_error_set(err, CLS_ERR_IO, "%s: cannot create the checkpoint folder: %s", dir, strerror(errno));
  }
  char file[256], path[CLS_PATH_CAP], index[CLS_PATH_CAP];
  snprintf(file, sizeof file, "%s-%lld.safetensors", kind, (long long)state->global_step);
  snprintf(path, sizeof path, "%s/%s", dir, file);
  uint8_t digest[32];
  cls_status rc = save_hashed(path, cfg, params, m, v, state, meta, n_meta, digest, err);
  if (rc != CLS_OK) return rc;
  if (saved_path) snprintf(saved_path, path_cap, "%s", path);
  /* The index lists the newest file first, then the older ones still kept; then each one's SHA-256
     (the older ones' carried over, where the old index had them). */
  snprintf(index, sizeof index, "%s/%s", dir, index_name(kind));
  typedef struct entry {
    char name[256], hex[65];
  } entry;
  entry *old = calloc(64, sizeof *old);
  if (!old) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", index);
  int n_old = 0;
  FILE *f = fopen(index, "r");
  if (f) {
    char line[512], name[256], hex[65];
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\r\n")] = '\0';
      if (n_old < 64 && index_entry_ok(line) && strcmp(line, file)) snprintf(old[n_old++].name, 256, "%.255s", line);
      if (digest_line(line, name, hex))
        for (int i = 0; i < n_old; i++)
          if (!strcmp(old[i].name, name)) memcpy(old[i].hex, hex, 65);
    }
    fclose(f);
  }
  int keep = !strcmp(kind, "best_dev") ? 1 : (max_to_keep > 0 ? max_to_keep : 1);
  if (keep > n_old + 1) keep = n_old + 1;
  char hex[65];
  cls_sha256_hex(digest, hex);
  char *text = malloc(64 * 600);
  if (!text) {
    free(old);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", index);
  }
  const size_t cap = 64 * 600;
  size_t used = (size_t)snprintf(text, cap, "%s\n", file);
  for (int i = 0; i + 1 < keep; i++) used += (size_t)snprintf(text + used, cap - used, "%s\n", old[i].name);
  used += (size_t)snprintf(text + used, cap - used, "sha256 %s %s\n", file, hex);
  for (int i = 0; i + 1 < keep; i++)
    if (old[i].hex[0]) used += (size_t)snprintf(text + used, cap - used, "sha256 %s %s\n", old[i].name, old[i].hex);
  const void *chunks[1] = {text};
  size_t sizes[1] = {used};
  rc = cls_write_atomic(index, chunks, sizes, 1, err);
  free(text);
  /* Only after the index no longer names them are the old files removed. */
  for (int i = keep - 1; rc == CLS_OK && i < n_old; i++) {
    char stale[CLS_PATH_CAP];
    snprintf(stale, sizeof stale, "%s/%s", dir, old[i].name);
    unlink(stale);
  }
  free(old);
  return rc;
}

/* The names the index of `kind` in `dir` lists, into names[n][256]. The count (0 for no index file),
 * or -1 when the index exists but cannot be read. */
static int index_entries(const char *dir, const char *kind, char (*names)[256], int cap) {
  char index[CLS_PATH_CAP], line[256];
  snprintf(index, sizeof index, "%s/%s", dir, index_name(kind));
  FILE *f = fopen(index, "r");
  if (!f) return errno == ENOENT ? 0 : -1;
  int n = 0;
  while (n < cap && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (index_entry_ok(line)) snprintf(names[n++], sizeof names[0], "%s", line);
  }
  const int bad = ferror(f);
  fclose(f);
  return bad ? -1 : n;
}

/* "train" or "best_dev" when `name` is <kind>-<digits>.safetensors, else NULL. */
static const char *series_of(const char *name) {
  static const char *const kinds[] = {"train", "best_dev"};
  for (int k = 0; k < 2; k++) {
    const size_t len = strlen(kinds[k]);
    if (strncmp(name, kinds[k], len) || name[len] != '-') continue;
    const char *p = name + len + 1, *digits = p;
    while (*p >= '0' && *p <= '9') p++;
    if (p > digits && !strcmp(p, ".safetensors")) return kinds[k];
  }
  return NULL;
}

int cls_checkpoint_remove_orphans(const char *dir, int lock, char *removed, size_t cap) {
  if (removed && cap) removed[0] = '\0';
  char(*listed)[64][256] = malloc(2 * sizeof *listed);
  if (!listed) return -1;
  const int n_train = index_entries(dir, "train", listed[0], 64), n_best = index_entries(dir, "best_dev", listed[1], 64);
  DIR *d = n_train < 0 || n_best < 0 ? NULL : opendir(dir);
  if (!d) {
    const int gone = errno == ENOENT;
    free(listed);
    return n_train < 0 || n_best < 0 || gone ? 0 : -1; /* an unreadable index: nothing is known to be an orphan */
  }
  const time_t now = time(NULL);
  size_t used = 0;
  int n = 0;
  for (struct dirent *ent; (ent = readdir(d));) {
    const char *kind = series_of(ent->d_name);
    if (!kind) continue;
    const int s = strcmp(kind, "train") ? 1 : 0, count = s ? n_best : n_train;
    int in_index = 0;
    for (int i = 0; i < count && !in_index; i++) in_index = !strcmp(listed[s][i], ent->d_name);
    if (in_index) continue;
    char path[CLS_PATH_CAP];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    if (lock < 0 && now - sb.st_mtime < CLS_LEFTOVER_AGE_S) continue;
    if (unlink(path) != 0) continue;
    n++;
    if (removed && used < cap)
      used += (size_t)snprintf(removed + used, cap - used, "%s%s", used ? " " : "", ent->d_name);
  }
  closedir(d);
  free(listed);
  return n;
}

/* ---- the checkpoint choice and the folder's description ---- */

static const char *const load_mode_names[] = {"auto", "best", "last", "init"};

cls_status cls_load_mode_parse(const char *name, cls_load_mode *out) {
  for (int i = 0; name && i < 4; i++)
    if (!strcmp(name, load_mode_names[i])) {
      *out = (cls_load_mode)i;
      return CLS_OK;
    }
  return CLS_ERR_INVALID_ARGUMENT;
}

const char *cls_load_mode_name(cls_load_mode m) { return (int)m >= 0 && (int)m < 4 ? load_mode_names[m] : "?"; }

cls_status cls_checkpoint_choose(const char *dir, cls_load_mode mode, char *path, size_t path_cap, int *is_best,
                                 cls_error *err) {
  if (mode != CLS_LOAD_AUTO && mode != CLS_LOAD_BEST && mode != CLS_LOAD_LAST) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "the checkpoint choice must be auto, best or last, not %s",
                         cls_load_mode_name(mode));
  }
  const int has_dir = dir && *dir, want_best = mode != CLS_LOAD_LAST, want_last = mode != CLS_LOAD_BEST;
  const char *where = has_dir ? dir : "(no --checkpoint_dir)";
  if (is_best) *is_best = 0;
  if (has_dir && want_best && cls_checkpoint_find(dir, "best_dev", path, path_cap, NULL) == CLS_OK) {
    if (is_best) *is_best = 1;
    return CLS_OK;
  }
  if (!want_last) return cls_error_set(err, CLS_ERR_IO, "no best validating checkpoint in %s", where);
  if (has_dir && cls_checkpoint_find(dir, "train", path, path_cap, NULL) == CLS_OK) return CLS_OK;
  return cls_error_set(err, CLS_ERR_IO, "no checkpoint to load in %s", where);
}

cls_status cls_checkpoint_peek_model(const char *path, cls_model_config *cfg, cls_error *err) {
  if (cls_checkpoint_is_tf(path)) return cls_checkpoint_tf_peek_model(path, cfg, err);
  cls_safetensors *st = NULL;
  cls_status s = cls_safetensors_read_header(path, &st, err);
  if (s != CLS_OK) return s;
  if (!cls_safetensors_meta(st, "n_hidden") || !cls_safetensors_meta(st, "n_classes")) {
    cls_error_set(err, CLS_ERR_IO, "%s: not a clspeech checkpoint (no n_hidden/n_classes metadata)", path);
    cls_safetensors_free(st);
    return CLS_ERR_IO;
  }
  long long hidden = 0, classes = 0, input = 0, context = 0;
  double clip = 0;
  s = meta_int(st, path, "n_hidden", "", 1, CLS_MODEL_MAX_WIDTH, &hidden, err);
  if (s == CLS_OK) s = meta_int(st, path, "n_classes", "", 2, CLS_MODEL_MAX_WIDTH, &classes, err);
  if (s == CLS_OK) s = meta_int(st, path, "n_input", "26", 1, CLS_MODEL_MAX_WIDTH, &input, err);
  if (s == CLS_OK) s = meta_int(st, path, "n_context", "9", 0, 1024, &context, err);
  if (s == CLS_OK) s = meta_real(st, path, "relu_clip", "20", FLT_MIN, FLT_MAX, &clip, err);
  long long layer_norm = 0;
  if (s == CLS_OK) s = meta_int(st, path, "layer_norm", "0", 0, 1, &layer_norm, err);
  if (s == CLS_OK) {
    cfg->layer_norm = (int)layer_norm;
    cfg->n_hidden = (int)hidden;
    cfg->n_classes = (int)classes;
    cfg->n_input = (int)input;
    cfg->n_context = (int)context;
    cfg->relu_clip = (float)clip;
  }
  cls_safetensors_free(st);
  return s;
}

cls_status cls_checkpoint_describe(const char *dir, const char *alphabet_path, int audio_sample_rate,
                                   int feature_win_len, int feature_win_step, cls_error *err) {
  char *alphabet = NULL, path[CLS_PATH_CAP];
  size_t len = 0;
  cls_status rc = cls_read_file_max(alphabet_path, CLS_ALPHABET_MAX_BYTES, false, &alphabet, &len, err);
  if (rc != CLS_OK) return rc;
  snprintf(path, sizeof path, "%s/%s", dir, CLS_CHECKPOINT_ALPHABET);
  const void *chunks[1] = {alphabet};
  size_t sizes[1] = {len};
  rc = cls_write_atomic(path, chunks, sizes, 1, err);
  free(alphabet);
  if (rc != CLS_OK) return rc;
  char text[256];
  int n = snprintf(text, sizeof text, "audio_sample_rate=%d\nfeature_win_len=%d\nfeature_win_step=%d\n",
                   audio_sample_rate, feature_win_len, feature_win_step);
  snprintf(path, sizeof path, "%s/%s", dir, CLS_CHECKPOINT_FEATURES);
  chunks[0] = text;
  sizes[0] = (size_t)n;
  return cls_write_atomic(path, chunks, sizes, 1, err);
}

cls_status cls_checkpoint_read_features(const char *dir, int *audio_sample_rate, int *feature_win_len,
                                        int *feature_win_step, int *found, cls_error *err) {
  char path[CLS_PATH_CAP];
  snprintf(path, sizeof path, "%s/%s", dir, CLS_CHECKPOINT_FEATURES);
  *found = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno == ENOENT) return CLS_OK;
    return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  }
  struct {
    const char *name;
    int *value;
    int seen;
    long lo, hi; /* the feature configuration's bounds (clspeech/features.h) */
  } keys[3] = {{"audio_sample_rate", audio_sample_rate, 0, CLS_MFCC_MIN_RATE, CLS_MFCC_MAX_RATE},
               {"feature_win_len", feature_win_len, 0, 1, CLS_MFCC_MAX_MS},
               {"feature_win_step", feature_win_step, 0, 1, CLS_MFCC_MAX_MS}};
  char line[256];
  cls_status rc = CLS_OK;
  for (int no = 1; rc == CLS_OK && fgets(line, sizeof line, f); no++) {
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0] || line[0] == '#') continue;
    char *eq = strchr(line, '='), *end = NULL;
    int k = -1;
    for (int i = 0; eq && i < 3; i++)
      if ((size_t)(eq - line) == strlen(keys[i].name) && !strncmp(line, keys[i].name, (size_t)(eq - line))) k = i;
    long v = eq ? strtol(eq + 1, &end, 10) : 0;
    if (k < 0 || end == eq + 1 || *end) {
      rc = cls_error_set(err, CLS_ERR_IO,
                         "%s:%d: expected audio_sample_rate, feature_win_len or feature_win_step = a positive integer",
                         path, no);
    } else if (v < keys[k].lo || v > keys[k].hi) {
      rc = cls_error_set(err, CLS_ERR_IO, "%s:%d: %s %ld is outside %ld..%ld", path, no, keys[k].name, v, keys[k].lo,
                         keys[k].hi);
    } else {
      *keys[k].value = (int)v;
      keys[k].seen = 1;
    }
  }
  fclose(f);
  for (int i = 0; rc == CLS_OK && i < 3; i++)
    if (!keys[i].seen) {
      rc = cls_error_set(err, CLS_ERR_IO, "%s: no %s", path, keys[i].name);
    }
  if (rc == CLS_OK) *found = 1;
  return rc;
}
