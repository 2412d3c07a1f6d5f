/* clspeech internal API, bench layer (library clspeech_bench, above the engine, not installed): device
 * benchmarks (peaks, SGEMM at the model's shapes, ops, the training step, all devices as towers), the
 * host's batch loader, and the search for CLBlast GEMM parameters behind `clspeech bench --tune`; for
 * the clspeech command, the bench programs and the tests. */
#ifndef CLSPEECH_INTERNAL_BENCH_H
#define CLSPEECH_INTERNAL_BENCH_H

#include <stdbool.h>
#include "clspeech/data.h"
#include "clspeech/internal/ops.h"
#include "clspeech/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- bench ---- */
/* Device benchmarks behind `clspeech bench`: measured peak (FMA throughput, copy and host<->device
 * bandwidth), SGEMM at the DeepSpeech model's shapes, the ops (LSTM, CTC, Adam, MFCC) and the whole
 * training step. The peaks, GEMMs and ops are timed with OpenCL profiling events on a queue of the
 * bench's own, after a warm-up, as the median of several runs; the training step is training's own
 * (engine/train's cls_step_run on a trainer), timed by the wall clock. The engine measures and returns
 * numbers; the frontend prints them. bench_device.c owns the timing, peaks and GEMM cases;
 * bench_model.c the ops; bench_step.c the training step, on one device and on all as towers. */



#define CLS_BENCH_MAX_RUNS 64
#define CLS_BENCH_MAX_SHAPES 16

/* Called at each stage with a short description ("sgemm lstm_rec_fwd [16,512]x[512,2048]"). */
typedef void (*cls_bench_progress_fn)(void *user, const char *stage);

typedef struct cls_bench_config {
  int n_hidden;        /* H */
  int batch;           /* B utterances */
  int time;            /* T frames per utterance (all utterances full length) */
  int runs;            /* timed runs (median), after one warm-up run; 1..CLS_BENCH_MAX_RUNS */
  cls_bench_progress_fn progress; /* may be NULL */
  void *user;
  int n_classes;       /* the model's outputs: the alphabet's labels + 1 (the blank), at least 2 */
} cls_bench_config;

/* Sends a formatted stage line to cfg->progress (when set). */
void cls_bench_progress(const cls_bench_config *cfg, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The model the benches time: DeepSpeech's geometry (cls_model_config_deepspeech: 26 MFCC coefficients,
 * 9 frames of context, 20 ms per frame) at cfg->n_hidden units and cfg->n_classes outputs; its input
 * width is cls_model_input_width's. */
cls_model_config cls_bench_model(const cls_bench_config *cfg);

/* Label length used by the CTC and training-step benches for T frames: min(40, T/3), at least 1. */
int cls_bench_label_length(int time);

/* ---- timing ---- */

/* An in-order queue with profiling on the device's context (the caller releases it). The bench never
 * uses the device's own queue, whose properties belong to training. */
cls_status cls_bench_queue(cls_engine *engine, int device, cl_command_queue *out);

/* Enqueues one run of the measured work on q (it may also block, e.g. reading a result back). */
typedef cls_status (*cls_bench_op)(void *ctx, cl_command_queue q);

/* Runs `op` once to warm up, then `runs` times, each between two markers on the in-order queue, and
 * returns the median of (end of the second marker - end of the first) in ms, from the markers'
 * profiling events (CL_PROFILING_COMMAND_END): device time from the end of everything enqueued
 * before to the end of the op, host enqueue gaps inside the op included. */
cls_status cls_bench_time(cls_engine *engine, cl_command_queue q, cls_bench_op op, void *ctx, int runs,
                          double *median_ms);
/* The same with `warmups` (0 or more) warm-up runs. */
cls_status cls_bench_time_warm(cls_engine *engine, cl_command_queue q, cls_bench_op op, void *ctx, int warmups,
                               int runs, double *median_ms);
