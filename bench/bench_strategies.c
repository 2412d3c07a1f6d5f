/* Multi-tower training beside single towers on the same machine: each configuration trains the
 * same model from the same initialisation for the same wall time, then the dev loss is measured.
 * Configurations: each device alone; sync, async, hybrid-equal and hybrid-auto on both; hybrid-auto
 * without overlapped gradient read-back; and G towers on the first device against one tower with
 * the same global batch there (A is the device with more compute units). Prints a table (and --json lines) with audio-seconds/s, steps/s,
 * the dev loss, the straggler efficiency (hybrid-auto throughput / sum of the single-device
 * throughputs) and the overlap saving.
 *   bench_strategies --train_files CSV --dev_files CSV --alphabet_config_path TXT [--devices 0:0,0:1]
 *                    [--seconds 60] [--n_hidden 256] [--batch 8] [--only "A alone;hybrid-auto A+B"]
 *                    [--remeasure S] [--json]
 * --remeasure S: an idle tower under --balance auto is measured again after S seconds (default: the rule).
 * --only runs the configurations it names (';'-separated), e.g. beside a simulator, where a configuration
 * that gives it a share would take minutes a step; the others print as not run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/data.h"
#include "clspeech/internal/train.h"
#include "clspeech/train.h"

typedef struct run_result {
  double audio_s, wall_s, steps, dev_loss;
} run_result;

static double pass_audio;
static void on_progress(void *user, const cls_progress *p) {
  (void)user;
  if (p->finished && !strcmp(p->phase, "Training")) pass_audio += p->audio_s;
}

static void on_log(void *user, cls_log_level level, const char *msg) {
  (void)user;
  if (level >= CLS_LOG_NOTICE) fprintf(stderr, "  %s\n", msg);
}

typedef struct setup {
  cls_engine *e;
  cls_utterance *train, *dev;
  int n_train, n_dev, max_frames, max_labels;
  int H, B, C;
  double seconds, remeasure_s;
} setup;

static int run(const setup *s, const int *devs, int n_devs, cls_strategy strategy, cls_balance balance, int per_device,
               int batch, int no_overlap, run_result *r) {
  cls_train_options o = cls_train_options_default(s->H, s->C);
  o.train_batch_size = batch;
  o.dev_batch_size = o.test_batch_size = s->B;
  o.epochs = 100000;
  o.checkpoint_secs = 0;
  o.max_to_keep = 1;
  o.load_train = CLS_LOAD_INIT;
  o.host_features = 1;
  o.strategy = strategy;
  o.balance = balance;
  o.towers_per_device = per_device;
  o.replica_check_steps = 0;
  o.overlap_reduction = !no_overlap;
  o.max_train_seconds = s->seconds;
  int max_batch = batch * 2 > s->B ? batch * 2 : s->B;
  cls_trainer *t = NULL;
  cls_status st = cls_trainer_create(s->e, devs, n_devs, &o, max_batch, s->max_frames, s->max_labels, &t);
  if (st == CLS_OK) st = cls_trainer_load(t, CLS_LOAD_INIT, 0);
  if (st == CLS_OK) st = cls_trainer_set_remeasure_seconds(t, s->remeasure_s);
  pass_audio = 0;
  double t0 = cls_now_ms();
  if (st == CLS_OK) st = cls_trainer_train(t, s->train, s->n_train, NULL, 0, on_progress, NULL);
  r->wall_s = (cls_now_ms() - t0) / 1e3;
  r->audio_s = pass_audio;
  if (st == CLS_OK) r->steps = (double)cls_trainer_counters(t).global_step;
  cls_eval_set dev = {"dev", s->dev, s->n_dev, NULL};
  cls_trainer_eval_request pass = {&dev, s->B, "Validation", NULL, NULL, NULL, NULL, NULL};
  cls_trainer_eval_result dev_result = {0, 0};
  if (st == CLS_OK) st = cls_trainer_evaluate(t, &pass, &dev_result);
  if (st == CLS_OK) r->dev_loss = dev_result.mean_loss;
  if (st != CLS_OK) fprintf(stderr, "bench_strategies: %s\n", cls_engine_error(s->e));
  cls_trainer_destroy(t);
  return st == CLS_OK ? 0 : 1;
}

static int load_set(const char *csv, cls_alphabet *a, cls_utterance **u, int *n, int *max_frames, int *max_labels,
                    cls_dataset **keep) {
  cls_error err;
  cls_dataset_options dopt = {a, 16000, 512, 320, 0, 0, 0, 0};
  if (cls_dataset_load(csv, &dopt, keep, &err) != CLS_OK) {
    fprintf(stderr, "bench_strategies: %s\n", err.text);
    return 1;
  }
  *n = cls_dataset_size(*keep);
  *u = calloc((size_t)*n, sizeof **u);
  for (int i = 0; i < *n; i++) {
    const cls_sample *x = cls_dataset_sample(*keep, i);
    (*u)[i] = (cls_utterance){x->path, x->labels, x->n_labels};
  }
  int f = 0, l = 0;
  cls_dataset_batch_max(*keep, 0, *n, &f, &l);
  if (f > *max_frames) *max_frames = f;
  if (l > *max_labels) *max_labels = l;
  return 0;
}

/* Whether --only (NULL: every configuration) names `name` among its ';'-separated names. */
static int chosen(const char *only, const char *name) {
  if (!only) return 1;
  const size_t n = strlen(name);
  for (const char *p = only; (p = strstr(p, name)) != NULL; p += n)
    if ((p == only || p[-1] == ';') && (p[n] == '\0' || p[n] == ';')) return 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *train_csv = NULL, *dev_csv = NULL, *alphabet = NULL, *devices = "0:0,0:1", *only = NULL;
  setup s;
  memset(&s, 0, sizeof s);
  s.H = 256;
  s.B = 8;
  s.seconds = 60;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(argv[i], "--train_files")) train_csv = v, i++;
    else if (!strcmp(argv[i], "--dev_files")) dev_csv = v, i++;
    else if (!strcmp(argv[i], "--alphabet_config_path")) alphabet = v, i++;
    else if (!strcmp(argv[i], "--devices")) devices = v, i++;
    else if (!strcmp(argv[i], "--seconds")) s.seconds = atof(v), i++;
    else if (!strcmp(argv[i], "--n_hidden")) s.H = atoi(v), i++;
    else if (!strcmp(argv[i], "--batch")) s.B = atoi(v), i++;
    else if (!strcmp(argv[i], "--only")) only = v, i++;
    else if (!strcmp(argv[i], "--remeasure")) s.remeasure_s = atof(v), i++;
    else if (!strcmp(argv[i], "--json")) json = 1;
    else {
      fprintf(stderr, "bench_strategies: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (!train_csv || !dev_csv || !alphabet) {
    fprintf(stderr, "usage: bench_strategies --train_files CSV --dev_files CSV --alphabet_config_path TXT "
                    "[--devices SEL] [--seconds S] [--n_hidden H] [--batch B] [--only NAMES] [--remeasure S] "
                    "[--json]\n");
    return 2;
  }
  cls_error err;
  cls_alphabet *a = NULL;
  if (cls_alphabet_load(alphabet, &a, &err) != CLS_OK) {
    fprintf(stderr, "bench_strategies: %s\n", err.text);
    return 1;
  }
  s.C = cls_alphabet_size(a) + 1;
  cls_dataset *dtrain = NULL, *ddev = NULL;
  if (load_set(train_csv, a, &s.train, &s.n_train, &s.max_frames, &s.max_labels, &dtrain) ||
      load_set(dev_csv, a, &s.dev, &s.n_dev, &s.max_frames, &s.max_labels, &ddev))
    return 1;
  cls_engine_options eo = cls_engine_options_from_environment();
  eo.log = on_log;
  eo.log_level = CLS_LOG_NOTICE;
  int sel[8], n_sel = 0;
  if (cls_engine_create(&eo, &s.e) != CLS_OK || cls_engine_select(s.e, devices, sel, 8, &n_sel) != CLS_OK ||
      cls_engine_prepare(s.e, sel, &n_sel) != CLS_OK || n_sel < 2) {
    fprintf(stderr, "bench_strategies: need two devices (%s): %s\n", devices, s.e ? cls_engine_error(s.e) : "");
    return 1;
  }
  /* Device A is the one with more compute units (the fast one; it also holds two towers). */
  if (cls_engine_device(s.e, sel[1])->compute_units > cls_engine_device(s.e, sel[0])->compute_units) {
    int x = sel[0];
    sel[0] = sel[1];
    sel[1] = x;
  }
  const cls_device_info *d0 = cls_engine_device(s.e, sel[0]), *d1 = cls_engine_device(s.e, sel[1]);
  printf("bench_strategies: H=%d, batch %d per tower, %.0f s of training per configuration, %d training / %d dev "
         "utterances\n  device A = %d:%d %s\n  device B = %d:%d %s\n",
         s.H, s.B, s.seconds, s.n_train, s.n_dev, d0->platform_index, d0->device_index, d0->name, d1->platform_index,
         d1->device_index, d1->name);
  struct {
    const char *name;
    int devs, first, per_device, batch_mult, no_overlap;
    cls_strategy strategy;
    cls_balance balance;
  } configs[] = {
      {"A alone", 1, 0, 1, 1, 0, CLS_STRATEGY_HYBRID, CLS_BALANCE_EQUAL},
      {"B alone", 1, 1, 1, 1, 0, CLS_STRATEGY_HYBRID, CLS_BALANCE_EQUAL},
      {"sync A+B", 2, 0, 1, 1, 0, CLS_STRATEGY_SYNC, CLS_BALANCE_EQUAL},
      {"async A+B", 2, 0, 1, 1, 0, CLS_STRATEGY_ASYNC, CLS_BALANCE_EQUAL},
      {"hybrid-equal A+B", 2, 0, 1, 1, 0, CLS_STRATEGY_HYBRID, CLS_BALANCE_EQUAL},
      {"hybrid-auto A+B", 2, 0, 1, 1, 0, CLS_STRATEGY_HYBRID, CLS_BALANCE_AUTO},
      {"hybrid-auto A+B, no overlap", 2, 0, 1, 1, 1, CLS_STRATEGY_HYBRID, CLS_BALANCE_AUTO},
      {"A alone, batch 2B", 1, 0, 1, 2, 0, CLS_STRATEGY_HYBRID, CLS_BALANCE_EQUAL},
      {"2 towers on A", 1, 0, 2, 1, 0, CLS_STRATEGY_HYBRID, CLS_BALANCE_EQUAL},
  };
  const int n_configs = (int)(sizeof configs / sizeof *configs);
  run_result r[16];
  memset(r, 0, sizeof r);
  int failed = 0;
  for (int c = 0; c < n_configs; c++) {
    if (!chosen(only, configs[c].name)) continue;
    fprintf(stderr, "[%d/%d] %s ...\n", c + 1, n_configs, configs[c].name);
    int bad = run(&s, sel + configs[c].first, configs[c].devs, configs[c].strategy, configs[c].balance,
                  configs[c].per_device, s.B * configs[c].batch_mult, configs[c].no_overlap, &r[c]);
    /* Two towers on one device may be refused (PoCL's basic device): reported, not a failure. */
    if (configs[c].per_device == 1) failed |= bad;
  }
  printf("\n%-30s %12s %10s %10s %10s\n", "configuration", "audio-s/s", "steps", "steps/s", "dev loss");
  for (int c = 0; c < n_configs; c++) {
    if (!chosen(only, configs[c].name)) {
      printf("%-30s %12s\n", configs[c].name, "not run");
      continue;
    }
    printf("%-30s %12.2f %10.0f %10.3f %10.3f\n", configs[c].name, r[c].audio_s / r[c].wall_s, r[c].steps,
           r[c].steps / r[c].wall_s, r[c].dev_loss);
    if (json)
      printf("{\"bench\":\"towers\",\"config\":\"%s\",\"audio_s_per_s\":%.4f,\"steps\":%.0f,\"wall_s\":%.3f,"
             "\"dev_loss\":%.5f}\n",
             configs[c].name, r[c].audio_s / r[c].wall_s, r[c].steps, r[c].wall_s, r[c].dev_loss);
  }
  double tA = r[0].audio_s / r[0].wall_s, tB = r[1].audio_s / r[1].wall_s;
  double auto_t = r[5].audio_s / r[5].wall_s, equal_t = r[4].audio_s / r[4].wall_s;
  double no_overlap_t = r[6].audio_s / r[6].wall_s;
  if (r[0].wall_s > 0 && r[5].wall_s > 0)
    printf("\nhybrid-auto A+B against A alone: %.3f x its throughput (a slow B must cost nothing: target >= 0.95)",
           auto_t / tA);
  printf("\nstraggler efficiency: hybrid-auto %.3f, hybrid-equal %.3f (throughput / (A alone + B alone), target >= 0.9)\n",
         auto_t / (tA + tB), equal_t / (tA + tB));
  printf("overlapped gradient read-back: %.3f x the throughput without it\n", auto_t / no_overlap_t);
  if (r[8].audio_s > 0 && r[7].audio_s > 0)
    printf("2 towers on A against 1 tower with the same global batch: %.3f x its throughput\n",
           (r[8].audio_s / r[8].wall_s) / (r[7].audio_s / r[7].wall_s));
  else
    printf("2 towers on A against 1 tower with the same global batch: not measured (see the error above)\n");
  cls_engine_destroy(s.e);
  free(s.train);
  free(s.dev);
  cls_dataset_destroy(dtrain);
  cls_dataset_destroy(ddev);
  cls_alphabet_destroy(a);
  return failed;
}
