/* `clspeech bench [--devices SEL] [--n_hidden 512,2048] [--batch 16] [--time 150] [--runs 5]
 * [--json FILE] [--plot FILE.svg] [--tune [--tune_kernels clblast,own] [--tune_candidates 6]
 * [--tune_budget 300] [--tune_try OPTIONS]]`: per selected device, the measured peak, SGEMM at the
 * model's shapes, the ops, MFCC, the whole training step and one step profiled by op
 * (clspeech/internal/bench.h); with --tune, the CLBlast GEMM search and our own kernels' search, whose
 * winners every later command loads (engine/device/gemm_tuning.h), reported before and after. Progress goes to stderr, the table to stdout, JSON
 * and SVG to files (bench_report.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_report.h"
#include "cli.h"
#include "flags.h"
#include "clspeech/data.h"

/* DeepSpeech's English alphabet (data/alphabet.txt): a-z, space and apostrophe. */
#define BENCH_ENGLISH_LABELS 28

typedef struct progress_state {
  const cls_device_info *device;
  bool tty;
  bool open_line; /* a \r line is on the terminal */
} progress_state;

static void on_progress(void *user, const char *stage) {
  progress_state *p = user;
  char id[16] = "";
  if (p->device) snprintf(id, sizeof id, "%d:%d ", p->device->platform_index, p->device->device_index);
  if (p->tty) {
    fprintf(stderr, "\r\033[Kclspeech bench: %s%.100s", id, stage);
    p->open_line = true;
  } else {
    fprintf(stderr, "clspeech bench: %s%s\n", id, stage);
  }
  fflush(stderr);
}

static void end_progress(progress_state *p) {
  if (p->tty && p->open_line) fprintf(stderr, "\r\033[K");
  p->open_line = false;
}

static int parse_hidden(const char *text, bench_run *run) {
  run->n_n_hidden = 0;
  const char *s = text;
  while (*s) {
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1 || v > 8192 || (*end && *end != ',') || run->n_n_hidden == BENCH_MAX_HIDDEN) return -1;
    run->n_hidden[run->n_n_hidden++] = (int)v;
    s = *end ? end + 1 : end;
  }
  return run->n_n_hidden ? 0 : -1;
}

/* Keeps the engine's error for the device record and says it on stderr. */
static void device_failed(cls_engine *engine, bench_device_result *d, const char *what) {
  const char *msg = cls_engine_error(engine);
  size_t n = strlen(what) + strlen(msg) + 4;
  d->error = malloc(n);
  if (d->error) snprintf(d->error, n, "%s: %s", what, msg);
  fprintf(stderr, "clspeech bench: device %d:%d (%s): %s: %s\n", d->info->platform_index, d->info->device_index,
          d->info->name, what, msg);
}

static cls_status bench_model(cls_engine *engine, bench_run *run, bench_device_result *d, bench_model_result *m,
                              cls_bench_config *cfg) {
  cls_status st = CLS_OK;
  const cls_model_config model = cls_bench_model(cfg);
  m->n_shapes = cls_bench_gemm_shapes(&model, run->batch, run->time, m->shapes);
  cl_command_queue q = NULL;
  cls_gemm_cases *cases = NULL;
  cls_bench_probe *probe = NULL; /* with a measured peak (d->have_peak): each run timed beside it */
  st = cls_bench_queue(engine, d->index, &q);
  if (st == CLS_OK) st = cls_gemm_cases_create(engine, d->index, q, m->shapes, m->n_shapes, &cases);
  if (st == CLS_OK && d->have_peak) st = cls_bench_probe_create(engine, d->index, q, &d->peak, &probe);
  if (st == CLS_OK) cls_gemm_cases_set_run_ms(cases, CLS_BENCH_RUN_MS); /* runs as long as the probe's */
  for (int i = 0; i < m->n_shapes && st == CLS_OK; i++) {
    const cls_gemm_shape *s = &m->shapes[i];
    char stage[160];
    snprintf(stage, sizeof stage, "H=%d sgemm %s [%d x %d x %d]%s", m->n_hidden, s->name, s->m, s->n, s->k,
             i == 0 ? " (the first SGEMM may compile CLBlast's kernels)" : "");
    on_progress(cfg->user, stage);
    if (!probe) {
      st = cls_gemm_cases_time(cases, i, 1, run->runs, &m->gemm_ms[i], &m->gemm_best_ms[i]);
      m->gemm_calls_per_run[i] = cls_gemm_cases_repeat(cases);
      continue;
    }
    cls_bench_beside b;
    st = cls_gemm_cases_time_beside(cases, i, probe, d->peak.fma_gflops, 1, run->runs, &b);
    m->gemm_calls_per_run[i] = cls_gemm_cases_repeat(cases);
    m->gemm_ms[i] = b.median_ms;
    m->gemm_best_ms[i] = b.best_ms;
    m->gemm_full_runs[i] = b.full_runs;
    m->gemm_full_ms[i] = b.full_median_ms;
  }
  m->probe_best_gflops = cls_bench_probe_best(probe);
  cls_bench_probe_destroy(probe);
  cls_gemm_cases_destroy(cases);
  if (q) clReleaseCommandQueue(q);
  if (st == CLS_OK) st = cls_bench_ops_run(engine, d->index, cfg, &m->ops);
  if (st == CLS_OK)
    st = cls_bench_train_profile_run(engine, d->index, cfg, m->shapes, m->gemm_ms, m->n_shapes, &m->train, &m->profile);
  m->done = st == CLS_OK;
  return st;
}