/* The same, giving the median in *median_ms and the best (shortest) run in *best_ms (either may be NULL). Work of other
 * programs (or of other guests on a shared host's cores) only ever lengthens a run, so the best run is
 * what the code does on an undisturbed device and the median what it typically does on this machine. */
cls_status cls_bench_time_stats(cls_engine *engine, cl_command_queue q, cls_bench_op op, void *ctx, int warmups,
                                int runs, double *median_ms, double *best_ms);

/* ---- peak ---- */

typedef struct cls_bench_peak {
  double fma_gflops;         /* max of the float4, float8 and float16 FMA kernels, each its best of >= 15 runs */
  double copy_gbs;           /* device buffer to device buffer by a kernel: (read + written bytes) / s */
  double host_to_device_gbs; /* clEnqueueWriteBuffer from pinned host memory (CL_MEM_ALLOC_HOST_PTR, mapped) */
  double device_to_host_gbs; /* clEnqueueReadBuffer into pinned host memory */
  size_t transfer_bytes;     /* bytes per copy/transfer */
  int fma_width;             /* the float width of the FMA kernel that gave fma_gflops (4, 8 or 16) */
} cls_bench_peak;

cls_status cls_bench_peak_run(cls_engine *engine, int device, const cls_bench_config *cfg, cls_bench_peak *out);

/* The median of v[0..n), n >= 1; sorts v (v[0] is then the smallest). */
double cls_bench_median(double *v, int n);
/* The device time of a finished command, from its profiling event, into *ms (0 when the event reports its
 * end before its start); the OpenCL error of reading it, else CL_SUCCESS. */
cl_int cls_bench_event_ms(cl_event event, double *ms);
/* Frames of utterance u of a varied batch of at most T: T - (u % 4) * (T / 10), the lengths bench_train's
 * batch and its PyTorch peer (bench/compare_train.py) use (at least 0.7 T, so never under 1). */
int cls_bench_varied_frames(int T, int u);

/* The peak beside other work: a machine shared with other tenants (a cloud guest's cores) can run the same
 * code at half its speed for seconds to minutes, so that a product timed in such a stretch against a peak
 * measured outside it reads half the fraction it reaches. A probe is one run of the peak's FMA kernel
 * (fma_width; float4 without a peak), sized once to at least 4 ms, timed on q whenever asked, so that a
 * fraction of the peak can compare two readings of the same moment. */
typedef struct cls_bench_probe cls_bench_probe;

cls_status cls_bench_probe_create(cls_engine *engine, int device, cl_command_queue q, const cls_bench_peak *peak,
                                  cls_bench_probe **out);
/* One timed run: its GFLOP/s in *gflops. */
cls_status cls_bench_probe_run(cls_bench_probe *probe, double *gflops);
/* The fastest of the probe's runs so far, GFLOP/s (0 before the first). */
double cls_bench_probe_best(const cls_bench_probe *probe);
/* Whether the fastest probe run beat the measured peak by more than CLS_BENCH_PEAK_SLACK: then the peak itself
 * was measured in a slow stretch, so that every % of it reads high and "full speed" means less (the frontends
 * say so under their tables). */
#define CLS_BENCH_PEAK_SLACK 1.10
bool cls_bench_peak_measured_slow(double probe_best_gflops, double peak_gflops);
void cls_bench_probe_destroy(cls_bench_probe *probe);

/* ---- SGEMM at the model's shapes ---- */

typedef struct cls_gemm_shape {
  char name[24];       /* "dense1_fwd", "lstm_rec_bwd", ... */
  int trans_a, trans_b;/* row-major C[m,n] = op(A)[m,k] * op(B)[k,n] */
  int m, n, k;
  int calls;           /* calls per training step */
  int n_hidden;        /* H the shape belongs to */
  int packed_b;        /* B packed once and used by every call (the LSTM's recurrent products): timed as
                          cls_gemm_packed on a B packed beforehand */
} cls_gemm_shape;

/* The GEMMs of one training step (forward and backward of the dense layers, the LSTM and the output
 * layer) of `model` (its n_hidden H, input width and classes) at B, T; returns how many were written (at
 * most CLS_BENCH_MAX_SHAPES). */
