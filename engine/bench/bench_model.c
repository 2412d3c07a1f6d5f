/* Benchmarks of the model's ops and of the whole training step (see bench.h), built from the
 * engine's own plans (lstm.h, ctc.h, adam.h, mfcc_device.h, model.h) on synthetic data, timed with
 * cls_bench_time on the bench's profiling queue, and one step profiled by op (the recorder and the
 * sums: bench_profile.c; all devices as towers: bench_towers.c). Prints nothing. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_profile.h"
#include "clspeech/internal/bench.h"
#include "clspeech/model.h"
#include "clspeech/ops.h"
#include "device/log.h"
#include "features/mfcc_device.h"

/* Device buffers of one bench, released together. */
#define MAX_BUFFERS 24
typedef struct buffers {
  cls_engine *e;
  cl_context ctx;
  cl_command_queue q;
  cl_mem mem[MAX_BUFFERS];
  int n;
} buffers;

static void buffers_release(buffers *b) {
  for (int i = 0; i < b->n; i++)
    if (b->mem[i]) clReleaseMemObject(b->mem[i]);
  b->n = 0;
}

/* A buffer of n floats: uniform in [-scale, scale) (seeded), or `fill` when scale is 0. */
static cls_status floats(buffers *b, size_t n, unsigned seed, float scale, float fill, cl_mem *out) {
  *out = NULL;
  if (b->n == MAX_BUFFERS) return cls_fail(b->e, CLS_ERR_INVALID_ARGUMENT, "bench: too many buffers");
  float *h = malloc((n ? n : 1) * sizeof *h);
  if (!h) return cls_fail(b->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    h[i] = scale != 0 ? scale * ((float)(seed >> 8) / 8388608.0f - 1.0f) : fill;
  }
  cl_int err = CL_SUCCESS;
  *out = clCreateBuffer(b->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (n ? n : 1) * sizeof *h, h, &err);
  free(h);
  if (!*out)
    return cls_fail(b->e, CLS_ERR_OPENCL, "bench: allocating %zu floats of device memory failed: %s", n,
                    cls_cl_error_name(err));
  b->mem[b->n++] = *out;
  return CLS_OK;
}

static cls_status ints(buffers *b, const int32_t *v, size_t n, cl_mem *out) {
  *out = NULL;
  if (b->n == MAX_BUFFERS) return cls_fail(b->e, CLS_ERR_INVALID_ARGUMENT, "bench: too many buffers");
  cl_int err = CL_SUCCESS;
  *out = clCreateBuffer(b->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *v, (void *)v, &err);
  if (!*out) return cls_fail(b->e, CLS_ERR_OPENCL, "bench: allocating device memory failed: %s", cls_cl_error_name(err));
  b->mem[b->n++] = *out;
  return CLS_OK;
}

static cls_status open_buffers(cls_engine *e, int device, buffers *b) {
  memset(b, 0, sizeof *b);
  b->e = e;
  cls_status st = cls_engine_device_cl(e, device, &b->ctx, NULL, NULL);
  if (st == CLS_OK) st = cls_bench_queue(e, device, &b->q);
  return st;
}

static void close_buffers(buffers *b) {
  if (b->q) clFinish(b->q);
  buffers_release(b);
  if (b->q) clReleaseCommandQueue(b->q);
  b->q = NULL;
}

/* Sequence lengths (all T) and labels (of C classes, the blank C - 1 never used) without adjacent repeats:
 * [B], [B, L], [B]. */
static cls_status labels(buffers *b, int B, int T, int L, int C, cl_mem *seq, cl_mem *lab, cl_mem *lab_len) {
  int32_t *s = malloc((size_t)B * sizeof *s), *l = malloc((size_t)B * L * sizeof *l), *ll = malloc((size_t)B * sizeof *ll);
  cls_status st = CLS_OK;
  if (!s || !l || !ll) st = cls_fail(b->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int u = 0; st == CLS_OK && u < B; u++) {
    s[u] = T;
    ll[u] = L;
    for (int k = 0; k < L; k++) l[u * L + k] = (u * 7 + k * 3) % (C - 1);
  }
  if (st == CLS_OK) st = ints(b, s, (size_t)B, seq);
  if (st == CLS_OK) st = ints(b, l, (size_t)B * L, lab);
  if (st == CLS_OK) st = ints(b, ll, (size_t)B, lab_len);
  free(s);
  free(l);
  free(ll);
  return st;
}

