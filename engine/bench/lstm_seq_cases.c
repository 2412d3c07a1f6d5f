/* The LSTM's one-kernel recurrence as the own search times it (see cls_lstm_seq_cases in
 * clspeech/internal/bench.h): per case an LSTM plan of input H and hidden H on synthetic data, its result on
 * the sequence path checked against the per-step path of the same build (whose products are the own GEMM's,
 * checked against the host's double reference on their own shapes), and the device time of the sequence
 * path's two kernels (lstm_seq_fwd, lstm_seq_bwd) in one forward and backward, read from their profiling
 * events: the input projection and the weight gradient around them are GEMMs that the tile does not
 * change (nor does it the packing of W_h, lstm_seq_pack, but for its panels' width: a copy of 4 H^2
 * floats per call, left out). Prints nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_buffers.h"
#include "clspeech/internal/bench.h"
#include "clspeech/internal/ops.h"
#include "clspeech/ops.h"
#include "device/engine.h"
#include "device/log.h"
#include "ops/ops_util.h"

/* The results compared between the two paths, and their largest difference allowed, as a fraction of the
 * tensor's largest magnitude: the two paths sum the recurrent products in the same order and share the
 * cell's code (lstm_cell.h), so they agree to a few roundings; a wrong tile is off by far more. */
#define SEQ_CHECK_TOLERANCE 1e-4
enum { R_H, R_DX, R_DW, R_DB, N_RESULTS };
static const char *const result_names[N_RESULTS] = {"h", "dx", "dW", "db"};

enum { B_X, B_W, B_BIAS, B_SEQ, B_H, B_DH, B_DX, B_DW, B_DB, B_WS, N_BUFFERS };

typedef struct seq_case {
  cls_lstm_seq_case c;
  cls_lstm_plan *plan;
  cls_bench_buffers bufs;  /* owns mem[] */
  cl_mem mem[N_BUFFERS];
  size_t count[N_BUFFERS]; /* elements */
} seq_case;

#define MAX_EVENTS 8
struct cls_lstm_seq_cases {
  cls_engine *e;
  cl_command_queue q;
  seq_case *cases;
  int n;
  cl_event events[MAX_EVENTS]; /* the sequence kernels' events of the run being timed */
  int n_events;
  bool lost; /* more kernels than MAX_EVENTS in one run */
};

static cls_status cl_ok(cls_lstm_seq_cases *s, cl_int err, const char *what) {
  return err == CL_SUCCESS ? CLS_OK
                           : cls_fail(s->e, CLS_ERR_OPENCL, "lstm sequence cases: %s failed: %s", what,
                                      cls_cl_error_name(err));
}

/* Buffer `which` of case k: n floats uniform in [-scale, scale) from `seed`, or zero when scale is 0. */
static cls_status floats(seq_case *k, int which, size_t n, unsigned seed, float scale) {
  k->count[which] = n;
  return cls_bench_floats(&k->bufs, n, seed, scale, 0.0f, &k->mem[which]);
}

static cls_status case_open(cls_lstm_seq_cases *s, int device, seq_case *k) {
  const int T = k->c.time, B = k->c.batch, H = k->c.hidden;
  if (T < 1 || B < 1 || H < 1)
    return cls_fail(s->e, CLS_ERR_INVALID_ARGUMENT, "lstm sequence case T=%d B=%d H=%d", T, B, H);
  const size_t rows = (size_t)T * B, h = (size_t)H, h4 = 4 * h;
  k->bufs.e = s->e;
  cls_status st = cl_ok(s, clGetCommandQueueInfo(s->q, CL_QUEUE_CONTEXT, sizeof k->bufs.ctx, &k->bufs.ctx, NULL),
                        "reading the queue's context");
  if (st == CLS_OK) st = cls_lstm_create(s->e, device, T, B, H, H, &k->plan);
  if (st == CLS_OK) st = cls_lstm_set_path(k->plan, CLS_LSTM_PATH_SEQUENCE);
  if (st == CLS_OK) st = floats(k, B_X, rows * h, 31, 1.0f);
  if (st == CLS_OK) st = floats(k, B_W, 2 * h * h4, 32, (float)(1.0 / sqrt((double)H)));
  if (st == CLS_OK) st = floats(k, B_BIAS, h4, 33, 0.1f);
  if (st == CLS_OK) st = floats(k, B_H, rows * h, 0, 0);
  if (st == CLS_OK) st = floats(k, B_DH, rows * h, 34, 0.1f);
  if (st == CLS_OK) st = floats(k, B_DX, rows * h, 0, 0);
  if (st == CLS_OK) st = floats(k, B_DW, 2 * h * h4, 0, 0);
  if (st == CLS_OK) st = floats(k, B_DB, h4, 0, 0);
  if (st == CLS_OK) st = floats(k, B_WS, cls_lstm_workspace_bytes(k->plan, T, B) / sizeof(float) + 1, 0, 0);
  if (st != CLS_OK) return st;
  /* lengths varied as bench_train's batch has them: T, 0.9 T, 0.8 T, 0.7 T, ... */
  int32_t *len = malloc((size_t)B * sizeof *len);
  if (!len) return cls_fail(s->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int b = 0; b < B; b++) len[b] = cls_bench_varied_frames(T, b);
  k->count[B_SEQ] = (size_t)B;
  st = cls_bench_ints(&k->bufs, len, (size_t)B, &k->mem[B_SEQ]);
  free(len);
  return st;
}

