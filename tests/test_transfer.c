/* Transfer learning (DeepSpeech's --drop_source_layers and separate load/save folders), on LDC93S1:
 * a source model trained one epoch into folder A (n_hidden 24, 29 classes); a trainer of another
 * alphabet size (31 classes) loading A with the output layer dropped holds, before any step, the
 * source's layers 1 .. 5 and their Adam slots bit for bit, and in layer_6 a fresh model's values for
 * the same seed (of the new shape) with zero Adam slots; the source's global step and learning rate,
 * a dev-loss record started anew; dropping N = 1 .. 5 layers of the same alphabet leaves the first
 * 12 - 2N tensors the source's and makes the rest afresh; it then trains into folder B, which gets a
 * 31-class checkpoint while A's files stay byte for byte. Refused: another alphabet without dropping
 * the output layer (naming both sizes), another n_hidden, drop_source_layers 6. Evaluation loads never
 * drop (and refuse another alphabet without the transfer's hint). */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "data_present.h"
#include "clspeech/data.h"
#include "clspeech/train.h"
#include "data_files.h"
#include "train/crew.h"
#include "train/trainer.h"

#define HIDDEN 24
#define SOURCE_CLASSES 29
#define OTHER_CLASSES 31

static cls_engine *e;
static int dev;
static const cls_dataset *ds;
static int max_frames, max_labels;

static cls_train_options options(int n_hidden, int n_classes, const char *load, const char *save, int drop) {
  cls_train_options o = cls_train_options_default(n_hidden, n_classes);
  o.epochs = 1;
  o.load_checkpoint_dir = load;
  o.save_checkpoint_dir = save;
  o.checkpoint_secs = 0;
  o.random_seed = 77;
  o.drop_source_layers = drop;
  return o;
}

/* A trainer of these options, loaded (mode, evaluation); NULL (and the status in *st) on failure. */
static cls_trainer *loaded(const cls_train_options *o, cls_load_mode mode, int evaluation, cls_status *st) {
  cls_trainer *t = NULL;
  *st = cls_trainer_create(e, &dev, 1, o, 1, max_frames, max_labels, &t);
  if (*st != CLS_OK) return NULL;
  *st = cls_trainer_load(t, mode, evaluation);
  if (*st != CLS_OK) {
    cls_trainer_destroy(t);
    return NULL;
  }
  return t;
}

/* The trainer's parameters and Adam slots, malloc'ed [n] each. */
static void read_state(cls_trainer *t, float **p, float **m, float **v) {
  size_t n = cls_trainer_param_count(t);
  *p = malloc(n * sizeof(float));
  *m = malloc(n * sizeof(float));
  *v = malloc(n * sizeof(float));
  CHECK_INT(cls_crew_read_state(cls_trainer_crew(t), *p, *m, *v), CLS_OK);
}

static int train_one_epoch(cls_trainer *t) {
  cls_utterance u[4];
  int n = cls_dataset_size(ds) < 4 ? cls_dataset_size(ds) : 4;
  for (int i = 0; i < n; i++) {
    const cls_sample *s = cls_dataset_sample(ds, i);
    u[i] = (cls_utterance){s->path, s->labels, s->n_labels};
  }
  cls_status st = cls_trainer_train(t, u, n, NULL, 0, NULL, NULL);
  CHECK(st == CLS_OK, "train: %s", cls_engine_error(e));
  return st == CLS_OK;
}

static int same_bits(const float *a, const float *b, size_t n) { return !memcmp(a, b, n * sizeof(float)); }

static int all_zero(const float *a, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != 0.0f) return 0;
  return 1;
}

static char *read_all(const char *path, size_t *len) {
  char *data = NULL;
  *len = 0;
  if (cls_read_file_max(path, 1 << 26, false, &data, len, NULL) != CLS_OK) return NULL;
  return data;
}