/* ---- LSTM, CTC, Adam ---- */

typedef struct ops_ctx {
  int T, B, H;
  cls_lstm_plan *lstm;
  cls_ctc_plan *ctc;
  cls_adam_plan *adam;
  cls_adam_state adam_state;
  size_t n_params;
  cl_mem x, w, bias, seq, h, dh, dx, dw, db, ws;
  cl_mem logits, labels, label_len, loss, dlogits, ctc_ws;
  cl_mem p, m, v, g;
} ops_ctx;

static cls_status lstm_fwd(void *c_, cl_command_queue q) {
  ops_ctx *c = c_;
  return cls_lstm_forward(c->lstm, q, c->T, c->B, cls_buf_of(c->x), cls_buf_of(c->w), cls_buf_of(c->bias),
                          cls_buf_of(c->seq), cls_buf_of(c->h), cls_buf_of(c->ws), NULL);
}

static cls_status lstm_bwd(void *c_, cl_command_queue q) {
  ops_ctx *c = c_;
  return cls_lstm_backward(c->lstm, q, c->T, c->B, cls_buf_of(c->x), cls_buf_of(c->w), cls_buf_of(c->seq),
                           cls_buf_of(c->h), cls_buf_of(c->dh), cls_buf_of(c->ws), cls_buf_of(c->dx), cls_buf_of(c->dw),
                           cls_buf_of(c->db), CLS_OVERWRITE, NULL);
}

static cls_status ctc_op(void *c_, cl_command_queue q) {
  ops_ctx *c = c_;
  cls_buf ws = {c->ctc_ws, 0};
  return cls_ctc_loss(c->ctc, q, c->T, c->B, cls_buf_of(c->logits), cls_buf_of(c->labels), cls_buf_of(c->label_len),
                      cls_buf_of(c->seq), cls_buf_of(c->loss), cls_buf_of(c->dlogits), 1.0f / (float)c->B, CLS_OVERWRITE,
                      ws, NULL);
}

static cls_status adam_op(void *c_, cl_command_queue q) {
  ops_ctx *c = c_;
  return cls_adam_update(c->adam, q, c->n_params, cls_buf_of(c->p), cls_buf_of(c->m), cls_buf_of(c->v),
                         cls_buf_of(c->g), 1e-4f, 0.9f, 0.999f, 1e-8f, &c->adam_state, NULL);
}

