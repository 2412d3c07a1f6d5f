/* `clspeech lm_optimizer`: DeepSpeech's lm_optimizer.py. Searches the scorer's weights lm_alpha and
 * lm_beta that give the lowest WER on a dev set (--test_files, as DeepSpeech names it) with a fixed
 * checkpoint: the set's logits computed once on the device (cls_eval_logits), then each trial decodes them
 * on the host with its pair (cls_eval_decode), trials running in parallel on worker threads; the search is
 * lm_search.c's (deterministic, in place of Optuna's TPE). Prints a baseline without the scorer, a line
 * per trial with the best so far, the best pair with its WER and CER, and the decoding time per trial
 * with and without the scorer. The checkpoint's geometry, alphabet and feature geometry come from the
 * checkpoint and its folder unless the flags give them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clspeech/evaluate.h"
#include "clspeech/model.h"
#include "data_sets.h"
#include "lm_search.h"
#include "progress.h"
#include "train_flags.h"
#include "transcript.h"

#define CMD "lm_optimizer"

/* Everything one run holds; freed by finish(). Stays where it is: `all` points into it. */
typedef struct opt_cmd {
  train_flags f;
  cli_flag all[TRAIN_FLAGS_COUNT + 4];
  int n_flags;
  int n_trials, threads;
  double alpha_max, beta_max;
  char checkpoint[CLS_PATH_CAP];
  cls_model_config model;
  cls_alphabet *alphabet;
  cls_mfcc_tables *tables;
  data_set *sets;
  int n_sets;
  cls_eval_logits_store *logits;
  progress_printer progress;
} opt_cmd;

/* The flags: training's, and DeepSpeech's --n_trials, --lm_alpha_max, --lm_beta_max, and --threads. 0, -1
 * after --help, or the exit status. */
static int parse_flags(opt_cmd *c, int argc, char **argv) {
  train_flags_defaults(&c->f);
  c->n_flags = train_flags_table(&c->f, c->all);
  c->n_trials = 2400;
  c->alpha_max = c->beta_max = 5.0;
  c->all[c->n_flags++] = (cli_flag){"n_trials", CLI_INT, &c->n_trials,
                                    "trials of the search (DeepSpeech's default); each decodes the whole dev set with "
                                    "the scorer, so time is about n_trials x one decoding / --threads",
                                    false};
  c->all[c->n_flags++] = (cli_flag){"lm_alpha_max", CLI_DOUBLE, &c->alpha_max,
                                    "lm_alpha is searched in [0, lm_alpha_max]", false};
  c->all[c->n_flags++] = (cli_flag){"lm_beta_max", CLI_DOUBLE, &c->beta_max,
                                    "lm_beta is searched in [0, lm_beta_max]", false};
  c->all[c->n_flags++] = (cli_flag){"threads", CLI_INT, &c->threads,
                                    "trials decoded at once (0: one per online core)", false};
  int rc = cli_parse_flags(argc, argv, 2, c->all, c->n_flags, CMD,
                           "Searches the scorer's lm_alpha and lm_beta for the lowest WER on a dev set "
                           "(--test_files) with a trained checkpoint (DeepSpeech's lm_optimizer.py).",
                           NULL, 0, NULL);
  if (rc) return rc == 1 ? -1 : CLI_EXIT_USAGE;
  if ((rc = train_flags_finish(&c->f, CMD))) return rc;
  if (!*c->f.test_files) {
    fprintf(stderr, "clspeech " CMD ": --test_files is required: the dev set whose WER the search lowers\n");
    return CLI_EXIT_USAGE;
  }
  if (!*c->f.scorer_path) {
    fprintf(stderr, "clspeech " CMD ": --scorer_path is required: the language model whose weights are searched\n");
    return CLI_EXIT_USAGE;
  }
  if (c->f.beam_width <= 1) {
    fprintf(stderr, "clspeech " CMD ": --beam_width %d is greedy decoding, which has no scorer: give a beam\n",
            c->f.beam_width);
    return CLI_EXIT_USAGE;
  }
  if (c->threads == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    c->threads = n > 0 ? (int)(n < 256 ? n : 256) : 1;
  }
  return 0;
}

