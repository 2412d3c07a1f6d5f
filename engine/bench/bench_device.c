/* Benchmarks of the device itself (see bench.h): the bench's profiling queue, marker-bracketed
 * timing, the measured peak (kernels/peak.cl, host<->device transfers), the probe that times the FMA
 * peak beside other work, and SGEMM cases at the model's shapes through the GEMM entry point (cls_gemm,
 * the device's backend unless set), timed alone or beside the probe, with a sampled double-precision
 * host check. Prints nothing. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/internal/bench.h"
#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"

#define DEVICE_FMT "device %d:%d (%s)"
#define DEVICE_ARGS(d) (d)->info.platform_index, (d)->info.device_index, (d)->info.name

int cls_bench_label_length(int time) {
  int l = time / 3;
  return l > 40 ? 40 : l < 1 ? 1 : l;
}

void cls_bench_progress(const cls_bench_config *cfg, const char *fmt, ...) {
  if (!cfg || !cfg->progress) return;
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  cfg->progress(cfg->user, buf);
}

cls_status cls_bench_queue(cls_engine *e, int device, cl_command_queue *out) {
  *out = NULL;
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  cl_int err = CL_SUCCESS;
  *out = clCreateCommandQueue(d->context, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (!*out)
    return cls_fail(e, CLS_ERR_OPENCL, DEVICE_FMT ": bench: clCreateCommandQueue(profiling) failed: %s", DEVICE_ARGS(d),
                    cls_cl_error_name(err));
  return CLS_OK;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double cls_bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

cl_int cls_bench_event_ms(cl_event ev, double *ms) {
  cl_ulong t0 = 0, t1 = 0;
  *ms = 0;
  cl_int err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
  if (err == CL_SUCCESS) err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
  if (err == CL_SUCCESS && t1 > t0) *ms = (double)(t1 - t0) * 1e-6;
  return err;
}

int cls_bench_varied_frames(int T, int u) { return T - (u % 4) * (T / 10); }

static cls_status marker(cls_engine *e, cl_command_queue q, cl_event *ev) {
  cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, ev);
  if (err != CL_SUCCESS)
    return cls_fail(e, CLS_ERR_OPENCL, "bench: clEnqueueMarkerWithWaitList failed: %s", cls_cl_error_name(err));
  return CLS_OK;
}

static cls_status event_end(cls_engine *e, cl_event ev, cl_ulong *end) {
  cl_int err = clWaitForEvents(1, &ev);
  if (err == CL_SUCCESS) err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof *end, end, NULL);
  if (err != CL_SUCCESS)
    return cls_fail(e, CLS_ERR_OPENCL, "bench: reading a profiling event failed: %s", cls_cl_error_name(err));
  return CLS_OK;
}

cls_status cls_bench_time(cls_engine *e, cl_command_queue q, cls_bench_op op, void *ctx, int runs, double *median_ms) {
  return cls_bench_time_warm(e, q, op, ctx, 1, runs, median_ms);
}

cls_status cls_bench_time_warm(cls_engine *e, cl_command_queue q, cls_bench_op op, void *ctx, int warmups, int runs,
                               double *median_ms) {
  return cls_bench_time_stats(e, q, op, ctx, warmups, runs, median_ms, NULL);
}

cls_status cls_bench_time_stats(cls_engine *e, cl_command_queue q, cls_bench_op op, void *ctx, int warmups, int runs,
                                double *median_ms, double *best_ms) {
  if (median_ms) *median_ms = -1;
  if (best_ms) *best_ms = -1;
  if (runs < 1 || runs > CLS_BENCH_MAX_RUNS)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "bench: runs must be 1..%d", CLS_BENCH_MAX_RUNS);
  cls_status st = CLS_OK;
  for (int w = 0; w < warmups && st == CLS_OK; w++) st = op(ctx, q);
  if (st == CLS_OK && clFinish(q) != CL_SUCCESS) st = cls_fail(e, CLS_ERR_OPENCL, "bench: clFinish failed");
  double t[CLS_BENCH_MAX_RUNS];
  for (int r = 0; r < runs && st == CLS_OK; r++) {
    cl_event before = NULL, after = NULL;
    cl_ulong t0 = 0, t1 = 0;
    st = marker(e, q, &before);
    if (st == CLS_OK) st = op(ctx, q);
    if (st == CLS_OK) st = marker(e, q, &after);
    if (st == CLS_OK) st = event_end(e, before, &t0);
    if (st == CLS_OK) st = event_end(e, after, &t1);
    if (before) clReleaseEvent(before);
    if (after) clReleaseEvent(after);
    t[r] = t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
  }
  if (st != CLS_OK) {
    clFinish(q);
    return st;
  }
  const double median = cls_bench_median(t, runs);
  if (median_ms) *median_ms = median;
  if (best_ms) *best_ms = t[0];
  return CLS_OK;
}

/* ---- peak ---- */

