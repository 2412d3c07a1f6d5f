/* The power-spectrogram path of --augment on the device (features/augment/power.h): the stage tables
 * on the host, the ping-pong buffers and the launches of kernels/augment_resize.cl. */
#include "features/augment/power.h"

#include <stdlib.h>
#include <string.h>

#include "augment_draw.h"
#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"

/* TensorFlow's resize_bicubic table: 1024 steps of Keys' cubic with a = -0.75 (legacy mode). */
#define BICUBIC_STEPS 1024

enum { K_POWER, K_OPS, K_BILINEAR, K_GRID, K_WARP_ROWS, K_WARP, K_GATHER, K_COUNT };
static const char *const kernel_names[K_COUNT] = {
    "mfcc_power",        "augment_power_ops", "augment_resize_bilinear", "augment_warp_grid",
    "augment_warp_rows", "augment_warp",      "augment_power_gather"};

/* A device buffer with its capacity in bytes. */
typedef struct dbuf {
  cl_mem mem;
  size_t cap;
} dbuf;

enum { T_SLOT_UTT, T_SLOT_BASE, T_FRAMES_AT, T_SPECTRUM_BASE, T_OUT_UTT, T_OUT_BASE, T_COUNT };

struct cls_augment_power {
  cl_context ctx;
  cl_kernel k[K_COUNT];
  cl_mem coeffs;
  dbuf ping, pong, out, grid, rows;
  dbuf table[T_COUNT];
  int *stage;          /* host staging of the tables, kept until the queue finishes */
  size_t stage_cap;    /* ints */
};