static void bench_tune_clblast(cls_engine *engine, bench_run *run, bench_device_result *d, cls_bench_config *cfg,
                               double *before);

/* --tune: CLBlast's search and our own kernels' (--tune_kernels; the latter within --tune_budget). */
static void bench_tune(cls_engine *engine, bench_run *run, bench_device_result *d, cls_bench_config *cfg) {
  double before[CLS_BENCH_MAX_SHAPES * 4];
  d->n_tune_shapes = 0;
  for (int h = 0; h < d->n_models; h++) {
    const bench_model_result *m = &d->models[h];
    for (int i = 0; i < m->n_shapes && m->done; i++) {
      d->tune_shapes[d->n_tune_shapes] = m->shapes[i];
      before[d->n_tune_shapes++] = m->gemm_ms[i];
    }
  }
  if (d->n_tune_shapes == 0) return;
  if (run->tune_clblast) bench_tune_clblast(engine, run, d, cfg, before);
  /* our own kernels, on the devices that run them by default (CPUs; a GPU's are CLBlast's) */
  if (!run->tune_own || d->error || d->info->kind != CLS_DEVICE_CPU) return;
  cls_own_tune_options oo = {run->runs < 3 ? run->runs : 3, 3, run->tune_budget, run->tune_try, on_progress, cfg->user,
                             NULL, 0};
  cls_lstm_seq_case lstm[BENCH_MAX_HIDDEN];
  for (int h = 0; h < d->n_models && oo.n_lstm < BENCH_MAX_HIDDEN; h++) /* the step's LSTM at each H */
    if (d->models[h].done) lstm[oo.n_lstm++] = (cls_lstm_seq_case){cfg->time, cfg->batch, d->models[h].n_hidden};
  oo.lstm = lstm;
  if (cls_own_tune(engine, d->index, d->tune_shapes, d->n_tune_shapes, &oo, &d->own_tune) != CLS_OK) {
    device_failed(engine, d, "own kernels' tuning");
    return;
  }
  d->own_tuned = true;
}

/* CLBlast's search, and the training step again when it changed what the step runs. */
static void bench_tune_clblast(cls_engine *engine, bench_run *run, bench_device_result *d, cls_bench_config *cfg,
                               double *before) {
  cls_gemm_tune_options o = {run->runs, run->tune_candidates, on_progress, cfg->user};
  /* The SGEMM rows timed the device's GEMM backend of each shape class; the search compares CLBlast with
     CLBlast, so it times its own "before" unless every class is on CLBlast. */
  bool clblast = true;
  cls_gemm_backend before_backend[CLS_GEMM_N_CLASSES];
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) {
    before_backend[c] = cls_gemm_backend_of(engine, d->index, (cls_gemm_class)c);
    clblast = clblast && before_backend[c] == CLS_GEMM_BACKEND_CLBLAST;
  }
  cls_status st =
      cls_gemm_tune(engine, d->index, d->tune_shapes, d->n_tune_shapes, clblast ? before : NULL, &o, &d->tune);
  if (st != CLS_OK) {
    device_failed(engine, d, "GEMM tuning");
    return;
  }
  d->tuned = true;
  bool backend_moved = false; /* a class now on another backend than before the search */
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++)
    backend_moved |= d->tune.winners.backend[c] && d->tune.winners.backend[c] != (int)before_backend[c];
  if (d->tune.winners.n == 0 && !backend_moved) return; /* the defaults stay: no "after" training step */
  /* every class stays on the own kernels, which CLBlast's parameters do not touch */
  d->tune_same_kernels = !backend_moved;
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++)
    d->tune_same_kernels = d->tune_same_kernels && before_backend[c] == CLS_GEMM_BACKEND_OWN;
  for (int h = 0; h < d->n_models; h++) {
    bench_model_result *m = &d->models[h];
    if (!m->done) continue;
    cfg->n_hidden = m->n_hidden;
    if (cls_bench_train_run(engine, d->index, cfg, &m->train_after) == CLS_OK)
      m->have_train_after = true;
    else
      device_failed(engine, d, "training step after tuning");
  }
}

