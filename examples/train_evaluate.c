/* train_evaluate: a program embedding libclspeech through its public headers alone. It trains a small
 * DeepSpeech model for 2 steps on the first utterance of a CSV data set, which saves a checkpoint, then
 * loads that checkpoint into a fresh trainer and tests it on the whole set with the engine's evaluation
 * call (cls_evaluate: run the model, decode, WER/CER, DeepSpeech's best/median/worst samples), and prints
 * the result as `clspeech train --test_files` does.
 *
 *   train_evaluate CSV ALPHABET CHECKPOINT_DIR
 *
 * The engine runs on the default device (CLSPEECH_DEVICES, else every GPU, else the CPU devices; the
 * first one). Exit status 0, or 1 when anything fails or a loss is not finite. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <clspeech/clspeech.h>
#include <clspeech/data.h>
#include <clspeech/evaluate.h>
#include <clspeech/model.h>
#include <clspeech/train.h>

enum { N_HIDDEN = 64, STEPS = 2 };

static void log_to_stderr(void *user, cls_log_level level, const char *message) {
  (void)user;
  (void)level;
  fprintf(stderr, "train_evaluate: %s\n", message);
}

/* Prints what failed (the engine's text when there is an engine) and returns 0 for chaining. */
static int failed(cls_engine *engine, const char *what, cls_status status) {
  fprintf(stderr, "train_evaluate: %s: %s\n", what, engine ? cls_engine_error(engine) : cls_status_string(status));
  return 0;
}

/* A trainer for the set on one device, its parameters initialised (training) or loaded (evaluation). */
static int make_trainer(cls_engine *engine, int device, const cls_train_options *options, const cls_dataset *set,
                        int evaluation, cls_trainer **out) {
  int max_frames = 1, max_labels = 1;
  cls_dataset_batch_max(set, 0, cls_dataset_size(set), &max_frames, &max_labels);
  /* A resampled file may give one frame more than its header says (clspeech/data.h). */
  cls_status st = cls_trainer_create(engine, &device, 1, options, 1, max_frames + 1, max_labels, out);
  if (st != CLS_OK) return failed(engine, "creating the trainer", st);
  st = cls_trainer_load(*out, evaluation ? CLS_LOAD_LAST : CLS_LOAD_INIT, evaluation);
  if (st != CLS_OK) return failed(engine, evaluation ? "loading the checkpoint" : "initialising", st);
  return 1;
}

static int train(cls_engine *engine, int device, const cls_train_options *options, const cls_dataset *set) {
  cls_trainer *trainer = NULL;
  int ok = make_trainer(engine, device, options, set, 0, &trainer);
  const cls_sample *first = cls_dataset_sample(set, 0);
  const cls_utterance u = {first->path, first->labels, first->n_labels};
  if (ok) { /* one utterance, batches of 1: an epoch is a step */
    cls_status st = cls_trainer_train(trainer, &u, 1, NULL, 0, NULL, NULL);
    if (st != CLS_OK) ok = failed(engine, "training", st);
  }
  if (ok && cls_trainer_counters(trainer).global_step != STEPS) {
    fprintf(stderr, "train_evaluate: trained %lld steps, expected %d\n",
            (long long)cls_trainer_counters(trainer).global_step, STEPS);
    ok = 0;
  }
  if (ok) printf("trained %d steps on %s, checkpoint in %s\n", STEPS, first->path, options->save_checkpoint_dir);
  cls_trainer_destroy(trainer);
  return ok;
}

static void print_sample(const cls_eval_sample *s) {
  printf("WER: %f, CER: %f, loss: %f\n - wav: file://%s\n - src: \"%s\"\n - res: \"%s\"\n", s->stats.wer, s->stats.cer,
         s->loss, s->wav_path, s->src, s->res);
}

