/* Per-op timings at DeepSpeech's shapes on each OpenCL device: dense (H->H, clipped ReLU and
 * dropout) forward and backward, layer norm (--layer_norm's, with the same dropout) forward and backward,
 * LSTM forward and backward, CTC loss + gradient, and Adam over the whole model's parameters. Wall time of enqueue + clFinish (what a training step pays), median of
 * --reps runs after one warm-up. Prints a table, and one JSON object per measurement with --json
 * (bench/compare_ops.py runs this beside PyTorch and prints the ratios).
 * --lstm_path steps|sequence times the LSTM on that path of its recurrence (clspeech/internal/ops.h; the default
 * is the plan's own choice), and `both` times the two in turns, three rounds, each the median of its rounds
 * (ops lstm_fwd_steps, lstm_fwd_sequence, ...).
 *   bench_ops [--n_hidden 512,2048] [--batch 16] [--time 150] [--labels 40] [--reps 5] [--devices SEL]
 *             [--lstm_path auto|steps|sequence|both] [--json] */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/internal/ops.h"
#include "clspeech/model.h"
#include "clspeech/ops.h"

typedef struct bench_opts {
  char hidden[128];
  int batch, time, labels, reps;
  const char *devices;
  int json;
  const char *lstm_path; /* auto, steps, sequence or both */
} bench_opts;

/* The path named `name` (cls_lstm_path_name's names); false for any other. */
static bool lstm_path_of(const char *name, cls_lstm_path *out) {
  const cls_lstm_path all[3] = {CLS_LSTM_PATH_AUTO, CLS_LSTM_PATH_STEPS, CLS_LSTM_PATH_SEQUENCE};
  for (int i = 0; i < 3; i++)
    if (name && !strcmp(name, cls_lstm_path_name(all[i]))) {
      *out = all[i];
      return true;
    }
  return false;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define MAX_REPS 64
typedef cls_status (*op_fn)(void *ctx);

/* Median wall time in ms of fn + clFinish over reps runs, after one warm-up run. */
static double time_op(op_fn fn, void *ctx, cl_command_queue q, int reps, cls_status *status) {
  double t[MAX_REPS];
  *status = fn(ctx);
  clFinish(q);
  for (int r = 0; r < reps && *status == CLS_OK; r++) {
    double t0 = cls_now_ms();
    *status = fn(ctx);
    clFinish(q);
    t[r] = cls_now_ms() - t0;
  }
  if (*status != CLS_OK) return -1;
  qsort(t, (size_t)reps, sizeof *t, compare_double);
  return t[reps / 2];
}

typedef struct op_ctx {
  cl_command_queue q;
  int T, B, H, C, L;
  cls_dense_plan *dense;
  cls_lstm_plan *lstm;
  cls_ctc_plan *ctc;
  cls_adam_plan *adam;
  cls_layer_norm_plan *ln;
  cls_adam_state adam_state;
  size_t n_params;
  cls_dense_act act;
  cl_mem x, y, dy, dx, w, b, dw, db, ws, seq, labels, label_len, loss, logits, dlogits, lw, lb, ldw, ldb, lws, ctc_ws;
  cl_mem p, m, v, g;
  cl_mem gamma, beta, stats, dgamma, dbeta;
} op_ctx;

static cls_status dense_fwd(void *c_) {
  op_ctx *c = c_;
  return cls_dense_forward(c->dense, c->q, c->T * c->B, cls_buf_of(c->x), cls_buf_of(c->w), cls_buf_of(c->b),
                           cls_buf_of(c->y), &c->act, NULL);
}
static cls_status dense_bwd(void *c_) {
  op_ctx *c = c_;
  return cls_dense_backward(c->dense, c->q, c->T * c->B, cls_buf_of(c->x), cls_buf_of(c->w), cls_buf_of(c->y),
                            cls_buf_of(c->dy), cls_buf_of(c->dx), cls_buf_of(c->dw), cls_buf_of(c->db), &c->act,
                            CLS_OVERWRITE, cls_buf_of(c->ws), NULL);
}
static cls_status ln_fwd(void *c_) {
  op_ctx *c = c_;
  return cls_layer_norm_forward(c->ln, c->q, c->T * c->B, cls_buf_of(c->x), cls_buf_of(c->gamma), cls_buf_of(c->beta),
                                cls_buf_of(c->y), cls_buf_of(c->stats), &c->act, NULL);
}
static cls_status ln_bwd(void *c_) {
  op_ctx *c = c_;
  return cls_layer_norm_backward(c->ln, c->q, c->T * c->B, cls_buf_of(c->x), cls_buf_of(c->gamma), cls_buf_of(c->stats),
                                 cls_buf_of(c->dy), cls_buf_of(c->dx), cls_buf_of(c->dgamma), cls_buf_of(c->dbeta),
                                 CLS_OVERWRITE, &c->act, NULL);
}
static cls_status lstm_fwd(void *c_) {
  op_ctx *c = c_;
  return cls_lstm_forward(c->lstm, c->q, c->T, c->B, cls_buf_of(c->x), cls_buf_of(c->lw), cls_buf_of(c->lb),
                          cls_buf_of(c->seq), cls_buf_of(c->y), cls_buf_of(c->lws), NULL);
}
static cls_status lstm_bwd(void *c_) {
  op_ctx *c = c_;
  return cls_lstm_backward(c->lstm, c->q, c->T, c->B, cls_buf_of(c->x), cls_buf_of(c->lw), cls_buf_of(c->seq),
                           cls_buf_of(c->y), cls_buf_of(c->dy), cls_buf_of(c->lws), cls_buf_of(c->dx), cls_buf_of(c->ldw),
                           cls_buf_of(c->ldb), CLS_OVERWRITE, NULL);
}
static cls_status ctc_op(void *c_) {
  op_ctx *c = c_;
  return cls_ctc_loss(c->ctc, c->q, c->T, c->B, cls_buf_of(c->logits), cls_buf_of(c->labels), cls_buf_of(c->label_len),
                      cls_buf_of(c->seq), cls_buf_of(c->loss), cls_buf_of(c->dlogits), 1.0f / (float)c->B, CLS_OVERWRITE,
                      cls_buf_of(c->ctc_ws), NULL);
}
static cls_status adam_op(void *c_) {
  op_ctx *c = c_;
  return cls_adam_update(c->adam, c->q, c->n_params, cls_buf_of(c->p), cls_buf_of(c->m), cls_buf_of(c->v),
                         cls_buf_of(c->g), 0.001f, 0.9f, 0.999f, 1e-8f, &c->adam_state, NULL);
}

static cl_mem buffer(cl_context ctx, cl_command_queue q, size_t bytes, float fill_value) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (m) clEnqueueFillBuffer(q, m, &fill_value, sizeof fill_value, 0, bytes, 0, NULL, NULL);
  return m;
}