typedef struct kernel_op {
  cls_engine *e;
  cl_kernel k;
  const char *name;
  size_t global, local;
} kernel_op;

static cls_status run_kernel(void *c_, cl_command_queue q) {
  kernel_op *c = c_;
  return cls_ops_launch_to(cls_engine_errors(c->e), q, c->k, c->name, 1, &c->global, &c->local, NULL);
}

typedef struct transfer_op {
  cls_engine *e;
  cl_mem dev;
  void *host;
  size_t bytes;
  int to_device;
} transfer_op;

static cls_status run_transfer(void *c_, cl_command_queue q) {
  transfer_op *c = c_;
  cl_int err = c->to_device ? clEnqueueWriteBuffer(q, c->dev, CL_FALSE, 0, c->bytes, c->host, 0, NULL, NULL)
                            : clEnqueueReadBuffer(q, c->dev, CL_FALSE, 0, c->bytes, c->host, 0, NULL, NULL);
  if (err != CL_SUCCESS)
    return cls_fail(c->e, CLS_ERR_OPENCL, "bench: clEnqueue%sBuffer failed: %s", c->to_device ? "Write" : "Read",
                    cls_cl_error_name(err));
  return CLS_OK;
}

/* Runs of each FMA kernel: its best run is the peak (other work on the machine, such as a cloud host's other
   guests on the cores' SMT siblings, only ever lowers a reading), so enough runs that some find the cores
   undisturbed. */
#define PEAK_MIN_RUNS 15

/* The FMA kernel's arguments: the output, the rounds and the two factors. */
static cls_status set_peak_args(cls_engine *e, cl_kernel k, const char *name, cl_mem out, int iters, float a, float b) {
  cls_kargs ka = cls_kargs_begin(cls_engine_errors(e), k, name);
  cls_kargs_mem(&ka, out);
  cls_kargs_int(&ka, iters);
  cls_kargs_float(&ka, a);
  cls_kargs_float(&ka, b);
  return cls_kargs_end(&ka);
}

/* The FMA kernel `name` (float`width`) on op, its `iters` grown until a run takes at least min_ms (or 2^22
 * rounds), its arguments set for that many; *flops: the floating-point operations of one run. */
static cls_status fma_sized(cls_engine *e, cls_device *d, cl_command_queue q, const char *name, int width, cl_mem out,
                            double min_ms, kernel_op *op, double *flops) {
  *op = (kernel_op){e, NULL, name, (size_t)(d->info.compute_units ? d->info.compute_units : 1) * 2048, 128};
  if (op->local > d->info.max_work_group_size) op->local = d->info.max_work_group_size;
  cls_status st = cls_device_kernel(e, d, "peak", name, &op->k);
  int iters = 16;
  float a = 0.999f, b = 0.001f;
  double ms = 0;
  for (int tries = 0; st == CLS_OK && tries < 16; tries++) {
    st = set_peak_args(e, op->k, name, out, iters, a, b);
    if (st == CLS_OK) st = cls_bench_time(e, q, run_kernel, op, 1, &ms);
    if (st != CLS_OK || ms >= min_ms || iters >= (1 << 22)) break;
    double grow = ms > 0 ? 2.0 * min_ms / ms : 16.0;
    iters = (int)(iters * (grow > 16 ? 16 : grow < 2 ? 2 : grow));
    if (iters > (1 << 22)) iters = 1 << 22;
  }
  if (st == CLS_OK) st = set_peak_args(e, op->k, name, out, iters, a, b);
  size_t rounded = (op->global + op->local - 1) / op->local * op->local;
  *flops = (double)rounded * iters * 8.0 * width * 2.0;
  return st;
}

/* GFLOP/s of one FMA kernel: sized to at least 20 ms a run, then the best of at least PEAK_MIN_RUNS runs. */
static cls_status fma_gflops(cls_engine *e, cls_device *d, cl_command_queue q, const cls_bench_config *cfg,
                             const char *name, int width, cl_mem out, double *gflops) {
  kernel_op op;
  double flops = 0, ms = 0;
  cls_status st = fma_sized(e, d, q, name, width, out, 20.0, &op, &flops);
  const int runs = cfg->runs > PEAK_MIN_RUNS ? cfg->runs : PEAK_MIN_RUNS;
  if (st == CLS_OK) st = cls_bench_time_stats(e, q, run_kernel, &op, 0, runs, NULL, &ms);
  if (op.k) clReleaseKernel(op.k);
  *gflops = st == CLS_OK && ms > 0 ? flops / (ms * 1e6) : 0;
  return st;
}

