/* libFuzzer target: a checkpoint file read as `transcribe` and training read one: the geometry from
 * its metadata (cls_checkpoint_peek_model), then, for a small geometry, the trainer's full load with
 * its checks (dtype, shapes, finite values, Adam powers, metadata; the loop's counters:
 * train/train_state.h); and the checkpoint index file (the
 * input's first line) resolved to a file name. Files live in the target's own temporary folder. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clspeech/model.h"
#include "fuzz_files.h"
#include "train/train_state.h"

static char dir[64];
static char path[64], index_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cleanup(void) {
  unlink(path);
  unlink(index_path);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_make_dir(dir, sizeof dir, "ckpt");
  atexit(cleanup);
  snprintf(path, sizeof path, "%s/train-1.safetensors", dir);
  snprintf(index_path, sizeof index_path, "%s/checkpoint", dir);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char found[256];
  cls_error err;
  if (!fuzz_write_file(path, data, size)) abort();
  cls_model_config cfg;
  if (cls_checkpoint_peek_model(path, &cfg, &err) == CLS_OK && cfg.n_hidden <= 64 &&
      cfg.n_classes <= 64 && cfg.n_input <= 64 && cfg.n_context <= 8) {
    cls_param_view views[CLS_MODEL_N_TENSORS];
    const size_t n = cls_model_layout(&cfg, views);
    float *p = malloc(n * sizeof *p), *m = malloc(n * sizeof *m), *v = malloc(n * sizeof *v);
    cls_train_state s;
    if (p && m && v && cls_train_checkpoint_load(path, &cfg, p, m, v, &s, &err) == CLS_OK) {
      if (!(s.adam.beta1_power >= 0 && s.adam.beta1_power < 1) || !(s.learning_rate >= 0)) abort();
      if (s.epoch < 0 || s.rules.epochs_without_improvement < 0 || s.rules.best_dev_loss != s.rules.best_dev_loss)
        abort(); /* the loop's counters: whole, not negative, no NaN */
      for (size_t i = 0; i < n; i++)
        if (p[i] != p[i] || v[i] < 0) abort(); /* loaded values are checked finite, moments non-negative */
    }
    free(p);
    free(m);
    free(v);
  }
  /* the same bytes as the index file naming the checkpoint to load */
  if (!fuzz_write_file(index_path, data, size < 300 ? size : 300)) abort();
  if (cls_checkpoint_find(dir, "train", found, sizeof found, &err) == CLS_OK) {
    const char *name = found + strlen(dir) + 1;
    if (strchr(name, '/') || name[0] == '.') abort(); /* only a file in the folder */
  }
  return 0;
}