cls_status cls_bench_ops_run(cls_engine *e, int device, const cls_bench_config *cfg, cls_bench_ops *out) {
  memset(out, 0, sizeof *out);
  buffers b;
  cls_status st = open_buffers(e, device, &b);
  ops_ctx c;
  memset(&c, 0, sizeof c);
  c.T = cfg->time;
  c.B = cfg->batch;
  c.H = cfg->n_hidden;
  const size_t H = (size_t)c.H, rows = (size_t)c.T * c.B, H4 = 4 * H;
  const int L = cls_bench_label_length(c.T);
  out->ctc_labels = L;
  /* LSTM: input H (layer 3's output), hidden H */
  if (st == CLS_OK) st = cls_lstm_create(e, device, c.T, c.B, c.H, c.H, &c.lstm);
  if (st == CLS_OK) st = floats(&b, rows * H, 11, 1.0f, 0, &c.x);
  if (st == CLS_OK) st = floats(&b, 2 * H * H4, 12, 0.05f, 0, &c.w);
  if (st == CLS_OK) st = floats(&b, H4, 13, 0.1f, 0, &c.bias);
  if (st == CLS_OK) st = floats(&b, rows * H, 0, 0, 0, &c.h);
  if (st == CLS_OK) st = floats(&b, rows * H, 14, 0.1f, 0, &c.dh);
  if (st == CLS_OK) st = floats(&b, rows * H, 0, 0, 0, &c.dx);
  if (st == CLS_OK) st = floats(&b, 2 * H * H4, 0, 0, 0, &c.dw);
  if (st == CLS_OK) st = floats(&b, H4, 0, 0, 0, &c.db);
  if (st == CLS_OK) st = floats(&b, cls_lstm_workspace_bytes(c.lstm, c.T, c.B) / sizeof(float), 0, 0, 0, &c.ws);
  if (st == CLS_OK) st = labels(&b, c.B, c.T, L, cfg->n_classes, &c.seq, &c.labels, &c.label_len);
  /* forward: input projection 2*R*H*4H, recurrent 2*(T-1)*B*H*4H; backward twice that */
  out->lstm_fwd_flops = 2.0 * (double)rows * H * H4 + 2.0 * (double)(c.T - 1) * c.B * H * H4;
  out->lstm_bwd_flops = 2.0 * out->lstm_fwd_flops;
  if (st == CLS_OK) cls_bench_progress(cfg, "lstm forward H=%d (%d steps)", c.H, c.T);
  if (st == CLS_OK) st = cls_bench_time(e, b.q, lstm_fwd, &c, cfg->runs, &out->lstm_fwd_ms);
  if (st == CLS_OK) cls_bench_progress(cfg, "lstm backward H=%d (%d steps)", c.H, c.T);
  if (st == CLS_OK) st = cls_bench_time(e, b.q, lstm_bwd, &c, cfg->runs, &out->lstm_bwd_ms);
  /* CTC over the model's classes */
  if (st == CLS_OK) st = cls_ctc_create(e, device, c.T, c.B, cfg->n_classes, L, &c.ctc);
  if (st == CLS_OK) st = floats(&b, rows * (size_t)cfg->n_classes, 15, 3.0f, 0, &c.logits);
  if (st == CLS_OK) st = floats(&b, rows * (size_t)cfg->n_classes, 0, 0, 0, &c.dlogits);
  if (st == CLS_OK) st = floats(&b, (size_t)c.B, 0, 0, 0, &c.loss);
  size_t ctc_ws = st == CLS_OK ? cls_ctc_workspace_bytes(c.ctc, c.T, c.B) : 0;
  if (st == CLS_OK && ctc_ws) st = floats(&b, ctc_ws / sizeof(float) + 1, 0, 0, 0, &c.ctc_ws);
  if (st == CLS_OK) cls_bench_progress(cfg, "ctc loss + gradient (B=%d, T=%d, %d labels)", c.B, c.T, L);
  if (st == CLS_OK) st = cls_bench_time(e, b.q, ctc_op, &c, cfg->runs, &out->ctc_ms);
  /* Adam over every parameter of the model at this H */
  cls_model_config mc = cls_bench_model(cfg);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  c.n_params = out->n_params = cls_model_layout(&mc, views);
  out->adam_bytes = 28.0 * (double)c.n_params;
  /* the LSTM's buffers are no longer needed: free them before Adam's four */
  if (st == CLS_OK) {
    clFinish(b.q);
    buffers_release(&b);
    c.ctc_ws = NULL;
  }
  if (st == CLS_OK) st = cls_adam_create(e, device, &c.adam);
  c.adam_state = cls_adam_state_init(0.9f, 0.999f);
  if (st == CLS_OK) st = floats(&b, c.n_params, 16, 0.05f, 0, &c.p);
  if (st == CLS_OK) st = floats(&b, c.n_params, 0, 0, 0, &c.m);
  if (st == CLS_OK) st = floats(&b, c.n_params, 0, 0, 0, &c.v);
  if (st == CLS_OK) st = floats(&b, c.n_params, 17, 0.01f, 0, &c.g);
  if (st == CLS_OK) cls_bench_progress(cfg, "adam over %zu parameters", c.n_params);
  if (st == CLS_OK) st = cls_bench_time(e, b.q, adam_op, &c, cfg->runs, &out->adam_ms);
  close_buffers(&b);
  cls_lstm_destroy(c.lstm);
  cls_ctc_destroy(c.ctc);
  cls_adam_destroy(c.adam);
  return st;
}