static void bench_device(cls_engine *engine, bench_run *run, bench_device_result *d) {
  progress_state ps = {d->info, isatty(2) != 0, false};
  cls_bench_config cfg = {.n_hidden = run->n_hidden[0], .batch = run->batch, .time = run->time, .runs = run->runs,
                         .progress = on_progress, .user = &ps, .n_classes = run->n_classes};
  cls_gemm_tuning stored;
  cls_error why;
  d->stored = cls_gemm_tuning_read(engine, d->index, &stored, d->stored_path, sizeof d->stored_path, &why);
  if (d->stored == CLS_TUNING_OK) cls_gemm_tuning_format(&stored, d->stored_text, sizeof d->stored_text);
  if (d->stored == CLS_TUNING_BAD) snprintf(d->stored_text, sizeof d->stored_text, "%.*s", (int)sizeof d->stored_text - 1, why.text);
  d->stored_applied = d->stored == CLS_TUNING_OK && !run->tune && stored.n > 0 && run->gemm_tuning;
  cls_status st = cls_bench_peak_run(engine, d->index, &cfg, &d->peak);
  d->have_peak = st == CLS_OK;
  if (st != CLS_OK) device_failed(engine, d, "peak");
  if (st == CLS_OK) st = cls_bench_mfcc_run(engine, d->index, &cfg, &d->mfcc);
  d->have_mfcc = d->have_peak && st == CLS_OK;
  if (st != CLS_OK && !d->error) device_failed(engine, d, "mfcc");
  for (int h = 0; h < run->n_n_hidden && st == CLS_OK; h++) {
    bench_model_result *m = &d->models[d->n_models++];
    m->n_hidden = cfg.n_hidden = run->n_hidden[h];
    st = bench_model(engine, run, d, m, &cfg);
    if (st != CLS_OK) {
      char what[64];
      snprintf(what, sizeof what, "H=%d", m->n_hidden);
      device_failed(engine, d, what);
    }
  }
  if (st == CLS_OK && run->tune) bench_tune(engine, run, d, &cfg);
  end_progress(&ps);
}

/* The flags of `clspeech bench`, as given. */
typedef struct bench_flags {
  const char *devices, *hidden, *json, *plot, *alphabet_path;
  int batch, time, runs, candidates;
  bool tune;
  const char *tune_kernels, *tune_try;
  int tune_budget;
} bench_flags;

