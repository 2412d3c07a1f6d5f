/* The trainer's loop counters (epoch, best dev loss, epochs without improvement, random seed) in a
 * checkpoint, now the train layer's (train/train_state.c) and stored by the model layer as a caller's
 * uninterpreted metadata: a checkpoint written before the move (tests/fixtures/
 * checkpoint_before_33.safetensors, by the code of commit e85168d: n_input 2, n_context 1, n_hidden
 * 4, n_classes 3) loads with every value as written, and saving what it loaded gives the same bytes
 * (the same keys, in the same order, and the same tensor names); absent entries read as a fresh
 * start's; the model layer hands a caller's entries back as text. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/file_util.h"
#include "check.h"
#include "clspeech/model.h"
#include "train/train_state.h"

int main(void) {
  const char *fixture = CLS_FIXTURE_DIR "/checkpoint_before_33.safetensors";
  cls_error err;
  cls_model_config cfg;
  CHECK_INT(cls_checkpoint_peek_model(fixture, &cfg, &err), CLS_OK);
  CHECK(cfg.n_input == 2 && cfg.n_context == 1 && cfg.n_hidden == 4 && cfg.n_classes == 3 && cfg.relu_clip == 20.0f,
        "geometry %d %d %d %d %g", cfg.n_input, cfg.n_context, cfg.n_hidden, cfg.n_classes, (double)cfg.relu_clip);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  const size_t n = cls_model_layout(&cfg, views);
  CHECK_INT(n, 247);
  float *p = calloc(n, sizeof *p), *m = calloc(n, sizeof *m), *v = calloc(n, sizeof *v);
  if (!p || !m || !v) return 1;

  /* The old file through the trainer's load: every value exactly as the old code wrote it. */
  cls_train_state s;
  CHECK_INT(cls_train_checkpoint_load(fixture, &cfg, p, m, v, &s, &err), CLS_OK);
  CHECK_INT(s.global_step, 42);
  CHECK_INT(s.epoch, 3);
  CHECK(s.learning_rate == 0.0005f, "learning rate %.9g", (double)s.learning_rate);
  CHECK(s.rules.best_dev_loss == 12.5, "best dev loss %.17g", s.rules.best_dev_loss);
  CHECK_INT(s.rules.epochs_without_improvement, 2);
  CHECK_INT(s.random_seed, 777);
  CHECK(s.adam.beta1_power == 0.0125f && s.adam.beta2_power == 0.875f, "Adam powers %.9g %.9g",
        (double)s.adam.beta1_power, (double)s.adam.beta2_power);
  CHECK_INT(s.adam.step, 42);
  size_t wrong = 0;
  for (size_t i = 0; i < n; i++)
    wrong += p[i] != 0.25f * (float)(i % 13) - 1.5f || m[i] != 0.001f * (float)(i % 7) ||
             v[i] != 0.0001f * (float)(i % 5);
  CHECK(wrong == 0, "%zu of %zu parameters or Adam moments differ from what was written", wrong, n);

  /* Saved again by the new code: byte for byte the old file. */
  char dir[] = "/tmp/clspeech-train-state-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  char again[600], bare[600];
  snprintf(again, sizeof again, "%s/again.safetensors", dir);
  snprintf(bare, sizeof bare, "%s/bare.safetensors", dir);
  CHECK_INT(cls_train_checkpoint_save(again, &cfg, p, m, v, &s, &err), CLS_OK);
  size_t old_size = 0, new_size = 0;
  char *old_bytes = NULL, *new_bytes = NULL;
  CHECK_INT(cls_read_file(fixture, &old_bytes, &old_size, &err), CLS_OK);
  CHECK_INT(cls_read_file(again, &new_bytes, &new_size, &err), CLS_OK);
  CHECK(old_bytes && new_bytes && old_size == new_size && !memcmp(old_bytes, new_bytes, old_size),
        "the re-saved checkpoint (%zu bytes) differs from the one written before (%zu bytes)", new_size, old_size);
  free(old_bytes);
  free(new_bytes);

  /* The model layer: the loop's counters are a caller's entries, handed back as stored text. */
  cls_checkpoint_vars vars;
  cls_checkpoint_meta asked[3] = {{"epoch", "", 0}, {"best_dev_loss", "", 0}, {"no_such_key", "x", 1}};
  CHECK_INT(cls_checkpoint_load(fixture, &cfg, p, NULL, NULL, &vars, asked, 3, &err), CLS_OK);
  CHECK(asked[0].found && !strcmp(asked[0].value, "3"), "epoch: %d \"%s\"", asked[0].found, asked[0].value);
  CHECK(asked[1].found && !strcmp(asked[1].value, "12.5"), "best_dev_loss: \"%s\"", asked[1].value);
  CHECK(!asked[2].found && !strcmp(asked[2].value, ""), "absent key: %d \"%s\"", asked[2].found, asked[2].value);
  CHECK(vars.global_step == 42 && vars.learning_rate == 0.0005f && vars.adam.step == 42, "vars %lld %.9g %lld",
        (long long)vars.global_step, (double)vars.learning_rate, (long long)vars.adam.step);

  /* A checkpoint without the trainer's entries (the model layer's alone): a fresh start's counters. */
  CHECK_INT(cls_checkpoint_save(bare, &cfg, p, m, v, &vars, NULL, 0, &err), CLS_OK);
  cls_train_state fresh;
  CHECK_INT(cls_train_checkpoint_load(bare, &cfg, p, m, v, &fresh, &err), CLS_OK);
  CHECK(fresh.epoch == 0 && isinf(fresh.rules.best_dev_loss) && fresh.rules.best_dev_loss > 0 &&
            fresh.rules.epochs_without_improvement == 0 && fresh.random_seed == 4568 && fresh.global_step == 42,
        "absent counters: epoch %d, best %g, streak %d, seed %u", fresh.epoch, fresh.rules.best_dev_loss,
        fresh.rules.epochs_without_improvement, (unsigned)fresh.random_seed);

  /* Round trip of a fresh start's record (+inf best) and the largest seed. */
  s.rules.best_dev_loss = INFINITY;
  s.random_seed = 4294967295u;
  s.epoch = 2147483647;
  CHECK_INT(cls_train_checkpoint_save(again, &cfg, p, m, v, &s, &err), CLS_OK);
  cls_train_state back;
  CHECK_INT(cls_train_checkpoint_load(again, &cfg, p, m, v, &back, &err), CLS_OK);
  CHECK(isinf(back.rules.best_dev_loss) && back.random_seed == 4294967295u && back.epoch == 2147483647,
        "round trip: best %g, seed %u, epoch %d", back.rules.best_dev_loss, (unsigned)back.random_seed, back.epoch);
  s.rules.best_dev_loss = 0.1 + 0.2; /* 17 significant digits: the exact double back */
  CHECK_INT(cls_train_checkpoint_save(again, &cfg, p, m, v, &s, &err), CLS_OK);
  CHECK_INT(cls_train_checkpoint_load(again, &cfg, p, m, v, &back, &err), CLS_OK);
  CHECK(back.rules.best_dev_loss == 0.1 + 0.2, "best dev loss %.17g", back.rules.best_dev_loss);

  unlink(again);
  unlink(bare);
  rmdir(dir);
  free(p);
  free(m);
  free(v);
  return check_finish("test_train_state");
}