/* ---- MFCC ---- */

#define PI 3.14159265358979323846

typedef struct mfcc_ctx {
  cls_mfcc_tables *tables; /* cls_mfcc_default(16000)'s */
  cls_mfcc_plan *plan;
  int batch;
  const float *const *samples;
  const size_t *n_samples;
  cl_mem windows;
  float *audio;          /* one synthetic utterance of n samples, which every utterance of the batch reads */
  size_t n;
} mfcc_ctx;

static void mfcc_teardown(mfcc_ctx *c) {
  cls_mfcc_destroy(c->plan);
  cls_mfcc_tables_destroy(c->tables);
  free(c->audio);
  free((void *)c->samples);
  free((void *)c->n_samples);
  memset(c, 0, sizeof *c);
}

/* The default tables, their plan and B utterances of exactly T frames of synthetic audio (two tones and
 * noise at 16 kHz). On failure c is left empty (mfcc_teardown may still be called on it). */
static cls_status mfcc_setup(cls_engine *e, int device, int B, int T, mfcc_ctx *c) {
  memset(c, 0, sizeof *c);
  cls_error err;
  cls_mfcc_config mc = cls_mfcc_default(16000);
  if (cls_mfcc_tables_create(&mc, &c->tables, &err) != CLS_OK)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "bench: %s", err.text);
  const cls_mfcc_tables *t = c->tables;
  c->batch = B;
  c->n = (size_t)(T - 1) * (size_t)t->step + (size_t)t->window; /* exactly T frames */
  c->audio = malloc(c->n * sizeof *c->audio);
  const float **samples = malloc((size_t)B * sizeof *samples);
  size_t *lengths = malloc((size_t)B * sizeof *lengths);
  c->samples = samples;
  c->n_samples = lengths;
  if (!c->audio || !samples || !lengths) {
    mfcc_teardown(c);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  unsigned seed = 7;
  for (size_t i = 0; i < c->n; i++) {
    seed = seed * 1664525u + 1013904223u;
    double x = (double)i / 16000.0;
    c->audio[i] = (float)(0.3 * sin(2 * PI * 220.0 * x) + 0.2 * sin(2 * PI * 1375.0 * x) +
                          0.05 * ((double)(seed >> 8) / 8388608.0 - 1.0));
  }
  for (int u = 0; u < B; u++) {
    samples[u] = c->audio;
    lengths[u] = c->n;
  }
  cls_status st = cls_mfcc_create(e, device, t, &c->plan);
  if (st != CLS_OK) mfcc_teardown(c);
  return st;
}

static cls_status mfcc_op(void *c_, cl_command_queue q) {
  mfcc_ctx *c = c_;
  int time = 0;
  return cls_mfcc_compute(c->plan, q, c->batch, c->samples, c->n_samples, 9, cls_buf_of(c->windows), &time, NULL, NULL);
}

cls_status cls_bench_mfcc_run(cls_engine *e, int device, const cls_bench_config *cfg, cls_bench_mfcc *out) {
  memset(out, 0, sizeof *out);
  buffers b;
  cls_status st = open_buffers(e, device, &b);
  const int B = cfg->batch, T = cfg->time;
  const cls_model_config mc = cls_bench_model(cfg);
  mfcc_ctx c;
  memset(&c, 0, sizeof c); /* read and torn down below even when open_buffers failed */
  if (st == CLS_OK) st = mfcc_setup(e, device, B, T, &c);
  if (st == CLS_OK) st = floats(&b, (size_t)T * B * cls_model_input_width(&mc), 0, 0, 0, &c.windows);
  if (st == CLS_OK) cls_bench_progress(cfg, "mfcc on the device (B=%d, T=%d)", B, T);
  if (st == CLS_OK) st = cls_bench_time(e, b.q, mfcc_op, &c, cfg->runs, &out->ms);
  out->audio_seconds = (double)c.n * B / 16000.0;
  close_buffers(&b);
  mfcc_teardown(&c);
  return st;
}