int cls_bench_gemm_shapes(const cls_model_config *model, int batch, int time, cls_gemm_shape *out);
/* 2*m*n*k */
double cls_gemm_flops(const cls_gemm_shape *s);

/* Device buffers and reference values for a set of shapes on one device. */
typedef struct cls_gemm_cases cls_gemm_cases;

cls_status cls_gemm_cases_create(cls_engine *engine, int device, cl_command_queue q, const cls_gemm_shape *shapes,
                                 int n, cls_gemm_cases **out);
void cls_gemm_cases_destroy(cls_gemm_cases *cases);
/* The cases run through cls_gemm with the device's backend per shape class (cls_gemm_backend_of);
 * this forces one (the CLBlast search times CLBlast whatever the device uses). */
cls_status cls_gemm_cases_set_backend(cls_gemm_cases *cases, cls_gemm_backend backend);
/* Calls of cls_gemm per timed run, enqueued back to back between the run's two markers (1 by default; at
 * least 1): the times cls_gemm_cases_time reports are per call, so that a product is also timed as the
 * training step enqueues it, behind other commands, not alone on an idle queue. */
void cls_gemm_cases_set_repeat(cls_gemm_cases *cases, int calls);
/* Calls per timed run chosen case by case instead (a min_run_ms of 0, the default, keeps set_repeat's): the
 * first time a case is timed, one call decides how many make a run of at least min_run_ms (at most
 * CLS_BENCH_MAX_CALLS_PER_RUN). clspeech bench asks for CLS_BENCH_RUN_MS, the length of one run of the peak
 * probe, so that a product and the peak it is a fraction of are timed alike: the wait for a run's end marker
 * (10-20 us on PoCL, docs/bench.md) is then a small part of either, and a short product's calls queue back to back, as the
 * training step queues its products, with no host wait between them. */
#define CLS_BENCH_RUN_MS 4.0
#define CLS_BENCH_MAX_CALLS_PER_RUN 64
void cls_gemm_cases_set_run_ms(cls_gemm_cases *cases, double min_run_ms);
/* The calls per timed run now (those chosen for the case timed last, with a min_run_ms) */
int cls_gemm_cases_repeat(const cls_gemm_cases *cases);
/* Median (and, when best_ms is not NULL, best) ms of cls_gemm on case i, after `warmups` warm-up runs. */
cls_status cls_gemm_cases_time(cls_gemm_cases *cases, int i, int warmups, int runs, double *median_ms,
                               double *best_ms);
/* A product timed beside the peak: max(warmups, 1) untimed warm-up runs and one timed run, then `runs` runs
 * of case i, one probe run before the first and one after each, and, for a product whose timed run took
 * under CLS_BENCH_REWARM_MS (all its calls: --repeat), one untimed call between each probe and the run it
 * precedes (a short product timed straight after the probe measured up to 1.5x slower than back to back:
 * lstm_rec_bwd at H = 512, 0.28 against 0.19 ms). A run is at full speed when both probes beside it read
 * at least CLS_BENCH_FULL_SPEED of the device's measured peak, peak_gflops (cls_bench_at_full_speed; a
 * peak_gflops of 0 counts every run): its time is then what the product takes on the device the peak was
 * measured on, where a run in a slow stretch says what it takes on a smaller machine (a product bound by
 * memory rather than by arithmetic may not even slow down there, so that dividing by the probe would
 * flatter it). */
#define CLS_BENCH_FULL_SPEED 0.85
#define CLS_BENCH_REWARM_MS 20.0
/* Whether a run between probe readings `before` and `after` (GFLOP/s) was at full speed against peak_gflops:
 * the slower of the two reads at least CLS_BENCH_FULL_SPEED of it. */
bool cls_bench_at_full_speed(double before, double after, double peak_gflops);
typedef struct cls_bench_beside {
  double median_ms, best_ms; /* over all the runs, per call, as cls_gemm_cases_time */
  int full_runs;             /* the runs at full speed */
  double full_median_ms;     /* their median; -1 when there is none */
} cls_bench_beside;

