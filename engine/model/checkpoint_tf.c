/* DeepSpeech's TensorFlow checkpoints (see clspeech/model.h): the model's parameters, Adam slots and
 * scalar variables mapped onto a tensor bundle (base/tf_bundle.h) under DeepSpeech's variable names,
 * the geometry read from the shapes, loading with cls_checkpoint_load's checks (and its n_drop
 * transfer), the CudnnLSTM variants (--load_cudnn: the LSTM's missing Adam slots started at zero, the
 * opaque cuDNN kernel converted), and the export of a bundle with its `checkpoint` index. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/tf_bundle.h"
#include "clspeech/model.h"

#define OPAQUE "cudnn_lstm/opaque_kernel"
#define LSTM_KERNEL 6 /* cls_model_layout's index of the LSTM kernel; its bias follows */

int cls_checkpoint_is_tf(const char *path) {
  char index[4096];
  struct stat sb;
  return cls_tf_bundle_index_path(path, index, sizeof index) && stat(index, &sb) == 0 && S_ISREG(sb.st_mode);
}

static void shape_text(int ndim, const int64_t *shape, char *text, size_t cap) {
  text[0] = '\0';
  for (int d = 0; d < ndim; d++)
    snprintf(text + strlen(text), cap - strlen(text), "%s%lld", d ? ", " : "", (long long)shape[d]);
}

/* Variable `name` of `dtype` and exactly this shape, else an error naming the file and the variable. */
static cls_status expect(const cls_tf_entry *e, const char *path, const char *name, int dtype, int ndim,
                         const int64_t *shape, cls_error *err) {
  int same = e->ndim == ndim && e->dtype == dtype;
  for (int d = 0; same && d < ndim; d++) same = e->shape[d] == shape[d];
  if (same) return CLS_OK;
  char want[64], have[160];
  shape_text(ndim, shape, want, sizeof want);
  shape_text(e->ndim, e->shape, have, sizeof have);
  return cls_error_set(err, CLS_ERR_IO, "%s: variable \"%s\" is of dtype %d [%s]; this model's is of dtype %d [%s]",
                       path, name, e->dtype, have, dtype, want);
}

static cls_status floats(const cls_tf_entry *e, const char *path, const char *name, int ndim, const int64_t *shape,
                         float *out, int nonnegative, cls_error *err) {
  cls_status rc = expect(e, path, name, CLS_TF_FLOAT, ndim, shape, err);
  if (rc != CLS_OK) return rc;
  const size_t n = e->nbytes / sizeof(float);
  memcpy(out, e->data, e->nbytes);
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(out[i])) {
      return cls_error_set(err, CLS_ERR_IO, "%s: variable \"%s\" holds %s at element %zu", path, name,
                           isnan(out[i]) ? "NaN" : "infinity", i);
    }
    if (nonnegative && out[i] < 0)
      return cls_error_set(err, CLS_ERR_IO, "%s: variable \"%s\" holds a negative second moment at element %zu", path,
                           name, i);
  }
  return CLS_OK;
}

static cls_status missing(const char *path, const char *name, int lstm, cls_error *err) {
  return cls_error_set(err, CLS_ERR_IO, "%s: checkpoint has no variable \"%s\"%s", path, name,
                       lstm ? " (a CudnnLSTM checkpoint? then load it with --load_cudnn)" : "");
}

