/* DeepSpeech's TensorFlow checkpoints (engine/model/checkpoint_tf.c, engine/base/tf_bundle.c) against
 * the bundles TF's tf.compat.v1.train.Saver wrote (tests/ref/make_tf_checkpoint_fixture.py,
 * tests/fixtures/tf_checkpoint/): the folder's index and the geometry, every value equal to the one
 * the script stored beside them, the CudnnLSTM namings (--load_cudnn: missing LSTM Adam slots, as in
 * DeepSpeech's --train_cudnn checkpoints, start at zero; the opaque kernel converted from cuDNN's
 * canonical layout: weights i, f, c, o for input then recurrence, each [H, in] row-major, then eight
 * biases, as TF's CudnnLSTMSaveable reads it), the logits of the loaded model against TF's (1e-5 of
 * their largest magnitude, as test_model), an export read back bit-exact, a bundle of several blocks
 * written and read, and damaged bundles refused with named errors. */
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "base/tf_bundle.h"
#include "base/tfrecord.h"
#include "check.h"
#include "clspeech/model.h"
#include "ops_test.h"

#define CANONICAL CLS_FIXTURE_DIR "/tf_checkpoint/canonical"
#define CUDNN CLS_FIXTURE_DIR "/tf_checkpoint/cudnn"

static double max_abs(const float *v, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(v[i]));
  return m;
}

/* The script's value of `name` ([count] floats), or NULL. */
static const float *value(const cls_safetensors *fx, const char *name, size_t count) {
  char key[300];
  snprintf(key, sizeof key, "value/%s", name);
  return tst_tensor(fx, key, CLS_F32, (int64_t)count);
}

/* zero_slots: the LSTM's Adam slots must be zero; opaque: its weights came from the opaque kernel. */
static void check_values(const cls_safetensors *fx, const cls_model_config *cfg, const float *p, const float *m,
                         const float *v, int zero_slots, int opaque) {
  cls_param_view views[CLS_MODEL_N_TENSORS];
  cls_model_layout(cfg, views);
  for (int i = 0; i < CLS_MODEL_N_TENSORS; i++) {
    const int lstm = i == 6 || i == 7;
    const char *suffix[3] = {"", "/Adam", "/Adam_1"};
    const float *have[3] = {p, m, v};
    for (int k = 0; k < 3; k++) {
      char name[256];
      snprintf(name, sizeof name, "%s%s", views[i].name, suffix[k]);
      const float *want = value(fx, name, views[i].count), *got = have[k] + views[i].offset;
      if (!want) continue;
      if (zero_slots && lstm && k > 0) {
        int zero = 1;
        for (size_t j = 0; j < views[i].count; j++) zero &= got[j] == 0;
        CHECK(zero, "%s: a CudnnLSTM checkpoint's missing slot starts at zero", name);
      } else if (opaque && lstm) { /* the bias is a sum of two in the opaque buffer: rounding */
        double worst = 0;
        for (size_t j = 0; j < views[i].count; j++) worst = fmax(worst, fabs((double)got[j] - want[j]));
        CHECK(worst <= 1e-7, "%s converted from the opaque kernel: off by %g", name, worst);
      } else {
        CHECK(!memcmp(got, want, views[i].count * sizeof(float)), "%s: the values TF saved", name);
      }
    }
  }
}