cls_status cls_augment_power_create(cls_engine *e, cls_device *d, int f64, cls_augment_power **out) {
  *out = NULL;
  cls_augment_power *w = calloc(1, sizeof *w);
  if (!w) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  w->ctx = d->context;
  cls_status st = CLS_OK;
  for (int i = 0; st == CLS_OK && i < K_COUNT; i++)
    st = i == K_POWER ? cls_device_kernel(e, d, "mfcc", f64 ? "mfcc_power_f64" : "mfcc_power", &w->k[i]) /* beside the filterbank */
                      : cls_device_kernel(e, d, "augment_resize", kernel_names[i], &w->k[i]);
  float table[(BICUBIC_STEPS + 1) * 2];
  const double a = -0.75;
  for (int i = 0; i <= BICUBIC_STEPS; i++) { /* TensorFlow's InitCoeffsTable: float x, double arithmetic */
    float x = (float)(i * 1.0 / BICUBIC_STEPS);
    table[i * 2] = (float)(((a + 2) * x - (a + 3)) * x * x + 1);
    x = (float)(x + 1.0);
    table[i * 2 + 1] = (float)(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
  }
  cl_int err = CL_SUCCESS;
  if (st == CLS_OK) {
    w->coeffs = clCreateBuffer(w->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof table, table, &err);
    if (err != CL_SUCCESS) st = cls_fail(e, CLS_ERR_OPENCL, "augment: uploading the bicubic table failed: %s", cls_cl_error_name(err));
  }
  if (st != CLS_OK) {
    cls_augment_power_destroy(w);
    return st;
  }
  *out = w;
  return CLS_OK;
}

void cls_augment_power_destroy(cls_augment_power *w) {
  if (!w) return;
  for (int i = 0; i < K_COUNT; i++)
    if (w->k[i]) clReleaseKernel(w->k[i]);
  dbuf *bufs[] = {&w->ping, &w->pong, &w->out, &w->grid, &w->rows};
  for (int i = 0; i < 5; i++)
    if (bufs[i]->mem) clReleaseMemObject(bufs[i]->mem);
  for (int i = 0; i < T_COUNT; i++)
    if (w->table[i].mem) clReleaseMemObject(w->table[i].mem);
  if (w->coeffs) clReleaseMemObject(w->coeffs);
  free(w->stage);
  free(w);
}

static int power_only(const cls_augment_op *op) {
  return op->domain == CLS_AUGOP_SPECTROGRAM &&
         (CLS_AUGOP_IS_RESIZE(op->kind) || op->kind == CLS_AUGOP_ADD || op->kind == CLS_AUGOP_MULTIPLY);
}

int cls_augment_power_needed(const cls_augment_batch *aug, int batch) {
  for (int i = aug->op_first[0]; i < aug->op_first[batch]; i++)
    if (power_only(&aug->ops[i])) return 1;
  return 0;
}

/* Utterance b's resizes: how many (the stages after the first). */
static int resizes(const cls_augment_batch *aug, int b) {
  int n = 0;
  for (int i = aug->op_first[b]; i < aug->op_first[b + 1]; i++)
    n += aug->ops[i].domain == CLS_AUGOP_SPECTROGRAM && CLS_AUGOP_IS_RESIZE(aug->ops[i].kind);
  return n;
}

/* Whether stage s of the batch has masks, dropouts, adds or multiplies (what = 0) or a warp (what = 1). */
static int stage_has(const cls_augment_batch *aug, int batch, int s, int what) {
  for (int i = aug->op_first[0]; i < aug->op_first[batch]; i++) {
    const cls_augment_op *op = &aug->ops[i];
    if (op->domain == CLS_AUGOP_SPECTROGRAM && op->stage == s &&
        (what ? op->kind == CLS_AUGOP_WARP : !CLS_AUGOP_IS_RESIZE(op->kind)))
      return 1;
  }
  return 0;
}

/* Utterance b's frames after resize `stage`, from `frames` before it. */
static int frames_after(const cls_augment_batch *aug, int b, int stage, int frames) {
  for (int i = aug->op_first[b]; frames > 0 && i < aug->op_first[b + 1]; i++) {
    const cls_augment_op *op = &aug->ops[i];
    if (op->domain == CLS_AUGOP_SPECTROGRAM && op->kind == CLS_AUGOP_TEMPO && op->stage == stage) return op->hi;
  }
  return frames;
}

/* Utterance b's frames through `stages` resizes from f: each stage's into at[(s + 1) * batch + b] (at
 * may be NULL), the last into *last (may be NULL); returns the most at any stage. */
static int stage_frames(const cls_augment_batch *aug, int b, int stages, int f, int *at, int batch, int *last) {
  int most = f;
  for (int s = 0; s < stages; s++) {
    f = frames_after(aug, b, s, f);
    if (at) at[(size_t)(s + 1) * batch + b] = f;
    if (f > most) most = f;
  }
  if (last) *last = f;
  return most;
}

void cls_augment_power_frames(const cls_augment_batch *aug, int batch, const int *nf, int *out) {
  for (int b = 0; b < batch; b++) stage_frames(aug, b, resizes(aug, b), nf[b], NULL, batch, &out[b]);
}

/* *d holds at least `bytes` (its contents lost when it grows). */
static cl_int ensure(cls_augment_power *w, dbuf *d, size_t bytes) {
  return cls_ops_grow_buffer(w->ctx, CL_MEM_READ_WRITE, &d->mem, &d->cap, bytes);
}

/* The launch of kernel k over (width, rows), its arguments in `ka`. The width is rounded up to a
 * multiple of LAUNCH_ROUND (the kernels skip the work-items past it), so that the driver can pick a
 * work-group of several items: 257 bins, a prime, would leave it groups of one. */
#define LAUNCH_ROUND 16
static cls_status launch(cls_augment_power *w, cls_error *err, cl_command_queue q, int k, cls_kargs *ka, size_t width,
                         size_t rows) {
  cls_status st = cls_kargs_end(ka);
  size_t g[2] = {(width + LAUNCH_ROUND - 1) / LAUNCH_ROUND * LAUNCH_ROUND, rows};
  if (st == CLS_OK && width && rows) st = cls_ops_launch_to(err, q, w->k[k], kernel_names[k], 2, g, NULL, NULL);
  return st;
}

/* The tables every stage kernel ends with (CLS_RESIZE_TABLES). */
static void stage_args(cls_augment_power *w, cls_kargs *ka, int batch, const cls_augment_power_batch *pb) {
  cls_kargs_int(ka, batch);
  cls_kargs_mem(ka, w->table[T_SLOT_UTT].mem);
  cls_kargs_mem(ka, w->table[T_SLOT_BASE].mem);
  cls_kargs_mem(ka, w->table[T_FRAMES_AT].mem);
  cls_kargs_mem(ka, pb->op_first);
  cls_kargs_mem(ka, pb->ops);
}

/* Kernel k's first arguments for stage s over the slots: stage, slots, bins, the buffer it reads. */
static cls_kargs stage_begin(cls_augment_power *w, cls_error *err, int k, int s, int n_slots, int n_bins, dbuf *src) {
  cls_kargs ka = cls_kargs_begin(err, w->k[k], kernel_names[k]);
  cls_kargs_int(&ka, s);
  cls_kargs_int(&ka, n_slots);
  cls_kargs_int(&ka, n_bins);
  cls_kargs_mem(&ka, src->mem);
  return ka;
}

/* The draws' key: each utterance's index in the epoch, the seed and the epoch. */
static void draw_args(cls_kargs *ka, const cls_augment_power_batch *pb, const cls_augment_batch *aug) {
  cls_kargs_mem(ka, pb->utt);
  cls_kargs_uint(ka, (cl_uint)aug->seed);
  cls_kargs_uint(ka, (cl_uint)aug->epoch);
}

cls_status cls_augment_power_run(cls_augment_power *w, cls_error *err, cl_command_queue q,
                                 const cls_augment_batch *aug, const cls_augment_power_batch *pb, cl_mem *power) {
  const int batch = pb->batch, n_bins = pb->n_bins;
  int stages = 0; /* the most resizes of an utterance */
  for (int b = 0; b < batch; b++) {
    const int n = resizes(aug, b);
    if (n > stages) stages = n;
  }
  /* Host tables: frames_at [stages + 1, batch], slot_base [batch], slot_utt [slots], out_utt [out_frames]. */
  size_t slots = 0;
  for (int b = 0; b < batch; b++) slots += (size_t)stage_frames(aug, b, stages, pb->nf0[b], NULL, batch, NULL);
  const size_t n_at = (size_t)(stages + 1) * batch;
  const size_t need = n_at + (size_t)batch + slots + pb->out_frames;
  if (need > w->stage_cap) {
    free(w->stage);
    w->stage = malloc(need * sizeof *w->stage);
    w->stage_cap = w->stage ? need : 0;
    if (!w->stage) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  int *at = w->stage, *slot_base = at + n_at, *slot_utt = slot_base + batch, *out_utt = slot_utt + slots;
  size_t next = 0;
  int grid_cap = 0, cols_cap = 0; /* the most control points, and columns, of a warp */
  for (int b = 0; b < batch; b++) {
    at[b] = pb->nf0[b];
    const int most = stage_frames(aug, b, stages, at[b], at, batch, NULL);
    slot_base[b] = (int)next;
    for (int t = 0; t < most; t++) slot_utt[next + (size_t)t] = b;
    next += (size_t)most;
    for (int f = 0; f < pb->out_nf[b]; f++) out_utt[pb->out_base[b] + f] = b;
    for (int i = aug->op_first[b]; i < aug->op_first[b + 1]; i++) {
      const cls_augment_op *op = &aug->ops[i];
      if (op->domain != CLS_AUGOP_SPECTROGRAM || op->kind != CLS_AUGOP_WARP) continue;
      if ((op->lo + 2) * (op->hi + 2) > grid_cap) grid_cap = (op->lo + 2) * (op->hi + 2);
      if (op->hi + 2 > cols_cap) cols_cap = op->hi + 2;
    }
  }
  const size_t row = (size_t)n_bins * sizeof(float), ib = sizeof(int);
  cl_int ce = ensure(w, &w->ping, (slots ? slots : 1) * row);
  if (ce == CL_SUCCESS) ce = ensure(w, &w->pong, (slots ? slots : 1) * row);
  if (ce == CL_SUCCESS) ce = ensure(w, &w->out, (pb->out_frames ? pb->out_frames : 1) * row);
  if (ce == CL_SUCCESS) ce = ensure(w, &w->grid, (size_t)(grid_cap ? grid_cap : 1) * batch * 2 * sizeof(float));
  if (ce == CL_SUCCESS && cols_cap) ce = ensure(w, &w->rows, (slots ? slots : 1) * (size_t)cols_cap * 2 * sizeof(float));
  const int *src[T_COUNT] = {slot_utt, slot_base, at, pb->spectrum_base, out_utt, pb->out_base};
  const size_t count[T_COUNT] = {slots, (size_t)batch, n_at, (size_t)batch, pb->out_frames, (size_t)batch};
  for (int i = 0; ce == CL_SUCCESS && i < T_COUNT; i++) {
    ce = ensure(w, &w->table[i], (count[i] ? count[i] : 1) * ib);
    if (ce == CL_SUCCESS && count[i])
      ce = clEnqueueWriteBuffer(q, w->table[i].mem, CL_FALSE, 0, count[i] * ib, src[i], 0, NULL, NULL);
  }
  if (ce != CL_SUCCESS)
    return cls_error_set(err, CLS_ERR_OPENCL, "augment: preparing the power path failed: %s", cls_cl_error_name(ce));
  const int n_slots = (int)slots;
  cls_kargs ka = cls_kargs_begin(err, w->k[K_POWER], kernel_names[K_POWER]);
  cls_kargs_int(&ka, n_slots);
  cls_kargs_int(&ka, n_bins);
  cls_kargs_mem(&ka, pb->spectrum);
  cls_kargs_mem(&ka, w->table[T_SPECTRUM_BASE].mem);
  cls_kargs_mem(&ka, w->ping.mem);
  stage_args(w, &ka, batch, pb);
  cls_status st = launch(w, err, q, K_POWER, &ka, (size_t)n_bins, slots);
  dbuf *cur = &w->ping, *nxt = &w->pong;
  for (int s = 0; st == CLS_OK && s <= stages; s++) {
    if (stage_has(aug, batch, s, 0)) {
      ka = stage_begin(w, err, K_OPS, s, n_slots, n_bins, cur);
      draw_args(&ka, pb, aug);
      stage_args(w, &ka, batch, pb);
      st = launch(w, err, q, K_OPS, &ka, ((size_t)n_bins + 3) / 4, slots);
    }
    if (s == stages) break;
    if (st == CLS_OK && stage_has(aug, batch, s, 1)) {
      ka = cls_kargs_begin(err, w->k[K_GRID], kernel_names[K_GRID]);
      cls_kargs_int(&ka, s);
      cls_kargs_int(&ka, grid_cap);
      cls_kargs_mem(&ka, w->grid.mem);
      draw_args(&ka, pb, aug);
      stage_args(w, &ka, batch, pb);
      st = launch(w, err, q, K_GRID, &ka, (size_t)grid_cap, (size_t)batch);
      if (st == CLS_OK) {
        ka = cls_kargs_begin(err, w->k[K_WARP_ROWS], kernel_names[K_WARP_ROWS]);
        cls_kargs_int(&ka, s);
        cls_kargs_int(&ka, n_slots);
        cls_kargs_int(&ka, cols_cap);
        cls_kargs_mem(&ka, w->rows.mem);
        cls_kargs_int(&ka, grid_cap);
        cls_kargs_mem(&ka, w->grid.mem);
        cls_kargs_mem(&ka, w->coeffs);
        stage_args(w, &ka, batch, pb);
        st = launch(w, err, q, K_WARP_ROWS, &ka, 2 * (size_t)cols_cap, slots);
      }
      if (st == CLS_OK) {
        ka = stage_begin(w, err, K_WARP, s, n_slots, n_bins, cur);
        cls_kargs_mem(&ka, nxt->mem);
        cls_kargs_int(&ka, cols_cap);
        cls_kargs_mem(&ka, w->rows.mem);
        cls_kargs_mem(&ka, w->coeffs);
        stage_args(w, &ka, batch, pb);
        st = launch(w, err, q, K_WARP, &ka, (size_t)n_bins, slots);
      }
    }
    if (st == CLS_OK) {
      ka = stage_begin(w, err, K_BILINEAR, s, n_slots, n_bins, cur);
      cls_kargs_mem(&ka, nxt->mem);
      stage_args(w, &ka, batch, pb);
      st = launch(w, err, q, K_BILINEAR, &ka, (size_t)n_bins, slots);
    }
    dbuf *swap = cur;
    cur = nxt;
    nxt = swap;
  }
  if (st == CLS_OK) {
    ka = cls_kargs_begin(err, w->k[K_GATHER], kernel_names[K_GATHER]);
    cls_kargs_int(&ka, (int)pb->out_frames);
    cls_kargs_int(&ka, n_bins);
    cls_kargs_mem(&ka, cur->mem);
    cls_kargs_mem(&ka, w->out.mem);
    cls_kargs_mem(&ka, w->table[T_OUT_UTT].mem);
    cls_kargs_mem(&ka, w->table[T_OUT_BASE].mem);
    cls_kargs_mem(&ka, w->table[T_SLOT_BASE].mem);
    st = launch(w, err, q, K_GATHER, &ka, (size_t)n_bins, pb->out_frames);
  }
  *power = w->out.mem;
  return st;
}