/* Random values in [-a, a), written to a buffer. */
static void randomize(cl_command_queue q, cl_mem m, size_t n, float a, unsigned seed) {
  float *h = malloc(n * sizeof *h);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    h[i] = a * ((float)(seed >> 8) / 8388608.0f - 1.0f);
  }
  clEnqueueWriteBuffer(q, m, CL_TRUE, 0, n * sizeof *h, h, 0, NULL, NULL);
  free(h);
}

static void report(const bench_opts *o, const cls_device_info *d, int dev, const char *op, int H, double ms,
                   double flops, double bytes) {
  double gflops = flops > 0 && ms > 0 ? flops / ms / 1e6 : 0, gbs = bytes > 0 && ms > 0 ? bytes / ms / 1e6 : 0;
  if (o->json)
    printf("{\"device\": \"%d:%d %s\", \"op\": \"%s\", \"n_hidden\": %d, \"batch\": %d, \"time\": %d, \"ms\": %.4f, "
           "\"gflops\": %.3f, \"gbs\": %.3f}\n",
           d->platform_index, d->device_index, d->name, op, H, o->batch, o->time, ms, gflops, gbs);
  else
    printf("%-5d %-36.36s %-14s %6d %10.3f %10.2f %10.2f\n", dev, d->name, op, H, ms, gflops, gbs);
  fflush(stdout);
}