cls_status cls_checkpoint_tf_peek_model(const char *path, cls_model_config *cfg, cls_error *err) {
  cls_tf_bundle *b = NULL;
  cls_status rc = cls_tf_bundle_read(path, 0, &b, err);
  if (rc != CLS_OK) return rc;
  const cls_tf_entry *l1 = cls_tf_bundle_find(b, "layer_1/weights"), *l6 = cls_tf_bundle_find(b, "layer_6/weights");
  const cls_model_config ds = cls_model_config_deepspeech(1, 2);
  const int width = cls_model_input_width(&ds);
  if (!l1 || !l6) {
    rc = cls_error_set(err, CLS_ERR_IO, "%s: not a DeepSpeech checkpoint (no variable \"%s\")", path,
                       l1 ? "layer_6/weights" : "layer_1/weights");
  } else if (l1->ndim != 2 || l1->shape[0] != width || l1->shape[1] < 1 || l1->shape[1] > CLS_MODEL_MAX_WIDTH) {
    char have[160];
    shape_text(l1->ndim, l1->shape, have, sizeof have);
    rc = cls_error_set(err, CLS_ERR_IO, "%s: variable \"layer_1/weights\" is [%s]; DeepSpeech's is [%d, n_hidden]", path,
                       have, width);
  } else if (l6->ndim != 2 || l6->shape[0] != l1->shape[1] || l6->shape[1] < 2 || l6->shape[1] > CLS_MODEL_MAX_WIDTH) {
    char have[160];
    shape_text(l6->ndim, l6->shape, have, sizeof have);
    rc = cls_error_set(err, CLS_ERR_IO, "%s: variable \"layer_6/weights\" is [%s]; it must be [%lld, n_classes]", path,
                       have, (long long)l1->shape[1]);
  } else {
    *cfg = cls_model_config_deepspeech((int)l1->shape[1], (int)l6->shape[1]);
    cfg->layer_norm = cls_tf_bundle_find(b, "layer_1/LayerNorm/gamma") != NULL; /* DeepSpeech's --layer_norm */
  }
  cls_tf_bundle_free(b);
  return rc;
}

/* cuDNN's canonical parameters of a one-layer unidirectional LSTM with linear input (the layout of
 * CudnnLSTM's opaque buffer as TensorFlow's CudnnLSTMSaveable reads it, tensorflow/contrib/cudnn_rnn
 * cudnn_rnn_ops.py, _cudnn_to_tf_weights and _cudnn_to_tf_biases): eight weight matrices, gates i, f,
 * c, o for the input then for the recurrence, each [H, in] row-major (in: H for the recurrence), then
 * eight bias vectors [H] in the same order. TensorFlow's kernel [in + H, 4H] applies to [x, h] with
 * the gates in the order i, c (j), f, o, and its bias is the input bias plus the recurrent bias. */
static void opaque_to_canonical(const float *opaque, int in, int h, float *kernel, float *bias) {
  static const int tf_gate[4] = {0, 2, 1, 3}; /* cuDNN's i, f, c, o to TensorFlow's column block */
  const size_t hh = (size_t)h, w_in = (size_t)h * (size_t)in, w_rec = hh * hh;
  for (int g = 0; g < 4; g++) {
    const float *wx = opaque + (size_t)g * w_in, *wh = opaque + 4 * w_in + (size_t)g * w_rec;
    const float *bx = opaque + 4 * w_in + 4 * w_rec + (size_t)g * hh, *bh = bx + 4 * hh;
    const size_t col0 = (size_t)tf_gate[g] * hh;
    for (size_t u = 0; u < hh; u++) {
      for (int k = 0; k < in; k++) kernel[(size_t)k * 4 * hh + col0 + u] = wx[u * (size_t)in + (size_t)k];
      for (size_t k = 0; k < hh; k++) kernel[((size_t)in + k) * 4 * hh + col0 + u] = wh[u * hh + k];
      bias[col0 + u] = bx[u] + bh[u];
    }
  }
}

/* The LSTM's kernel and bias from the opaque buffer: 1-D of 4H(in + H) + 8H floats. */
static cls_status load_opaque(const cls_tf_entry *e, const char *path, const cls_param_view *kv, float *params,
                              cls_error *err) {
  const int h = (int)(kv->shape[1] / 4), in = (int)kv->shape[0] - h;
  const int64_t want = 4 * (int64_t)h * (in + h) + 8 * (int64_t)h;
  cls_status rc = expect(e, path, OPAQUE, CLS_TF_FLOAT, 1, &want, err);
  if (rc != CLS_OK) return rc;
  float *opaque = malloc(e->nbytes ? e->nbytes : 1);
  if (!opaque) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  rc = floats(e, path, OPAQUE, 1, &want, opaque, 0, err);
  if (rc == CLS_OK) opaque_to_canonical(opaque, in, h, params + kv[0].offset, params + kv[1].offset);
  free(opaque);
  return rc;
}