static void test_load(const cls_safetensors *fx, cls_model_config *cfg) {
  char path[CLS_PATH_CAP];
  cls_error err = {0};
  CHECK_INT(cls_checkpoint_choose(CANONICAL, CLS_LOAD_AUTO, path, sizeof path, NULL, &err), CLS_OK);
  CHECK(strstr(path, "/model.ckpt-5") != NULL, "the folder's TF index names %s", path);
  CHECK(cls_checkpoint_is_tf(path), "%s is a bundle", path);
  CHECK_INT(cls_checkpoint_peek_model(path, cfg, &err), CLS_OK);
  CHECK(cfg->n_hidden == 8 && cfg->n_classes == 29 && cfg->n_input == 26 && cfg->n_context == 9,
        "geometry from the shapes: n_hidden %d, n_classes %d", cfg->n_hidden, cfg->n_classes);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  const size_t n = cls_model_layout(cfg, views);
  float *p = calloc(3 * n, sizeof *p);
  cls_checkpoint_vars vars;
  CHECK_INT(cls_checkpoint_load(path, cfg, p, p + n, p + 2 * n, &vars, NULL, 0, &err), CLS_OK);
  check_values(fx, cfg, p, p + n, p + 2 * n, 0, 0);
  const float *lr = value(fx, "learning_rate", 1), *b1 = value(fx, "beta1_power", 1);
  CHECK(vars.global_step == 5 && vars.adam.step == 5, "global_step %lld", (long long)vars.global_step);
  CHECK(lr && b1 && vars.learning_rate == *lr && vars.adam.beta1_power == *b1, "the scalars TF saved");

  /* the CudnnLSTM folder: refused without --load_cudnn, converted with it */
  char cudnn[CLS_PATH_CAP];
  CHECK_INT(cls_checkpoint_choose(CUDNN, CLS_LOAD_LAST, cudnn, sizeof cudnn, NULL, &err), CLS_OK);
  float *q = calloc(3 * n, sizeof *q);
  CHECK_INT(cls_checkpoint_load(cudnn, cfg, q, q + n, q + 2 * n, &vars, NULL, 0, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "--load_cudnn");
  CHECK_CONTAINS(err.text, "cudnn_compatible_lstm_cell/kernel");
  int zeroed = 0;
  CHECK_INT(cls_checkpoint_tf_load(cudnn, cfg, 0, 1, q, q + n, q + 2 * n, &vars, &zeroed, &err), CLS_OK);
  CHECK_INT(zeroed, 4);
  check_values(fx, cfg, q, q + n, q + 2 * n, 1, 1);
  /* DeepSpeech's --train_cudnn checkpoints: the canonical LSTM without its Adam slots */
  {
    cls_tf_bundle *src = NULL;
    CHECK_INT(cls_tf_bundle_read(path, 1, &src, &err), CLS_OK);
    cls_tf_tensor kept[40];
    int n_kept = 0;
    for (int i = 0; src && i < src->n_entries; i++) {
      const cls_tf_entry *e = &src->entries[i];
      if (strstr(e->name, "cudnn_compatible_lstm_cell/") && strstr(e->name, "/Adam")) continue;
      cls_tf_tensor t = {e->name, e->dtype, e->ndim, {0}, e->data};
      memcpy(t.shape, e->shape, sizeof t.shape);
      if (n_kept < 40) kept[n_kept++] = t;
    }
    CHECK_INT(n_kept, 36);
    char tmp[] = "/tmp/clspeech-tfc-XXXXXX", prefix[64], rm[96];
    CHECK(mkdtemp(tmp) != NULL, "temporary folder");
    snprintf(prefix, sizeof prefix, "%s/model.ckpt-5", tmp);
    CHECK_INT(cls_tf_bundle_write(prefix, kept, n_kept, &err), CLS_OK);
    cls_tf_bundle_free(src);
    CHECK_INT(cls_checkpoint_load(prefix, cfg, q, q + n, q + 2 * n, &vars, NULL, 0, &err), CLS_ERR_IO);
    CHECK_CONTAINS(err.text, "cudnn_compatible_lstm_cell/kernel/Adam");
    CHECK_CONTAINS(err.text, "--load_cudnn");
    CHECK_INT(cls_checkpoint_tf_load(prefix, cfg, 0, 1, q, q + n, q + 2 * n, &vars, &zeroed, &err), CLS_OK);
    CHECK_INT(zeroed, 4);
    CHECK(!memcmp(q, p, n * sizeof *q), "the canonical weights loaded as saved");
    check_values(fx, cfg, q, q + n, q + 2 * n, 1, 0);
    snprintf(rm, sizeof rm, "rm -r '%s'", tmp);
    CHECK_INT(system(rm), 0);
  }
  /* a checkpoint from before DeepSpeech saved learning_rate: loaded, the rate left to the trainer */
  {
    cls_tf_bundle *src = NULL;
    CHECK_INT(cls_tf_bundle_read(path, 1, &src, &err), CLS_OK);
    cls_tf_tensor kept[48];
    int n_kept = 0;
    for (int i = 0; src && i < src->n_entries && n_kept < 48; i++) {
      const cls_tf_entry *e = &src->entries[i];
      if (strcmp(e->name, "learning_rate") == 0) continue;
      cls_tf_tensor t = {e->name, e->dtype, e->ndim, {0}, e->data};
      memcpy(t.shape, e->shape, sizeof t.shape);
      kept[n_kept++] = t;
    }
    CHECK_INT(n_kept, src ? src->n_entries - 1 : -1);
    char tmp[] = "/tmp/clspeech-tfl-XXXXXX", prefix[64], rm[96];
    CHECK(mkdtemp(tmp) != NULL, "temporary folder");
    snprintf(prefix, sizeof prefix, "%s/model.ckpt-5", tmp);
    CHECK_INT(cls_tf_bundle_write(prefix, kept, n_kept, &err), CLS_OK);
    cls_tf_bundle_free(src);
    CHECK_INT(vars.no_learning_rate, 0);
    CHECK_INT(cls_checkpoint_tf_load(prefix, cfg, 0, 0, q, q + n, q + 2 * n, &vars, NULL, &err), CLS_OK);
    CHECK(vars.no_learning_rate == 1 && vars.learning_rate == 0.0f, "no learning_rate: flagged, left 0");
    CHECK(!memcmp(q, p, n * sizeof *q), "the weights loaded as saved");
    snprintf(rm, sizeof rm, "rm -r '%s'", tmp);
    CHECK_INT(system(rm), 0);
  }
  /* transfer: the output layer dropped, the caller's values kept there */
  memset(q, 0x7f, 3 * n * sizeof *q);
  CHECK_INT(cls_checkpoint_load_dropping(path, cfg, 1, q, q + n, q + 2 * n, &vars, NULL, 0, &err), CLS_OK);
  CHECK(!memcmp(q, p, views[10].offset * sizeof *q), "the kept layers loaded");
  CHECK(((unsigned char *)(q + views[10].offset))[0] == 0x7f, "the dropped output layer untouched");

  /* export and read back, bit-exact */
  char dir[] = "/tmp/clspeech-tf-XXXXXX", back[CLS_PATH_CAP];
  CHECK(mkdtemp(dir) != NULL, "temporary folder");
  char out[CLS_PATH_CAP];
  snprintf(out, sizeof out, "%s/tf", dir);
  CHECK_INT(cls_checkpoint_load(path, cfg, p, p + n, p + 2 * n, &vars, NULL, 0, &err), CLS_OK);
  CHECK_INT(cls_checkpoint_tf_save(out, cfg, p, p + n, p + 2 * n, &vars, back, sizeof back, &err), CLS_OK);
  cls_checkpoint_vars again;
  memset(q, 0, 3 * n * sizeof *q);
  char found[CLS_PATH_CAP];
  CHECK_INT(cls_checkpoint_find(out, "train", found, sizeof found, &err), CLS_OK);
  CHECK(!strcmp(found, back), "the written index names %s (%s)", back, found);
  CHECK_INT(cls_checkpoint_load(found, cfg, q, q + n, q + 2 * n, &again, NULL, 0, &err), CLS_OK);
  CHECK(!memcmp(p, q, 3 * n * sizeof *p), "the export reads back bit-exact");
  CHECK(again.global_step == vars.global_step && again.learning_rate == vars.learning_rate &&
            again.adam.beta2_power == vars.adam.beta2_power,
        "the scalars read back");
  cls_tf_bundle *b = NULL;
  CHECK_INT(cls_tf_bundle_read(back, 1, &b, &err), CLS_OK);
  CHECK(b && b->n_entries == 40, "40 variables (%d)", b ? b->n_entries : -1);
  cls_tf_bundle_free(b);
  char rm[CLS_PATH_CAP + 16];
  snprintf(rm, sizeof rm, "rm -r '%s'", dir);
  CHECK_INT(system(rm), 0);
  free(p);
  free(q);
}

/* --layer_norm: the LayerNorm tensors and their slots written and read back bit-exact, peek finds the
 * switch, a model without the norms refuses the file, and dropping layer_2 leaves its norm untouched. */
static void test_layer_norm_round_trip(void) {
  cls_model_config cfg = cls_model_config_deepspeech(6, 5);
  cfg.layer_norm = 1;
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  size_t n = 0;
  CHECK_INT(cls_model_layout_all(&cfg, views, &n), CLS_MODEL_MAX_TENSORS);
  float *p = malloc(3 * n * sizeof *p), *q = malloc(3 * n * sizeof *q);
  if (!p || !q) {
    CHECK(0, "out of memory");
    free(p);
    free(q);
    return;
  }
  for (size_t i = 0; i < 3 * n; i++) p[i] = (float)((i * 2654435761u) % 1000) / 1000.0f + (i >= n ? 0.5f : -0.25f);
  const cls_checkpoint_vars vars = {7, 0.25f, {0.9f * 0.9f, 0.999f * 0.999f, 7}, 0};
  char dir[] = "/tmp/clspeech-tf-ln-XXXXXX", out[CLS_PATH_CAP], back[CLS_PATH_CAP];
  cls_error err;
  CHECK(mkdtemp(dir) != NULL, "temporary folder");
  snprintf(out, sizeof out, "%s/tf", dir);
  CHECK_INT(cls_checkpoint_tf_save(out, &cfg, p, p + n, p + 2 * n, &vars, back, sizeof back, &err), CLS_OK);
  cls_model_config peeked = {0};
  CHECK_INT(cls_checkpoint_peek_model(back, &peeked, &err), CLS_OK);
  CHECK(peeked.layer_norm == 1 && peeked.n_hidden == 6 && peeked.n_classes == 5, "peek: layer_norm %d, H %d, C %d",
        peeked.layer_norm, peeked.n_hidden, peeked.n_classes);
  cls_checkpoint_vars again;
  memset(q, 0, 3 * n * sizeof *q);
  CHECK_INT(cls_checkpoint_load(back, &cfg, q, q + n, q + 2 * n, &again, NULL, 0, &err), CLS_OK);
  CHECK(!memcmp(p, q, 3 * n * sizeof *p), "the norms and their slots read back bit-exact");
  cls_tf_bundle *b = NULL;
  CHECK_INT(cls_tf_bundle_read(back, 0, &b, &err), CLS_OK);
  CHECK(b && b->n_entries == 3 * CLS_MODEL_MAX_TENSORS + 4, "%d variables (%d)", 3 * CLS_MODEL_MAX_TENSORS + 4,
        b ? b->n_entries : -1);
  CHECK(b && cls_tf_bundle_find(b, "layer_5/LayerNorm/gamma/Adam_1"), "DeepSpeech's name of a norm's slot");
  cls_tf_bundle_free(b);
  cls_model_config plain = cfg;
  plain.layer_norm = 0;
  cls_error_clear(&err);
  CHECK_INT(cls_checkpoint_load(back, &plain, q, NULL, NULL, &again, NULL, 0, &err), CLS_ERR_IO);
  CHECK(strstr(err.text, "--layer_norm") != NULL, "the refusal names --layer_norm: %s", err.text);
  /* n_drop 4 drops layer_3 onwards: layer_3's norm (tensors 16, 17) keeps the caller's values */
  memset(q, 0x7f, 3 * n * sizeof *q);
  CHECK_INT(cls_checkpoint_load_dropping(back, &cfg, 4, q, q + n, q + 2 * n, &again, NULL, 0, &err), CLS_OK);
  CHECK(!memcmp(q + views[14].offset, p + views[14].offset, views[14].count * sizeof *q), "layer_2's norm loaded");
  CHECK(((unsigned char *)(q + views[16].offset))[0] == 0x7f, "layer_3's norm dropped with it");
  char rm[CLS_PATH_CAP + 16];
  snprintf(rm, sizeof rm, "rm -r '%s'", dir);
  CHECK_INT(system(rm), 0);
  free(p);
  free(q);
}

static size_t varint(const unsigned char *p, size_t *pos) {
  size_t v = 0;
  for (int s = 0;; s += 7) {
    const unsigned char c = p[(*pos)++];
    v |= (size_t)(c & 0x7f) << s;
    if (!(c & 0x80)) return v;
  }
}

static void expect_error(const unsigned char *index, size_t len, const unsigned char *data, size_t data_len,
                         const char *needle) {
  cls_tf_bundle *b = NULL;
  cls_error err = {0};
  CHECK_INT(cls_tf_bundle_parse(index, len, data, data_len, "damaged.index", &b, &err), CLS_ERR_IO);
  CHECK(b == NULL, "no bundle for a damaged one");
  CHECK_CONTAINS(err.text, "damaged.index");
  CHECK_CONTAINS(err.text, needle);
}

static void test_damaged(void) {
  char *index = NULL, *data = NULL;
  size_t len = 0, data_len = 0;
  cls_error err = {0};
  CHECK_INT(cls_read_file(CANONICAL "/model.ckpt-5.index", &index, &len, &err), CLS_OK);
  CHECK_INT(cls_read_file(CANONICAL "/model.ckpt-5.data-00000-of-00001", &data, &data_len, &err), CLS_OK);
  if (!index || !data) return;
  unsigned char *ix = (unsigned char *)index, *d = (unsigned char *)data, *copy = malloc(len);
  cls_tf_bundle *b = NULL;
  CHECK_INT(cls_tf_bundle_parse(ix, len, d, data_len, "good.index", &b, &err), CLS_OK);
  CHECK(b && b->n_entries == 40 && cls_tf_bundle_find(b, "global_step"), "TF's bundle parses: 40 entries");
  cls_tf_bundle_free(b);
  /* the metaindex block's handle, the first in the footer */
  size_t pos = len - 48, meta_off = varint(ix, &pos), meta_size = varint(ix, &pos);
  memcpy(copy, ix, len);
  copy[meta_off + meta_size + 2] ^= 0x01; /* a byte of its CRC */
  expect_error(copy, len, d, data_len, "CRC-32C");
  expect_error(ix, len - 7, d, data_len, "magic");                           /* truncated */
  expect_error(ix, 30, d, data_len, "footer");                               /* truncated into the footer */
  memcpy(copy, ix, len);
  memset(copy + len - 48, 0xff, 11); /* a varint longer than 10 bytes */
  expect_error(copy, len, d, data_len, "bad varint");
  memcpy(copy, ix, len);
  copy[meta_off + meta_size] = 1; /* snappy, with the CRC made to match */
  const uint32_t crc = cls_crc32c_mask(cls_crc32c(copy + meta_off, meta_size + 1));
  for (int i = 0; i < 4; i++) copy[meta_off + meta_size + 1 + (size_t)i] = (unsigned char)(crc >> (8 * i));
  expect_error(copy, len, d, data_len, "snappy");
  d[data_len / 2] ^= 0x10; /* a tensor's bytes: its entry's CRC-32C */
  expect_error(ix, len, d, data_len, "fails its CRC-32C");
  expect_error(ix, len, d, data_len / 2, "past the data file");
  free(copy);
  free(index);
  free(data);
}

/* A bundle of many small tensors, given out of order: several data blocks in the index, names sorted. */
static void test_many_blocks(void) {
  enum { N = 5000 };
  cls_tf_tensor *t = calloc(N, sizeof *t);
  char(*names)[32] = calloc(N, sizeof *names);
  float *values = calloc(N, sizeof *values);
  char dir[] = "/tmp/clspeech-tfb-XXXXXX", prefix[64];
  CHECK(mkdtemp(dir) != NULL, "temporary folder");
  snprintf(prefix, sizeof prefix, "%s/many", dir);
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "scope/tensor_%05d", (i * 7919) % N);
    values[i] = (float)i;
    t[i] = (cls_tf_tensor){names[i], CLS_TF_FLOAT, 1, {1}, &values[i]};
  }
  cls_error err = {0};
  CHECK_INT(cls_tf_bundle_write(prefix, t, N, &err), CLS_OK);
  cls_tf_bundle *b = NULL;
  CHECK_INT(cls_tf_bundle_read(prefix, 1, &b, &err), CLS_OK);
  char index[80];
  snprintf(index, sizeof index, "%s.index", prefix);
  struct stat sb;
  CHECK(stat(index, &sb) == 0 && sb.st_size > 65536, "an index of several 64 KiB blocks (%lld bytes)",
        (long long)sb.st_size);
  CHECK(b && b->n_entries == N, "%d entries read back", b ? b->n_entries : -1);
  int ok = b != NULL;
  for (int i = 0; ok && i < N; i++) {
    const cls_tf_entry *e = cls_tf_bundle_find(b, names[i]);
    ok = e && e->nbytes == 4 && !memcmp(e->data, &values[i], 4) && (i == 0 || strcmp(b->entries[i - 1].name, b->entries[i].name) < 0);
  }
  CHECK(ok, "every tensor found by name with its value, the entries sorted");
  cls_tf_bundle_free(b);
  t[1].name = t[0].name;
  CHECK_INT(cls_tf_bundle_write(prefix, t, N, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "given twice");
  char rm[96];
  snprintf(rm, sizeof rm, "rm -r '%s'", dir);
  CHECK_INT(system(rm), 0);
  free(t);
  free(names);
  free(values);
}