static cls_status bench_device(cls_engine *e, int dev, const bench_opts *o, int H) {
  const cls_device_info *info = cls_engine_device(e, dev);
  op_ctx c;
  memset(&c, 0, sizeof c);
  cl_context ctx = NULL;
  cls_status st = cls_engine_device_cl(e, dev, &ctx, NULL, &c.q);
  if (st != CLS_OK) return st;
  c.T = o->time;
  c.B = o->batch;
  c.H = H;
  c.C = 29;
  c.L = o->labels;
  const size_t rows = (size_t)c.T * c.B, rh = rows * H * sizeof(float);
  c.act.relu = 1;
  c.act.relu_clip = 20.0f;
  c.act.dropout_rate = 0.05f;
  c.act.batch = c.B;
  c.x = buffer(ctx, c.q, rh, 0);
  c.y = buffer(ctx, c.q, rh, 0);
  c.dy = buffer(ctx, c.q, rh, 0);
  c.dx = buffer(ctx, c.q, rh, 0);
  c.ws = buffer(ctx, c.q, rh, 0);
  randomize(c.q, c.x, rows * H, 1.0f, 1);
  randomize(c.q, c.dy, rows * H, 1.0f, 2);
  int32_t *seq = malloc((size_t)c.B * sizeof *seq);
  for (int b = 0; b < c.B; b++) seq[b] = c.T;
  cl_int err = CL_SUCCESS;
  c.seq = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (size_t)c.B * sizeof *seq, seq, &err);
  free(seq);
  double ms;

  /* dense H -> H */
  c.w = buffer(ctx, c.q, (size_t)H * H * sizeof(float), 0);
  c.b = buffer(ctx, c.q, (size_t)H * sizeof(float), 0.01f);
  c.dw = buffer(ctx, c.q, (size_t)H * H * sizeof(float), 0);
  c.db = buffer(ctx, c.q, (size_t)H * sizeof(float), 0);
  randomize(c.q, c.w, (size_t)H * H, 0.05f, 3);
  st = cls_dense_create(e, dev, H, H, &c.dense);
  double dense_flops = 2.0 * (double)rows * H * H;
  if (st == CLS_OK) ms = time_op(dense_fwd, &c, c.q, o->reps, &st);
  if (st == CLS_OK) report(o, info, dev, "dense_fwd", H, ms, dense_flops, 0);
  if (st == CLS_OK) ms = time_op(dense_bwd, &c, c.q, o->reps, &st);
  if (st == CLS_OK) report(o, info, dev, "dense_bwd", H, ms, 2 * dense_flops, 0);

  /* layer norm over H, the dense layers' dropout after it (x, y, dy, dx as above) */
  if (st == CLS_OK) st = cls_layer_norm_create(e, dev, H, &c.ln);
  if (st == CLS_OK) {
    c.gamma = buffer(ctx, c.q, (size_t)H * sizeof(float), 1.0f);
    c.beta = buffer(ctx, c.q, (size_t)H * sizeof(float), 0.01f);
    c.dgamma = buffer(ctx, c.q, (size_t)H * sizeof(float), 0);
    c.dbeta = buffer(ctx, c.q, (size_t)H * sizeof(float), 0);
    c.stats = buffer(ctx, c.q, cls_layer_norm_stats_floats((int)rows) * sizeof(float), 0);
    ms = time_op(ln_fwd, &c, c.q, o->reps, &st);
  }
  if (st == CLS_OK) report(o, info, dev, "layer_norm_fwd", H, ms, 0, 0);
  if (st == CLS_OK) ms = time_op(ln_bwd, &c, c.q, o->reps, &st);
  if (st == CLS_OK) report(o, info, dev, "layer_norm_bwd", H, ms, 0, 0);

  /* LSTM, input H, hidden H */
  if (st == CLS_OK) st = cls_lstm_create(e, dev, c.T, c.B, H, H, &c.lstm);
  if (st == CLS_OK) {
    c.lw = buffer(ctx, c.q, (size_t)2 * H * 4 * H * sizeof(float), 0);
    c.lb = buffer(ctx, c.q, (size_t)4 * H * sizeof(float), 0);
    c.ldw = buffer(ctx, c.q, (size_t)2 * H * 4 * H * sizeof(float), 0);
    c.ldb = buffer(ctx, c.q, (size_t)4 * H * sizeof(float), 0);
    c.lws = buffer(ctx, c.q, cls_lstm_workspace_bytes(c.lstm, c.T, c.B), 0);
    randomize(c.q, c.lw, (size_t)2 * H * 4 * H, 0.03f, 4);
  }
  double lstm_flops = 2.0 * (double)rows * (2.0 * H) * 4.0 * H;
  if (st == CLS_OK && strcmp(o->lstm_path, "both") != 0) {
    cls_lstm_path path = CLS_LSTM_PATH_AUTO;
    lstm_path_of(o->lstm_path, &path); /* (checked in main) */
    st = cls_lstm_set_path(c.lstm, path);
    if (st == CLS_OK) ms = time_op(lstm_fwd, &c, c.q, o->reps, &st);
    if (st == CLS_OK) report(o, info, dev, "lstm_fwd", H, ms, lstm_flops, 0);
    if (st == CLS_OK) ms = time_op(lstm_bwd, &c, c.q, o->reps, &st);
    if (st == CLS_OK) report(o, info, dev, "lstm_bwd", H, ms, 2 * lstm_flops, 0);
  } else if (st == CLS_OK) { /* both paths in turns: rounds[r][path][fwd, bwd] */
    enum { ROUNDS = 3 };
    const cls_lstm_path paths[2] = {CLS_LSTM_PATH_STEPS, CLS_LSTM_PATH_SEQUENCE};
    double t[2][2][ROUNDS];
    for (int r = 0; r < ROUNDS && st == CLS_OK; r++)
      for (int k = 0; k < 2 && st == CLS_OK; k++) {
        st = cls_lstm_set_path(c.lstm, paths[k]);
        if (st == CLS_OK) t[k][0][r] = time_op(lstm_fwd, &c, c.q, o->reps, &st);
        if (st == CLS_OK) t[k][1][r] = time_op(lstm_bwd, &c, c.q, o->reps, &st);
      }
    for (int k = 0; k < 2 && st == CLS_OK; k++)
      for (int dir = 0; dir < 2; dir++) {
        char name[40];
        snprintf(name, sizeof name, "lstm_%s_%s", dir ? "bwd" : "fwd", cls_lstm_path_name(paths[k]));
        qsort(t[k][dir], ROUNDS, sizeof(double), compare_double);
        report(o, info, dev, name, H, t[k][dir][ROUNDS / 2], (dir ? 2 : 1) * lstm_flops, 0);
      }
  }

  /* CTC loss + gradient over 29 classes */
  if (st == CLS_OK) st = cls_ctc_create(e, dev, c.T, c.B, c.C, c.L, &c.ctc);
  if (st == CLS_OK) {
    size_t nl = rows * c.C;
    c.logits = buffer(ctx, c.q, nl * sizeof(float), 0);
    c.dlogits = buffer(ctx, c.q, nl * sizeof(float), 0);
    c.loss = buffer(ctx, c.q, (size_t)c.B * sizeof(float), 0);
    c.ctc_ws = buffer(ctx, c.q, cls_ctc_workspace_bytes(c.ctc, c.T, c.B), 0);
    randomize(c.q, c.logits, nl, 3.0f, 5);
    int32_t *lab = malloc((size_t)c.B * c.L * sizeof *lab), *ll = malloc((size_t)c.B * sizeof *ll);
    for (int i = 0; i < c.B * c.L; i++) lab[i] = (i * 7 + 3) % (c.C - 1);
    for (int b = 0; b < c.B; b++) ll[b] = c.L;
    c.labels = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (size_t)c.B * c.L * sizeof *lab, lab, &err);
    c.label_len = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (size_t)c.B * sizeof *ll, ll, &err);
    free(lab);
    free(ll);
  }
  if (st == CLS_OK) ms = time_op(ctc_op, &c, c.q, o->reps, &st);
  if (st == CLS_OK) report(o, info, dev, "ctc_loss_grad", H, ms, 0, 2.0 * rows * c.C * sizeof(float));

  /* Adam over the parameters of the whole model at this H */
  if (st == CLS_OK) {
    cls_model_config cfg = cls_model_config_deepspeech(H, c.C);
    cls_param_view views[CLS_MODEL_N_TENSORS];
    c.n_params = cls_model_layout(&cfg, views);
    c.p = buffer(ctx, c.q, c.n_params * sizeof(float), 0.1f);
    c.m = buffer(ctx, c.q, c.n_params * sizeof(float), 0);
    c.v = buffer(ctx, c.q, c.n_params * sizeof(float), 0);
    c.g = buffer(ctx, c.q, c.n_params * sizeof(float), 0.01f);
    st = cls_adam_create(e, dev, &c.adam);
    c.adam_state = cls_adam_state_init(0.9f, 0.999f);
  }
  if (st == CLS_OK) ms = time_op(adam_op, &c, c.q, o->reps, &st);
  if (st == CLS_OK) report(o, info, dev, "adam", H, ms, 0, 28.0 * (double)c.n_params);

  cls_dense_destroy(c.dense);
  cls_lstm_destroy(c.lstm);
  cls_ctc_destroy(c.ctc);
  cls_adam_destroy(c.adam);
  cls_layer_norm_destroy(c.ln);
  cl_mem all[] = {c.gamma, c.beta, c.stats, c.dgamma, c.dbeta, c.x, c.y, c.dy, c.dx, c.w, c.b, c.dw, c.db, c.ws, c.seq, c.labels, c.label_len, c.loss, c.logits,
                  c.dlogits, c.lw, c.lb, c.ldw, c.ldb, c.lws, c.ctc_ws, c.p, c.m, c.v, c.g};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (all[i]) clReleaseMemObject(all[i]);
  return st;
}