/* ---- the training step ---- */

typedef struct train_ctx {
  cls_model *model;
  cls_adam_plan *adam;
  cls_adam_state state;
  cls_model_batch batch;
  cls_model_dropout dropout;
  size_t n_params;
  cl_mem p, g, m, v;
  float *losses;
} train_ctx;

static cls_status train_op(void *c_, cl_command_queue q) {
  train_ctx *c = c_;
  c->dropout.step++;
  cls_status st = cls_model_train_step(c->model, q, &c->batch, cls_buf_of(c->p), &c->dropout, cls_buf_of(c->g),
                                       1.0f / (float)c->batch.batch, CLS_OVERWRITE, c->losses);
  if (st == CLS_OK)
    st = cls_adam_update(c->adam, q, c->n_params, cls_buf_of(c->p), cls_buf_of(c->m), cls_buf_of(c->v),
                         cls_buf_of(c->g), 1e-4f, 0.9f, 0.999f, 1e-8f, &c->state, NULL);
  return st;
}

cls_status cls_bench_train_run(cls_engine *e, int device, const cls_bench_config *cfg, cls_bench_train *out) {
  return cls_bench_train_profile_run(e, device, cfg, NULL, NULL, 0, out, NULL);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static cls_status marker_end(cls_engine *e, cl_event ev, cl_ulong *end) {
  cl_int err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof *end, end, NULL);
  if (err != CL_SUCCESS)
    return cls_fail(e, CLS_ERR_OPENCL, "bench: reading a marker's profiling event failed: %s", cls_cl_error_name(err));
  return CLS_OK;
}

/* One step of c on q, the batch's MFCC into its input first, every command recorded (bench_profile.h). */
static cls_status profile_step(cls_engine *e, int device, cl_command_queue q, train_ctx *c, const cls_gemm_shape *shapes,
                               const double *gemm_ms, int n_shapes, cls_bench_profile *out) {
  mfcc_ctx mc;
  cls_status st = mfcc_setup(e, device, c->batch.batch, c->batch.time, &mc);
  if (st != CLS_OK) return st;
  mc.windows = c->batch.features.mem;
  if (st == CLS_OK) st = mfcc_op(&mc, q); /* its first run builds clFFT's plan */
  if (st == CLS_OK && clFinish(q) != CL_SUCCESS) st = cls_fail(e, CLS_ERR_OPENCL, "bench: clFinish failed");
  cls_bench_recorder *r = NULL;
  if (st == CLS_OK) st = cls_bench_recorder_open(e, q, &r);
  cl_event marks[3] = {NULL, NULL, NULL};
  double t0 = now_ms();
  cl_int err = st == CLS_OK ? clEnqueueMarkerWithWaitList(q, 0, NULL, &marks[0]) : CL_SUCCESS;
  if (st == CLS_OK && err == CL_SUCCESS) st = mfcc_op(&mc, q);
  if (st == CLS_OK && err == CL_SUCCESS) err = clEnqueueMarkerWithWaitList(q, 0, NULL, &marks[1]);
  if (st == CLS_OK && err == CL_SUCCESS) st = train_op(c, q);
  if (st == CLS_OK && err == CL_SUCCESS) err = clEnqueueMarkerWithWaitList(q, 0, NULL, &marks[2]);
  if (st == CLS_OK && err == CL_SUCCESS) err = clFinish(q);
  out->wall_ms = now_ms() - t0;
  if (st == CLS_OK && err != CL_SUCCESS)
    st = cls_fail(e, CLS_ERR_OPENCL, "bench: profiling the training step failed: %s", cls_cl_error_name(err));
  cl_ulong end[3] = {0, 0, 0};
  for (int i = 0; i < 3 && st == CLS_OK; i++) st = marker_end(e, marks[i], &end[i]);
  out->device_ms = end[2] > end[0] ? (double)(end[2] - end[0]) * 1e-6 : 0;
  double mfcc_ms = end[1] > end[0] ? (double)(end[1] - end[0]) * 1e-6 : 0;
  if (st == CLS_OK) st = cls_bench_recorder_rows(r, mfcc_ms, shapes, gemm_ms, n_shapes, out);
  if (st != CLS_OK) clFinish(q);
  cls_bench_recorder_close(r);
  for (int i = 0; i < 3; i++)
    if (marks[i]) clReleaseEvent(marks[i]);
  mfcc_teardown(&mc);
  return st;
}