/* An explicit flag that disagrees with the checkpoint is a usage error naming both. */
static int disagrees(const opt_cmd *c, const char *name, int given, int stored, const char *file) {
  if (!cli_flag_seen(c->all, c->n_flags, name) || given == stored) return 0;
  fprintf(stderr, "clspeech " CMD ": --%s %d disagrees with %s %d in %s\n", name, given, name, stored, file);
  return 1;
}

/* The checkpoint (--load_evaluate) and its geometry; the alphabet and feature geometry of its folder
 * unless the flags give them. 0 or the exit status. */
static int load_checkpoint_setup(opt_cmd *c) {
  cls_error err;
  train_flags *f = &c->f;
  if (cls_checkpoint_choose(f->load_checkpoint_dir, f->load_evaluate_mode, c->checkpoint, sizeof c->checkpoint, NULL,
                            &err) != CLS_OK ||
      cls_checkpoint_peek_model(c->checkpoint, &c->model, &err) != CLS_OK) {
    fprintf(stderr, "clspeech " CMD ": %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  if (disagrees(c, "n_hidden", f->n_hidden, c->model.n_hidden, c->checkpoint)) return CLI_EXIT_USAGE;
  f->n_hidden = c->model.n_hidden;
  f->relu_clip = c->model.relu_clip;
  static char folder_alphabet[CLS_PATH_CAP];
  snprintf(folder_alphabet, sizeof folder_alphabet, "%s/%s", f->load_checkpoint_dir, CLS_CHECKPOINT_ALPHABET);
  struct stat sb;
  if (!cli_flag_seen(c->all, c->n_flags, "alphabet_config_path")) {
    char features[CLS_PATH_CAP];
    snprintf(features, sizeof features, "%s/%s", f->load_checkpoint_dir, CLS_CHECKPOINT_FEATURES);
    if (stat(folder_alphabet, &sb) == 0) {
      f->alphabet_config_path = folder_alphabet;
    } else if (stat(features, &sb) == 0) { /* written together: alphabet.txt deleted since (see model_setup.c) */
      fprintf(stderr,
              "clspeech " CMD ": %s is missing (the alphabet `clspeech train` wrote beside the checkpoints and %s); "
              "give the alphabet the model was trained with as --alphabet_config_path\n",
              folder_alphabet, CLS_CHECKPOINT_FEATURES);
      return CLI_EXIT_FAILURE;
    }
  }
  if (cls_alphabet_load(f->alphabet_config_path, &c->alphabet, &err) != CLS_OK) {
    fprintf(stderr, "clspeech " CMD ": --alphabet_config_path: %s\n", err.text);
    return CLI_EXIT_USAGE;
  }
  f->bytes_output_mode = cls_alphabet_is_bytes(c->alphabet); /* the folder's alphabet.txt says */
  if (cls_alphabet_size(c->alphabet) + 1 != c->model.n_classes) {
    fprintf(stderr, "clspeech " CMD ": %s has %d classes, but %s gives %d labels (+1 blank)\n", c->checkpoint,
            c->model.n_classes, f->alphabet_config_path, cls_alphabet_size(c->alphabet));
    return CLI_EXIT_USAGE;
  }
  int rate = 0, len = 0, step = 0, found = 0;
  if (cls_checkpoint_read_features(f->load_checkpoint_dir, &rate, &len, &step, &found, &err) != CLS_OK) {
    fprintf(stderr, "clspeech " CMD ": %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  if (found) {
    char file[CLS_PATH_CAP];
    snprintf(file, sizeof file, "%s/%s", f->load_checkpoint_dir, CLS_CHECKPOINT_FEATURES);
    if (disagrees(c, "audio_sample_rate", f->audio_sample_rate, rate, file) ||
        disagrees(c, "feature_win_len", f->feature_win_len, len, file) ||
        disagrees(c, "feature_win_step", f->feature_win_step, step, file))
      return CLI_EXIT_USAGE;
    f->audio_sample_rate = rate;
    f->feature_win_len = len;
    f->feature_win_step = step;
  }
  return 0;
}

/* The dev sets (each file its own, as DeepSpeech reports them) with --reverse_test and --limit_test. */
static int load_sets(opt_cmd *c, const cls_train_options *opt) {
  cls_error err;
  if (cls_mfcc_tables_create(&opt->features, &c->tables, &err) != CLS_OK) {
    fprintf(stderr, "clspeech " CMD ": %s\n", err.text);
    return CLI_EXIT_USAGE;
  }
  cls_dataset_options dopt = {c->alphabet, c->f.audio_sample_rate, c->tables->window, c->tables->step,
                              c->f.reverse_test, c->f.limit_test, c->f.strict, !c->f.normalize_sample_rate};
  return data_sets_load("test set", c->f.test_files, 1, &dopt, &c->sets, &c->n_sets);
}

/* The trainer on the first device, sized for the sets (the utterances too long for it stream), the
 * checkpoint loaded, and every set's logits kept. 0 or the exit status. */
static int compute_logits(opt_cmd *c, cls_train_options *opt) {
  cls_engine *engine = NULL;
  cls_trainer *trainer = NULL;
  int sel[CLS_MAX_DEVICES], n_sel = 0;
  int rc = cli_open_devices(CMD, c->f.devices, &engine, sel, CLS_MAX_DEVICES, &n_sel);
  if (rc) return rc;
  const cls_device_info *d = cls_engine_device(engine, sel[0]);
  fprintf(stderr, "clspeech: evaluating on device %d:%d (%s)\n", d->platform_index, d->device_index, d->name);
  int max_frames = 1, max_labels = 1;
  data_sets_max(c->sets, c->n_sets, &max_frames, &max_labels);
  opt->towers_per_device = 1;
  const int64_t limit = cls_train_frame_limit(engine, sel[0], opt, c->f.test_batch_size, max_labels, 0, NULL);
  if (limit - 1 < max_frames) max_frames = (int)(limit > 1 ? limit - 1 : 1);
  cls_status st = cls_trainer_create(engine, sel, 1, opt, c->f.test_batch_size, max_frames, max_labels, &trainer);
  if (st == CLS_OK) st = cls_trainer_load(trainer, c->f.load_evaluate_mode, 1);
  cls_eval_input *inputs = calloc((size_t)c->n_sets, sizeof *inputs);
  if (st == CLS_OK && !inputs) st = CLS_ERR_OUT_OF_MEMORY;
  for (int i = 0; st == CLS_OK && i < c->n_sets; i++) inputs[i] = (cls_eval_input){c->sets[i].name, c->sets[i].ds, NULL};
  cls_eval_request req = cls_eval_request_default();
  req.sets = inputs;
  req.n_sets = c->n_sets;
  req.batch_size = c->f.test_batch_size;
  req.progress = progress_print;
  req.progress_user = &c->progress;
  const double t0 = cls_now_ms();
  if (st == CLS_OK) st = cls_eval_logits(trainer, c->alphabet, &req, &c->logits);
  if (st != CLS_OK) rc = cli_report(CMD, engine, st);
  else
  {
    char mem[32];
    fprintf(stderr, "clspeech " CMD ": logits of %s kept in %.1f s: %s of host memory\n", c->checkpoint,
            (cls_now_ms() - t0) / 1000.0, cli_bytes(c->logits->memory_bytes, mem, sizeof mem));
  }
  free(inputs);
  cls_trainer_destroy(trainer); /* the device is not needed for decoding */
  cls_engine_destroy(engine);
  return rc;
}

/* WER and CER over every sample of every set (DeepSpeech's objective pools the sets' samples). */
static int pooled_figures(const cls_eval_report *r, double *wer, double *cer) {
  int n = 0;
  for (int k = 0; k < r->n_sets; k++) n += r->sets[k].n_samples;
  cls_wer_sample *all = malloc((size_t)(n ? n : 1) * sizeof *all);
  if (!all) return -1;
  n = 0;
  for (int k = 0; k < r->n_sets; k++)
    for (int i = 0; i < r->sets[k].n_samples; i++) all[n++] = r->sets[k].samples[i].stats;
  cls_wer_corpus(all, n, wer, cer);
  free(all);
  return 0;
}

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One decoding of the whole store with `beam`: its pooled WER/CER and the thread's CPU seconds. */
static cls_status decode_all(const opt_cmd *c, const cls_beam_options *beam, lm_trial *t, cls_error *err) {
  cls_eval_report *r = NULL;
  const double t0 = thread_cpu_s();
  cls_status st = cls_eval_decode(c->logits, c->alphabet, beam, 0, false, &r, err);
  if (st == CLS_OK && pooled_figures(r, &t->wer, &t->cer) != 0)
    st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of memory");
  t->cpu_s = thread_cpu_s() - t0;
  cls_eval_report_free(r);
  return st;
}

/* A round of trials shared by the worker threads. */
typedef struct round_work {
  const opt_cmd *c;
  lm_trial *trials;
  int count;
  atomic_int next;
  atomic_int failed; /* 1 + the first failed trial's index in the round, or 0 */
  cls_error err;     /* that failure's text */
} round_work;

static void *worker(void *user) {
  round_work *w = user;
  for (int i; (i = atomic_fetch_add(&w->next, 1)) < w->count && !atomic_load(&w->failed);) {
    lm_trial *t = &w->trials[i];
    cls_beam_options beam = transcript_beam_options(&w->c->f);
    beam.lm_alpha = t->alpha;
    beam.lm_beta = t->beta;
    cls_error err = {0};
    int none = 0;
    if (decode_all(w->c, &beam, t, &err) != CLS_OK && atomic_compare_exchange_strong(&w->failed, &none, i + 1))
      w->err = err;
  }
  return NULL;
}

/* The round's trials decoded on up to c->threads threads (the calling one among them). 0 or -1 with
 * the failure printed. */
static int run_round(const opt_cmd *c, lm_trial *trials, int count) {
  round_work w = {c, trials, count, 0, 0, {0}};
  int n = c->threads < count ? c->threads : count;
  pthread_t th[256];
  int started = 0;
  for (; started < n - 1; started++)
    if (pthread_create(&th[started], NULL, worker, &w) != 0) break;
  worker(&w);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  if (!atomic_load(&w.failed)) return 0;
  fprintf(stderr, "clspeech " CMD ": %s\n", w.err.text);
  return -1;
}

/* Trial i's line, with the best of trials 1 .. i+1 (*best: its index, updated). */
static void print_trial(const lm_search *s, int i, int *best) {
  const lm_trial *t = &s->trials[i];
  if (*best < 0 || lm_trial_better(t, &s->trials[*best])) *best = i;
  const lm_trial *b = &s->trials[*best];
  printf("Trial %d/%d: lm_alpha %.6f, lm_beta %.6f: WER %.6f, CER %.6f (best: trial %d, WER %.6f, CER %.6f)\n", i + 1,
         s->n_trials, t->alpha, t->beta, t->wer, t->cer, *best + 1, b->wer, b->cer);
}

/* The baseline without the scorer, the search, and the best pair. 0 or the exit status. */
static int search(opt_cmd *c) {
  int n_utts = 0;
  for (int k = 0; k < c->logits->n_sets; k++) n_utts += c->logits->sets[k].n_samples;
  if (n_utts == 0) {
    fprintf(stderr, "clspeech " CMD ": --test_files %s: no usable sample to decode\n", c->f.test_files);
    return CLI_EXIT_FAILURE;
  }
  cls_beam_options plain = transcript_beam_options(&c->f);
  plain.scorer = NULL;
  lm_trial base = {0};
  cls_error err = {0};
  if (decode_all(c, &plain, &base, &err) != CLS_OK) {
    fprintf(stderr, "clspeech " CMD ": %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  printf("Without scorer: WER %.6f, CER %.6f (%d utterances, beam %d, decoded in %.3f s)\n", base.wer, base.cer,
         n_utts, c->f.beam_width, base.cpu_s);
  fflush(stdout);
  fprintf(stderr, "clspeech " CMD ": %d trials, lm_alpha in [0, %g] and lm_beta in [0, %g], on %d threads\n",
          c->n_trials, c->alpha_max, c->beta_max, c->threads);
  lm_search s;
  if (lm_search_init(&s, c->n_trials, c->alpha_max, c->beta_max, (uint64_t)c->f.random_seed) != 0) {
    fprintf(stderr, "clspeech " CMD ": out of memory\n");
    return CLI_EXIT_FAILURE;
  }
  const double t0 = cls_now_ms();
  int rc = 0, shown_best = -1;
  for (int first = 0, count; !rc && (count = lm_search_next_round(&s, &first)) > 0;) {
    if (run_round(c, s.trials + first, count) != 0) rc = CLI_EXIT_FAILURE;
    if (rc) break;
    lm_search_end_round(&s, first, count);
    for (int i = first; i < first + count; i++) print_trial(&s, i, &shown_best);
    fflush(stdout);
  }
  if (!rc) {
    double cpu = 0;
    for (int i = 0; i < s.n_trials; i++) cpu += s.trials[i].cpu_s;
    const lm_trial *b = &s.trials[s.best];
    printf("Best params: lm_alpha=%.6f and lm_beta=%.6f with WER = %.6f, CER = %.6f (trial %d of %d; without scorer "
           "WER = %.6f, CER = %.6f)\n",
           b->alpha, b->beta, b->wer, b->cer, s.best + 1, s.n_trials, base.wer, base.cer);
    printf("Decoding time per trial (one thread, %d utterances, beam %d): %.3f s with the scorer (mean of %d), %.3f s "
           "without (%.2fx); the search took %.1f s on %d thread%s\n",
           n_utts, c->f.beam_width, cpu / s.n_trials, s.n_trials, base.cpu_s,
           base.cpu_s > 0 ? cpu / s.n_trials / base.cpu_s : 0.0, (cls_now_ms() - t0) / 1000.0, c->threads, c->threads == 1 ? "" : "s");
  }
  lm_search_free(&s);
  return rc;
}

static int finish(opt_cmd *c, int rc) {
  cls_eval_logits_free(c->logits);
  data_sets_free(c->sets, c->n_sets);
  cls_mfcc_tables_destroy(c->tables);
  cls_alphabet_destroy(c->alphabet);
  transcript_scorer_free(&c->f);
  return rc;
}

int cmd_lm_optimizer(int argc, char **argv) {
  static opt_cmd c; /* large; one per process */
  memset(&c, 0, sizeof c);
  int rc = parse_flags(&c, argc, argv);
  if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
  if ((rc = load_checkpoint_setup(&c)) || (rc = transcript_scorer_load(&c.f, c.alphabet, CMD))) return finish(&c, rc);
  cls_train_options opt = train_flags_options(&c.f, c.model.n_classes);
  opt.model = c.model;
  progress_init(&c.progress, c.f.show_progressbar);
  if ((rc = load_sets(&c, &opt)) || (rc = compute_logits(&c, &opt))) return finish(&c, rc);
  return finish(&c, search(&c));
}