/* The flags parsed into *b (which holds the defaults). cli_parse_flags' result: 0, 1 after --help, else an error. */
static int parse_bench_flags(int argc, char **argv, bench_flags *b) {
  cli_flag flags[] = {
      {"devices", CLI_STRING, &b->devices,
       "devices to benchmark: all, gpu, cpu, accelerator, P:D indices or name substrings, comma-separated "
       "(default: $CLSPEECH_DEVICES, else every GPU, else every CPU device)", false},
      {"n_hidden", CLI_STRING, &b->hidden, "model widths to benchmark, comma-separated (DeepSpeech's --n_hidden)",
       false},
      {"alphabet_config_path", CLI_STRING, &b->alphabet_path,
       "the alphabet of the model to benchmark: its labels + 1 (the blank) are the output classes (default: "
       "DeepSpeech's English alphabet, 28 labels)", false},
      {"batch", CLI_INT, &b->batch, "utterances per batch (B)", false},
      {"time", CLI_INT, &b->time, "frames per utterance (T; 20 ms each, so 150 is 3 s of audio)", false},
      {"runs", CLI_INT, &b->runs, "timed runs per measurement, after one warm-up run; the median is reported", false},
      {"json", CLI_STRING, &b->json, "write every figure as JSON to this file (- for stdout; schema in docs/bench.md)",
       false},
      {"plot", CLI_STRING, &b->plot, "write an SVG plot comparing the devices to this file", false},
      {"tune", CLI_BOOL, &b->tune,
       "search CLBlast's GEMM parameters for these shapes on each device, check every candidate, and store the "
       "winners in the kernel cache folder, where training loads them", false},
      {"tune_candidates", CLI_INT, &b->candidates,
       "candidate pairs (Xgemm + XgemmDirect) --tune tries from the device's list of 8, best bets first; each costs "
       "one CLBlast compile (about 20 s on PoCL) and its timings",
       false},
      {"tune_kernels", CLI_STRING, &b->tune_kernels,
       "what --tune searches: clblast (CLBlast's parameters), own (the tile sizes of our own GEMM kernels and of the "
       "LSTM's one-kernel recurrence, on CPU devices), or both, comma-separated", false},
      {"tune_budget", CLI_INT, &b->tune_budget,
       "seconds the own kernels' search may take per device: no candidate starts after them (its final "
       "comparison still runs; CLBlast's search is bounded by --tune_candidates)", false},
      {"tune_try", CLI_STRING, &b->tune_try,
       "a candidate of your own for the own kernels' search, -D items after the device's defaults (such as "
       "\"-DCLS_GEMM_MR=8 -DCLS_GEMM_NV=3\"): checked and timed like the others", false},
  };
  return cli_parse_flags(argc, argv, 2, flags, (int)(sizeof flags / sizeof flags[0]), "bench",
                         "Benchmarks each device: measured peak, SGEMM at the model's shapes, LSTM, CTC, Adam, MFCC, "
                         "the whole training step and one step by op;\nwith --tune, searches and stores CLBlast GEMM "
                         "parameters per device.",
                         NULL, 0, NULL);
}

/* The flags checked and set into *run (which is zeroed). 0 or the exit status. */
static int bench_run_from_flags(const bench_flags *b, bench_run *run) {
  if (parse_hidden(b->hidden, run)) {
    fprintf(stderr, "clspeech bench: --n_hidden expects up to %d comma-separated widths 1..8192, got \"%s\"\n",
            BENCH_MAX_HIDDEN, b->hidden);
    return CLI_EXIT_USAGE;
  }
  const struct {
    const char *flag;
    int value, low, high;
  } ranges[] = {{"--batch", b->batch, 1, 4096},
                {"--time", b->time, 4, 100000},
                {"--runs", b->runs, 1, CLS_BENCH_MAX_RUNS},
                {"--tune_candidates", b->candidates, 1, 8},
                {"--tune_budget", b->tune_budget, 10, 86400}};
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
    if (ranges[r].value < ranges[r].low || ranges[r].value > ranges[r].high) {
      fprintf(stderr, "clspeech bench: %s must be %d..%d, got %d\n", ranges[r].flag, ranges[r].low, ranges[r].high,
              ranges[r].value);
      return CLI_EXIT_USAGE;
    }
  /* The output classes: the alphabet's labels + the blank; DeepSpeech's English alphabet (a-z, space and
   * apostrophe) when none is given. */
  run->n_classes = BENCH_ENGLISH_LABELS + 1;
  if (*b->alphabet_path) {
    cls_error err;
    cls_alphabet *alphabet = NULL;
    if (cls_alphabet_load(b->alphabet_path, &alphabet, &err) != CLS_OK) {
      fprintf(stderr, "clspeech bench: --alphabet_config_path: %s\n", err.text);
      return CLI_EXIT_USAGE;
    }
    run->n_classes = cls_alphabet_size(alphabet) + 1;
    cls_alphabet_destroy(alphabet);
  }
  run->batch = b->batch;
  run->time = b->time;
  run->runs = b->runs;
  run->tune = b->tune;
  run->tune_candidates = b->candidates;
  run->tune_budget = b->tune_budget;
  run->tune_try = *b->tune_try ? b->tune_try : NULL;
  for (const char *k = b->tune_kernels; *k;) {
    size_t n = strcspn(k, ",");
    if (n == 7 && !strncmp(k, "clblast", 7)) run->tune_clblast = true;
    else if (n == 3 && !strncmp(k, "own", 3)) run->tune_own = true;
    else {
      fprintf(stderr, "clspeech bench: --tune_kernels takes clblast, own or both comma-separated, got \"%s\"\n",
              b->tune_kernels);
      return CLI_EXIT_USAGE;
    }
    k += n + (k[n] == ',');
  }
  if (!run->tune_clblast && !run->tune_own) {
    fprintf(stderr, "clspeech bench: --tune_kernels is empty\n");
    return CLI_EXIT_USAGE;
  }
  run->selection = *b->devices ? b->devices : NULL;
  return 0;
}