cls_status cls_lstm_seq_cases_create(cls_engine *e, int device, cl_command_queue q, const cls_lstm_seq_case *cases,
                                     int n, cls_lstm_seq_cases **out) {
  *out = NULL;
  if (n < 1) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "lstm sequence cases: none");
  cls_lstm_seq_cases *s = calloc(1, sizeof *s);
  if (s) s->cases = calloc((size_t)n, sizeof *s->cases);
  if (!s || !s->cases) {
    free(s);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  s->e = e;
  s->q = q;
  s->n = n;
  cls_status st = CLS_OK;
  for (int i = 0; i < n && st == CLS_OK; i++) {
    s->cases[i].c = cases[i];
    st = case_open(s, device, &s->cases[i]);
  }
  if (st != CLS_OK) {
    cls_lstm_seq_cases_destroy(s);
    return st;
  }
  *out = s;
  return CLS_OK;
}

void cls_lstm_seq_cases_destroy(cls_lstm_seq_cases *s) {
  if (!s) return;
  if (s->q) clFinish(s->q);
  for (int i = 0; i < s->n; i++) {
    cls_bench_buffers_release(&s->cases[i].bufs);
    cls_lstm_destroy(s->cases[i].plan);
  }
  free(s->cases);
  free(s);
}

bool cls_lstm_seq_case_takes_sequence(cls_engine *e, int device, const cls_lstm_seq_case *c) {
  cls_lstm_plan *plan = NULL;
  char saved[CLS_ERROR_CAP];
  memcpy(saved, e->error.text, sizeof saved);
  bool seq = cls_lstm_create(e, device, c->time, c->batch, c->hidden, c->hidden, &plan) == CLS_OK &&
             cls_lstm_path_for(plan) == CLS_LSTM_PATH_SEQUENCE;
  cls_lstm_destroy(plan);
  memcpy(e->error.text, saved, sizeof saved); /* a failure here is only a "no" */
  return seq;
}

/* One forward and backward of case k on the plan's path. */
static cls_status run_case(seq_case *k, cl_command_queue q) {
  const int T = k->c.time, B = k->c.batch;
  cls_status st = cls_lstm_forward(k->plan, q, T, B, cls_buf_of(k->mem[B_X]), cls_buf_of(k->mem[B_W]),
                                   cls_buf_of(k->mem[B_BIAS]), cls_buf_of(k->mem[B_SEQ]), cls_buf_of(k->mem[B_H]),
                                   cls_buf_of(k->mem[B_WS]), NULL);
  if (st == CLS_OK)
    st = cls_lstm_backward(k->plan, q, T, B, cls_buf_of(k->mem[B_X]), cls_buf_of(k->mem[B_W]), cls_buf_of(k->mem[B_SEQ]),
                           cls_buf_of(k->mem[B_H]), cls_buf_of(k->mem[B_DH]), cls_buf_of(k->mem[B_WS]),
                           cls_buf_of(k->mem[B_DX]), cls_buf_of(k->mem[B_DW]), cls_buf_of(k->mem[B_DB]), CLS_OVERWRITE,
                           NULL);
  return st;
}

static const int result_buffer[N_RESULTS] = {B_H, B_DX, B_DW, B_DB};

