/* Untrusted bytes refused with a message naming the file and what is wrong (issue 15): checkpoint
 * contents (dtype, exact shape, finite values, Adam powers, metadata as checked integers), the
 * checkpoint index naming "..". Every case here was accepted, crashed or misreported before. */
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safetensors.h"
#include "check.h"
#include "clspeech/model.h"
#include "clspeech/ops.h"

static char dir[] = "/tmp/clspeech-untrusted-XXXXXX";

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* Rewrites checkpoint `src` as `dst`, with tensor `name` given `ndim`/`shape` (when ndim >= 0) and
 * metadata `key` set to `value` (when key is given). */
static void rewrite(const char *src, const char *dst, const char *name, int ndim, const int64_t *shape,
                    const char *key, const char *value) {
  char err[1024];
  cls_safetensors *st = NULL;
  if (cls_safetensors_read(src, &st, err, sizeof err) != CLS_OK) {
    CHECK(0, "%s", err);
    return;
  }
  cls_tensor_desc *t = calloc((size_t)st->n_tensors, sizeof *t);
  for (int i = 0; i < st->n_tensors; i++) {
    const cls_tensor_info *ti = &st->tensors[i];
    t[i].name = ti->name;
    t[i].dtype = ti->dtype;
    t[i].ndim = ti->ndim;
    memcpy(t[i].shape, ti->shape, sizeof t[i].shape);
    t[i].data = cls_safetensors_tensor_data(st, ti);
    if (ndim >= 0 && !strcmp(ti->name, name)) {
      t[i].ndim = ndim;
      for (int d = 0; d < ndim; d++) t[i].shape[d] = shape[d];
    }
  }
  const char **meta = calloc((size_t)(2 * st->n_meta + 2), sizeof *meta);
  int n_meta = 0, replaced = 0;
  for (int i = 0; i < st->n_meta; i++) {
    meta[2 * n_meta] = st->meta[2 * i];
    meta[2 * n_meta + 1] = key && !strcmp(key, st->meta[2 * i]) ? (replaced = 1, value) : st->meta[2 * i + 1];
    n_meta++;
  }
  if (key && !replaced) {
    meta[2 * n_meta] = key;
    meta[2 * n_meta + 1] = value;
    n_meta++;
  }
  CHECK_INT(cls_safetensors_write(dst, t, st->n_tensors, meta, n_meta, err, sizeof err), CLS_OK);
  free(meta);
  free(t);
  cls_safetensors_free(st);
}

