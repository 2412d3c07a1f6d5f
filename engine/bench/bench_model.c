/* Benchmarks of the model's ops (see bench.h), built from the engine's own plans (lstm.h, ctc.h,
 * adam.h, mfcc_device.h) on synthetic data, timed with cls_bench_time on the bench's profiling queue.
 * The training step, on one device or all as towers, and its profile by op are training's own step:
 * bench_step.c. Prints nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_buffers.h"
#include "bench/bench_step.h"
#include "clspeech/internal/bench.h"
#include "clspeech/model.h"
#include "clspeech/ops.h"
#include "device/log.h"
#include "features/mfcc_device.h"

/* The bench's buffers (bench_buffers.h) and its profiling queue. */
typedef struct buffers {
  cls_bench_buffers m;
  cl_command_queue q;
} buffers;

static cls_status open_buffers(cls_engine *e, int device, buffers *b) {
  memset(b, 0, sizeof *b);
  b->m.e = e;
  cls_status st = cls_engine_device_cl(e, device, &b->m.ctx, NULL, NULL);
  if (st == CLS_OK) st = cls_bench_queue(e, device, &b->q);
  return st;
}

static void close_buffers(buffers *b) {
  if (b->q) clFinish(b->q);
  cls_bench_buffers_release(&b->m);
  if (b->q) clReleaseCommandQueue(b->q);
  b->q = NULL;
}

/* Sequence lengths (all T) and labels (of C classes, the blank C - 1 never used) without adjacent repeats:
 * [B], [B, L], [B]. */
static cls_status labels(buffers *b, int B, int T, int L, int C, cl_mem *seq, cl_mem *lab, cl_mem *lab_len) {
  int32_t *s = malloc((size_t)B * sizeof *s), *l = malloc((size_t)B * L * sizeof *l), *ll = malloc((size_t)B * sizeof *ll);
  cls_status st = CLS_OK;
  if (!s || !l || !ll) st = cls_fail(b->m.e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int u = 0; st == CLS_OK && u < B; u++) {
    s[u] = T;
    ll[u] = L;
    for (int k = 0; k < L; k++) l[u * L + k] = (u * 7 + k * 3) % (C - 1);
  }
  if (st == CLS_OK) st = cls_bench_ints(&b->m, s, (size_t)B, seq);
  if (st == CLS_OK) st = cls_bench_ints(&b->m, l, (size_t)B * L, lab);
  if (st == CLS_OK) st = cls_bench_ints(&b->m, ll, (size_t)B, lab_len);
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
  if (st == CLS_OK) st = cls_bench_floats(&b.m, rows * H, 11, 1.0f, 0, &c.x);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, 2 * H * H4, 12, 0.05f, 0, &c.w);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, H4, 13, 0.1f, 0, &c.bias);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, rows * H, 0, 0, 0, &c.h);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, rows * H, 14, 0.1f, 0, &c.dh);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, rows * H, 0, 0, 0, &c.dx);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, 2 * H * H4, 0, 0, 0, &c.dw);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, H4, 0, 0, 0, &c.db);
  if (st == CLS_OK)
    st = cls_bench_floats(&b.m, cls_lstm_workspace_bytes(c.lstm, c.T, c.B) / sizeof(float), 0, 0, 0, &c.ws);
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
  if (st == CLS_OK) st = cls_bench_floats(&b.m, rows * (size_t)cfg->n_classes, 15, 3.0f, 0, &c.logits);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, rows * (size_t)cfg->n_classes, 0, 0, 0, &c.dlogits);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, (size_t)c.B, 0, 0, 0, &c.loss);
  size_t ctc_ws = st == CLS_OK ? cls_ctc_workspace_bytes(c.ctc, c.T, c.B) : 0;
  if (st == CLS_OK && ctc_ws) st = cls_bench_floats(&b.m, ctc_ws / sizeof(float) + 1, 0, 0, 0, &c.ctc_ws);
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
    cls_bench_buffers_release(&b.m);
    c.ctc_ws = NULL;
  }
  if (st == CLS_OK) st = cls_adam_create(e, device, &c.adam);
  c.adam_state = cls_adam_state_init(0.9f, 0.999f);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, c.n_params, 16, 0.05f, 0, &c.p);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, c.n_params, 0, 0, 0, &c.m);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, c.n_params, 0, 0, 0, &c.v);
  if (st == CLS_OK) st = cls_bench_floats(&b.m, c.n_params, 17, 0.01f, 0, &c.g);
  if (st == CLS_OK) cls_bench_progress(cfg, "adam over %zu parameters", c.n_params);
  if (st == CLS_OK) st = cls_bench_time(e, b.q, adam_op, &c, cfg->runs, &out->adam_ms);
  close_buffers(&b);
  cls_lstm_destroy(c.lstm);
  cls_ctc_destroy(c.ctc);
  cls_adam_destroy(c.adam);
  return st;
}

/* ---- MFCC ---- */

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
  cls_bench_audio(c->audio, c->n);
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
  if (st == CLS_OK) st = cls_bench_floats(&b.m, (size_t)T * B * cls_model_input_width(&mc), 0, 0, 0, &c.windows);
  if (st == CLS_OK) cls_bench_progress(cfg, "mfcc on the device (B=%d, T=%d)", B, T);
  if (st == CLS_OK) st = cls_bench_time(e, b.q, mfcc_op, &c, cfg->runs, &out->ms);
  out->audio_seconds = (double)c.n * B / 16000.0;
  close_buffers(&b);
  mfcc_teardown(&c);
  return st;
}