cls_status cls_gemm_cases_time_beside(cls_gemm_cases *cases, int i, cls_bench_probe *probe, double peak_gflops,
                                      int warmups, int runs, cls_bench_beside *out);
/* The same protocol for case i of up to CLS_BENCH_MAX_SIDES case sets of one device (on one engine or several,
 * as bench_gemm --versus compares two builds), taking turns run by run between the same probe runs: each
 * side's warm-ups and deciding run first, then per run every side in turn and one probe run. ms[side][run] is
 * each run's time per call and full[run] whether that turn was at full speed; on an error *failed is the side
 * whose engine holds it, or -1 for the probe's engine. */
#define CLS_BENCH_MAX_SIDES 2
cls_status cls_gemm_cases_turns_beside(cls_gemm_cases *const *sides, int n_sides, int i, cls_bench_probe *probe,
                                       double peak_gflops, int warmups, int runs, double (*ms)[CLS_BENCH_MAX_RUNS],
                                       bool *full, int *failed);
/* Runs case i once into a NaN-filled C and compares sampled rows (the first 16, the last 16, 16
 * spread between) with a double-precision host GEMM: |C - ref| <= 1e-4 * sum_k |A_ik B_kj| + 1e-6 per
 * element. *ok false (with the worst element in `detail`) on a mismatch; a CLBlast error is returned
 * as CLS_ERR_BLAS. The references are computed on the first call for each case and kept. */
cls_status cls_gemm_cases_check(cls_gemm_cases *cases, int i, bool *ok, char *detail, size_t detail_cap);

/* ---- ops (bench_model.c) and the training step (bench_step.c) ---- */

typedef struct cls_bench_ops {
  double lstm_fwd_ms, lstm_bwd_ms;   /* whole sequence of T steps */
  double lstm_fwd_flops, lstm_bwd_flops;
  double ctc_ms;                     /* loss + gradient of B utterances of T frames, 29 classes */
  int ctc_labels;
  double adam_ms;
  size_t n_params;
  double adam_bytes;                 /* 28 bytes per parameter: read p, m, v, g; write p, m, v */
} cls_bench_ops;

cls_status cls_bench_ops_run(cls_engine *engine, int device, const cls_bench_config *cfg, cls_bench_ops *out);

typedef struct cls_bench_mfcc {
  double ms;            /* B utterances of T frames: upload, framing, FFT, filterbank, DCT, context windows */
  double audio_seconds; /* seconds of audio in the batch */
} cls_bench_mfcc;

cls_status cls_bench_mfcc_run(cls_engine *engine, int device, const cls_bench_config *cfg, cls_bench_mfcc *out);

typedef struct cls_bench_train {
  double ms;            /* training's step (cls_step_run, bench_step.c): median wall time */
  double frames;        /* the frames of the (global) batch: T*B when every utterance is T frames */
  double frame_ms;      /* audio per frame: the MFCC window step (20 ms) */
  size_t n_params;
} cls_bench_train;

/* ---- training's step (bench_step.c) ----
 * What `clspeech train` runs per step: the training step of engine/train (cls_step_run, planned as
 * training plans it: the batch split over the towers, each tower's forward, CTC and backward pass, its
 * gradient read back to the host and reduced there, the reduced gradient uploaded and applied with Adam
 * on every replica; one tower alone keeps its gradient on its device) on a trainer of default options (dropout 0.05 as DeepSpeech's, learning rate 1e-4)
 * with a synthetic batch; wall-clock median of `runs` steps after `warmups`. */