/* The model from the canonical TF checkpoint run forward on features [T, B, input width] (each utterance
 * one label, for the CTC the forward pass computes) against TF's logits `ref`, at the whole-model test's
 * tolerance (1e-5 of the largest). */
static void compare_forward(tst_env *env, int dev, const cls_model_config *cfg, const char *what, int T, int B,
                            const float *features, const int32_t *seq_len, const float *ref) {
  char path[CLS_PATH_CAP];
  cls_error err = {0};
  cls_param_view views[CLS_MODEL_N_TENSORS];
  const size_t n = cls_model_layout(cfg, views);
  float *params = calloc(n, sizeof *params);
  int32_t *labels = malloc((size_t)B * sizeof *labels), *label_len = malloc((size_t)B * sizeof *label_len);
  float *losses = malloc((size_t)B * sizeof *losses);
  cls_checkpoint_vars vars;
  cls_model *model = NULL;
  if (params && labels && label_len && losses && features && seq_len && ref &&
      cls_checkpoint_choose(CANONICAL, CLS_LOAD_AUTO, path, sizeof path, NULL, &err) == CLS_OK &&
      cls_checkpoint_load(path, cfg, params, NULL, NULL, &vars, NULL, 0, &err) == CLS_OK)
    CHECK_INT(cls_model_create(env->engine, dev, cfg, T, B, 1, &model), CLS_OK);
  else
    CHECK(0, "%s: the fixtures and the TF checkpoint load (%s)", what, err.text);
  if (model) {
    for (int b = 0; b < B; b++) labels[b] = b + 1, label_len[b] = 1;
    const int I = cls_model_input_width(cfg);
    cl_mem p = tst_buffer(env, dev, params, n * sizeof(float));
    cl_mem fb = tst_buffer(env, dev, features, (size_t)T * B * I * sizeof(float));
    cl_mem sb = tst_buffer(env, dev, seq_len, (size_t)B * sizeof(int32_t));
    cl_mem lb = tst_buffer(env, dev, labels, (size_t)B * sizeof *labels);
    cl_mem llb = tst_buffer(env, dev, label_len, (size_t)B * sizeof *label_len);
    cls_model_batch batch = {T, B, cls_buf_of(fb), cls_buf_of(sb), cls_buf_of(lb), cls_buf_of(llb)};
    CHECK_INT(cls_model_forward(model, tst_queue(env, dev), &batch, cls_buf_of(p), NULL, losses), CLS_OK);
    const size_t nl = (size_t)T * B * cfg->n_classes;
    float *logits = malloc(nl * sizeof *logits);
    tst_read(env, dev, cls_model_logits(model).mem, logits, nl * sizeof(float));
    tst_compare(what, logits, ref, nl, 0, 1e-5 * max_abs(ref, nl));
    free(logits);
    cl_mem mems[] = {p, fb, sb, lb, llb};
    for (size_t i = 0; i < sizeof mems / sizeof *mems; i++) clReleaseMemObject(mems[i]);
    cls_model_destroy(model);
  }
  free(params);
  free(labels);
  free(label_len);
  free(losses);
}

