/* What `clspeech bench` measured, and its three outputs: the table (stdout), the JSON file (schema in
 * docs/bench.md) and the SVG plot comparing devices. cmd_bench.c fills the records; this pair only
 * formats them. */
#ifndef CLS_BENCH_REPORT_H
#define CLS_BENCH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "clspeech/internal/bench.h"
#include "json_out.h"

#define BENCH_MAX_HIDDEN 8

typedef struct bench_model_result {
  int n_hidden;
  bool done;                    /* every figure below was measured */
  int n_shapes;
  cls_gemm_shape shapes[CLS_BENCH_MAX_SHAPES];
  double gemm_ms[CLS_BENCH_MAX_SHAPES];      /* median run */
  double gemm_best_ms[CLS_BENCH_MAX_SHAPES]; /* best run */
  double probe_best_gflops;                  /* the fastest peak run beside them (cls_bench_probe_best) */
  int gemm_full_runs[CLS_BENCH_MAX_SHAPES];  /* runs at full speed (cls_gemm_cases_time_beside) */
  double gemm_full_ms[CLS_BENCH_MAX_SHAPES]; /* their median, -1 when there is none */
  int gemm_calls_per_run[CLS_BENCH_MAX_SHAPES]; /* back to back in each timed run (cls_gemm_cases_set_run_ms) */
  cls_bench_ops ops;
  cls_bench_train train;
  cls_bench_profile profile;    /* one step by op (measured with train) */
  bool have_train_after;        /* the training step again, after --tune */
  cls_bench_train train_after;
} bench_model_result;

typedef struct bench_device_result {
  int index;                    /* engine index */
  const cls_device_info *info;
  char *error;                  /* NULL, or why the device's bench stopped */
  bool have_peak, have_mfcc;
  cls_bench_peak peak;
  cls_bench_mfcc mfcc;
  int n_models;
  bench_model_result models[BENCH_MAX_HIDDEN];
  /* the stored GEMM tuning found when the bench started */
  cls_tuning_read stored;       /* NONE, OK (loaded unless --tune) or BAD (ignored) */
  bool stored_applied;
  char stored_path[1200];
  char stored_text[1024];       /* its parameters, or why it was ignored */
  /* --tune */
  bool tuned;
  int n_tune_shapes;
  cls_gemm_shape tune_shapes[CLS_BENCH_MAX_SHAPES * 4];
  cls_gemm_tune_result tune;
  bool tune_same_kernels;       /* the "after" training step ran the same (own) GEMM kernels as before */
  bool own_tuned;               /* the own kernels' search ran (--tune_kernels own) */
  cls_own_tune_result own_tune;
} bench_device_result;

typedef struct bench_run {
  int n_hidden[BENCH_MAX_HIDDEN];
  int n_n_hidden;
  int batch, time, runs;
  int n_classes;                /* the model's outputs: the alphabet's labels + the blank */
  bool tune;
  bool gemm_tuning;             /* the engine loads stored GEMM tuning (CLSPEECH_GEMM_TUNING not off) */
  int tune_candidates;
  bool tune_clblast, tune_own;  /* --tune_kernels */
  double tune_budget;           /* --tune_budget, seconds */
  const char *tune_try;         /* --tune_try, or NULL */
  const char *selection;        /* --devices, or NULL */
  int n_devices;
  bench_device_result *devices;
  /* all devices together as towers (hook; not measured yet) */
  bool towers_measured;
  char towers_note[256];
  cls_bench_train towers;
} bench_run;

/* GFLOP/s of `flops` in `ms` (0 when ms <= 0). */
double bench_gflops(double flops, double ms);

/* The table of one device (called as each device finishes), and the closing lines. */
void bench_print_device(FILE *out, const bench_run *run, const bench_device_result *d);
void bench_print_summary(FILE *out, const bench_run *run);

/* 0, or -1 with `err` set. */
int bench_write_json(const char *path, const bench_run *run, cls_error *err);
int bench_write_svg(const char *path, const bench_run *run, cls_error *err);

/* The own kernels' tuning (bench_report_own.c): its table rows, and its JSON object. */
void bench_print_own_tuning(FILE *out, const bench_device_result *d);
json_t *bench_json_own_tuning(const bench_device_result *d);

#endif