typedef struct cls_bench_step_config {
  int n_hidden, n_classes;
  int batch;          /* utterances per tower (the global batch: batch x towers) */
  int time;           /* T, frames of the longest utterance */
  int labels;         /* labels per utterance; 0: cls_bench_label_length(time) */
  int varied;         /* 0: every utterance T frames; 1: utterance u has T - (u % 4) * (T / 10) (bench_train's batch,
                         and its PyTorch peer's) */
  int host_features;  /* 0 (`clspeech train`'s default): the batch carries audio (two tones and noise), its MFCC
                         and context windows computed on the device inside the step; 1: it carries context windows
                         (uniform in [-1, 1)), uploaded as they are (--features_device host) */
  int warmups, runs;  /* runs 1..CLS_BENCH_MAX_RUNS */
} cls_bench_step_config;

cls_status cls_bench_step_run(cls_engine *engine, const int *devices, int n, const cls_bench_step_config *config,
                              cls_bench_train *out);

/* Training's step (cls_bench_step_run) on one device, as `clspeech bench` times it: cfg's B utterances of T frames,
 * all T long, audio (training's default device features: the batch's MFCC is part of the step), 2 warm-up steps,
 * cfg->runs timed. */
cls_status cls_bench_train_run(cls_engine *engine, int device, const cls_bench_config *cfg, cls_bench_train *out);

/* ---- the batch loader (bench_loader.c) ----
 * Training's batch loader (engine/data's, as `clspeech train` starts it for an epoch) over utts[0 .. n)
 * with the --augment specifications given (host augmentations only: overlay is refused), decoding at
 * 16 kHz for the device-features path; the wall time from its start until `batches` batches were taken,
 * per batch (the consumer does nothing else). */
typedef struct cls_bench_loader_config {
  int batch, batches; /* utterances per batch; batches timed (at most n / batch) */
  int workers;        /* the loader's worker threads: 0 automatic */
  const char *const *augment; /* [n_augment] --augment values */
  int n_augment;
} cls_bench_loader_config;

typedef struct cls_bench_loader {
  double ms;            /* per batch */
  int workers;          /* the threads used (automatic resolved) */
  int batches;          /* batches taken */
  double audio_seconds; /* of audio in them */
} cls_bench_loader;

cls_status cls_bench_loader_run(const cls_utterance *utts, int n, const cls_bench_loader_config *config,
                                cls_bench_loader *out, cls_error *err);

/* ---- one training step by op (bench_profile.c, bench_step.c) ----
 * One more step of training's step after the timed ones (the batch's MFCC on the device first, as training
 * with device features runs it), every command the ops enqueue on the tower's compute queue recorded with
 * its OpenCL profiling event through the ops' profiling hook (ops_util.h), summed by op. */

#define CLS_BENCH_MAX_PROFILE_ROWS 64

typedef enum cls_profile_group {
  CLS_PROFILE_GEMM = 0,  /* one row per GEMM shape of the step */
  CLS_PROFILE_LSTM = 1,  /* LSTM kernels: gates forward and backward, bias gradient */
  CLS_PROFILE_DENSE = 2, /* dense layers' bias + activation (+ dropout) kernels, forward and backward */
  CLS_PROFILE_CTC = 3,
  CLS_PROFILE_ADAM = 4,
  CLS_PROFILE_MFCC = 5,  /* the batch's features: framing, FFT, filterbank, context windows, and the rest of the
                            marker span (uploads, the step's start) */
  CLS_PROFILE_COPY = 6,  /* fills, copies, transfers that report themselves */
  CLS_PROFILE_OTHER = 7, /* a kernel of no group above */
  CLS_PROFILE_WAIT = 8   /* the rest: wall time - every row above (with the GEMMs when they report no events) */
} cls_profile_group;
/* "gemm", "lstm", "dense", "ctc", "adam", "mfcc", "copy", "other", "wait" */
const char *cls_profile_group_name(cls_profile_group group);

typedef struct cls_bench_profile_row {
  char name[48];          /* kernel name ("lstm_gates_fwd"), "gemm lstm_rec_fwd" (the shape's name), ... */
  cls_profile_group group;
  int calls;              /* commands in the step */
  double ms;              /* sum of their device times (CL_PROFILING_COMMAND_END - START) */
  double flops;           /* GEMM rows: calls x 2mnk; else 0 */
  bool estimated;         /* an estimate: calls x the shape's ms timed alone in the SGEMM section */
} cls_bench_profile_row;