cls_status cls_bench_peak_run(cls_engine *e, int device, const cls_bench_config *cfg, cls_bench_peak *out) {
  memset(out, 0, sizeof *out);
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  cl_command_queue q = NULL;
  if ((st = cls_bench_queue(e, device, &q)) != CLS_OK) return st;
  size_t bytes = d->info.kind == CLS_DEVICE_GPU ? (size_t)256 << 20 : (size_t)64 << 20;
  if (d->info.max_alloc_bytes && bytes > d->info.max_alloc_bytes / 2) bytes = (size_t)(d->info.max_alloc_bytes / 2);
  if (d->info.global_mem_bytes && bytes > d->info.global_mem_bytes / 8) bytes = (size_t)(d->info.global_mem_bytes / 8);
  bytes &= ~(size_t)15;
  out->transfer_bytes = bytes;
  cl_int err = CL_SUCCESS;
  size_t fma_items = (size_t)(d->info.compute_units ? d->info.compute_units : 1) * 2048 + 128;
  cl_mem fma_out = clCreateBuffer(d->context, CL_MEM_WRITE_ONLY, fma_items * sizeof(float), NULL, &err);
  cl_mem src = clCreateBuffer(d->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  cl_mem dst = clCreateBuffer(d->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  cl_mem pinned = clCreateBuffer(d->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
  void *host = NULL;
  if (!fma_out || !src || !dst || !pinned)
    st = cls_fail(e, CLS_ERR_OPENCL, DEVICE_FMT ": bench: allocating 3 x %zu bytes failed: %s", DEVICE_ARGS(d), bytes,
                  cls_cl_error_name(err));
  if (st == CLS_OK) {
    host = clEnqueueMapBuffer(q, pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
    if (!host) st = cls_fail(e, CLS_ERR_OPENCL, "bench: clEnqueueMapBuffer failed: %s", cls_cl_error_name(err));
    else memset(host, 1, bytes);
  }
  double g4 = 0, g8 = 0, g16 = 0, ms = 0;
  if (st == CLS_OK) cls_bench_progress(cfg, "peak: FMA throughput (float4)");
  if (st == CLS_OK) st = fma_gflops(e, d, q, cfg, "peak_fma4", 4, fma_out, &g4);
  if (st == CLS_OK) cls_bench_progress(cfg, "peak: FMA throughput (float8)");
  if (st == CLS_OK) st = fma_gflops(e, d, q, cfg, "peak_fma8", 8, fma_out, &g8);
  if (st == CLS_OK) cls_bench_progress(cfg, "peak: FMA throughput (float16)");
  if (st == CLS_OK) st = fma_gflops(e, d, q, cfg, "peak_fma16", 16, fma_out, &g16);
  out->fma_gflops = g4 > g8 ? g4 : g8;
  out->fma_width = g4 > g8 ? 4 : 8;
  if (g16 > out->fma_gflops) {
    out->fma_gflops = g16;
    out->fma_width = 16;
  }
  if (st == CLS_OK) st = cls_ops_fill_to(cls_engine_errors(e), q, cls_buf_of(src), bytes / 4, 1.0f);
  kernel_op copy = {e, NULL, "peak_copy", bytes / 16, 64};
  if (st == CLS_OK) st = cls_device_kernel(e, d, "peak", "peak_copy", &copy.k);
  int n4 = (int)(bytes / 16);
  if (st == CLS_OK) {
    cls_kargs ka = cls_kargs_begin(cls_engine_errors(e), copy.k, "peak_copy");
    cls_kargs_mem(&ka, src);
    cls_kargs_mem(&ka, dst);
    cls_kargs_int(&ka, n4);
    st = cls_kargs_end(&ka);
  }
  if (st == CLS_OK) cls_bench_progress(cfg, "peak: device copy bandwidth (%zu MiB)", bytes >> 20);
  if (st == CLS_OK) st = cls_bench_time(e, q, run_kernel, &copy, cfg->runs, &ms);
  if (st == CLS_OK && ms > 0) out->copy_gbs = 2.0 * (double)bytes / (ms * 1e6);
  transfer_op tr = {e, dst, host, bytes, 1};
  if (st == CLS_OK) cls_bench_progress(cfg, "peak: host to device bandwidth");
  if (st == CLS_OK) st = cls_bench_time(e, q, run_transfer, &tr, cfg->runs, &ms);
  if (st == CLS_OK && ms > 0) out->host_to_device_gbs = (double)bytes / (ms * 1e6);
  tr.to_device = 0;
  if (st == CLS_OK) cls_bench_progress(cfg, "peak: device to host bandwidth");
  if (st == CLS_OK) st = cls_bench_time(e, q, run_transfer, &tr, cfg->runs, &ms);
  if (st == CLS_OK && ms > 0) out->device_to_host_gbs = (double)bytes / (ms * 1e6);
  if (copy.k) clReleaseKernel(copy.k);
  if (host) clEnqueueUnmapMemObject(q, pinned, host, 0, NULL, NULL);
  clFinish(q);
  cl_mem all[] = {fma_out, src, dst, pinned};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (all[i]) clReleaseMemObject(all[i]);
  clReleaseCommandQueue(q);
  return st;
}

/* ---- the peak beside other work ---- */

/* One probe run lasts at least CLS_BENCH_RUN_MS: launch costs are then a small part of it, and one run beside
   each timed run of a product adds little to a bench. */

struct cls_bench_probe {
  cls_engine *e;
  cl_command_queue q;
  cl_mem out;
  kernel_op op;
  double flops; /* per run */
  double best;  /* the fastest run's GFLOP/s so far */
};

cls_status cls_bench_probe_create(cls_engine *e, int device, cl_command_queue q, const cls_bench_peak *peak,
                                  cls_bench_probe **out) {
  *out = NULL;
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  const int width = peak && (peak->fma_width == 8 || peak->fma_width == 16) ? peak->fma_width : 4;
  const char *name = width == 16 ? "peak_fma16" : width == 8 ? "peak_fma8" : "peak_fma4";
  cls_bench_probe *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->e = e;
  p->q = q;
  cl_int err = CL_SUCCESS;
  const size_t items = (size_t)(d->info.compute_units ? d->info.compute_units : 1) * 2048 + 128;
  p->out = clCreateBuffer(d->context, CL_MEM_WRITE_ONLY, items * sizeof(float), NULL, &err);
  if (!p->out)
    st = cls_fail(e, CLS_ERR_OPENCL, DEVICE_FMT ": bench: allocating the probe's %zu floats failed: %s",
                  DEVICE_ARGS(d), items, cls_cl_error_name(err));
  if (st == CLS_OK) st = fma_sized(e, d, q, name, width, p->out, CLS_BENCH_RUN_MS, &p->op, &p->flops);
  if (st != CLS_OK) {
    cls_bench_probe_destroy(p);
    return st;
  }
  *out = p;
  return CLS_OK;
}

void cls_bench_probe_destroy(cls_bench_probe *p) {
  if (!p) return;
  if (p->op.k) clReleaseKernel(p->op.k);
  if (p->out) clReleaseMemObject(p->out);
  free(p);
}

cls_status cls_bench_probe_run(cls_bench_probe *p, double *gflops) {
  double ms = 0;
  cls_status st = cls_bench_time_stats(p->e, p->q, run_kernel, &p->op, 0, 1, &ms, NULL);
  *gflops = st == CLS_OK && ms > 0 ? p->flops / (ms * 1e6) : 0;
  if (*gflops > p->best) p->best = *gflops;
  return st;
}

double cls_bench_probe_best(const cls_bench_probe *p) { return p ? p->best : 0; }

bool cls_bench_peak_measured_slow(double probe_best_gflops, double peak_gflops) {
  return peak_gflops > 0 && probe_best_gflops > CLS_BENCH_PEAK_SLACK * peak_gflops;
}

bool cls_bench_at_full_speed(double before, double after, double peak_gflops) {
  return (before < after ? before : after) >= CLS_BENCH_FULL_SPEED * peak_gflops;
}

/* ---- SGEMM shapes of one training step ---- */

static void shape(cls_gemm_shape *s, const char *name, int ta, int tb, int m, int n, int k, int calls, int H) {
  snprintf(s->name, sizeof s->name, "%s", name);
  s->trans_a = ta;
  s->trans_b = tb;
  s->m = m;
  s->n = n;
  s->k = k;
  s->calls = calls;
  s->n_hidden = H;
  s->packed_b = 0;
}

cls_model_config cls_bench_model(const cls_bench_config *cfg) {
  return cls_model_config_deepspeech(cfg->n_hidden, cfg->n_classes);
}

int cls_bench_gemm_shapes(const cls_model_config *model, int B, int T, cls_gemm_shape *o) {
  const int H = model->n_hidden, R = T * B, I = cls_model_input_width(model), C = model->n_classes, H4 = 4 * H;
  int n = 0;
  /* forward: dense layers 1, 2/3/5, the LSTM's input projection and recurrent product, the output layer */
  shape(&o[n++], "dense1_fwd", 0, 0, R, H, I, 1, H);
  shape(&o[n++], "dense_fwd", 0, 0, R, H, H, 3, H);
  shape(&o[n++], "lstm_in_fwd", 0, 0, R, H4, H, 1, H);
  if (T > 1) {
    shape(&o[n], "lstm_rec_fwd", 0, 0, B, H4, H, T - 1, H);
    o[n++].packed_b = 1;
  }
  shape(&o[n++], "out_fwd", 0, 0, R, C, H, 1, H);
  /* backward: dW = x^T dy, dx = dy W^T (layer 1 needs no dx) */
  shape(&o[n++], "out_dw", 1, 0, H, C, R, 1, H);
  shape(&o[n++], "out_dx", 0, 1, R, H, C, 1, H);
  shape(&o[n++], "dense_dw", 1, 0, H, H, R, 3, H);
  shape(&o[n++], "dense_dx", 0, 1, R, H, H, 3, H);
  shape(&o[n++], "dense1_dw", 1, 0, I, H, R, 1, H);
  if (T > 1) {
    shape(&o[n], "lstm_rec_bwd", 0, 0, B, H, H4, T - 1, H);
    o[n++].packed_b = 1;
  }
  shape(&o[n++], "lstm_dw", 1, 0, H + H, H4, R, 1, H); /* W_x's rows and W_h's in one product: [x_t, h_{t-1}]^T dz */
  shape(&o[n++], "lstm_dx", 0, 1, R, H, H4, 1, H);
  return n;
}

double cls_gemm_flops(const cls_gemm_shape *s) { return 2.0 * s->m * (double)s->n * s->k; }

/* ---- SGEMM cases ---- */

#define CHECK_ROWS 48

typedef struct gemm_case {
  cls_gemm_shape s;
  cl_mem a, b, c;
  cl_mem packed;                   /* B packed (shapes with packed_b), for packed_backend */
  cls_gemm_backend packed_backend;
  int n_rows;
  int rows[CHECK_ROWS];
  double *ref;   /* [n_rows, n], NULL until the first check */
  double *tol;   /* [n_rows, n] */
} gemm_case;

struct cls_gemm_cases {
  cls_engine *engine;
  cl_context ctx;
  cl_command_queue q;
  int device;
  cls_gemm_plan *plan; /* the entry point the cases time, with its backend */
  int n;
  gemm_case *cases;
  int current; /* the case run by gemm_op */
  int repeat;  /* calls per run (cls_gemm_cases_set_repeat) */
  double run_ms; /* > 0: calls per run chosen per case for runs this long (cls_gemm_cases_set_run_ms) */
  int decided;   /* 1 + the case whose calls per run were chosen last, 0 for none */
};

static void lcg_fill(float *h, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    h[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
  }
}

static size_t a_elems(const cls_gemm_shape *s) { return (size_t)s->m * (size_t)s->k; }
static size_t b_elems(const cls_gemm_shape *s) { return (size_t)s->k * (size_t)s->n; }

void cls_gemm_cases_destroy(cls_gemm_cases *g) {
  if (!g) return;
  for (int i = 0; i < g->n && g->cases; i++) {
    gemm_case *c = &g->cases[i];
    if (c->a) clReleaseMemObject(c->a);
    if (c->b) clReleaseMemObject(c->b);
    if (c->c) clReleaseMemObject(c->c);
    if (c->packed) clReleaseMemObject(c->packed);
    free(c->ref);
    free(c->tol);
  }
  free(g->cases);
  cls_gemm_destroy(g->plan);
  free(g);
}

static cls_status upload_random(cls_gemm_cases *g, cl_mem *m, size_t n, unsigned seed) {
  cl_int err = CL_SUCCESS;
  float *h = malloc(n * sizeof *h);
  if (!h) return cls_fail(g->engine, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  lcg_fill(h, n, seed);
  *m = clCreateBuffer(g->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *h, h, &err);
  free(h);
  if (!*m) return cls_fail(g->engine, CLS_ERR_OPENCL, "bench: allocating %zu floats failed: %s", n, cls_cl_error_name(err));
  return CLS_OK;
}

cls_status cls_gemm_cases_create(cls_engine *e, int device, cl_command_queue q, const cls_gemm_shape *shapes, int n,
                                 cls_gemm_cases **out) {
  *out = NULL;
  cl_context ctx = NULL;
  cls_status st = cls_engine_device_cl(e, device, &ctx, NULL, NULL);
  if (st != CLS_OK) return st;
  cls_gemm_cases *g = calloc(1, sizeof *g);
  if (g) g->cases = calloc((size_t)(n > 0 ? n : 1), sizeof *g->cases);
  if (!g || !g->cases) {
    free(g);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  g->engine = e;
  g->ctx = ctx;
  g->q = q;
  g->n = n;
  g->device = device;
  g->repeat = 1;
  st = cls_gemm_create(e, device, &g->plan);
  for (int i = 0; i < n && st == CLS_OK; i++) {
    gemm_case *c = &g->cases[i];
    c->s = shapes[i];
    st = upload_random(g, &c->a, a_elems(&c->s), 1000u + 2u * (unsigned)i);
    if (st == CLS_OK) st = upload_random(g, &c->b, b_elems(&c->s), 1001u + 2u * (unsigned)i);
    cl_int err = CL_SUCCESS;
    if (st == CLS_OK) {
      c->c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)c->s.m * c->s.n * sizeof(float), NULL, &err);
      if (!c->c) st = cls_fail(e, CLS_ERR_OPENCL, "bench: allocating C failed: %s", cls_cl_error_name(err));
    }
    /* rows to check: the first 16, the last 16 and 16 spread between (all rows when m <= 48) */
    int m = c->s.m;
    if (m <= CHECK_ROWS) {
      for (int r = 0; r < m; r++) c->rows[c->n_rows++] = r;
    } else {
      for (int r = 0; r < 16; r++) c->rows[c->n_rows++] = r;
      for (int r = 0; r < 16; r++) c->rows[c->n_rows++] = 16 + (int)((long long)(m - 32) * (2 * r + 1) / 32);
      for (int r = 0; r < 16; r++) c->rows[c->n_rows++] = m - 16 + r;
    }
  }
  if (st != CLS_OK) {
    cls_gemm_cases_destroy(g);
    return st;
  }
  *out = g;
  return CLS_OK;
}

cls_status cls_gemm_cases_set_backend(cls_gemm_cases *g, cls_gemm_backend backend) {
  return cls_gemm_set_backend(g->plan, backend);
}

/* A packed_b case's B packed for the plan's backend (enqueued on q). */
static cls_status ensure_packed(cls_gemm_cases *g, gemm_case *c, cl_command_queue q) {
  const cls_gemm_shape *s = &c->s;
  const cls_gemm_backend backend = cls_gemm_get_class_backend(g->plan, CLS_GEMM_CLASS_PACKED);
  if (!s->packed_b || (c->packed && c->packed_backend == backend)) return CLS_OK;
  if (c->packed) clReleaseMemObject(c->packed);
  size_t total = 0;
  cls_status st = CLS_OK;
  const size_t floats = cls_gemm_packed_b_floats(g->plan, (size_t)s->k, (size_t)s->n);
  c->packed = cls_ops_buffer(g->engine, g->device, g->ctx, floats * sizeof(float), &total, &st);
  if (st != CLS_OK) return st;
  c->packed_backend = backend;
  return cls_gemm_pack_b(g->plan, q, s->trans_b != 0, (size_t)s->m, (size_t)s->k, (size_t)s->n, cls_buf_of(c->b),
                         s->trans_b ? (size_t)s->k : (size_t)s->n, cls_buf_of(c->packed));
}

static cls_status sgemm(cls_gemm_cases *g, gemm_case *c, cl_command_queue q) {
  const cls_gemm_shape *s = &c->s;
  size_t lda = s->trans_a ? (size_t)s->m : (size_t)s->k, ldb = s->trans_b ? (size_t)s->k : (size_t)s->n;
  cls_status st = ensure_packed(g, c, q);
  if (st != CLS_OK || s->packed_b)
    return st != CLS_OK ? st
                        : cls_gemm_packed(g->plan, q, s->trans_a != 0, (size_t)s->m, (size_t)s->n, (size_t)s->k, 1.0f,
                                          cls_buf_of(c->a), lda, cls_buf_of(c->packed), 0.0f, cls_buf_of(c->c),
                                          (size_t)s->n, NULL);
  return cls_gemm(g->plan, q, s->trans_a != 0, s->trans_b != 0, (size_t)s->m, (size_t)s->n, (size_t)s->k, 1.0f,
                  cls_buf_of(c->a), lda, cls_buf_of(c->b), ldb, 0.0f, cls_buf_of(c->c), (size_t)s->n, NULL);
}

static cls_status gemm_op(void *g_, cl_command_queue q) {
  cls_gemm_cases *g = g_;
  cls_status st = CLS_OK;
  for (int r = 0; r < g->repeat && st == CLS_OK; r++) st = sgemm(g, &g->cases[g->current], q);
  return st;
}

void cls_gemm_cases_set_repeat(cls_gemm_cases *g, int calls) { g->repeat = calls > 1 ? calls : 1; }

void cls_gemm_cases_set_run_ms(cls_gemm_cases *g, double min_run_ms) {
  g->run_ms = min_run_ms > 0 ? min_run_ms : 0;
  g->decided = 0;
}

int cls_gemm_cases_repeat(const cls_gemm_cases *g) { return g->repeat; }

cls_status cls_gemm_cases_time(cls_gemm_cases *g, int i, int warmups, int runs, double *median_ms, double *best_ms) {
  g->current = i;
  cls_status st = ensure_packed(g, &g->cases[i], g->q); /* packing is not part of the timed product */
  if (st != CLS_OK) return st;
  if (g->run_ms > 0 && g->decided != i + 1) { /* after the warm-ups, one call decides the calls per run */
    double one = 0;
    g->repeat = 1;
    st = cls_bench_time_stats(g->engine, g->q, gemm_op, g, warmups, 1, &one, NULL);
    if (st != CLS_OK) return st;
    const double calls = one > 0 ? ceil(g->run_ms / one) : 1;
    g->repeat = calls < 1 ? 1 : calls > CLS_BENCH_MAX_CALLS_PER_RUN ? CLS_BENCH_MAX_CALLS_PER_RUN : (int)calls;
    g->decided = i + 1;
    warmups = 0;
  }
  st = cls_bench_time_stats(g->engine, g->q, gemm_op, g, warmups, runs, median_ms, best_ms);
  if (st == CLS_OK && median_ms) *median_ms /= g->repeat;
  if (st == CLS_OK && best_ms) *best_ms /= g->repeat;
  return st;
}

cls_status cls_gemm_cases_turns_beside(cls_gemm_cases *const *sides, int n_sides, int i, cls_bench_probe *probe,
                                       double peak_gflops, int warmups, int runs, double (*ms)[CLS_BENCH_MAX_RUNS],
                                       bool *full, int *failed) {
  *failed = -1;
  if (runs < 1 || runs > CLS_BENCH_MAX_RUNS)
    return cls_fail(probe->e, CLS_ERR_INVALID_ARGUMENT, "bench: runs must be 1..%d", CLS_BENCH_MAX_RUNS);
  if (n_sides < 1 || n_sides > CLS_BENCH_MAX_SIDES)
    return cls_fail(probe->e, CLS_ERR_INVALID_ARGUMENT, "bench: sides must be 1..%d", CLS_BENCH_MAX_SIDES);
  int rewarm[CLS_BENCH_MAX_SIDES] = {0};
  double before = 0, after = 0;
  cls_status st = CLS_OK;
  for (int b = 0; b < n_sides && st == CLS_OK; b++) { /* the warm-ups, then one timed call that decides */
    double t = 0;
    if ((st = cls_gemm_cases_time(sides[b], i, warmups > 1 ? warmups : 1, 1, &t, NULL)) != CLS_OK) *failed = b;
    rewarm[b] = t * sides[b]->repeat < CLS_BENCH_REWARM_MS;
  }
  if (st == CLS_OK) st = cls_bench_probe_run(probe, &before);
  for (int r = 0; r < runs && st == CLS_OK; r++) {
    for (int b = 0; b < n_sides && st == CLS_OK; b++)
      if ((st = cls_gemm_cases_time(sides[b], i, rewarm[b], 1, &ms[b][r], NULL)) != CLS_OK) *failed = b;
    if (st == CLS_OK) st = cls_bench_probe_run(probe, &after);
    full[r] = cls_bench_at_full_speed(before, after, peak_gflops);
    before = after;
  }
  return st;
}

cls_status cls_gemm_cases_time_beside(cls_gemm_cases *g, int i, cls_bench_probe *probe, double peak_gflops,
                                      int warmups, int runs, cls_bench_beside *out) {
  memset(out, 0, sizeof *out);
  double t[1][CLS_BENCH_MAX_RUNS], full_t[CLS_BENCH_MAX_RUNS];
  bool full[CLS_BENCH_MAX_RUNS];
  int failed = -1, n_full = 0;
  cls_status st = cls_gemm_cases_turns_beside(&g, 1, i, probe, peak_gflops, warmups, runs, t, full, &failed);
  if (st != CLS_OK) return st;
  for (int r = 0; r < runs; r++)
    if (full[r]) full_t[n_full++] = t[0][r];
  out->full_runs = n_full;
  out->full_median_ms = n_full ? cls_bench_median(full_t, n_full) : -1;
  out->median_ms = cls_bench_median(t[0], runs);
  out->best_ms = t[0][0]; /* sorted by cls_bench_median */
  return CLS_OK;
}

/* Double-precision reference of the sampled rows and their error bounds. */
static cls_status reference(cls_gemm_cases *g, gemm_case *c) {
  const cls_gemm_shape *s = &c->s;
  const size_t m = (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k, i_count = (size_t)c->n_rows;
  float *a = malloc(a_elems(s) * sizeof *a), *b = malloc(b_elems(s) * sizeof *b);
  c->ref = calloc(i_count * n, sizeof *c->ref);
  c->tol = calloc(i_count * n, sizeof *c->tol);
  double *row_a = malloc(k * sizeof *row_a);
  if (!a || !b || !c->ref || !c->tol || !row_a) {
    free(a);
    free(b);
    free(row_a);
    free(c->ref);
    free(c->tol);
    c->ref = c->tol = NULL;
    return cls_fail(g->engine, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  int idx = (int)(c - g->cases);
  lcg_fill(a, a_elems(s), 1000u + 2u * (unsigned)idx);
  lcg_fill(b, b_elems(s), 1001u + 2u * (unsigned)idx);
  for (size_t r = 0; r < i_count; r++) {
    size_t i = (size_t)c->rows[r];
    for (size_t p = 0; p < k; p++) row_a[p] = s->trans_a ? a[p * m + i] : a[i * k + p];
    double *ref = c->ref + r * n, *tol = c->tol + r * n;
    if (s->trans_b) {
      for (size_t j = 0; j < n; j++) {
        double acc = 0, abs_acc = 0;
        const float *bj = b + j * k;
        for (size_t p = 0; p < k; p++) {
          acc += row_a[p] * bj[p];
          abs_acc += fabs(row_a[p] * bj[p]);
        }
        ref[j] = acc;
        tol[j] = abs_acc;
      }
    } else {
      for (size_t p = 0; p < k; p++) {
        const float *bp = b + p * n;
        for (size_t j = 0; j < n; j++) {
          ref[j] += row_a[p] * bp[j];
          tol[j] += fabs(row_a[p] * bp[j]);
        }
      }
    }
    for (size_t j = 0; j < n; j++) tol[j] = 1e-4 * tol[j] + 1e-6;
  }
  free(a);
  free(b);
  free(row_a);
  return CLS_OK;
}

cls_status cls_gemm_cases_check(cls_gemm_cases *g, int i, bool *ok, char *detail, size_t detail_cap) {
  *ok = false;
  if (detail_cap) detail[0] = '\0';
  gemm_case *c = &g->cases[i];
  const size_t n = (size_t)c->s.n, total = (size_t)c->s.m * n;
  cls_status st = CLS_OK;
  if (!c->ref && (st = reference(g, c)) != CLS_OK) return st;
  float *c_host = malloc(total * sizeof *c_host); /* [m, n] read back */
  if (!c_host) return cls_fail(g->engine, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  st = cls_ops_fill_to(cls_engine_errors(g->engine), g->q, cls_buf_of(c->c), total, NAN);
  if (st == CLS_OK) st = sgemm(g, c, g->q);
  cl_int err = st == CLS_OK ? clEnqueueReadBuffer(g->q, c->c, CL_TRUE, 0, total * sizeof(float), c_host, 0, NULL, NULL)
                            : CL_SUCCESS;
  if (st == CLS_OK && err != CL_SUCCESS)
    st = cls_fail(g->engine, CLS_ERR_OPENCL, "bench: reading C back failed: %s", cls_cl_error_name(err));
  if (st != CLS_OK) {
    clFinish(g->q);
    free(c_host);
    return st;
  }
  double worst = 0;
  *ok = true;
  for (int r = 0; r < c->n_rows; r++)
    for (size_t j = 0; j < n; j++) {
      double got = c_host[(size_t)c->rows[r] * n + j], want = c->ref[(size_t)r * n + j];
      double err_ratio = fabs(got - want) / c->tol[(size_t)r * n + j];
      if (err_ratio <= 1.0) continue;
      if (isnan(err_ratio)) err_ratio = INFINITY; /* NaN counts as the worst */
      if (*ok || err_ratio > worst) {
        snprintf(detail, detail_cap, "C[%d][%zu] = %.9g, expected %.9g", c->rows[r], j, got, want);
        worst = err_ratio;
      }
      *ok = false;
    }
  free(c_host);
  return CLS_OK;
}