int main(void) {
  if (!data_present()) return check_finish("test_transfer");
  cls_alphabet *a = NULL;
  cls_dataset *data = shared_dataset(SMOKE "/ldc93s1.csv", &a);
  ds = data;
  CHECK_INT(cls_engine_create(NULL, &e), CLS_OK);
  int sel[8], n_sel = 0;
  CHECK_INT(cls_engine_select(e, "all", sel, 8, &n_sel), CLS_OK);
  CHECK_INT(cls_engine_prepare(e, sel, &n_sel), CLS_OK);
  if (!ds || n_sel == 0) return check_finish("test_transfer");
  dev = sel[0];
  cls_dataset_batch_max(ds, 0, cls_dataset_size(ds), &max_frames, &max_labels);
  CHECK_INT(cls_alphabet_size(a) + 1, SOURCE_CLASSES);

  char src_dir[] = "/tmp/clspeech-transfer-a-XXXXXX", dst_dir[] = "/tmp/clspeech-transfer-b-XXXXXX";
  CHECK(mkdtemp(src_dir) && mkdtemp(dst_dir), "mkdtemp");
  cls_status st;

  /* The source: one epoch from a fresh model of seed 4568 (not the transfer's 77) into A. */
  cls_train_options so = options(HIDDEN, SOURCE_CLASSES, src_dir, src_dir, 0);
  so.random_seed = 4568;
  cls_trainer *t = loaded(&so, CLS_LOAD_INIT, 0, &st);
  CHECK(t, "source trainer: %s", cls_engine_error(e));
  if (!t) return check_finish("test_transfer");
  train_one_epoch(t);
  const cls_train_counters src_counters = cls_trainer_counters(t);
  cls_trainer_destroy(t);
  char src_path[700];
  CHECK_INT(cls_checkpoint_find(src_dir, "train", src_path, sizeof src_path, NULL), CLS_OK);
  size_t src_len = 0;
  char *src_bytes = read_all(src_path, &src_len);
  CHECK(src_bytes && src_len > 0, "read %s", src_path);
  /* The source's tensors as its file holds them. */
  cls_model_config src_cfg = cls_model_config_deepspeech(HIDDEN, SOURCE_CLASSES);
  cls_param_view sv[CLS_MODEL_N_TENSORS];
  const size_t src_n = cls_model_layout(&src_cfg, sv);
  float *sp = malloc(src_n * sizeof(float)), *sm = malloc(src_n * sizeof(float)), *svv = malloc(src_n * sizeof(float));
  cls_checkpoint_vars vars;
  cls_error err;
  CHECK_INT(cls_checkpoint_load(src_path, &src_cfg, sp, sm, svv, &vars, NULL, 0, &err), CLS_OK);
  CHECK(!all_zero(sm, src_n) && !all_zero(svv, src_n), "the source's Adam slots hold its step");

  /* A fresh model of the new alphabet, seed 77: the values the dropped layer must get. */
  cls_train_options fo = options(HIDDEN, OTHER_CLASSES, dst_dir, dst_dir, 0);
  float *fp = NULL, *fm = NULL, *fv = NULL;
  t = loaded(&fo, CLS_LOAD_INIT, 0, &st);
  CHECK(t, "fresh trainer: %s", cls_engine_error(e));
  if (t) read_state(t, &fp, &fm, &fv);
  cls_trainer_destroy(t);

  /* The transfer: 31 classes, drop 1 (layer_6), loading A, saving to B. */
  cls_train_options to = options(HIDDEN, OTHER_CLASSES, src_dir, dst_dir, 1);
  cls_model_config dst_cfg = to.model;
  cls_param_view dv[CLS_MODEL_N_TENSORS];
  const size_t dst_n = cls_model_layout(&dst_cfg, dv);
  t = loaded(&to, CLS_LOAD_AUTO, 0, &st);
  CHECK(t, "transfer trainer: %s", cls_engine_error(e));
  if (t && fp) {
    CHECK_INT(cls_trainer_param_count(t), dst_n);
    float *p, *m, *v;
    read_state(t, &p, &m, &v);
    for (int i = 0; i < CLS_MODEL_N_TENSORS; i++) {
      if (i < CLS_MODEL_N_TENSORS - 2) {
        CHECK(sv[i].count == dv[i].count && sv[i].offset == dv[i].offset, "%s: same place", dv[i].name);
        CHECK(same_bits(p + dv[i].offset, sp + sv[i].offset, dv[i].count), "%s: the source's bits", dv[i].name);
        CHECK(same_bits(m + dv[i].offset, sm + sv[i].offset, dv[i].count) &&
                  same_bits(v + dv[i].offset, svv + sv[i].offset, dv[i].count),
              "%s: the source's Adam slots", dv[i].name);
      } else {
        CHECK(dv[i].shape[dv[i].ndim - 1] == OTHER_CLASSES, "%s: %d outputs", dv[i].name, OTHER_CLASSES);
        CHECK(same_bits(p + dv[i].offset, fp + dv[i].offset, dv[i].count), "%s: a fresh model's values (seed 77)",
              dv[i].name);
        CHECK(all_zero(m + dv[i].offset, dv[i].count) && all_zero(v + dv[i].offset, dv[i].count),
              "%s: zero Adam slots", dv[i].name);
      }
    }
    CHECK(!all_zero(p + dv[10].offset, dv[10].count), "layer_6/weights is not all zero");
    const cls_train_counters c = cls_trainer_counters(t);
    CHECK(c.global_step == src_counters.global_step && c.global_step > 0 && c.epoch == src_counters.epoch,
          "the source's step %lld and epoch %d carry over: %lld, %d", (long long)src_counters.global_step,
          src_counters.epoch, (long long)c.global_step, c.epoch);
    CHECK(c.learning_rate == src_counters.learning_rate, "learning rate %g", (double)c.learning_rate);
    CHECK(isinf(c.best_dev_loss) && c.best_dev_loss > 0 && c.epochs_without_improvement == 0,
          "the dev-loss record starts anew: %g, %d", c.best_dev_loss, c.epochs_without_improvement);
    printf("  drop 1, 29 -> 31 classes: layers 1..5 and their slots the source's, layer_6 fresh (seed 77)\n");
    free(p);
    free(m);
    free(v);
    /* Training saves into B, of the new shape; A is untouched. */
    if (train_one_epoch(t)) {
      char dst_path[700];
      cls_model_config got;
      CHECK_INT(cls_checkpoint_find(dst_dir, "train", dst_path, sizeof dst_path, NULL), CLS_OK);
      CHECK_INT(cls_checkpoint_peek_model(dst_path, &got, &err), CLS_OK);
      CHECK_INT(got.n_classes, OTHER_CLASSES);
      CHECK(strstr(dst_path, "train-2.safetensors") != NULL, "B's checkpoint continues the source's step: %s",
            dst_path);
      char again[700];
      CHECK_INT(cls_checkpoint_find(src_dir, "train", again, sizeof again, NULL), CLS_OK);
      CHECK(!strcmp(again, src_path), "A's index still names %s: %s", src_path, again);
      size_t len = 0;
      char *bytes = read_all(src_path, &len);
      CHECK(bytes && len == src_len && !memcmp(bytes, src_bytes, len), "A's checkpoint is unchanged");
      free(bytes);
    }
  }
  cls_trainer_destroy(t);

  /* N = 1 .. 5 with the source's alphabet: the first 12 - 2N tensors loaded, the rest a fresh model's
   * (seed 77, 29 classes). */
  cls_train_options fo29 = options(HIDDEN, SOURCE_CLASSES, dst_dir, dst_dir, 0);
  float *f29 = NULL, *f29m = NULL, *f29v = NULL;
  t = loaded(&fo29, CLS_LOAD_INIT, 0, &st);
  if (t) read_state(t, &f29, &f29m, &f29v);
  cls_trainer_destroy(t);
  for (int drop = 1; f29 && drop <= CLS_MODEL_MAX_DROP; drop++) {
    cls_train_options o = options(HIDDEN, SOURCE_CLASSES, src_dir, dst_dir, drop);
    t = loaded(&o, CLS_LOAD_LAST, 0, &st);
    CHECK(t, "drop %d: %s", drop, cls_engine_error(e));
    if (!t) continue;
    float *p, *m, *v;
    read_state(t, &p, &m, &v);
    int wrong = 0;
    const int first = cls_model_first_dropped(drop);
    for (int i = 0; i < CLS_MODEL_N_TENSORS; i++) {
      const float *want = i < first ? sp : f29;
      const size_t off = sv[i].offset, cnt = sv[i].count;
      wrong += !same_bits(p + off, want + off, cnt);
      wrong += i < first ? !(same_bits(m + off, sm + off, cnt) && same_bits(v + off, svv + off, cnt))
                         : !(all_zero(m + off, cnt) && all_zero(v + off, cnt));
    }
    CHECK(wrong == 0, "drop %d: %d tensors wrong (first dropped %d)", drop, wrong, first);
    free(p);
    free(m);
    free(v);
    cls_trainer_destroy(t);
  }
  CHECK_INT(cls_model_first_dropped(1), 10);
  CHECK_INT(cls_model_first_dropped(5), 2);
  CHECK_INT(cls_model_first_dropped(6), -1);

  /* Evaluation never drops: a drop-1 trainer of the source's shape loads layer_6 too. */
  cls_train_options eo = options(HIDDEN, SOURCE_CLASSES, src_dir, dst_dir, 1);
  t = loaded(&eo, CLS_LOAD_LAST, 1, &st);
  CHECK(t, "evaluation load: %s", cls_engine_error(e));
  if (t) {
    float *p, *m, *v;
    read_state(t, &p, &m, &v);
    CHECK(same_bits(p, sp, src_n), "evaluation holds the whole source model");
    free(p);
    free(m);
    free(v);
  }
  cls_trainer_destroy(t);

  /* Refusals: another alphabet without dropping the output layer, another n_hidden, drop 6. */
  cls_train_options bad = options(HIDDEN, OTHER_CLASSES, src_dir, dst_dir, 0);
  t = loaded(&bad, CLS_LOAD_LAST, 0, &st);
  CHECK(!t && st == CLS_ERR_IO, "another alphabet without a drop: status %d", (int)st);
  CHECK_CONTAINS(cls_engine_error(e), "an output layer of 29 classes (an alphabet of 28 labels); this model's has 31");
  CHECK_CONTAINS(cls_engine_error(e), "training another alphabet from it needs the output layer dropped");
  cls_train_options eval31 = options(HIDDEN, OTHER_CLASSES, src_dir, dst_dir, 1);
  t = loaded(&eval31, CLS_LOAD_LAST, 1, &st);
  CHECK(!t && st == CLS_ERR_IO, "evaluation of another alphabet: status %d", (int)st);
  CHECK_CONTAINS(cls_engine_error(e), "this model's has 31 (30 labels)");
  CHECK(!strstr(cls_engine_error(e), "drop_source_layers"), "evaluation gets no transfer hint: %s",
        cls_engine_error(e));
  cls_train_options wide = options(HIDDEN + 8, SOURCE_CLASSES, src_dir, dst_dir, 5);
  t = loaded(&wide, CLS_LOAD_LAST, 0, &st);
  CHECK(!t && st == CLS_ERR_IO, "another n_hidden: status %d", (int)st);
  CHECK_CONTAINS(cls_engine_error(e), "a model of n_hidden 24; this one's n_hidden is 32");
  cls_train_options six = options(HIDDEN, SOURCE_CLASSES, src_dir, dst_dir, 6);
  t = NULL;
  CHECK_INT(cls_trainer_create(e, &dev, 1, &six, 1, max_frames, max_labels, &t), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "training option drop_source_layers (--drop_source_layers) is 6, outside [0, 5]");
  cls_trainer_destroy(t);
  float scratch[4];
  CHECK_INT(cls_checkpoint_load_dropping(src_path, &src_cfg, -1, scratch, NULL, NULL, &vars, NULL, 0, &err),
            CLS_ERR_INVALID_ARGUMENT);

  free(src_bytes);
  free(sp);
  free(sm);
  free(svv);
  free(fp);
  free(fm);
  free(fv);
  free(f29);
  free(f29m);
  free(f29v);
  remove_dir(src_dir);
  remove_dir(dst_dir);
  cls_engine_destroy(e);
  cls_dataset_destroy(data);
  cls_alphabet_destroy(a);
  return check_finish("test_transfer");
}