typedef struct cls_bench_profile {
  double wall_ms;         /* host clock: before the first enqueue to the return of clFinish */
  double device_ms;       /* device span: end of a marker before the step to the end of one after it */
  int commands;           /* commands recorded by the hook (MFCC's included) */
  bool gemm_events;       /* the GEMMs reported events: their rows are among rows[] */
  int n_rows;
  cls_bench_profile_row rows[CLS_BENCH_MAX_PROFILE_ROWS]; /* by group, then by ms; the last row is the wait row;
                                                             they sum to wall_ms */
  /* When the GEMMs reported no events their time is inside the wait row; these say how much of it they
   * would take as timed alone (estimated rows, heaviest first; 0 when gemm_events or no shapes given). */
  int n_gemm_estimates;
  cls_bench_profile_row gemm_estimates[CLS_BENCH_MAX_SHAPES];
} cls_bench_profile;

/* cls_bench_train_run, then (profile not NULL) one profiled step of the same trainer (cls_step_run: the MFCC of
 * the batch, forward, CTC, backward and Adam, the one tower's gradient left on its device).
 * shapes/gemm_ms: the SGEMM section's shapes at this H, B, T (cls_bench_gemm_shapes), which name the GEMM
 * rows, and ms per call, for the estimates when the GEMMs report no events (NULL: none). */
cls_status cls_bench_train_profile_run(cls_engine *engine, int device, const cls_bench_config *cfg,
                                       const cls_gemm_shape *shapes, const double *gemm_ms, int n_shapes,
                                       cls_bench_train *train, cls_bench_profile *profile);

/* ---- all devices together as towers (bench_step.c) ----
 * Training's step (cls_bench_step_run) on `n` devices as towers: a global batch of cfg->batch utterances
 * per tower (as DeepSpeech), split by measured speed (--balance auto), every tower's forward and backward
 * pass, the host reduction and Adam on every replica, device features as cls_bench_train_run; wall-clock
 * median of cfg->runs steps after two warm-up steps (which also measure the towers' speeds).
 * frames = T x the global batch. */
cls_status cls_bench_towers_run(cls_engine *engine, const int *devices, int n, const cls_bench_config *cfg,
                                cls_bench_train *out);

/* ---- the search (gemm_search.c) ---- */

typedef struct cls_gemm_tune_options {
  int runs;             /* timed runs (median) of "before" and "after"; candidates get min(runs, 3) */
  int max_candidates;   /* candidate pairs (Xgemm + XgemmDirect) to try, 1..8; 0: all 8 of the device's list */
  cls_bench_progress_fn progress;
  void *user;
} cls_gemm_tune_options;

/* What became of one configuration of a candidate pair. */
typedef enum cls_tune_state {
  CLS_TUNE_SKIPPED = 0,  /* no shape of its kernel (or the search stopped first) */
  CLS_TUNE_TIMED = 1,    /* checked and timed on every shape of its kernel */
  CLS_TUNE_DROPPED = 2,  /* its partial sum already exceeded the best total: slower, not finished */
  CLS_TUNE_REJECTED = 3, /* a wrong result, a CLBlast error, or parameters CLBlast refused */
  CLS_TUNE_MISFIT = 4    /* breaks CLBlast's constraints or the device's work-group size or local memory */
} cls_tune_state;
/* "skipped", "timed", "dropped", "rejected", "misfit" */
const char *cls_tune_state_name(cls_tune_state state);

#define CLS_GEMM_MAX_CANDIDATES 8

typedef struct cls_gemm_candidate {
  cls_gemm_params xgemm, direct;
  cls_tune_state xgemm_state, direct_state;
  double xgemm_ms, direct_ms;  /* sum of calls x ms over the shapes of its kernel (partial when dropped) */
} cls_gemm_candidate;