/* The engine and the devices the flags select, prepared (--tune: without stored tuning, since it measures
 * "before" with CLBlast's defaults), and run->devices allocated for them. 0 or the exit status. */
static int open_bench_devices(const bench_flags *b, bench_run *run, cls_engine **engine, int **sel) {
  int rc = cli_engine_open(engine);
  if (rc) return rc;
  run->gemm_tuning = cls_engine_get_options(*engine)->gemm_tuning;
  int n = cls_engine_device_count(*engine), n_sel = 0;
  *sel = calloc((size_t)n, sizeof **sel);
  cls_status st = *sel ? cls_engine_select(*engine, b->devices, *sel, n, &n_sel) : CLS_ERR_OUT_OF_MEMORY;
  if (st == CLS_OK)
    st = b->tune ? cls_engine_prepare_untuned(*engine, *sel, &n_sel) : cls_engine_prepare(*engine, *sel, &n_sel);
  if (st != CLS_OK) return cli_report("bench", *engine, st);
  run->devices = calloc((size_t)n_sel, sizeof *run->devices);
  if (!run->devices) {
    fprintf(stderr, "clspeech bench: out of memory\n");
    return CLI_EXIT_FAILURE;
  }
  run->n_devices = n_sel;
  return 0;
}

/* Each device measured in turn, its table printed as it ends (unless the JSON goes to stdout), then all
 * devices together as towers: training's step (engine/bench/bench_step.c). Whether a device failed. */
static bool bench_all_devices(cls_engine *engine, const int *sel, bench_run *run, bool to_stdout) {
  bool failed = false;
  for (int i = 0; i < run->n_devices; i++) {
    bench_device_result *d = &run->devices[i];
    d->index = sel[i];
    d->info = cls_engine_device(engine, sel[i]);
    fprintf(stderr, "clspeech bench: device %d:%d (%s)%s...\n", d->info->platform_index, d->info->device_index,
            d->info->name, run->tune ? ", then GEMM tuning (minutes)" : "");
    bench_device(engine, run, d);
    failed |= d->error != NULL;
    if (!to_stdout) bench_print_device(stdout, run, d);
    fflush(stdout);
  }
  if (run->n_devices > 1) {
    cls_bench_config cfg = {.n_hidden = run->n_hidden[0], .batch = run->batch, .time = run->time, .runs = run->runs,
                            .n_classes = run->n_classes};
    run->towers_measured = cls_bench_towers_run(engine, sel, run->n_devices, &cfg, &run->towers) == CLS_OK;
    snprintf(run->towers_note, sizeof run->towers_note, "%s", run->towers_measured ? "" : cls_engine_error(engine));
  }
  return failed;
}

/* --json and --plot written. Whether one failed. */
static bool write_bench_files(const bench_flags *b, const bench_run *run, bool to_stdout) {
  bool failed = false;
  cls_error err;
  if (*b->json && bench_write_json(b->json, run, &err)) {
    fprintf(stderr, "clspeech bench: --json: %s\n", err.text);
    failed = true;
  } else if (*b->json && !to_stdout) {
    fprintf(stderr, "clspeech bench: JSON written to %s\n", b->json);
  }
  if (*b->plot && bench_write_svg(b->plot, run, &err)) {
    fprintf(stderr, "clspeech bench: --plot: %s\n", err.text);
    failed = true;
  } else if (*b->plot) {
    fprintf(stderr, "clspeech bench: plot written to %s\n", b->plot);
  }
  return failed;
}

int cmd_bench(int argc, char **argv) {
  bench_flags b = {"", "512,2048", "", "", "", 16, 150, 5, 6, false, "clblast,own", "", 300};
  int rc = parse_bench_flags(argc, argv, &b);
  if (rc) return rc == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
  bench_run run;
  memset(&run, 0, sizeof run);
  if ((rc = bench_run_from_flags(&b, &run))) return rc;
  cls_engine *engine = NULL;
  int *sel = NULL;
  rc = open_bench_devices(&b, &run, &engine, &sel);
  if (!rc) {
    const bool to_stdout = !strcmp(b.json, "-");
    bool failed = bench_all_devices(engine, sel, &run, to_stdout);
    if (!to_stdout) bench_print_summary(stdout, &run);
    failed |= write_bench_files(&b, &run, to_stdout);
    rc = failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
  }
  for (int i = 0; i < run.n_devices; i++) free(run.devices[i].error);
  free(run.devices);
  free(sel);
  cls_engine_destroy(engine);
  return rc;
}