static cls_status scalar(const cls_tf_bundle *b, const char *path, const char *name, int dtype, void *out,
                         cls_error *err) {
  const cls_tf_entry *e = cls_tf_bundle_find(b, name);
  if (!e) return missing(path, name, 0, err);
  cls_status rc = expect(e, path, name, dtype, 0, NULL, err);
  if (rc == CLS_OK) memcpy(out, e->data, e->nbytes);
  return rc;
}

cls_status cls_checkpoint_tf_load(const char *path, const cls_model_config *cfg, int n_drop, int load_cudnn,
                                  float *params, float *m, float *v, cls_checkpoint_vars *s, int *zeroed,
                                  cls_error *err) {
  const int first_dropped = cls_model_first_dropped(n_drop);
  if (zeroed) *zeroed = 0;
  if (first_dropped < 0) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "drop_source_layers is %d; it must lie in 0 .. %d", n_drop,
                         CLS_MODEL_MAX_DROP);
  }
  cls_tf_bundle *b = NULL;
  cls_status rc = cls_tf_bundle_read(path, 1, &b, err);
  if (rc != CLS_OK) return rc;
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  const int n_views = cls_model_layout_all(cfg, views, NULL);
  char name[200];
  int from_opaque = 0;
  if (!cfg->layer_norm && cls_tf_bundle_find(b, "layer_1/LayerNorm/gamma"))
    rc = cls_error_set(err, CLS_ERR_IO, "%s: the checkpoint was trained with --layer_norm; this model lacks it", path);
  for (int i = 0; rc == CLS_OK && i < n_views; i++) {
    if (cls_model_tensor_layer(i) >= first_dropped) continue; /* a layer's LayerNorm tensors go with it */
    const cls_param_view *pv = &views[i];
    const int lstm = i == LSTM_KERNEL || i == LSTM_KERNEL + 1;
    const cls_tf_entry *e = cls_tf_bundle_find(b, pv->name), *opaque = lstm ? cls_tf_bundle_find(b, OPAQUE) : NULL;
    if (e) {
      rc = floats(e, path, pv->name, pv->ndim, pv->shape, params + pv->offset, 0, err);
    } else if (!opaque || !load_cudnn) {
      rc = opaque ? cls_error_set(err, CLS_ERR_IO,
                                  "%s: checkpoint has no variable \"%s\" but holds CudnnLSTM's \"" OPAQUE
                                  "\"; load it with --load_cudnn",
                                  path, pv->name)
                  : missing(path, pv->name, 0, err);
    } else if (i == LSTM_KERNEL) {
      if (cls_tf_bundle_find(b, views[i + 1].name)) {
        rc = cls_error_set(err, CLS_ERR_IO, "%s: checkpoint holds \"%s\" but not \"%s\"", path, views[i + 1].name,
                           pv->name);
      } else {
        rc = load_opaque(opaque, path, &views[i], params, err);
        from_opaque = 1;
      }
    } else if (!from_opaque) {
      rc = missing(path, pv->name, 0, err);
    } /* else the bias came with the kernel from the opaque buffer */
    for (int k = 0; k < 2 && rc == CLS_OK; k++) {
      float *slot = k ? v : m;
      if (!slot) continue;
      snprintf(name, sizeof name, "%s/%s", pv->name, k ? "Adam_1" : "Adam");
      const cls_tf_entry *se = cls_tf_bundle_find(b, name);
      if (se) {
        rc = floats(se, path, name, pv->ndim, pv->shape, slot + pv->offset, k, err);
      } else if (lstm && load_cudnn) {
        /* DeepSpeech initialises the variables a CudnnLSTM checkpoint lacks: zero moments */
        memset(slot + pv->offset, 0, pv->count * sizeof(float));
        if (zeroed) (*zeroed)++;
      } else {
        rc = missing(path, name, lstm, err);
      }
    }
  }
  memset(s, 0, sizeof *s);
  if (rc == CLS_OK) rc = scalar(b, path, "beta1_power", CLS_TF_FLOAT, &s->adam.beta1_power, err);
  if (rc == CLS_OK) rc = scalar(b, path, "beta2_power", CLS_TF_FLOAT, &s->adam.beta2_power, err);
  if (rc == CLS_OK) rc = scalar(b, path, "global_step", CLS_TF_INT64, &s->global_step, err);
  if (rc == CLS_OK && !cls_tf_bundle_find(b, "learning_rate"))
    s->no_learning_rate = 1; /* DeepSpeech initialises it from --learning_rate: the caller's to do */
  else if (rc == CLS_OK)
    rc = scalar(b, path, "learning_rate", CLS_TF_FLOAT, &s->learning_rate, err);
  const struct { const char *name; float value; } powers[2] = {{"beta1_power", s->adam.beta1_power},
                                                               {"beta2_power", s->adam.beta2_power}};
  for (int i = 0; rc == CLS_OK && i < 2; i++)
    if (!(powers[i].value >= 0 && powers[i].value < 1)) {
      rc = cls_error_set(err, CLS_ERR_IO, "%s: variable \"%s\" is %g; it must lie in [0, 1)", path, powers[i].name,
                         (double)powers[i].value);
    }
  if (rc == CLS_OK && !(isfinite(s->learning_rate) && s->learning_rate >= 0)) {
    rc = cls_error_set(err, CLS_ERR_IO, "%s: variable \"learning_rate\" is %g; it must be finite and not negative",
                       path, (double)s->learning_rate);
  }
  if (rc == CLS_OK && s->global_step < 0) {
    rc = cls_error_set(err, CLS_ERR_IO, "%s: variable \"global_step\" is %lld; it must not be negative", path,
                       (long long)s->global_step);
  }
  s->adam.step = s->global_step; /* DeepSpeech's optimizer advances global_step with every update */
  cls_tf_bundle_free(b);
  return rc;
}