cls_status cls_bench_train_profile_run(cls_engine *e, int device, const cls_bench_config *cfg,
                                       const cls_gemm_shape *shapes, const double *gemm_ms, int n_shapes,
                                       cls_bench_train *out, cls_bench_profile *profile) {
  memset(out, 0, sizeof *out);
  if (profile) memset(profile, 0, sizeof *profile);
  buffers b;
  cls_status st = open_buffers(e, device, &b);
  const int B = cfg->batch, T = cfg->time, L = cls_bench_label_length(T);
  cls_model_config mc = cls_bench_model(cfg);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  train_ctx c;
  memset(&c, 0, sizeof c);
  c.n_params = out->n_params = cls_model_layout(&mc, views);
  out->frames = (double)T * B;
  out->frame_ms = cls_mfcc_default(16000).win_step_ms;
  c.losses = malloc((size_t)B * sizeof *c.losses);
  if (st == CLS_OK && !c.losses) st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  if (st == CLS_OK) st = cls_model_create(e, device, &mc, T, B, L, &c.model);
  if (st == CLS_OK) st = cls_adam_create(e, device, &c.adam);
  c.state = cls_adam_state_init(0.9f, 0.999f);
  cl_mem x = NULL, seq = NULL, lab = NULL, lab_len = NULL;
  if (st == CLS_OK) st = floats(&b, c.n_params, 21, 0.05f, 0, &c.p);
  if (st == CLS_OK) st = floats(&b, c.n_params, 0, 0, 0, &c.g);
  if (st == CLS_OK) st = floats(&b, c.n_params, 0, 0, 0, &c.m);
  if (st == CLS_OK) st = floats(&b, c.n_params, 0, 0, 0, &c.v);
  if (st == CLS_OK) st = floats(&b, (size_t)T * B * cls_model_input_width(&mc), 22, 1.0f, 0, &x);
  if (st == CLS_OK) st = labels(&b, B, T, L, mc.n_classes, &seq, &lab, &lab_len);
  cls_model_batch batch = {T, B, cls_buf_of(x), cls_buf_of(seq), cls_buf_of(lab), cls_buf_of(lab_len)};
  cls_model_dropout dropout = {{0.05f, 0.05f, 0.05f, 0, 0, 0.05f}, 4568, 0, 0};
  c.batch = batch;
  c.dropout = dropout;
  if (st == CLS_OK) cls_bench_progress(cfg, "training step H=%d (forward, CTC, backward, Adam)", cfg->n_hidden);
  if (st == CLS_OK) st = cls_bench_time(e, b.q, train_op, &c, cfg->runs, &out->ms);
  if (st == CLS_OK && profile) {
    cls_bench_progress(cfg, "training step H=%d once more, profiled by op (with the batch's MFCC)", cfg->n_hidden);
    st = profile_step(e, device, b.q, &c, shapes, gemm_ms, n_shapes, profile);
  }
  close_buffers(&b);
  cls_adam_destroy(c.adam);
  cls_model_destroy(c.model);
  free(c.losses);
  return st;
}