/* The case's results after a run on `path`, into out[r] (allocated here). */
static cls_status results_on(cls_lstm_seq_cases *s, seq_case *k, cls_lstm_path path, float *out[N_RESULTS]) {
  cls_status st = cls_lstm_set_path(k->plan, path);
  if (st == CLS_OK) st = run_case(k, s->q);
  for (int r = 0; r < N_RESULTS && st == CLS_OK; r++) {
    const int b = result_buffer[r];
    out[r] = malloc(k->count[b] * sizeof(float));
    if (!out[r]) return cls_fail(s->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
    st = cl_ok(s, clEnqueueReadBuffer(s->q, k->mem[b], CL_TRUE, 0, k->count[b] * sizeof(float), out[r], 0, NULL, NULL),
               "reading a result");
  }
  return st;
}

cls_status cls_lstm_seq_cases_check(cls_lstm_seq_cases *s, int i, bool *ok, char *detail, size_t cap) {
  *ok = false;
  if (cap) detail[0] = '\0';
  if (i < 0 || i >= s->n) return cls_fail(s->e, CLS_ERR_INVALID_ARGUMENT, "lstm sequence case %d of %d", i, s->n);
  seq_case *k = &s->cases[i];
  float *steps[N_RESULTS] = {NULL}, *seq[N_RESULTS] = {NULL};
  cls_status st = results_on(s, k, CLS_LSTM_PATH_STEPS, steps);
  if (st == CLS_OK) st = results_on(s, k, CLS_LSTM_PATH_SEQUENCE, seq);
  const cls_status back = cls_lstm_set_path(k->plan, CLS_LSTM_PATH_SEQUENCE); /* what the timing runs */
  if (st == CLS_OK) st = back;
  *ok = st == CLS_OK;
  for (int r = 0; r < N_RESULTS && *ok; r++) {
    const size_t n = k->count[result_buffer[r]];
    double largest = 0, diff = 0;
    size_t at = 0;
    for (size_t j = 0; j < n; j++) {
      const double d = fabs((double)seq[r][j] - (double)steps[r][j]);
      largest = fmax(largest, fabs((double)steps[r][j]));
      if (d > diff || isnan(d)) {
        diff = isnan(d) ? INFINITY : d;
        at = j;
      }
    }
    if (!(diff <= SEQ_CHECK_TOLERANCE * fmax(largest, 1e-30))) {
      *ok = false;
      snprintf(detail, cap, "%s differs from the per-step path's by %.3g at [%zu] (%.6g against %.6g; allowed %.3g)",
               result_names[r], diff, at, (double)seq[r][at], (double)steps[r][at], SEQ_CHECK_TOLERANCE * largest);
    }
  }
  for (int r = 0; r < N_RESULTS; r++) {
    free(steps[r]);
    free(seq[r]);
  }
  return st;
}

/* Keeps the events of the sequence path's two kernels (the only commands they are: lstm_seq_pack and the
 * GEMMs around them are not timed). */
static void on_command(void *user, const cls_ops_profile_cmd *cmd, cl_event event) {
  cls_lstm_seq_cases *s = user;
  if (!cmd->name || (strcmp(cmd->name, "lstm_seq_fwd") && strcmp(cmd->name, "lstm_seq_bwd"))) return;
  if (s->n_events == MAX_EVENTS) {
    s->lost = true;
    return;
  }
  clRetainEvent(event);
  s->events[s->n_events++] = event;
}

static void release_events(cls_lstm_seq_cases *s) {
  for (int i = 0; i < s->n_events; i++) clReleaseEvent(s->events[i]);
  s->n_events = 0;
}

/* One run of case k, recorded: the two kernels' device time in *ms. */
static cls_status timed_run(cls_lstm_seq_cases *s, seq_case *k, double *ms) {
  *ms = 0;
  s->lost = false;
  cls_status st = cls_ops_profile_attach(s->q, on_command, s);
  if (st != CLS_OK) return cls_fail(s->e, st, "lstm sequence cases: the queue has no room for a recorder");
  st = run_case(k, s->q);
  cls_ops_profile_detach(s->q);
  if (st == CLS_OK) st = cl_ok(s, clFinish(s->q), "clFinish");
  if (st == CLS_OK && (s->lost || s->n_events != 2))
    st = cls_fail(s->e, CLS_ERR_INVALID_ARGUMENT,
                  "lstm sequence case H=%d: %d sequence kernels recorded in one run, 2 expected (not on the sequence "
                  "path?)", k->c.hidden, s->lost ? MAX_EVENTS + 1 : s->n_events);
  for (int i = 0; i < s->n_events && st == CLS_OK; i++) {
    double kernel_ms = 0;
    st = cl_ok(s, cls_bench_event_ms(s->events[i], &kernel_ms), "reading a profiling event");
    *ms += kernel_ms;
  }
  release_events(s);
  return st;
}

cls_status cls_lstm_seq_cases_time(cls_lstm_seq_cases *s, int i, int warmups, int runs, double *median_ms) {
  *median_ms = 0;
  if (i < 0 || i >= s->n || runs < 1 || runs > CLS_BENCH_MAX_RUNS)
    return cls_fail(s->e, CLS_ERR_INVALID_ARGUMENT, "lstm sequence case %d of %d, %d runs", i, s->n, runs);
  seq_case *k = &s->cases[i];
  cls_status st = CLS_OK;
  for (int w = 0; w < warmups && st == CLS_OK; w++) {
    st = run_case(k, s->q);
    if (st == CLS_OK) st = cl_ok(s, clFinish(s->q), "clFinish");
  }
  double t[CLS_BENCH_MAX_RUNS];
  for (int r = 0; r < runs && st == CLS_OK; r++) st = timed_run(s, k, &t[r]);
  if (st == CLS_OK) *median_ms = cls_bench_median(t, runs);
  return st;
}
