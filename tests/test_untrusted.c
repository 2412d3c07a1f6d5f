/* Untrusted bytes refused with a message naming the file and what is wrong (issue 15): checkpoint
 * contents (dtype, exact shape, finite values, Adam powers, metadata as checked integers, the
 * trainer's loop counters), the checkpoint index naming "..", GEMM tuning values against CLBlast's
 * kernel constraints, kernel cache entries whose header lies. Every case here was accepted, crashed or misreported before. */
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "base/safetensors.h"
#include "base/sha256.h"
#include "device/gemm_tuning.h"
#include "device/kernel_cache.h"
#include "train/train_state.h"
#include "check.h"
#include "clspeech/features.h"
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
 * metadata `key` set to `value` (when key is given); ndim -2 stores the tensor as I32 instead. */
static void rewrite(const char *src, const char *dst, const char *name, int ndim, const int64_t *shape,
                    const char *key, const char *value) {
  cls_error err;
  cls_safetensors *st = NULL;
  if (cls_safetensors_read(src, &st, &err) != CLS_OK) {
    CHECK(0, "%s", err.text);
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
    if (ndim == -2 && !strcmp(ti->name, name)) t[i].dtype = CLS_I32; /* the same bytes as another dtype */
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
  CHECK_INT(cls_safetensors_write(dst, t, st->n_tensors, meta, n_meta, &err), CLS_OK);
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
  s.rules.best_dev_loss = INFINITY;
  char good[600], bad[600];
  cls_error err;
  snprintf(good, sizeof good, "%s/good.safetensors", dir);
  snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
  CHECK_INT(cls_train_checkpoint_save(good, &cfg, p, m, v, &s, &err), CLS_OK);
  cls_train_state got;
  CHECK_INT(cls_train_checkpoint_load(good, &cfg, p, m, v, &got, &err), CLS_OK);

  /* layer_1/weights transposed: the same element count, refused naming file and tensor. */
  const cls_param_view *w1 = &views[0];
  CHECK(!strcmp(w1->name, "layer_1/weights") && w1->shape[0] != w1->shape[1], "layer_1/weights is not square");
  const int64_t transposed[2] = {w1->shape[1], w1->shape[0]};
  rewrite(good, bad, "layer_1/weights", 2, transposed, NULL, NULL);
  CHECK_INT(cls_train_checkpoint_load(bad, &cfg, p, m, v, &got, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, bad);
  CHECK_CONTAINS(err.text, "tensor \"layer_1/weights\" is F32 [");
  CHECK_CONTAINS(err.text, "this model's is F32 [");
  /* the same bytes as another dtype: the message says which (it once read "has N elements of another
   * shape or type than this model's N") */
  rewrite(good, bad, "layer_2/bias", -2, NULL, NULL, NULL);
  CHECK_INT(cls_train_checkpoint_load(bad, &cfg, p, m, v, &got, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "tensor \"layer_2/bias\" is I32 [8]; this model's is F32 [8]");
  /* a scalar stored as a 1-element vector is another shape too */
  const int64_t one[1] = {1};
  rewrite(good, bad, "learning_rate", 1, one, NULL, NULL);
  CHECK_INT(cls_train_checkpoint_load(bad, &cfg, p, m, v, &got, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "tensor \"learning_rate\"");

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
    CHECK_INT(cls_train_checkpoint_save(bad, &cfg, p, m, v, &b, &err), CLS_OK);
    CHECK_INT(cls_train_checkpoint_load(bad, &cfg, p, m, v, &got, &err), CLS_ERR_IO);
    CHECK_CONTAINS(err.text, bad);
    CHECK_CONTAINS(err.text, scalars[i].needle);
  }
  p[views[4].offset + 3] = NAN;
  CHECK_INT(cls_train_checkpoint_save(bad, &cfg, p, m, v, &s, &err), CLS_OK);
  p[views[4].offset + 3] = 0;
  CHECK_INT(cls_train_checkpoint_load(bad, &cfg, p, m, v, &got, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "holds NaN at element 3");
  CHECK_CONTAINS(err.text, views[4].name);

  /* Metadata read as checked integers: n_hidden -1, 0, abc; epoch 1e3 or past INT_MAX. */
  const char *hidden[] = {"-1", "0", "abc", "", "12x", "99999999999999999999"};
  for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++) {
    rewrite(good, bad, "", -1, NULL, "n_hidden", hidden[i]);
    cls_model_config peeked;
    CHECK_INT(cls_checkpoint_peek_model(bad, &peeked, &err), CLS_ERR_IO);
    CHECK_CONTAINS(err.text, bad);
    CHECK_CONTAINS(err.text, "metadata n_hidden is \"");
  }
  rewrite(good, bad, "", -1, NULL, "relu_clip", "nan");
  cls_model_config peeked;
  CHECK_INT(cls_checkpoint_peek_model(bad, &peeked, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "metadata relu_clip is \"nan\"");
  CHECK_INT(cls_checkpoint_peek_model(good, &peeked, &err), CLS_OK);
  CHECK(peeked.n_hidden == 8 && peeked.n_classes == 5, "peeked %d %d", peeked.n_hidden, peeked.n_classes);
  /* The trainer's loop counters (train/train_state.c): whole numbers not below 0, a best dev loss
   * that is a number, a seed that fits 32 bits; each refusal names the file and the key. */
  struct {
    const char *key, *value, *needle;
  } counters[] = {{"epoch", "1e3", "metadata epoch is \"1e3\", not a whole number in 0..2147483647"},
                  {"epoch", "3000000000", "metadata epoch is \"3000000000\""},
                  {"epoch", "-2", "metadata epoch is \"-2\""},
                  {"epochs_without_improvement", "-1", "metadata epochs_without_improvement is \"-1\", not a whole"},
                  {"epochs_without_improvement", "inf", "metadata epochs_without_improvement is \"inf\""},
                  {"best_dev_loss", "nan", "metadata best_dev_loss is \"nan\", not a number"},
                  {"best_dev_loss", "", "metadata best_dev_loss is \"\", not a number"},
                  {"best_dev_loss", "1.5x", "metadata best_dev_loss is \"1.5x\""},
                  {"random_seed", "4294967296", "metadata random_seed is \"4294967296\", not a whole number in "
                                                "0..4294967295"},
                  {"random_seed", "-1", "metadata random_seed is \"-1\""}};
  for (size_t i = 0; i < sizeof counters / sizeof *counters; i++) {
    rewrite(good, bad, "", -1, NULL, counters[i].key, counters[i].value);
    CHECK_INT(cls_train_checkpoint_load(bad, &cfg, p, m, v, &got, &err), CLS_ERR_IO);
    CHECK_CONTAINS(err.text, bad);
    CHECK_CONTAINS(err.text, counters[i].needle);
    /* the model layer stores the entry without reading it: the same file loads there */
    cls_checkpoint_vars vars;
    CHECK_INT(cls_checkpoint_load(bad, &cfg, p, m, v, &vars, NULL, 0, &err), CLS_OK);
  }
  /* A value longer than an entry holds is refused, not cut to a number it never was. */
  char long_value[200];
  memset(long_value, '1', sizeof long_value - 1);
  long_value[sizeof long_value - 1] = '\0';
  rewrite(good, bad, "", -1, NULL, "best_dev_loss", long_value);
  CHECK_INT(cls_train_checkpoint_load(bad, &cfg, p, m, v, &got, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, bad);
  CHECK_CONTAINS(err.text, "metadata best_dev_loss is \"1111");
  CHECK_CONTAINS(err.text, "longer than 63 characters");
  /* A caller's entry may not take one of the checkpoint's own keys. */
  cls_checkpoint_vars vars = {0, 0.001f, cls_adam_state_init(0.9f, 0.999f), 0};
  cls_checkpoint_meta own = {"n_hidden", "9", 0};
  CHECK_INT(cls_checkpoint_save(bad, &cfg, p, m, v, &vars, &own, 1, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "checkpoint metadata key \"n_hidden\" is the checkpoint's own");
  CHECK_INT(cls_checkpoint_load(good, &cfg, p, m, v, &vars, &own, 1, &err), CLS_ERR_INVALID_ARGUMENT);
  cls_checkpoint_meta twice[2] = {{"mine", "1", 0}, {"mine", "2", 0}};
  CHECK_INT(cls_checkpoint_save(bad, &cfg, p, m, v, &vars, twice, 2, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "checkpoint metadata key \"mine\" is given twice");
  cls_checkpoint_meta unended = {"mine", "", 0};
  memset(unended.value, 'x', sizeof unended.value);
  CHECK_INT(cls_checkpoint_save(bad, &cfg, p, m, v, &vars, &unended, 1, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "checkpoint metadata mine: the value has no end within 64 bytes");
  unlink(good);
  unlink(bad);
  free(p);
  free(m);
  free(v);
}

/* The checkpoint index names a file in the folder: "..", a path or a dot file is malformed (".."
 * once led to reading the parent folder as a file of 2^63 bytes). */
static void test_checkpoint_index(void) {
  char index[600], path[600];
  cls_error err;
  snprintf(index, sizeof index, "%s/checkpoint", dir);
  const char *lines[] = {"..\n",      ".\n",           "../x.safetensors\n", ".hidden.safetensors\n",
                         "train-1\n", "a b.safetensors\n"};
  for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
    write_text(index, lines[i]);
    CHECK_INT(cls_checkpoint_find(dir, "train", path, sizeof path, &err), CLS_ERR_IO);
    CHECK_CONTAINS(err.text, "malformed index file");
    CHECK_CONTAINS(err.text, index);
  }
  write_text(index, "train-12.safetensors\n");
  CHECK_INT(cls_checkpoint_find(dir, "train", path, sizeof path, &err), CLS_OK);
  unlink(index);
  /* features.txt within the feature configuration's bounds (a window of 10^8 ms once hung transcribe) */
  char features[600];
  snprintf(features, sizeof features, "%s/%s", dir, CLS_CHECKPOINT_FEATURES);
  write_text(features, "audio_sample_rate=16000\nfeature_win_len=100000000\nfeature_win_step=20\n");
  int rate = 0, len = 0, step = 0, found = 0;
  CHECK_INT(cls_checkpoint_read_features(dir, &rate, &len, &step, &found, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, ":2: feature_win_len 100000000 is outside 1..1000");
  CHECK_CONTAINS(err.text, features);
  unlink(features);
}

/* Tuning values against CLBlast's kernel constraints: a valid set passes, each broken rule fails. */
static cls_gemm_params params(const char *kernel, const char *text) {
  cls_gemm_params p;
  memset(&p, 0, sizeof p);
  snprintf(p.kernel, sizeof p.kernel, "%s", kernel);
  char name[24];
  unsigned long long v;
  int used = 0;
  while (p.n < CLS_GEMM_MAX_PARAMS && sscanf(text, " %23[A-Z_]=%llu%n", name, &v, &used) == 2) {
    snprintf(p.names[p.n], sizeof p.names[0], "%s", name);
    p.values[p.n++] = (size_t)v;
    text += used;
  }
  return p;
}

static void test_tuning_values(void) {
  cls_device_info d;
  memset(&d, 0, sizeof d);
  d.max_work_group_size = 256;
  d.local_mem_bytes = 32768;
  const char *base = "GEMMK=0 KREG=1 KWG=32 KWI=2 MDIMA=8 MDIMC=8 MWG=64 NDIMB=8 NDIMC=8 NWG=64 SA=1 SB=1 "
                     "STRM=0 STRN=0 VWM=4 VWN=4";
  char text[400];
  cls_error why;
  cls_gemm_params p = params("Xgemm", base);
  CHECK(p.n == 16 && cls_gemm_params_check(&p, &d, &why), "valid Xgemm refused: %s", why.text);
  CHECK_INT(why.status, CLS_OK);
  struct {
    const char *from, *to, *needle;
  } broken[] = {{"MDIMC=8", "MDIMC=0", "MDIMC=0 must be 1..1024"},
                {"KWI=2", "KWI=3", "KWG=32 is not a multiple of KWI=3"},
                {"VWM=4", "VWM=3", "VWM=3 must be 1, 2, 4, 8 or 16"},
                {"MWG=64", "MWG=48", "MWG=48 is not a multiple of MDIMC*VWM=32"},
                {"SA=1", "SA=2", "SA=2 must be 0 or 1"},
                {"MDIMC=8 MWG=64 NDIMB=8 NDIMC=8 NWG=64", "MDIMC=32 MWG=128 NDIMB=8 NDIMC=32 NWG=128",
                 "exceeds the device's work-group"},
                {"KWG=32", "KWG=1024", "local memory"}};
  for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
    const char *at = strstr(base, broken[i].from);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - base), base, broken[i].to, at + strlen(broken[i].from));
    p = params("Xgemm", text);
    CHECK(!cls_gemm_params_check(&p, &d, &why), "accepted: %s", text);
    CHECK_CONTAINS(why.text, broken[i].needle);
    CHECK_INT(why.status, CLS_ERR_INVALID_ARGUMENT);
  }
  p = params("XgemmDirect", "KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=1 VWMD=4 VWND=4 WGD=32");
  CHECK(cls_gemm_params_check(&p, &d, &why), "valid XgemmDirect refused: %s", why.text);
  p = params("XgemmDirect", "KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=1 VWMD=4 VWND=4 WGD=0");
  CHECK(!cls_gemm_params_check(&p, &d, &why), "WGD=0 accepted");
  CHECK_CONTAINS(why.text, "WGD=0 must be 1..1024");
}

/* A kernel cache entry: well formed, or refused whatever its header claims. */
static void test_cache_entry(void) {
  unsigned char e[64 + 8];
  memset(e, 0, sizeof e);
  memcpy(e, "CLSPKBIN", 8);
  e[8] = 1;
  e[16] = 16; /* payload length */
  memset(e + 56, 7, 16);
  cls_sha256 h;
  cls_sha256_init(&h);
  cls_sha256_update(&h, e + 56, 16);
  cls_sha256_final(&h, e + 24);
  size_t n = 0;
  CHECK(cls_kernel_cache_entry_check(e, 72, &n) && n == 16, "a good entry: %zu", n);
  CHECK(!cls_kernel_cache_entry_check(e, 71, &n), "a truncated entry");
  e[16] = 0;
  e[20] = 0x80; /* 2^39 bytes claimed */
  CHECK(!cls_kernel_cache_entry_check(e, 72, &n), "a length past the file");
}

/* Feature configurations beyond the bounds are refused at once (the FFT length once doubled past
 * INT_MAX and looped forever). */
static void test_feature_bounds(void) {
  const int cases[][3] = {{16000, 100000000, 20}, {2000000000, 1000, 1000}, {16000, 32, 5000}, {999, 32, 20},
                          {16000, 0, 20}, {16000, 32, -1}};
  cls_error err;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cls_mfcc_config c = cls_mfcc_default(cases[i][0]);
    c.win_len_ms = cases[i][1];
    c.win_step_ms = cases[i][2];
    cls_mfcc_tables *t = NULL;
    CHECK_INT(cls_mfcc_tables_create(&c, &t, &err), CLS_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.text, "out of bounds");
    cls_mfcc_tables_destroy(t);
  }
  cls_mfcc_config c = cls_mfcc_default(CLS_MFCC_MAX_RATE);
  c.win_len_ms = CLS_MFCC_MAX_MS;
  cls_mfcc_tables *t = NULL;
  CHECK_INT(cls_mfcc_tables_create(&c, &t, &err), CLS_OK);
  CHECK(t && t->fft_len == 1 << 19, "the largest window's FFT: %d points", t ? t->fft_len : 0);
  cls_mfcc_tables_destroy(t);
}

/* A folder opened for writing: a dead process's old temporary file removed, a live one's (ours,
 * PID 1's) or a fresh one kept, other names untouched, no probe file left; a file is no folder. */
static void test_prepare_folder(void) {
  char sub[600], path[700];
  cls_error err;
  snprintf(sub, sizeof sub, "%s/ckpt", dir);
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, NULL, 0); /* its PID is now a dead process's */
  const char *names[5];
  char dead_old[64], dead_new[64], ours[64];
  snprintf(dead_old, sizeof dead_old, "train-3.safetensors.tmp.%ld.0", (long)child);
  snprintf(dead_new, sizeof dead_new, "train-4.safetensors.tmp.%ld.1", (long)child);
  snprintf(ours, sizeof ours, "checkpoint.tmp.%ld.2", (long)getpid());
  names[0] = dead_old;
  names[1] = dead_new;
  names[2] = ours;
  names[3] = "best_dev-1.safetensors.tmp.1.0";
  names[4] = "notes.tmp.x.0";
  CHECK_INT(cls_dir_prepare_for_writing(sub, NULL, &err), CLS_OK);
  for (int i = 0; i < 5; i++) {
    snprintf(path, sizeof path, "%s/%s", sub, names[i]);
    write_text(path, "partial");
    if (i != 1) {
      struct timespec old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
      utimensat(AT_FDCWD, path, old, 0);
    }
  }
  int removed = -1;
  CHECK_INT(cls_dir_prepare_for_writing(sub, &removed, &err), CLS_OK);
  CHECK_INT(removed, 1);
  for (int i = 0; i < 5; i++) {
    snprintf(path, sizeof path, "%s/%s", sub, names[i]);
    CHECK(access(path, F_OK) == (i == 0 ? -1 : 0), "%s %s", names[i], i == 0 ? "not removed" : "removed");
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/.clspeech-write-probe.%ld", sub, (long)getpid());
  CHECK(access(path, F_OK) != 0, "the probe file is left behind");
  CHECK_INT(rmdir(sub), 0);
  snprintf(path, sizeof path, "%s/a-file", dir);
  write_text(path, "x");
  CHECK_INT(cls_dir_prepare_for_writing(path, NULL, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, path);
  CHECK_CONTAINS(err.text, "Not a directory");
  unlink(path);
}

int main(void) {
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  test_checkpoint_contents();
  test_checkpoint_index();
  test_tuning_values();
  test_cache_entry();
  test_feature_bounds();
  test_prepare_folder();
  rmdir(dir);
  return check_finish("test_untrusted");
}
