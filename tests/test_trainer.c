/* The training loop on LDC93S1 (data/deepspeech-smoke): the loss falls; 3 epochs, a
 * stop, and 3 more from the checkpoint give exactly the parameters of 6 straight epochs (the
 * checkpoint holds the weights, Adam's slots and powers, the step that keys dropout, and the
 * learning rate); a corrupt checkpoint is refused with its name; the train series keeps
 * max_to_keep files and its index names the newest; a run that applies no step fails; a pass of
 * cls_trainer_evaluate reports its steps, batches and mean loss, and a bad request is refused. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "data_present.h"
#include "clspeech/data.h"
#include "clspeech/train.h"
#include "data_files.h"

static float last_loss;
static void on_progress(void *user, const cls_progress *p) {
  (void)user;
  if (p->finished && !strcmp(p->phase, "Training")) last_loss = (float)p->mean_loss;
}

static cls_train_options options(const char *dir, int epochs) {
  cls_train_options o = cls_train_options_default(24, 29);
  o.epochs = epochs;
  o.load_checkpoint_dir = o.save_checkpoint_dir = dir;
  o.checkpoint_secs = 0;
  o.max_to_keep = 2;
  return o;
}

/* cls_trainer_evaluate's callbacks: the batches handed over, the finished pass's report. */
static int batches_seen, bad_batches, passes_finished;
static double pass_loss;
static void on_batch(void *user, int first, int batch, int time, const float *logits, const int *frames,
                     const float *losses) {
  int *expected_first = user;
  bad_batches += first != *expected_first || batch != 1 || time < frames[0] || !logits || !(losses[0] > 0);
  *expected_first += batch;
  batches_seen++;
}
static void on_test_progress(void *user, const cls_progress *p) {
  (void)user;
  if (p->finished && !strcmp(p->phase, "Test")) {
    passes_finished++;
    pass_loss = p->mean_loss;
  }
}

