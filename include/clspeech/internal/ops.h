/* clspeech internal API, ops layer: the device's own OpenCL handles, its in-order queue included (what
 * the model and the trainer enqueue on), and the GEMM backend and CTC path switches the tests and
 * benchmarks force and report. Not installed: a program embedding the engine takes a device's context with
 * cls_engine_device_context (clspeech/ops.h) and makes its own queue. */
#ifndef CLSPEECH_INTERNAL_OPS_H
#define CLSPEECH_INTERNAL_OPS_H

#include "clspeech/ops.h"
#include "clspeech/internal/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the device (building its kernels if needed) and gives its OpenCL handles; every op plan of
 * the device uses this context, and the queue is the device's own in-order queue (training's). */
cls_status cls_engine_device_cl(cls_engine *engine, int index, cl_context *context, cl_device_id *device,
                                cl_command_queue *queue);

/* ---- the GEMM's two backends (see cls_gemm in clspeech/ops.h) ---- */
typedef enum cls_gemm_backend {
  CLS_GEMM_BACKEND_AUTO = 0,    /* by device class: OWN on CPU devices, CLBLAST elsewhere */
  CLS_GEMM_BACKEND_OWN = 1,     /* kernels/gemm.cl (tile geometry from the device's kernel options) */
  CLS_GEMM_BACKEND_CLBLAST = 2  /* CLBlastSgemm (with the device's stored tuning, if any) */
} cls_gemm_backend;

/* Forces a backend on every call (tests and benchmarks); AUTO returns to cls_gemm_backend_of's per shape
 * class. Packed B matrices made under another backend must be packed again. */
cls_status cls_gemm_set_backend(cls_gemm_plan *plan, cls_gemm_backend backend);
/* The backend calls of a shape class (cls_gemm_class_of) take now: OWN or CLBLAST. */
cls_gemm_backend cls_gemm_get_class_backend(const cls_gemm_plan *plan, cls_gemm_class shape_class);
/* ... of the big class (every dimension at least CLS_GEMM_THIN_BELOW). */
cls_gemm_backend cls_gemm_get_backend(const cls_gemm_plan *plan);
/* "own", "clblast" or "auto". */
const char *cls_gemm_backend_name(cls_gemm_backend backend);
/* The class default on a kind of device: OWN on CPU devices, CLBLAST elsewhere. */
cls_gemm_backend cls_gemm_backend_for(cls_device_kind kind);
/* The backend AUTO takes for a shape class on a device (the one rule, for plans and for messages): the
 * winner `clspeech bench --tune` stored for the device (loaded when the engine prepared it, unless the
 * gemm_tuning option is off), else the class default, cls_gemm_backend_for. Plans read it at create. */
cls_gemm_backend cls_gemm_backend_of(cls_engine *engine, int device, cls_gemm_class shape_class);

/* ---- where a plan's failures go ----
 * A plan reports a failure of its create into the engine's error (cls_engine_error), and by default
 * the failures of its enqueues too. An owner that runs the plan on a thread of its own (a tower)
 * points them at its own cls_error instead, so that plans running at once on several threads never
 * write the same text; `err` must outlive the plan. */
void cls_gemm_set_error(cls_gemm_plan *plan, cls_error *err);
void cls_dense_set_error(cls_dense_plan *plan, cls_error *err);
void cls_layer_norm_set_error(cls_layer_norm_plan *plan, cls_error *err);
void cls_lstm_set_error(cls_lstm_plan *plan, cls_error *err);
void cls_ctc_set_error(cls_ctc_plan *plan, cls_error *err);
void cls_adam_set_error(cls_adam_plan *plan, cls_error *err);

/* ---- the CTC loss's paths (see cls_ctc_create in clspeech/ops.h) ---- */
/* How the loss is computed: ITEM runs one work-item per utterance, 8 states at a time, with its tables
 * in the workspace (for CPU devices, where work-group barriers are costly); LOCAL and GLOBAL run one
 * work-group per utterance with the tables in local memory or in the workspace. AUTO picks ITEM on a
 * CPU device, else LOCAL when this call's tables fit in the device's local memory, else GLOBAL. LOCAL
 * fails a call whose tables do not fit. LOCAL and GLOBAL do the same arithmetic in the same order (the
 * tests expect identical bits); ITEM rounds differently, within the same tolerances. */
typedef enum cls_ctc_path {
  CLS_CTC_PATH_AUTO = 0,
  CLS_CTC_PATH_LOCAL = 1,
  CLS_CTC_PATH_GLOBAL = 2,
  CLS_CTC_PATH_ITEM = 3
} cls_ctc_path;

/* Forces a path (for tests and benchmarks); the default is CLS_CTC_PATH_AUTO. */
cls_status cls_ctc_set_path(cls_ctc_plan *plan, cls_ctc_path path);

/* The path (LOCAL, GLOBAL or ITEM) a call over `time` frames takes, with or without the gradient. */
cls_ctc_path cls_ctc_path_for(const cls_ctc_plan *plan, int time, int with_grad);

/* ---- the LSTM recurrence's paths (see cls_lstm_forward in clspeech/ops.h) ---- */
/* STEPS: a GEMM call and a gate kernel per time step (kernels/lstm.cl; any device, any GEMM backend);
 * SEQUENCE: one kernel for every step of the call, each work-item running a group of the batch's rows
 * through all steps (kernels/lstm_seq.cl; a register tile like the own GEMM's, work-groups of one: for CPU
 * devices). AUTO takes SEQUENCE on a CPU device whose recurrent products (the packed shape class) run on
 * the own GEMM, while W_h (16 H^2 bytes, which every group of rows reads each step, where the per-step path
 * splits it over the cores) fits the device's global memory cache (PoCL: the last level); else STEPS.
 * Measured on 2 Zen 4 cores, 32 MiB L3 (bench_ops --lstm_path both, fwd + bwd): 1.39x the per-step path's
 * speed at H = 256, 1.13x at 512, 1.04x at 1024, 0.80x at 2048 (docs/lab-notes/lstm-sequence.md). Both
 * paths give the same results within the LSTM tests' tolerances (the cell is the same code, lstm_cell.h;
 * on these tests' shapes the same bits). */
typedef enum cls_lstm_path {
  CLS_LSTM_PATH_AUTO = 0,
  CLS_LSTM_PATH_STEPS = 1,
  CLS_LSTM_PATH_SEQUENCE = 2
} cls_lstm_path;

/* Forces a path (tests and benchmarks); the default is CLS_LSTM_PATH_AUTO. */
cls_status cls_lstm_set_path(cls_lstm_plan *plan, cls_lstm_path path);
/* The path (STEPS or SEQUENCE) the plan's calls take now. */
cls_lstm_path cls_lstm_path_for(const cls_lstm_plan *plan);
/* "steps", "sequence" or "auto". */
const char *cls_lstm_path_name(cls_lstm_path path);
/* Rows of the batch each sequence kernel's work-item takes: the batch over the device's compute units, in whole
 * tiles of MR rows (so that the work-items are ceil(batch / that) groups). */
int cls_lstm_sequence_rows_per_item(int batch, unsigned units, int mr);
/* The sequence kernels' product tile as built (CLS_LSTM_SEQ_MR rows x NR columns: the build options' tile, a
 * stored tuning's included), read from the kernels. */
void cls_lstm_sequence_tile(const cls_lstm_plan *plan, int *mr, int *nr);

#ifdef __cplusplus
}
#endif
#endif