/* The fixture's random two-utterance batch (the second shorter). */
static void test_logits(tst_env *env, int dev, const cls_safetensors *fx, const cls_model_config *cfg) {
  const int T = tst_meta_int(fx, "T"), B = tst_meta_int(fx, "B"), I = cls_model_input_width(cfg);
  compare_forward(env, dev, cfg, "logits from the TF checkpoint", T, B,
                  tst_tensor(fx, "features", CLS_F32, (int64_t)T * B * I), tst_tensor(fx, "seq_len", CLS_I32, B),
                  tst_tensor(fx, "logits", CLS_F32, (int64_t)T * B * cfg->n_classes));
}

/* LDC93S1: TensorFlow's MFCCs of it (mfcc_ldc93s1.safetensors) in DeepSpeech's context windows (9 frames
 * each side, zeros past the ends, [19, 26] frame-major). */
static void test_ldc93s1_logits(tst_env *env, int dev, const cls_safetensors *fx, const cls_model_config *cfg) {
  cls_safetensors *mf = tst_fixture("mfcc_ldc93s1.safetensors");
  const int T = tst_meta_int(fx, "ldc93s1_frames"), I = cls_model_input_width(cfg);
  const float *mfcc = mf && T > 0 ? tst_tensor(mf, "features", CLS_F32, (int64_t)T * 26) : NULL;
  float *windows = mfcc ? calloc((size_t)T * I, sizeof *windows) : NULL;
  for (int t = 0; windows && t < T; t++)
    for (int w = 0; w < 19; w++) {
      const int frame = t + w - 9;
      if (frame >= 0 && frame < T) memcpy(windows + (size_t)t * I + (size_t)w * 26, mfcc + (size_t)frame * 26, 26 * sizeof(float));
    }
  const int32_t seq_len[1] = {T};
  compare_forward(env, dev, cfg, "LDC93S1 logits from the TF checkpoint", T, 1, windows, seq_len,
                  tst_tensor(fx, "ldc93s1_logits", CLS_F32, (int64_t)T * cfg->n_classes));
  free(windows);
  cls_safetensors_free(mf);
}