static void check_evaluate(cls_engine *e, int dev, const cls_dataset *ds, const char *dir) {
  cls_train_options o = options(dir, 1);
  int max_frames = 0, max_labels = 0, n = cls_dataset_size(ds);
  cls_dataset_batch_max(ds, 0, n, &max_frames, &max_labels);
  cls_trainer *t = NULL;
  CHECK_INT(cls_trainer_create(e, &dev, 1, &o, 1, max_frames, max_labels, &t), CLS_OK);
  if (!t) return;
  CHECK_INT(cls_trainer_load(t, CLS_LOAD_LAST, 1), CLS_OK);
  cls_utterance u[4];
  for (int i = 0; i < n && i < 4; i++) {
    const cls_sample *x = cls_dataset_sample(ds, i);
    u[i] = (cls_utterance){x->path, x->labels, x->n_labels};
  }
  const cls_eval_set set = {"ldc93s1", u, n < 4 ? n : 4, NULL};
  int next_first = 0;
  cls_trainer_eval_request req = {&set, 1, "Test", on_batch, NULL, &next_first, on_test_progress, NULL};
  cls_trainer_eval_result res = {-1, -1};
  CHECK_INT(cls_trainer_evaluate(t, &req, &res), CLS_OK);
  CHECK(res.steps == set.n && batches_seen == set.n && bad_batches == 0 && passes_finished == 1,
        "a pass of %d utterances: %lld steps, %d batches (%d wrong), %d finished reports", set.n, (long long)res.steps,
        batches_seen, bad_batches, passes_finished);
  CHECK(isfinite(res.mean_loss) && res.mean_loss > 0 && fabs(res.mean_loss - pass_loss) < 1e-9,
        "the pass's mean loss %g, its report's %g", res.mean_loss, pass_loss);
  /* Refused: a batch size outside 1 .. max_batch (1 here), no set; the result is left as it was. */
  const int bad_sizes[] = {0, 2};
  for (int i = 0; i < 2; i++) {
    req.batch_size = bad_sizes[i];
    res = (cls_trainer_eval_result){-1, -1};
    CHECK_INT(cls_trainer_evaluate(t, &req, &res), CLS_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cls_engine_error(e), "evaluation batch of");
    CHECK(res.steps == -1, "a refused pass wrote %lld steps", (long long)res.steps);
  }
  req.batch_size = 1;
  req.set = NULL;
  CHECK_INT(cls_trainer_evaluate(t, &req, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "evaluation: no set");
  cls_trainer_destroy(t);
}

/* Trains `epochs` epochs from what `dir` holds; returns the parameters (malloc'ed). */
static float *train(cls_engine *e, int dev, const cls_dataset *ds, const char *dir, int epochs, size_t *n,
                    const char *load) {
  cls_train_options o = options(dir, epochs);
  cls_trainer *t = NULL;
  int max_frames = 0, max_labels = 0;
  cls_dataset_batch_max(ds, 0, cls_dataset_size(ds), &max_frames, &max_labels);
  cls_status st = cls_trainer_create(e, &dev, 1, &o, 1, max_frames, max_labels, &t);
  CHECK(st == CLS_OK, "trainer: %s", cls_engine_error(e));
  if (!t) return NULL;
  cls_utterance u[4];
  for (int i = 0; i < cls_dataset_size(ds) && i < 4; i++) {
    const cls_sample *s = cls_dataset_sample(ds, i);
    u[i] = (cls_utterance){s->path, s->labels, s->n_labels};
  }
  cls_load_mode mode = CLS_LOAD_AUTO;
  CHECK_INT(cls_load_mode_parse(load, &mode), CLS_OK);
  st = cls_trainer_load(t, mode, 0);
  CHECK(st == CLS_OK, "load: %s", cls_engine_error(e));
  /* The counters a checkpoint carries (or a fresh start's); no dev set: no dev-loss record. */
  const cls_train_counters before = cls_trainer_counters(t);
  CHECK(isinf(before.best_dev_loss) && before.best_dev_loss > 0 && before.epochs_without_improvement == 0,
        "after load: best dev loss %g, %d epochs without improvement", before.best_dev_loss,
        before.epochs_without_improvement);
  CHECK(before.learning_rate == o.learning_rate, "after load: learning rate %g", (double)before.learning_rate);
  if (mode == CLS_LOAD_INIT) CHECK(before.epoch == 0 && before.global_step == 0, "fresh start at epoch %d", before.epoch);
  st = cls_trainer_train(t, u, cls_dataset_size(ds), NULL, 0, on_progress, NULL);
  CHECK(st == CLS_OK, "train: %s", cls_engine_error(e));
  const cls_train_counters after = cls_trainer_counters(t);
  CHECK(after.epoch == before.epoch + epochs && after.global_step > before.global_step,
        "epoch %d -> %d after %d epochs, step %lld -> %lld", before.epoch, after.epoch, epochs,
        (long long)before.global_step, (long long)after.global_step);
  if (mode == CLS_LOAD_AUTO)
    CHECK(before.epoch > 0 && before.global_step > 0, "resumed at epoch %d, step %lld", before.epoch,
          (long long)before.global_step);
  *n = cls_trainer_param_count(t);
  float *p = malloc(*n * sizeof *p);
  cls_trainer_read_params(t, p, *n);
  cls_trainer_destroy(t);
  return p;
}

static int count_files(const char *dir, const char *suffix) {
  int n = 0;
  DIR *d = opendir(dir);
  for (struct dirent *x; d && (x = readdir(d));) n += strstr(x->d_name, suffix) != NULL;
  if (d) closedir(d);
  return n;
}

int main(void) {
  if (!data_present()) return check_finish("test_trainer");
  cls_alphabet *a = NULL;
  cls_dataset *ds = shared_dataset(SMOKE "/ldc93s1.csv", &a);
  cls_engine *e = NULL;
  CHECK_INT(cls_engine_create(NULL, &e), CLS_OK);
  int sel[8], n_sel = 0;
  CHECK_INT(cls_engine_select(e, "all", sel, 8, &n_sel), CLS_OK);
  CHECK_INT(cls_engine_prepare(e, sel, &n_sel), CLS_OK);
  if (!ds || n_sel == 0) return check_finish("test_trainer");
  int dev = sel[0];
  printf("device %s\n", cls_engine_device(e, dev)->name);

  char straight[] = "/tmp/clspeech-train-a-XXXXXX", resumed[] = "/tmp/clspeech-train-b-XXXXXX";
  char one[] = "/tmp/clspeech-train-c-XXXXXX";
  CHECK(mkdtemp(straight) && mkdtemp(resumed) && mkdtemp(one), "mkdtemp");
  size_t n = 0, n2 = 0;
  float *first_loss_params = train(e, dev, ds, one, 1, &n, "init");
  float loss1 = last_loss;
  free(first_loss_params);
  remove_dir(one);

  float *p6 = train(e, dev, ds, straight, 6, &n, "init");
  float loss6 = last_loss;
  printf("  loss after epoch 1: %.4f, after epoch 6: %.4f\n", loss1, loss6);
  CHECK(loss6 < loss1, "the loss falls: %.4f -> %.4f", loss1, loss6);
  float *p3 = train(e, dev, ds, resumed, 3, &n2, "init");
  free(p3);
  float *p33 = train(e, dev, ds, resumed, 3, &n2, "auto");
  CHECK(p6 && p33 && n == n2, "parameters read");
  if (p6 && p33 && n == n2) {
    size_t diff = 0;
    for (size_t i = 0; i < n; i++) diff += p6[i] != p33[i];
    CHECK(diff == 0, "3 + 3 epochs differ from 6 epochs in %zu of %zu parameters", diff, n);
    printf("  3 + 3 epochs vs 6 epochs: %zu of %zu parameters differ\n", diff, n);
  }
  /* max_to_keep 2: two train checkpoints, the index names the newest (global step 6). */
  CHECK_INT(count_files(resumed, ".safetensors"), 2);
  char index[600], line[256] = "";
  snprintf(index, sizeof index, "%s/checkpoint", resumed);
  FILE *f = fopen(index, "r");
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    fclose(f);
  }
  CHECK(!strcmp(line, "train-6.safetensors\n"), "index names %s", line);
  check_evaluate(e, dev, ds, straight);

  /* A corrupt checkpoint is refused, naming the file. */
  char path[700];
  snprintf(path, sizeof path, "%s/train-6.safetensors", resumed);
  f = fopen(path, "r+b");
  if (f) {
    fputc(0xff, f);
    fputc(0xff, f);
    fputc(0xff, f);
    fclose(f);
  }
  cls_train_options o = options(resumed, 1);
  cls_trainer *t = NULL;
  CHECK_INT(cls_trainer_create(e, &dev, 1, &o, 1, 200, 60, &t), CLS_OK);
  if (t) {
    CHECK_INT(cls_trainer_load(t, CLS_LOAD_LAST, 0), CLS_ERR_IO);
    CHECK_CONTAINS(cls_engine_error(e), "train-6.safetensors");
    cls_trainer_destroy(t);
  }
  /* A run whose every step is skipped (here a transcript longer than its frames: an infinite CTC
     loss) fails with CLS_ERR_NO_STEP, not a success at global step 0 (issue 45). */
  char skipped[] = "/tmp/clspeech-train-d-XXXXXX";
  CHECK(mkdtemp(skipped) != NULL, "mkdtemp");
  enum { LONG_LABELS = 400 };
  static int32_t too_many[LONG_LABELS];
  for (int i = 0; i < LONG_LABELS; i++) too_many[i] = i % 2;
  const cls_utterance impossible = {cls_dataset_sample(ds, 0)->path, too_many, LONG_LABELS};
  o = options(skipped, 2);
  t = NULL;
  CHECK_INT(cls_trainer_create(e, &dev, 1, &o, 1, 200, LONG_LABELS, &t), CLS_OK);
  if (t) {
    CHECK_INT(cls_trainer_load(t, CLS_LOAD_INIT, 0), CLS_OK);
    CHECK_INT(cls_trainer_train(t, &impossible, 1, NULL, 0, NULL, NULL), CLS_ERR_NO_STEP);
    CHECK_CONTAINS(cls_engine_error(e), "no training step was applied: all 2 steps had an infinite or NaN loss");
    CHECK(cls_trainer_counters(t).global_step == 0, "global step %lld", (long long)cls_trainer_counters(t).global_step);
    cls_trainer_destroy(t);
  }
  remove_dir(skipped);
  free(p6);
  free(p33);
  remove_dir(straight);
  remove_dir(resumed);
  cls_engine_destroy(e);
  cls_dataset_destroy(ds);
  cls_alphabet_destroy(a);
  return check_finish("test_trainer");
}