typedef struct cls_gemm_tune_result {
  int n_shapes;
  double before_ms[CLS_BENCH_MAX_SHAPES * 4]; /* per shape, as given or measured */
  double after_ms[CLS_BENCH_MAX_SHAPES * 4];  /* with the winners (= before when the defaults are kept) */
  double before_step_ms, after_step_ms;       /* sum over shapes of calls x ms */
  cls_gemm_tuning winners;                    /* what was stored (n == 0: the defaults were kept; backend[]:
                                                 the faster backend per shape class) */
  double own_ms[CLS_BENCH_MAX_SHAPES * 4];    /* per shape, our own kernels (infinite: a wrong result) */
  double class_ms[CLS_GEMM_N_CLASSES][2];     /* per shape class, sum of calls x ms: [0] own kernels, [1] CLBlast
                                                 as stored (after_ms) */
  int class_shapes[CLS_GEMM_N_CLASSES];       /* shapes of each class among the tuned ones */
  int candidates;                             /* pairs tried */
  cls_gemm_candidate candidate[CLS_GEMM_MAX_CANDIDATES];
  int best_xgemm, best_direct;                /* indices into candidate[], -1: none */
  int split;                                  /* the search's own XGEMM_MIN_INDIRECT_SIZE for the pairs */
  int rejected;                               /* rejections, in every stage (see last_rejection) */
  char last_rejection[256];
  double seconds;
  bool stored;
  char path[1200];
} cls_gemm_tune_result;

/* Searches the device's candidate list for the shapes (at most CLS_BENCH_MAX_SHAPES * 4), checking
 * every candidate's result against the host reference (cls_gemm_cases_check) and timing it,
 * then chooses the GemmRoutine threshold between the direct and the indirect kernel from the
 * measured times, measures the winners ("after") and stores them when they beat `before_ms`
 * (NULL: measured first with whatever parameters are in force); times our own kernels on every shape
 * and stores, per shape class, the faster of the two backends (cls_gemm_backend_of). The device keeps the winners
 * applied (or, when the defaults were kept, the last parameters tried; re-run to compare) and, once stored,
 * the backends for plans made from then on. */
cls_status cls_gemm_tune(cls_engine *engine, int device, const cls_gemm_shape *shapes, int n_shapes,
                         const double *before_ms, const cls_gemm_tune_options *options, cls_gemm_tune_result *out);

/* "H=512,2048 (28 shapes)": the H values of the shapes and their count. */
void cls_gemm_shapes_describe(const cls_gemm_shape *shapes, int n, char *out, size_t cap);

/* ---- the LSTM's one-kernel recurrence as the own search times it (lstm_seq_cases.c) ---- */

/* An LSTM of input H and hidden H over B utterances of up to T frames (the bench's lengths: T, 0.9 T, ..). */
typedef struct cls_lstm_seq_case {
  int time, batch, hidden;
} cls_lstm_seq_case;

typedef struct cls_lstm_seq_cases cls_lstm_seq_cases;

/* Whether the device's LSTM plan of this case takes the sequence path by itself (CLS_LSTM_PATH_AUTO): the
 * cases whose time the sequence kernels' tile changes. */
bool cls_lstm_seq_case_takes_sequence(cls_engine *engine, int device, const cls_lstm_seq_case *c);
/* A plan per case on the sequence path, its synthetic inputs and outputs, enqueued on q (a profiling
 * queue of the device, cls_bench_queue). */
cls_status cls_lstm_seq_cases_create(cls_engine *engine, int device, cl_command_queue q, const cls_lstm_seq_case *cases,
                                     int n, cls_lstm_seq_cases **out);
void cls_lstm_seq_cases_destroy(cls_lstm_seq_cases *cases);
/* Case i's forward and backward on the sequence path against the per-step path of the same build: h, dx,
 * dW and db each within 1e-4 of the tensor's largest magnitude; *ok false with `detail` naming the first
 * that is not. */