/* The checkpoint in a fresh trainer, tested on the CSV; the report printed. */
static int evaluate(cls_engine *engine, int device, const cls_train_options *options, const cls_dataset *set,
                    const cls_alphabet *alphabet, const char *csv) {
  cls_trainer *trainer = NULL;
  int ok = make_trainer(engine, device, options, set, 1, &trainer);
  cls_eval_request req = cls_eval_request_default();
  const cls_eval_input input = {NULL, NULL, csv}; /* loaded by the call, named after the file */
  req.sets = &input;
  req.n_sets = 1;
  req.beam.beam_width = 16;
  cls_eval_report *report = NULL;
  if (ok) {
    cls_status st = cls_evaluate(trainer, alphabet, &req, &report);
    if (st != CLS_OK) ok = failed(engine, "evaluating", st);
  }
  for (int k = 0; ok && k < report->n_sets; k++) {
    const cls_eval_set_report *r = &report->sets[k];
    printf("Test on %s - WER: %f, CER: %f, loss: %f\n", r->name, r->wer, r->cer, r->mean_loss);
    if (!isfinite(r->mean_loss) || r->n_samples != cls_dataset_size(set)) {
      fprintf(stderr, "train_evaluate: %d samples of mean loss %f; expected %d samples and a finite loss\n",
              r->n_samples, r->mean_loss, cls_dataset_size(set));
      ok = 0;
    }
    printf("Best WER:\n");
    for (int i = 0; i < r->n_best; i++) print_sample(&r->samples[r->best[i]]);
    for (int i = 0; i < r->n_samples; i++) ok &= isfinite(r->samples[i].loss) != 0;
  }
  cls_eval_report_free(report);
  cls_trainer_destroy(trainer);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: train_evaluate CSV ALPHABET CHECKPOINT_DIR\n");
    return 2;
  }
  const char *csv = argv[1], *alphabet_path = argv[2], *dir = argv[3];
  cls_error err;
  cls_alphabet *alphabet = NULL;
  cls_status st = cls_alphabet_load(alphabet_path, &alphabet, &err);
  if (st != CLS_OK) {
    fprintf(stderr, "train_evaluate: %s\n", err.text);
    return 1;
  }
  const cls_dataset_options dopt = {.alphabet = alphabet}; /* 16 kHz, DeepSpeech's window and step */
  cls_dataset *set = NULL;
  st = cls_dataset_load(csv, &dopt, &set, &err);
  int ok = st == CLS_OK;
  if (!ok) fprintf(stderr, "train_evaluate: %s\n", err.text);
  if (ok && cls_dataset_size(set) < 1) {
    fprintf(stderr, "train_evaluate: %s holds no usable sample\n", csv);
    ok = 0;
  }
  cls_engine_options eopt = cls_engine_options_from_environment();
  eopt.log = log_to_stderr;
  eopt.log_level = CLS_LOG_WARNING;
  cls_engine *engine = NULL;
  int sel[CLS_MAX_DEVICES], n_sel = 0;
  if (ok) {
    st = cls_engine_create(&eopt, &engine);
    if (st == CLS_OK) st = cls_engine_select(engine, NULL, sel, CLS_MAX_DEVICES, &n_sel);
    if (st == CLS_OK) st = cls_engine_prepare(engine, sel, &n_sel);
    if (st != CLS_OK) ok = failed(engine, "opening the default device", st);
  }
  if (ok) {
    cls_train_options o = cls_train_options_default(N_HIDDEN, cls_alphabet_size(alphabet) + 1);
    o.epochs = STEPS;
    o.load_checkpoint_dir = o.save_checkpoint_dir = dir;
    o.checkpoint_secs = 0;
    o.load_evaluate = CLS_LOAD_LAST;
    printf("device: %s\n", cls_engine_device(engine, sel[0])->name);
    ok = train(engine, sel[0], &o, set) && evaluate(engine, sel[0], &o, set, alphabet, csv);
  }
  cls_engine_destroy(engine);
  cls_dataset_destroy(set);
  cls_alphabet_destroy(alphabet);
  printf("train_evaluate: %s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