cls_status cls_checkpoint_tf_save(const char *dir, const cls_model_config *cfg, const float *params, const float *m,
                                  const float *v, const cls_checkpoint_vars *s, char *saved_path, size_t path_cap,
                                  cls_error *err) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return cls_error_set(err, CLS_ERR_IO, "%s: cannot create the folder: %s", dir, strerror(errno));
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  const int n_views = cls_model_layout_all(cfg, views, NULL);
  cls_tf_tensor t[3 * CLS_MODEL_MAX_TENSORS + 4];
  char names[2 * CLS_MODEL_MAX_TENSORS][200];
  int n = 0;
  for (int i = 0; i < n_views; i++) {
    const float *sources[3] = {params, m, v};
    for (int k = 0; k < 3; k++) {
      const char *name = views[i].name;
      if (k) {
        snprintf(names[2 * i + k - 1], sizeof names[0], "%s/%s", views[i].name, k == 1 ? "Adam" : "Adam_1");
        name = names[2 * i + k - 1];
      }
      cls_tf_tensor d = {name, CLS_TF_FLOAT, views[i].ndim, {views[i].shape[0], views[i].shape[1]},
                         sources[k] + views[i].offset};
      t[n++] = d;
    }
  }
  const float b1 = s->adam.beta1_power, b2 = s->adam.beta2_power, lr = s->learning_rate;
  const int64_t step = s->global_step;
  const cls_tf_tensor scalars[4] = {{"beta1_power", CLS_TF_FLOAT, 0, {0}, &b1},
                                    {"beta2_power", CLS_TF_FLOAT, 0, {0}, &b2},
                                    {"global_step", CLS_TF_INT64, 0, {0}, &step},
                                    {"learning_rate", CLS_TF_FLOAT, 0, {0}, &lr}};
  for (int i = 0; i < 4; i++) t[n++] = scalars[i];
  char file[64], prefix[4096];
  snprintf(file, sizeof file, "model.ckpt-%lld", (long long)step);
  if (snprintf(prefix, sizeof prefix, "%s/%s", dir, file) >= (int)sizeof prefix)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: the path is too long", dir);
  cls_status rc = cls_tf_bundle_write(prefix, t, n, err);
  if (rc == CLS_OK) rc = cls_tf_checkpoint_index_write(dir, file, err);
  if (rc == CLS_OK && saved_path) snprintf(saved_path, path_cap, "%s", prefix);
  return rc;
}