cls_status cls_lstm_seq_cases_check(cls_lstm_seq_cases *cases, int i, bool *ok, char *detail, size_t cap);
/* The device time of the sequence path's two kernels (lstm_seq_fwd + lstm_seq_bwd) in one forward and
 * backward of case i, median of `runs` after `warmups` untimed. */
cls_status cls_lstm_seq_cases_time(cls_lstm_seq_cases *cases, int i, int warmups, int runs, double *median_ms);

/* ---- our own kernels' tuning (own_search.c) ---- */

#define CLS_OWN_MAX_CANDIDATES 40

typedef struct cls_own_tune_options {
  int runs;          /* timed runs (median) per shape and candidate */
  int rounds;        /* rounds of the final comparison, taking turns (0: 3) */
  double budget_s;   /* no candidate starts after this many seconds (0: no bound) */
  const char *extra; /* a candidate of the caller's own, -D items after the defaults (NULL: none): checked and
                        timed like the others, stored only when every item is a tunable (cls_gemm_own_tunable) */
  cls_bench_progress_fn progress;
  void *user;
  const cls_lstm_seq_case *lstm; /* the step's LSTMs (the same batch each): those whose plan takes the sequence */
  int n_lstm;                    /* path (cls_lstm_seq_case_takes_sequence) time its tile; 0: not searched */
} cls_own_tune_options;

typedef struct cls_own_candidate {
  char group[16];               /* "defaults", "tried", "tile", "k unroll", "few rows", "thin tile", "narrow copy",
                                   "sequence" (the LSTM sequence kernels' tile) */
  char options[CLS_GEMM_OWN_CAP * 2];
  cls_tune_state state;         /* timed, dropped (slower, not finished) or rejected (wrong result, no build) */
  double ms;                    /* sum over the shapes of calls x median ms, and over the LSTM sequence cases of
                                   their kernels' ms per step, those its group is timed on (partial when dropped) */
  double build_s;               /* its build (gemm.cl) and engine, seconds */
  double versus;                /* ms over the best build's, timed shape by shape beside it (0: the defaults, rejected) */
  char why[256];                /* a rejection's reason */
} cls_own_candidate;

typedef struct cls_own_tune_result {
  char shapes[128];                       /* "H=512 (16 shapes)" */
  char lstm[64];                          /* the LSTM sequence cases timed, "H=256,512" ("": none) */
  char defaults[CLS_GEMM_OWN_CAP];        /* the device's table row's values, as -D items */
  char winner[CLS_GEMM_OWN_CAP];          /* what was stored (= defaults: none stored, the defaults kept) */
  int n;                                  /* candidates tried, the defaults first */
  cls_own_candidate candidate[CLS_OWN_MAX_CANDIDATES];
  double before_ms, after_ms;             /* the final comparison's medians (defaults, winner), per step */
  double ratio;                           /* its median round-by-round time ratio, winner over defaults */
  int rejected;
  char last_rejection[400];
  char note[200];                         /* why a faster candidate was not stored ("" when none) */
  bool over_budget;                       /* the budget ended the search before every group was tried */
  bool stored;
  char path[1200];
  double seconds;
} cls_own_tune_result;

/* Searches the tile sizes and forms of kernels/gemm.cl for the shapes on a CPU-like device, and the tile of
 * the LSTM's sequence kernels (kernels/lstm_seq.cl) for the options' LSTM cases that take that path (each
 * candidate a build of its own, every shape's result checked against the host reference and every LSTM
 * case's against the per-step path, then timed), confirms the
 * winner against the defaults taking turns, and stores it in the device's tuning file (the own line, with
 * the kernels' digest; the file's other lines kept), which later engines' build options take. The engine's
 * own builds are not changed (a new engine loads the winner). CLS_ERR_BUILD when the defaults themselves
 * fail. */
cls_status cls_own_tune(cls_engine *engine, int device, const cls_gemm_shape *shapes, int n_shapes,
                        const cls_own_tune_options *options, cls_own_tune_result *out);

#ifdef __cplusplus
}
#endif
#endif