int main(int argc, char **argv) {
  bench_opts o = {"512,2048", 16, 150, 40, 5, NULL, 0, "auto"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--json")) {
      o.json = 1;
      continue;
    }
    if (!v) {
      fprintf(stderr, "bench_ops: %s needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "--n_hidden")) snprintf(o.hidden, sizeof o.hidden, "%s", v);
    else if (!strcmp(a, "--batch")) o.batch = atoi(v);
    else if (!strcmp(a, "--time")) o.time = atoi(v);
    else if (!strcmp(a, "--labels")) o.labels = atoi(v);
    else if (!strcmp(a, "--reps")) o.reps = atoi(v);
    else if (!strcmp(a, "--devices")) o.devices = v;
    else if (!strcmp(a, "--lstm_path")) {
      cls_lstm_path path;
      if (strcmp(v, "both") != 0 && !lstm_path_of(v, &path)) {
        fprintf(stderr, "bench_ops: --lstm_path takes auto, steps, sequence or both\n");
        return 2;
      }
      o.lstm_path = v;
    } else {
      fprintf(stderr, "bench_ops: unknown flag %s\n", a);
      return 2;
    }
    i++;
  }
  if (o.reps < 1 || o.reps > MAX_REPS || o.batch < 1 || o.time < 1 || o.labels < 1 || 2 * o.labels + 1 > o.time) {
    fprintf(stderr, "bench_ops: bad sizes (reps 1..%d; labels must fit the frames)\n", MAX_REPS);
    return 2;
  }
  cls_engine *e = NULL;
  cls_status st = cls_engine_create(NULL, &e);
  int sel[CLS_MAX_DEVICES], n = 0;
  if (st == CLS_OK) st = cls_engine_select(e, o.devices, sel, CLS_MAX_DEVICES, &n);
  if (st == CLS_OK) st = cls_engine_prepare(e, sel, &n);
  if (st != CLS_OK) {
    fprintf(stderr, "bench_ops: %s\n", cls_engine_error(e));
    cls_engine_destroy(e);
    return 3;
  }
  if (!o.json)
    printf("%-5s %-36s %-14s %6s %10s %10s %10s\n", "dev", "device", "op", "H", "ms", "GFLOP/s", "GB/s");
  int rc = 0;
  char hidden[128];
  snprintf(hidden, sizeof hidden, "%s", o.hidden);
  for (char *tok = strtok(hidden, ","); tok; tok = strtok(NULL, ",")) {
    int H = atoi(tok);
    for (int i = 0; i < n; i++) {
      fprintf(stderr, "bench_ops: H=%d on device %d (%s)...\n", H, sel[i], cls_engine_device(e, sel[i])->name);
      st = bench_device(e, sel[i], &o, H);
      if (st != CLS_OK) {
        fprintf(stderr, "bench_ops: %s\n", cls_engine_error(e));
        rc = 1;
      }
    }
  }
  cls_engine_destroy(e);
  return rc;
}
