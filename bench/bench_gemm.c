/* The GEMM entry point's backends side by side on each OpenCL device: every GEMM shape of a training
 * step (cls_bench_gemm_shapes: dense, LSTM input and recurrent products, weight gradients) timed through
 * cls_gemm with the own kernels and with CLBlast, in GFLOP/s and % of the measured FMA peak. The
 * sides take turns run by run (so that a busy machine slows both alike); each figure is the median
 * of --runs, after one warm-up each. The speed-up is the second side's time over the first's (above 1:
 * the first, own or the default build, is faster): per shape the median of the runs' ratios, for the whole
 * step the ratio of the summed medians. The recurrent products run on a B packed beforehand, as the LSTM
 * does. --check compares each side's result with a double host GEMM first (sampled rows).
 * --versus OPTIONS compares two builds of the own kernels instead of the two backends: a second engine
 * whose per-device kernel options are OPTIONS (as CLSPEECH_KERNEL_OPTIONS, "SEL=-D...;...") times the
 * own backend in turns with the first, in one process, so that a kernel variant is measured against the
 * default under the same moments of a noisy machine. --repeat N enqueues N calls back to back in each run
 * and reports the time per call (a product as the training step enqueues it, behind other commands, rather
 * than alone on an idle queue). --beside also times a run of the FMA peak kernel after every turn (and one
 * before the first: cls_gemm_cases_turns_beside, which also gives a short product an untimed call before
 * each of its timed runs) and adds, per side, "% fs": the median of the runs at full speed (both
 * peak runs beside them at least CLS_BENCH_FULL_SPEED of the peak) as % of the peak, and "fs" how many runs
 * that is, so that a machine's slow stretches (seconds to minutes at half speed on a shared host) neither
 * lower a figure nor, for a product that waits on memory, raise it. --json adds one JSON object per shape
 * and side, a line each beginning with '{' (bench/compare_gemm.py reads them).
 *   bench_gemm [--n_hidden 512,2048] [--batch 16] [--time 150] [--runs 5] [--repeat 1] [--devices SEL]
 *              [--backends own,clblast | --versus OPTIONS] [--shapes NAME,NAME] [--beside] [--check] [--json] */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/internal/bench.h"

#define MAX_RUNS CLS_BENCH_MAX_RUNS
#define MAX_REPEAT 1000

static void usage(void) {
  fprintf(stderr, "usage: bench_gemm [--n_hidden 512,2048] [--batch 16] [--time 150] [--runs 5] [--repeat 1]\n"
                  "                  [--devices SEL] [--backends own,clblast | --versus OPTIONS] [--shapes NAME,NAME]\n"
                  "                  [--beside] [--check] [--json]\n");
}

static double gflops(const cls_gemm_shape *s, double ms) { return ms > 0 ? cls_gemm_flops(s) / (ms * 1e6) : 0; }

/* Whether `name` is one of the comma-separated `list` (NULL: every name). */
static int listed(const char *list, const char *name) {
  if (!list) return 1;
  size_t len = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += len)
    if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return 1;
  return 0;
}

/* One side of the comparison: a backend on an engine (the second engine of --versus for the second side). */
typedef struct side {
  cls_engine *engine;
  int device;
  cls_gemm_backend backend;
  const char *label;
  cl_command_queue queue;
  cls_gemm_cases *cases;
} side;

/* What every H's table is run with (the command line's --batch, --time, --runs, --repeat, --check, --json,
   --beside, --shapes). */
typedef struct run_options {
  int batch, time, runs, repeat, check, json, beside;
  const char *only; /* --shapes, or NULL for all */
} run_options;

/* One shape's figures on one side as a JSON line (with --beside, also the runs at full speed and their median
   ms, null when there is none). */
static void print_json(const side *sd, const cls_gemm_shape *s, const run_options *o, double ms, double peak,
                       int full_runs, double full_ms) {
  const cls_device_info *info = cls_engine_device(sd->engine, sd->device);
  printf("{\"shape\": \"%s\", \"n_hidden\": %d, \"m\": %d, \"n\": %d, \"k\": %d, \"trans_a\": %d, \"trans_b\": %d, "
         "\"packed_b\": %d, \"calls\": %d, \"side\": \"%s\", \"device\": \"%d:%d %s\", \"runs\": %d, \"repeat\": %d, "
         "\"ms\": %.6f, \"gflops\": %.3f, \"fma_peak_gflops\": %.3f",
         s->name, s->n_hidden, s->m, s->n, s->k, s->trans_a, s->trans_b, s->packed_b, s->calls, sd->label,
         info->platform_index, info->device_index, info->name, o->runs, o->repeat, ms, gflops(s, ms), peak);
  if (o->beside && full_runs > 0) printf(", \"full_speed_runs\": %d, \"full_speed_ms\": %.6f", full_runs, full_ms);
  else if (o->beside) printf(", \"full_speed_runs\": 0, \"full_speed_ms\": null");
  printf("}\n");
}