static void test_checkpoint_contents(void) {
  const cls_model_config cfg = cls_model_config_deepspeech(8, 5);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  const size_t n = cls_model_layout(&cfg, views);
  float *p = calloc(n, sizeof *p), *m = calloc(n, sizeof *m), *v = calloc(n, sizeof *v);
  for (size_t i = 0; i < n; i++) p[i] = 0.01f * (float)(i % 17);
  cls_train_state s;
  memset(&s, 0, sizeof s);
  s.adam = cls_adam_state_init(0.9f, 0.999f);
  s.learning_rate = 0.001f;
  s.best_dev_loss = INFINITY;
  char good[600], bad[600], err[2048];
  snprintf(good, sizeof good, "%s/good.safetensors", dir);
  snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
  CHECK_INT(cls_checkpoint_save(good, &cfg, p, m, v, &s, err, sizeof err), CLS_OK);
  cls_train_state got;
  CHECK_INT(cls_checkpoint_load(good, &cfg, p, m, v, &got, err, sizeof err), CLS_OK);

  /* layer_1/weights transposed: the same element count, refused naming file and tensor. */
  const cls_param_view *w1 = &views[0];
  CHECK(!strcmp(w1->name, "layer_1/weights") && w1->shape[0] != w1->shape[1], "layer_1/weights is not square");
  const int64_t transposed[2] = {w1->shape[1], w1->shape[0]};
  rewrite(good, bad, "layer_1/weights", 2, transposed, NULL, NULL);
  CHECK_INT(cls_checkpoint_load(bad, &cfg, p, m, v, &got, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, bad);
  CHECK_CONTAINS(err, "tensor \"layer_1/weights\" is F32 [");
  CHECK_CONTAINS(err, "this model's is F32 [");
  /* a scalar stored as a 1-element vector is another shape too */
  const int64_t one[1] = {1};
  rewrite(good, bad, "learning_rate", 1, one, NULL, NULL);
  CHECK_INT(cls_checkpoint_load(bad, &cfg, p, m, v, &got, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, "tensor \"learning_rate\"");

  /* Non-finite or out-of-range scalars, and a NaN weight. */
  struct {
    float lr, b1p, b2p;
    const char *needle;
  } scalars[] = {{NAN, 0.9f, 0.999f, "tensor \"learning_rate\" is nan"},
                 {INFINITY, 0.9f, 0.999f, "tensor \"learning_rate\" is inf"},
                 {-0.5f, 0.9f, 0.999f, "tensor \"learning_rate\" is -0.5"},
                 {0.001f, 1.0f, 0.999f, "tensor \"beta1_power\" is 1; it must lie in [0, 1)"},
                 {0.001f, 0.9f, NAN, "tensor \"beta2_power\" is nan"},
                 {0.001f, -0.1f, 0.999f, "tensor \"beta1_power\" is -0.1"}};
  for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++) {
    cls_train_state b = s;
    b.learning_rate = scalars[i].lr;
    b.adam.beta1_power = scalars[i].b1p;
    b.adam.beta2_power = scalars[i].b2p;
    CHECK_INT(cls_checkpoint_save(bad, &cfg, p, m, v, &b, err, sizeof err), CLS_OK);
    CHECK_INT(cls_checkpoint_load(bad, &cfg, p, m, v, &got, err, sizeof err), CLS_ERR_IO);
    CHECK_CONTAINS(err, bad);
    CHECK_CONTAINS(err, scalars[i].needle);
  }
  p[views[4].offset + 3] = NAN;
  CHECK_INT(cls_checkpoint_save(bad, &cfg, p, m, v, &s, err, sizeof err), CLS_OK);
  p[views[4].offset + 3] = 0;
  CHECK_INT(cls_checkpoint_load(bad, &cfg, p, m, v, &got, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, "holds NaN at element 3");
  CHECK_CONTAINS(err, views[4].name);

  /* Metadata read as checked integers: n_hidden -1, 0, abc; epoch 1e3 or past INT_MAX. */
  const char *hidden[] = {"-1", "0", "abc", "", "12x", "99999999999999999999"};
  for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++) {
    rewrite(good, bad, "", -1, NULL, "n_hidden", hidden[i]);
    cls_model_config peeked;
    CHECK_INT(cls_checkpoint_peek_model(bad, &peeked, err, sizeof err), CLS_ERR_IO);
    CHECK_CONTAINS(err, bad);
    CHECK_CONTAINS(err, "metadata n_hidden is \"");
  }
  rewrite(good, bad, "", -1, NULL, "relu_clip", "nan");
  cls_model_config peeked;
  CHECK_INT(cls_checkpoint_peek_model(bad, &peeked, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, "metadata relu_clip is \"nan\"");
  CHECK_INT(cls_checkpoint_peek_model(good, &peeked, err, sizeof err), CLS_OK);
  CHECK(peeked.n_hidden == 8 && peeked.n_classes == 5, "peeked %d %d", peeked.n_hidden, peeked.n_classes);
  const char *epochs[] = {"1e3", "3000000000", "-2"};
  for (size_t i = 0; i < sizeof epochs / sizeof *epochs; i++) {
    rewrite(good, bad, "", -1, NULL, "epoch", epochs[i]);
    CHECK_INT(cls_checkpoint_load(bad, &cfg, p, m, v, &got, err, sizeof err), CLS_ERR_IO);
    CHECK_CONTAINS(err, "metadata epoch is \"");
  }
  unlink(good);
  unlink(bad);
  free(p);
  free(m);
  free(v);
}

/* The checkpoint index names a file in the folder: "..", a path or a dot file is malformed (".."
 * once led to reading the parent folder as a file of 2^63 bytes). */
static void test_checkpoint_index(void) {
  char index[600], path[600], err[1024];
  snprintf(index, sizeof index, "%s/checkpoint", dir);
  const char *lines[] = {"..\n", ".\n", "../x.safetensors\n", ".hidden.safetensors\n", "train-1\n", "a b.safetensors\n"};
  for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
    write_text(index, lines[i]);
    CHECK_INT(cls_checkpoint_find(dir, "train", path, sizeof path, err, sizeof err), CLS_ERR_IO);
    CHECK_CONTAINS(err, "malformed index file");
    CHECK_CONTAINS(err, index);
  }
  write_text(index, "train-12.safetensors\n");
  CHECK_INT(cls_checkpoint_find(dir, "train", path, sizeof path, err, sizeof err), CLS_OK);
  unlink(index);
}

int main(void) {
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  test_checkpoint_contents();
  test_checkpoint_index();
  rmdir(dir);
  return check_finish("test_untrusted");
}