int main(void) {
  cls_safetensors *fx = tst_fixture("tf_checkpoint.safetensors");
  cls_model_config cfg = {0};
  if (fx) test_load(fx, &cfg);
  test_damaged();
  test_many_blocks();
  test_layer_norm_round_trip();
  { /* the writer refuses a negative dimension, a size past INT64_MAX and bytes without data, writing nothing */
    const float one = 1.0f;
    const cls_tf_tensor bad_shapes[3] = {{"neg", CLS_TF_FLOAT, 1, {-1}, &one},
                                         {"huge", CLS_TF_FLOAT, 2, {INT64_C(1) << 40, INT64_C(1) << 40}, &one},
                                         {"no_data", CLS_TF_FLOAT, 1, {4}, NULL}};
    for (int i = 0; i < 3; i++) {
      cls_error err;
      cls_error_clear(&err);
      CHECK_INT(cls_tf_bundle_write("/tmp/clspeech-tf-never", &bad_shapes[i], 1, &err), CLS_ERR_INVALID_ARGUMENT);
      CHECK(strstr(err.text, bad_shapes[i].name) != NULL, "the refusal names %s: %s", bad_shapes[i].name, err.text);
    }
    CHECK(access("/tmp/clspeech-tf-never.index", F_OK) != 0, "nothing written");
  }
  tst_env env;
  if (fx && cfg.n_hidden && tst_open(&env)) {
    for (int i = 0; i < env.n_devices; i++) {
      test_logits(&env, env.devices[i], fx, &cfg);
      test_ldc93s1_logits(&env, env.devices[i], fx, &cfg);
    }
    tst_close_env(&env);
  }
  cls_safetensors_free(fx);
  return check_finish("test_tf_checkpoint");
}