static int bench_model(side *sides, int n_sides, int H, const run_options *o, const cls_bench_peak *measured) {
  const double peak = measured->fma_gflops;
  const int runs = o->runs;
  cls_gemm_shape all[CLS_BENCH_MAX_SHAPES], shapes[CLS_BENCH_MAX_SHAPES];
  /* DeepSpeech's model for its English alphabet: 28 labels + the blank. */
  const cls_model_config model = cls_model_config_deepspeech(H, 28 + 1);
  const int n_all = cls_bench_gemm_shapes(&model, o->batch, o->time, all);
  int n = 0;
  for (int i = 0; i < n_all; i++)
    if (listed(o->only, all[i].name)) shapes[n++] = all[i];
  if (n == 0) return 0;
  cls_status st = CLS_OK;
  int bad = -1; /* the side whose engine holds the error */
  cls_bench_probe *probe = NULL; /* --beside: on the first side's engine and queue */
  for (int b = 0; b < n_sides; b++) {
    sides[b].queue = NULL;
    sides[b].cases = NULL;
  }
  for (int b = 0; b < n_sides && st == CLS_OK; b++) {
    side *sd = &sides[b];
    st = cls_bench_queue(sd->engine, sd->device, &sd->queue);
    if (st == CLS_OK) st = cls_gemm_cases_create(sd->engine, sd->device, sd->queue, shapes, n, &sd->cases);
    if (st == CLS_OK) st = cls_gemm_cases_set_backend(sd->cases, sd->backend);
    if (st == CLS_OK) cls_gemm_cases_set_repeat(sd->cases, o->repeat);
    if (st != CLS_OK) bad = b;
  }
  if (st == CLS_OK && o->beside) {
    st = cls_bench_probe_create(sides[0].engine, sides[0].device, sides[0].queue, measured, &probe);
    if (st != CLS_OK) bad = 0;
  }
  if (st == CLS_OK) {
    printf("\n  H=%d, B=%d, T=%d; %% of the measured FMA peak (%.1f GFLOP/s)", H, o->batch, o->time, peak);
    if (o->beside)
      printf("; %% fs: the median of the fs runs at full speed (both peak runs beside them >= %.0f %% of it)",
             100 * CLS_BENCH_FULL_SPEED);
    if (o->repeat > 1) printf("; ms per call, %d calls back to back in each run", o->repeat);
    printf("\n");
    printf("  %-13s %-20s %5s", "shape", "m x n x k", "calls");
    for (int b = 0; b < n_sides; b++) {
      printf(" | %-7s %9s %8s %6s", sides[b].label, "ms", "GFLOP/s", "%");
      if (o->beside) printf(" %6s %3s", "% fs", "fs");
    }
    printf("%s\n", n_sides == 2 ? " | speed-up" : "");
  }
  double step_ms[2] = {0, 0}, step_flops = 0;
  int failed = 0;
  for (int i = 0; i < n && st == CLS_OK; i++) {
    const cls_gemm_shape *s = &shapes[i];
    double t[CLS_BENCH_MAX_SIDES][MAX_RUNS] = {{0}}, ratio[MAX_RUNS], ms[2] = {0, 0}, full[2][MAX_RUNS];
    bool at_full[MAX_RUNS];
    int n_full = 0;
    for (int b = 0; b < n_sides && st == CLS_OK && o->check; b++) {
      bool ok = false;
      char detail[256];
      st = cls_gemm_cases_check(sides[b].cases, i, &ok, detail, sizeof detail);
      if (st != CLS_OK) bad = b;
      if (st == CLS_OK && !ok) {
        fprintf(stderr, "bench_gemm: %s on %s: wrong result: %s\n", s->name, sides[b].label, detail);
        failed = 1;
      }
    }
    if (o->beside) { /* the engine's protocol (cls_gemm_cases_turns_beside), the probe on side 0's engine */
      cls_gemm_cases *sets[CLS_BENCH_MAX_SIDES] = {sides[0].cases, n_sides > 1 ? sides[1].cases : NULL};
      int failed_side = -1;
      st = cls_gemm_cases_turns_beside(sets, n_sides, i, probe, peak, 1, runs, t, at_full, &failed_side);
      if (st != CLS_OK) bad = failed_side < 0 ? 0 : failed_side;
      for (int r = 0; r < runs && st == CLS_OK; r++) {
        if (!at_full[r]) continue;
        for (int b = 0; b < n_sides; b++) full[b][n_full] = t[b][r];
        n_full++;
      }
    } else {
      for (int r = 0; r < runs && st == CLS_OK; r++)
        for (int b = 0; b < n_sides && st == CLS_OK; b++)
          if ((st = cls_gemm_cases_time(sides[b].cases, i, r == 0, 1, &t[b][r], NULL)) != CLS_OK) bad = b;
    }
    if (st != CLS_OK) break;
    for (int r = 0; r < runs && n_sides == 2; r++) ratio[r] = t[0][r] > 0 ? t[1][r] / t[0][r] : 0;
    char mnk[48];
    snprintf(mnk, sizeof mnk, "%d x %d x %d%s%s", s->m, s->n, s->k, s->trans_a ? " At" : s->trans_b ? " Bt" : "",
             s->packed_b ? " P" : "");
    printf("  %-13s %-20s %5d", s->name, mnk, s->calls);
    double full_ms[2] = {-1, -1};
    for (int b = 0; b < n_sides; b++) {
      ms[b] = cls_bench_median(t[b], runs);
      step_ms[b] += s->calls * ms[b];
      printf(" | %-7s %9.3f %8.1f %6.1f", "", ms[b], gflops(s, ms[b]), peak > 0 ? 100 * gflops(s, ms[b]) / peak : 0);
      if (o->beside && n_full > 0) {
        full_ms[b] = cls_bench_median(full[b], n_full);
        printf(" %6.1f %3d", peak > 0 ? 100 * gflops(s, full_ms[b]) / peak : 0, n_full);
      } else if (o->beside) {
        printf(" %6s %3d", "-", 0);
      }
    }
    if (n_sides == 2) printf(" | %7.2fx", cls_bench_median(ratio, runs));
    printf("\n");
    for (int b = 0; b < n_sides && o->json; b++) print_json(&sides[b], s, o, ms[b], peak, n_full, full_ms[b]);
    fflush(stdout);
    step_flops += s->calls * cls_gemm_flops(s);
  }
  if (st == CLS_OK) {
    printf("  %-13s %-20s %5s", "whole step", "sum of calls x ms", "");
    for (int b = 0; b < n_sides; b++) {
      double g = step_ms[b] > 0 ? step_flops / (step_ms[b] * 1e6) : 0;
      printf(" | %-7s %9.1f %8.1f %6.1f", "", step_ms[b], g, peak > 0 ? 100 * g / peak : 0);
      if (o->beside) printf(" %6s %3s", "", "");
    }
    if (n_sides == 2) printf(" | %7.2fx", step_ms[0] > 0 ? step_ms[1] / step_ms[0] : 0);
    printf("\n");
    if (probe && cls_bench_peak_measured_slow(cls_bench_probe_best(probe), peak))
      printf("  note: a peak run beside the products read %.1f GFLOP/s, above the measured peak: the peak was "
             "measured in a slow stretch, so every %% above reads high; run again\n", cls_bench_probe_best(probe));
  } else if (bad >= 0) {
    fprintf(stderr, "bench_gemm: %s\n", cls_engine_error(sides[bad].engine));
  }
  cls_bench_probe_destroy(probe);
  for (int b = 0; b < n_sides; b++) {
    cls_gemm_cases_destroy(sides[b].cases);
    if (sides[b].queue) clReleaseCommandQueue(sides[b].queue);
  }
  return st != CLS_OK || failed;
}

/* An engine on the devices `spec` selects, prepared; NULL options: the environment's. */
static cls_engine *open_engine(const cls_engine_options *options, const char *spec, int *sel, int *n_sel) {
  cls_engine *e = NULL;
  cls_status st = cls_engine_create(options, &e);
  if (st == CLS_OK) st = cls_engine_select(e, spec, sel, 64, n_sel);
  if (st == CLS_OK) st = cls_engine_prepare(e, sel, n_sel);
  if (st != CLS_OK) {
    fprintf(stderr, "bench_gemm: %s\n", cls_engine_error(e));
    cls_engine_destroy(e);
    return NULL;
  }
  return e;
}

int main(int argc, char **argv) {
  const char *hidden = "512,2048", *devices = NULL, *backend_list = "own,clblast", *versus = NULL;
  run_options o = {16, 150, 5, 1, 0, 0, 0, NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--check")) {
      o.check = 1;
      continue;
    }
    if (!strcmp(a, "--json")) {
      o.json = 1;
      continue;
    }
    if (!strcmp(a, "--beside")) {
      o.beside = 1;
      continue;
    }
    if (!v) {
      usage();
      return 2;
    }
    if (!strcmp(a, "--n_hidden")) hidden = v;
    else if (!strcmp(a, "--batch")) o.batch = atoi(v);
    else if (!strcmp(a, "--time")) o.time = atoi(v);
    else if (!strcmp(a, "--runs")) o.runs = atoi(v);
    else if (!strcmp(a, "--repeat")) o.repeat = atoi(v);
    else if (!strcmp(a, "--devices")) devices = v;
    else if (!strcmp(a, "--backends")) backend_list = v;
    else if (!strcmp(a, "--versus")) versus = v;
    else if (!strcmp(a, "--shapes")) o.only = v;
    else {
      usage();
      return 2;
    }
    i++;
  }
  /* A number out of its range is named with its value and range, then the usage. */
  const struct {
    const char *flag;
    int value, low, high;
  } ranges[] = {{"--batch", o.batch, 1, INT_MAX}, {"--time", o.time, 1, INT_MAX}, {"--runs", o.runs, 1, MAX_RUNS},
                {"--repeat", o.repeat, 1, MAX_REPEAT}};
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
    if (ranges[r].value < ranges[r].low || ranges[r].value > ranges[r].high) {
      if (ranges[r].high == INT_MAX)
        fprintf(stderr, "bench_gemm: %s %d: must be %d or more\n", ranges[r].flag, ranges[r].value, ranges[r].low);
      else
        fprintf(stderr, "bench_gemm: %s %d: must be %d..%d\n", ranges[r].flag, ranges[r].value, ranges[r].low,
                ranges[r].high);
      usage();
      return 2;
    }
  cls_gemm_backend backends[2];
  int n_backends = 0;
  if (versus) backends[n_backends++] = CLS_GEMM_BACKEND_OWN;
  else {
    if (strstr(backend_list, "own")) backends[n_backends++] = CLS_GEMM_BACKEND_OWN;
    if (strstr(backend_list, "clblast")) backends[n_backends++] = CLS_GEMM_BACKEND_CLBLAST;
  }
  if (n_backends == 0) {
    usage();
    return 2;
  }
  int sel[64], n_sel = 0, sel2[64], n_sel2 = 0;
  cls_engine *e = open_engine(NULL, devices, sel, &n_sel), *e2 = NULL;
  if (!e) return 1;
  if (versus) {
    cls_engine_options eo = cls_engine_options_from_environment();
    eo.kernel_options = versus;
    e2 = open_engine(&eo, devices, sel2, &n_sel2);
    if (!e2 || n_sel2 != n_sel) {
      if (e2) fprintf(stderr, "bench_gemm: --versus selected %d devices, the first engine %d\n", n_sel2, n_sel);
      cls_engine_destroy(e2);
      cls_engine_destroy(e);
      return 1;
    }
  }
  int rc = 0;
  for (int d = 0; d < n_sel; d++) {
    const cls_device_info *info = cls_engine_device(e, sel[d]);
    cls_bench_config cfg = {.n_hidden = 512, .batch = o.batch, .time = o.time, .runs = o.runs, .n_classes = 28 + 1};
    cls_bench_peak peak;
    if (cls_bench_peak_run(e, sel[d], &cfg, &peak) != CLS_OK) {
      fprintf(stderr, "bench_gemm: %s\n", cls_engine_error(e));
      rc = 1;
      continue;
    }
    printf("device %d:%d %s (%s): FMA peak %.1f GFLOP/s, device copy %.1f GB/s; build options %s\n",
           info->platform_index, info->device_index, info->name, info->platform_version, peak.fma_gflops, peak.copy_gbs,
           cls_engine_build_options(e, sel[d]));
    side sides[2];
    int n_sides = 0;
    for (int b = 0; b < n_backends; b++)
      sides[n_sides++] = (side){e, sel[d], backends[b], cls_gemm_backend_name(backends[b]), NULL, NULL};
    if (e2) {
      sides[n_sides++] = (side){e2, sel2[d], CLS_GEMM_BACKEND_OWN, "versus", NULL, NULL};
      printf("  versus: build options %s\n", cls_engine_build_options(e2, sel2[d]));
    }
    for (const char *h = hidden; *h;) {
      int H = atoi(h);
      if (H > 0) rc |= bench_model(sides, n_sides, H, &o, &peak);
      const char *comma = strchr(h, ',');
      h = comma ? comma + 1 : h + strlen(h);
    }
  }
  cls_engine_destroy(e2);
  cls_engine_destroy(e);
  return rc;
}
