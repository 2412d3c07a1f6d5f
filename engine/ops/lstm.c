/* LSTM op plan (see clspeech/ops.h): owns the lstm_* kernels of one device, the workspace layout, and the
 * recurrence of forward, backward through time and streaming inference on one of two paths
 * (cls_lstm_path, clspeech/internal/ops.h): per step, a GEMM (cls_gemm, the recurrent weight packed once
 * per call) and a fused gate kernel; or in one kernel for all steps (kernels/lstm_seq.cl). Everything is
 * enqueued on the caller's in-order queue; nothing waits. */
#include "clspeech/ops.h"
#include "clspeech/internal/ops.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"
#include "work_items.h"

struct cls_lstm_plan {
  cls_engine *engine;
  cls_error *err; /* where enqueue-time failures go: the engine's own, or its owner's (a tower's) */
  int max_time, max_batch, input, hidden;
  cl_kernel gates_fwd, gates_bwd, bias_grad, concat_xh;
  size_t local; /* the gate kernels' work-group size (CLS_WG_1D of the device; the bias gradient's: CLS_COLSUM_LOCAL) */
  cls_gemm_plan *gemm;
  bool owns_gemm; /* made by create (not one given by cls_lstm_set_gemm) */
  /* the sequence path (kernels/lstm_seq.cl): its kernels, its tile (MR rows, panels of NR columns) */
  cl_kernel seq_fwd, seq_bwd, seq_pack;
  int seq_mr, seq_nr;
  unsigned units;        /* the device's compute units: how many groups of rows run at once */
  uint64_t cache_bytes;  /* the device's global memory cache (0: not reported) */
  cls_device_kind kind;
  cls_lstm_path path;    /* as forced by cls_lstm_set_path; AUTO: cls_lstm_path_for's rule */
};

/* The cache AUTO's rule assumes when the device reports none (cls_lstm_path_for): 8 MiB, a small last level. */
#define SEQ_DEFAULT_CACHE_BYTES ((uint64_t)8 << 20)

/* Workspace layout, in floats from the workspace view's offset. The recurrent weight comes first, packed
 * by the GEMM plan for the products of every time step: W_h (forward, inference) or W_h^T (backward). */
typedef struct ws_layout {
  size_t wh;    /* packed W_h [H, 4H] (forward, inference) or packed W_h^T [4H, H] (backward), 4H^2 floats */
  size_t gates; /* [T*B, 4H] projection, then i, j, f, o */
  size_t cells; /* [T*B, H] c_t */
  size_t dz;    /* [T*B, 4H] */
  size_t dh_rec; /* [B, H] */
  size_t dc;    /* [B, H] */
  size_t xh;    /* [T*B, I+H]: x_t and h_{t-1} side by side, for the weight gradient in one product */
  size_t db_part; /* [B, 4H]: the sequence path's sums of dz per group of rows (at most B groups) */
  size_t total;
} ws_layout;

static ws_layout layout_of(const cls_lstm_plan *p, int time, int batch) {
  size_t rows = (size_t)time * (size_t)batch, h = (size_t)p->hidden;
  size_t w_fwd = cls_gemm_packed_b_floats(p->gemm, h, 4 * h), w_bwd = cls_gemm_packed_b_floats(p->gemm, 4 * h, h);
  /* (lstm_seq_pack's panels hold k x n floats as well) */
  ws_layout l;
  l.wh = 0;
  l.gates = l.wh + (w_fwd > w_bwd ? w_fwd : w_bwd);
  l.cells = l.gates + rows * 4 * h;
  l.dz = l.cells + rows * h;
  l.dh_rec = l.dz + rows * 4 * h;
  l.dc = l.dh_rec + (size_t)batch * h;
  l.xh = l.dc + (size_t)batch * h;
  l.db_part = l.xh + rows * ((size_t)p->input + h);
  l.total = l.db_part + (size_t)batch * 4 * h;
  return l;
}

/* The sequence path's kernels, and its tile from lstm_seq_geometry's reqd_work_group_size. */
static cls_status seq_load(cls_engine *e, cls_device *d, cls_lstm_plan *p) {
  cls_status st = cls_device_kernel(e, d, "lstm_seq", "lstm_seq_fwd", &p->seq_fwd);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "lstm_seq", "lstm_seq_bwd", &p->seq_bwd);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "lstm_seq", "lstm_seq_pack", &p->seq_pack);
  cl_kernel geometry = NULL;
  if (st == CLS_OK) st = cls_device_kernel(e, d, "lstm_seq", "lstm_seq_geometry", &geometry);
  if (st == CLS_OK) {
    size_t wg[3] = {0, 0, 0};
    cl_int err = clGetKernelWorkGroupInfo(geometry, d->id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof wg, wg, NULL);
    if (err != CL_SUCCESS || wg[0] < 1 || wg[1] < 1)
      st = cls_fail(e, CLS_ERR_OPENCL, "lstm: reading lstm_seq_geometry's reqd_work_group_size failed: %s",
                    cls_cl_error_name(err));
    p->seq_mr = (int)wg[0];
    p->seq_nr = (int)wg[1];
  }
  if (geometry) clReleaseKernel(geometry);
  return st;
}

cls_status cls_lstm_create(cls_engine *e, int device, int max_time, int max_batch, int input_size, int hidden,
                           cls_lstm_plan **out) {
  if (!out) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "lstm: no plan pointer given");
  *out = NULL;
  if (max_time < 1 || max_batch < 1 || input_size < 1 || hidden < 1)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "lstm: sizes must be positive (max_time %d, max_batch %d, input %d, hidden %d)", max_time,
                    max_batch, input_size, hidden);
  /* Kernel offsets and indices are 32-bit: every tensor (and the workspace) must stay below 2^31 floats. */
  int64_t rows = (int64_t)max_time * max_batch, h4 = 4 * (int64_t)hidden;
  int64_t biggest = rows * (2 * h4 + hidden) + 2 * (int64_t)max_batch * hidden + h4 * hidden;
  if ((int64_t)(input_size + (int64_t)hidden) * h4 > biggest) biggest = (int64_t)(input_size + (int64_t)hidden) * h4;
  if (rows * input_size > biggest) biggest = rows * input_size;
  if (biggest > INT_MAX)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "lstm: shapes too large (max_time %d, max_batch %d, input %d, hidden %d need %lld floats in one "
                    "buffer; the limit is 2^31-1)",
                    max_time, max_batch, input_size, hidden, (long long)biggest);
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  cls_lstm_plan *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->engine = e;
  p->err = cls_engine_errors(e);
  p->max_time = max_time;
  p->max_batch = max_batch;
  p->input = input_size;
  p->hidden = hidden;
  p->units = d->info.compute_units ? d->info.compute_units : 1;
  p->kind = d->info.kind;
  p->cache_bytes = d->info.global_mem_cache_bytes;
  st = cls_gemm_create(e, device, &p->gemm);
  p->owns_gemm = p->gemm != NULL;
  if (st == CLS_OK) st = seq_load(e, d, p);
  if (st == CLS_OK && layout_of(p, max_time, max_batch).total > (size_t)INT_MAX)
    st = cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                  "lstm: shapes too large (max_time %d, max_batch %d, input %d, hidden %d need a workspace of %zu "
                  "floats; the limit is 2^31-1)",
                  max_time, max_batch, input_size, hidden, layout_of(p, max_time, max_batch).total);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "lstm", "lstm_gates_fwd", &p->gates_fwd);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "lstm", "lstm_gates_bwd", &p->gates_bwd);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "lstm", "lstm_bias_grad", &p->bias_grad);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "lstm", "lstm_concat_xh", &p->concat_xh);
  if (st == CLS_OK) st = cls_kernel_compile_wg(e, d, p->gates_fwd, "lstm_gates_fwd", 64, &p->local);
  if (st != CLS_OK) {
    cls_lstm_destroy(p);
    return st;
  }
  *out = p;
  return CLS_OK;
}

void cls_lstm_destroy(cls_lstm_plan *p) {
  if (!p) return;
  if (p->gates_fwd) clReleaseKernel(p->gates_fwd);
  if (p->gates_bwd) clReleaseKernel(p->gates_bwd);
  if (p->bias_grad) clReleaseKernel(p->bias_grad);
  if (p->concat_xh) clReleaseKernel(p->concat_xh);
  if (p->seq_fwd) clReleaseKernel(p->seq_fwd);
  if (p->seq_bwd) clReleaseKernel(p->seq_bwd);
  if (p->seq_pack) clReleaseKernel(p->seq_pack);
  if (p->owns_gemm) cls_gemm_destroy(p->gemm);
  free(p);
}

cls_status cls_lstm_set_gemm(cls_lstm_plan *p, cls_gemm_plan *gemm) {
  if (!p || !gemm) return CLS_ERR_INVALID_ARGUMENT;
  if (p->owns_gemm) cls_gemm_destroy(p->gemm);
  p->gemm = gemm;
  p->owns_gemm = false;
  return CLS_OK;
}

cls_status cls_lstm_set_path(cls_lstm_plan *p, cls_lstm_path path) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  if (path != CLS_LSTM_PATH_AUTO && path != CLS_LSTM_PATH_STEPS && path != CLS_LSTM_PATH_SEQUENCE)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "lstm: unknown path %d", (int)path);
  p->path = path;
  return CLS_OK;
}

cls_lstm_path cls_lstm_path_for(const cls_lstm_plan *p) {
  if (p->path != CLS_LSTM_PATH_AUTO) return p->path;
  const bool own = cls_gemm_get_class_backend(p->gemm, CLS_GEMM_CLASS_PACKED) == CLS_GEMM_BACKEND_OWN;
  const uint64_t cache = p->cache_bytes ? p->cache_bytes : SEQ_DEFAULT_CACHE_BYTES;
  const uint64_t w_h = 16 * (uint64_t)p->hidden * (uint64_t)p->hidden;
  return p->kind == CLS_DEVICE_CPU && own && w_h <= cache ? CLS_LSTM_PATH_SEQUENCE : CLS_LSTM_PATH_STEPS;
}

const char *cls_lstm_path_name(cls_lstm_path path) {
  switch (path) {
    case CLS_LSTM_PATH_STEPS: return "steps";
    case CLS_LSTM_PATH_SEQUENCE: return "sequence";
    default: return "auto";
  }
}

void cls_lstm_sequence_tile(const cls_lstm_plan *p, int *mr, int *nr) {
  if (mr) *mr = p->seq_mr;
  if (nr) *nr = p->seq_nr;
}

size_t cls_lstm_workspace_bytes(const cls_lstm_plan *p, int time, int batch) {
  if (!p || time < 1 || batch < 1) return 0;
  return layout_of(p, time, batch).total * sizeof(float);
}

size_t cls_lstm_infer_workspace_bytes(const cls_lstm_plan *p, int time, int batch) {
  if (!p || time < 1 || batch < 1) return 0;
  return layout_of(p, time, batch).cells * sizeof(float); /* W_h and the gates */
}

/* ---- argument checks ---- */

static cls_status check_sizes(cls_lstm_plan *p, const char *op, int time, int batch) {
  if (time < 1 || time > p->max_time || batch < 1 || batch > p->max_batch)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT,
                         "%s: time %d and batch %d must be within 1..%d and 1..%d (the plan's maximum shapes)", op,
                         time, batch, p->max_time, p->max_batch);
  return CLS_OK;
}

/* A view of n elements of 4 bytes: a buffer is given, the kernels' 32-bit offsets reach its end, and
 * the buffer holds it. */
static cls_status check_view(cls_lstm_plan *p, const char *op, const char *name, cls_buf v, size_t n) {
  if (!v.mem) return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: no buffer given for %s", op, name);
  if (v.offset > (size_t)INT_MAX || n > (size_t)INT_MAX - v.offset)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: %s: offset %zu + %zu elements exceeds 2^31-1 elements",
                         op, name, v.offset, n);
  size_t bytes = 0;
  cl_int err = clGetMemObjectInfo(v.mem, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
  if (err != CL_SUCCESS)
    return cls_error_set(p->err, CLS_ERR_OPENCL, "%s: %s: clGetMemObjectInfo(CL_MEM_SIZE) failed: %s", op, name,
                         cls_cl_error_name(err));
  if ((v.offset + n) * 4 > bytes)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT,
                         "%s: %s needs %zu elements at offset %zu (%zu bytes), but its buffer holds %zu bytes", op,
                         name, n, v.offset, (v.offset + n) * 4, bytes);
  return CLS_OK;
}

/* ---- enqueue helpers ---- */

typedef struct fwd_args {
  int time, batch;
  cls_buf x, weights, bias, seq_len, h_out;
  cl_mem ws;    /* the workspace buffer: packed W_h at wh_off, gates at gates_off, cells at cells_off */
  size_t wh_off, gates_off, cells_off;
  bool infer;   /* state from and to h_state/c_state, nothing saved */
  cls_buf h_state, c_state;
} fwd_args;

/* ---- the sequence path (kernels/lstm_seq.cl) ---- */

int cls_lstm_sequence_rows_per_item(int batch, unsigned units, int mr) {
  const unsigned u = units ? units : 1;
  const int per = (int)(((unsigned)batch + u - 1) / u);
  return (per + mr - 1) / mr * mr;
}

static int seq_rows_per_item(const cls_lstm_plan *p, int batch) {
  return cls_lstm_sequence_rows_per_item(batch, p->units, p->seq_mr);
}

/* Work-items of the sequence kernels (groups of rows) for a batch. */
static int seq_groups(const cls_lstm_plan *p, int batch) {
  const int per = seq_rows_per_item(p, batch);
  return (batch + per - 1) / per;
}

/* packed = op(B) [k, n] in lstm_seq_pack's panels; op(B)[kk][j] = b[kk*ldb + j], or b[j*ldb + kk] (trans). */
static cls_status seq_pack(cls_lstm_plan *p, cl_command_queue q, int k, int n, cls_buf b, int ldb, int trans,
                           cls_buf packed) {
  /* Blocks of k as long as leave about 4 work-items per compute unit (each work-item dispatched costs,
     on PoCL, about as much as copying a few KiB), in multiples of 16 steps. */
  const int panels = (n + p->seq_nr - 1) / p->seq_nr, want = 4 * (int)p->units;
  const int blocks = panels >= want ? 1 : (want + panels - 1) / panels;
  const int kb = ((k + blocks - 1) / blocks + 15) / 16 * 16, b_off = (int)b.offset, p_off = (int)packed.offset;
  cls_kargs ka = cls_kargs_begin(p->err, p->seq_pack, "lstm_seq_pack");
  cls_kargs_int(&ka, k);
  cls_kargs_int(&ka, n);
  cls_kargs_mem(&ka, b.mem);
  cls_kargs_int(&ka, b_off);
  cls_kargs_int(&ka, ldb);
  cls_kargs_int(&ka, trans);
  cls_kargs_mem(&ka, packed.mem);
  cls_kargs_int(&ka, p_off);
  cls_kargs_int(&ka, kb);
  cls_status st = cls_kargs_end(&ka);
  size_t global[2] = {(size_t)panels, (size_t)((k + kb - 1) / kb)}, local[2] = {1, 1};
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->seq_pack, "lstm_seq_pack", 2, global, local, NULL);
  return st;
}

/* W_h (rows I.. of weights, [H, 4H]) packed into `out` for the recurrent products of the plan's path: as it is
   for forward and inference (h_{t-1} W_h), transposed for backward (dz_{t+1} W_h^T). */
static cls_status pack_recurrent(cls_lstm_plan *p, cl_command_queue q, bool seq, bool trans, int batch, cls_buf weights,
                                 cls_buf out) {
  const int H = p->hidden, H4 = 4 * H, k = trans ? H4 : H, n = trans ? H : H4;
  const cls_buf w_h = cls_buf_at(weights.mem, weights.offset + (size_t)p->input * (size_t)H4);
  return seq ? seq_pack(p, q, k, n, w_h, H4, trans ? 1 : 0, out)
             : cls_gemm_pack_b(p->gemm, q, trans, (size_t)batch, (size_t)k, (size_t)n, w_h, (size_t)H4, out);
}

/* Every step in one kernel: lstm_seq_fwd. */
static cls_status run_forward_seq(cls_lstm_plan *p, cl_command_queue q, const fwd_args *a, cl_event *event) {
  const int T = a->time, B = a->batch, H = p->hidden;
  const int per = seq_rows_per_item(p, B), infer = a->infer ? 1 : 0;
  const int wh_off = (int)a->wh_off, gates_off = (int)a->gates_off, bias_off = (int)a->bias.offset;
  const int h_off = (int)a->h_out.offset, len_off = (int)a->seq_len.offset;
  cl_mem c_mem = a->infer ? a->c_state.mem : a->ws, hs_mem = a->infer ? a->h_state.mem : a->h_out.mem;
  const int c_off = a->infer ? (int)a->c_state.offset : (int)a->cells_off, hs_off = a->infer ? (int)a->h_state.offset : 0;
  cls_kargs ka = cls_kargs_begin(p->err, p->seq_fwd, "lstm_seq_fwd");
  cls_kargs_int(&ka, B);
  cls_kargs_int(&ka, H);
  cls_kargs_int(&ka, T);
  cls_kargs_int(&ka, per);
  cls_kargs_mem(&ka, a->ws);
  cls_kargs_int(&ka, wh_off);
  cls_kargs_mem(&ka, a->ws);
  cls_kargs_int(&ka, gates_off);
  cls_kargs_mem(&ka, a->bias.mem);
  cls_kargs_int(&ka, bias_off);
  cls_kargs_mem(&ka, c_mem);
  cls_kargs_int(&ka, c_off);
  cls_kargs_mem(&ka, a->h_out.mem);
  cls_kargs_int(&ka, h_off);
  cls_kargs_mem(&ka, hs_mem);
  cls_kargs_int(&ka, hs_off);
  cls_kargs_int(&ka, infer);
  cls_kargs_mem(&ka, a->seq_len.mem);
  cls_kargs_int(&ka, len_off);
  cls_status st = cls_kargs_end(&ka);
  size_t global = (size_t)seq_groups(p, B), local = 1;
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->seq_fwd, "lstm_seq_fwd", 1, &global, &local, event);
  return st;
}

/* Per step: gates[t] += h_{t-1} W_h (a GEMM on the packed W_h), then lstm_gates_fwd. */
static cls_status run_forward_steps(cls_lstm_plan *p, cl_command_queue q, const fwd_args *a, cl_event *event) {
  const int T = a->time, B = a->batch, H = p->hidden;
  const size_t H4 = 4 * (size_t)H;
  const cls_buf wh = cls_buf_at(a->ws, a->wh_off);
  cls_status st = CLS_OK;
  const int bias_off = (int)a->bias.offset, len_off = (int)a->seq_len.offset;
  const int save = a->infer ? 0 : 1, write_h_state = a->infer ? 1 : 0;
  cl_mem c_mem = a->infer ? a->c_state.mem : a->ws;
  cl_mem hs_mem = a->infer ? a->h_state.mem : a->h_out.mem;
  const int hs_off = a->infer ? (int)a->h_state.offset : 0;
  for (int t = 0; t < T && st == CLS_OK; t++) {
    const size_t g_off = a->gates_off + (size_t)t * B * H4;
    /* gates[t] [B, 4H] += h_{t-1} [B, H] * W_h [H, 4H]; h_{-1} is 0 in training, h_state in inference */
    if (a->infer || t > 0) {
      cls_buf hp = t > 0 ? cls_buf_at(a->h_out.mem, a->h_out.offset + (size_t)(t - 1) * B * H) : a->h_state;
      st = cls_gemm_packed(p->gemm, q, false, (size_t)B, H4, (size_t)H, 1.0f, hp, (size_t)H, wh, 1.0f,
                           cls_buf_at(a->ws, g_off), H4, NULL);
      if (st != CLS_OK) break;
    }
    int gates_off = (int)g_off, h_off = (int)(a->h_out.offset + (size_t)t * B * H);
    int c_prev_off, c_out_off, has_c_prev;
    if (a->infer) {
      c_prev_off = c_out_off = (int)a->c_state.offset;
      has_c_prev = 1;
    } else {
      c_out_off = (int)(a->cells_off + (size_t)t * B * H);
      c_prev_off = t > 0 ? c_out_off - B * H : c_out_off;
      has_c_prev = t > 0;
    }
    cls_kargs ka = cls_kargs_begin(p->err, p->gates_fwd, "lstm_gates_fwd");
    cls_kargs_int(&ka, B);
    cls_kargs_int(&ka, H);
    cls_kargs_int(&ka, T);
    cls_kargs_int(&ka, t);
    cls_kargs_mem(&ka, a->ws);
    cls_kargs_int(&ka, gates_off);
    cls_kargs_mem(&ka, a->bias.mem);
    cls_kargs_int(&ka, bias_off);
    cls_kargs_mem(&ka, c_mem);
    cls_kargs_int(&ka, c_prev_off);
    cls_kargs_int(&ka, has_c_prev);
    cls_kargs_mem(&ka, c_mem);
    cls_kargs_int(&ka, c_out_off);
    cls_kargs_mem(&ka, a->h_out.mem);
    cls_kargs_int(&ka, h_off);
    cls_kargs_mem(&ka, hs_mem);
    cls_kargs_int(&ka, hs_off);
    cls_kargs_int(&ka, write_h_state);
    cls_kargs_mem(&ka, a->seq_len.mem);
    cls_kargs_int(&ka, len_off);
    cls_kargs_int(&ka, save);
    st = cls_kargs_end(&ka);
    size_t global = (size_t)B * (((size_t)H + CLS_LSTM_V - 1) / CLS_LSTM_V); /* kernels/lstm.cl */
    if (st == CLS_OK)
      st = cls_ops_launch_to(p->err, q, p->gates_fwd, "lstm_gates_fwd", 1, &global, &p->local,
                             t == T - 1 ? event : NULL);
  }
  return st;
}

/* The forward recurrence shared by training forward and inference: W_h [H, 4H] packed into the workspace
   once for every step's product, gates [T*B, 4H] = x [T*B, I] * W_x [I, 4H], then the recurrence on the
   plan's path. */
static cls_status run_forward(cls_lstm_plan *p, cl_command_queue q, const fwd_args *a, cl_event *event) {
  const int B = a->batch, I = p->input, H = p->hidden;
  const size_t H4 = 4 * (size_t)H, rows = (size_t)a->time * (size_t)B;
  const bool seq = cls_lstm_path_for(p) == CLS_LSTM_PATH_SEQUENCE;
  cls_status st = pack_recurrent(p, q, seq, false, B, a->weights, cls_buf_at(a->ws, a->wh_off));
  if (st == CLS_OK)
    st = cls_gemm(p->gemm, q, false, false, rows, H4, (size_t)I, 1.0f, a->x, (size_t)I, a->weights, H4, 0.0f,
                  cls_buf_at(a->ws, a->gates_off), H4, NULL);
  if (st != CLS_OK) return st;
  return seq ? run_forward_seq(p, q, a, event) : run_forward_steps(p, q, a, event);
}

/* The views forward and inference share: sizes, x, weights, bias, seq_len and h_out. */
static cls_status check_forward_views(cls_lstm_plan *p, const char *op, int T, int B, cls_buf x, cls_buf weights,
                                      cls_buf bias, cls_buf seq_len, cls_buf h_out) {
  cls_status st = check_sizes(p, op, T, B);
  if (st != CLS_OK) return st;
  const size_t rows = (size_t)T * B, I = (size_t)p->input, H = (size_t)p->hidden;
  if ((st = check_view(p, op, "x [T*B, I]", x, rows * I)) != CLS_OK) return st;
  if ((st = check_view(p, op, "weights [I+H, 4H]", weights, (I + H) * 4 * H)) != CLS_OK) return st;
  if ((st = check_view(p, op, "bias [4H]", bias, 4 * H)) != CLS_OK) return st;
  if ((st = check_view(p, op, "seq_len [B]", seq_len, (size_t)B)) != CLS_OK) return st;
  return check_view(p, op, "h_out [T*B, H]", h_out, rows * H);
}

cls_status cls_lstm_forward(cls_lstm_plan *p, cl_command_queue q, int T, int B, cls_buf x, cls_buf weights,
                            cls_buf bias, cls_buf seq_len, cls_buf h_out, cls_buf workspace, cl_event *event) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  const char *op = "lstm forward";
  cls_status st = check_forward_views(p, op, T, B, x, weights, bias, seq_len, h_out);
  if (st != CLS_OK) return st;
  ws_layout l = layout_of(p, T, B);
  if ((st = check_view(p, op, "workspace", workspace, l.total)) != CLS_OK) return st;
  fwd_args a = {T, B, x, weights, bias, seq_len, h_out, workspace.mem, workspace.offset + l.wh,
                workspace.offset + l.gates, workspace.offset + l.cells, false, {NULL, 0}, {NULL, 0}};
  return run_forward(p, q, &a, event);
}

cls_status cls_lstm_infer(cls_lstm_plan *p, cl_command_queue q, int T, int B, cls_buf x, cls_buf weights, cls_buf bias,
                          cls_buf seq_len, cls_buf h_state, cls_buf c_state, cls_buf h_out, cls_buf workspace,
                          cl_event *event) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  const char *op = "lstm infer";
  cls_status st = check_forward_views(p, op, T, B, x, weights, bias, seq_len, h_out);
  if (st != CLS_OK) return st;
  const size_t H = (size_t)p->hidden;
  ws_layout l = layout_of(p, T, B);
  if ((st = check_view(p, op, "h_state [B, H]", h_state, (size_t)B * H)) != CLS_OK) return st;
  if ((st = check_view(p, op, "c_state [B, H]", c_state, (size_t)B * H)) != CLS_OK) return st;
  if ((st = check_view(p, op, "workspace", workspace, l.cells)) != CLS_OK) return st;
  fwd_args a = {T, B, x, weights, bias, seq_len, h_out, workspace.mem, workspace.offset + l.wh,
                workspace.offset + l.gates, 0, true, h_state, c_state};
  return run_forward(p, q, &a, event);
}

/* The views cls_lstm_backward reads and writes, each large enough for T x B (dx only when given). */
static cls_status check_backward_views(cls_lstm_plan *p, int T, int B, cls_buf x, cls_buf weights, cls_buf seq_len,
                                       cls_buf h_out, cls_buf dh, cls_buf workspace, cls_buf dx, cls_buf dweights,
                                       cls_buf dbias) {
  const char *op = "lstm backward";
  const size_t rows = (size_t)T * B, I = (size_t)p->input, H = (size_t)p->hidden, H4 = 4 * H;
  const ws_layout l = layout_of(p, T, B);
  cls_status st;
  if ((st = check_view(p, op, "x [T*B, I]", x, rows * I)) != CLS_OK) return st;
  if ((st = check_view(p, op, "weights [I+H, 4H]", weights, (I + H) * H4)) != CLS_OK) return st;
  if ((st = check_view(p, op, "seq_len [B]", seq_len, (size_t)B)) != CLS_OK) return st;
  if ((st = check_view(p, op, "h_out [T*B, H]", h_out, rows * H)) != CLS_OK) return st;
  if ((st = check_view(p, op, "dh [T*B, H]", dh, rows * H)) != CLS_OK) return st;
  if ((st = check_view(p, op, "workspace", workspace, l.total)) != CLS_OK) return st;
  if (dx.mem && (st = check_view(p, op, "dx [T*B, I]", dx, rows * I)) != CLS_OK) return st;
  if ((st = check_view(p, op, "dweights [I+H, 4H]", dweights, (I + H) * H4)) != CLS_OK) return st;
  if ((st = check_view(p, op, "dbias [4H]", dbias, H4)) != CLS_OK) return st;
  return CLS_OK;
}

/* xh [T*B, I+H] = x_t and h_{t-1} side by side (h_{-1} = 0): lstm_concat_xh, a work-item per row. */
static cls_status enqueue_concat_xh(cls_lstm_plan *p, cl_command_queue q, int T, int B, cls_buf x, cls_buf h_out,
                                    cls_buf xh) {
  const size_t rows = (size_t)T * B;
  int nrows = (int)rows, xo = (int)x.offset, ho = (int)h_out.offset, xho = (int)xh.offset;
  int Bi = B, In = p->input, Hi = p->hidden;
  cls_kargs ka = cls_kargs_begin(p->err, p->concat_xh, "lstm_concat_xh");
  cls_kargs_int(&ka, nrows);
  cls_kargs_int(&ka, Bi);
  cls_kargs_int(&ka, In);
  cls_kargs_int(&ka, Hi);
  cls_kargs_mem(&ka, x.mem);
  cls_kargs_int(&ka, xo);
  cls_kargs_mem(&ka, h_out.mem);
  cls_kargs_int(&ka, ho);
  cls_kargs_mem(&ka, xh.mem);
  cls_kargs_int(&ka, xho);
  cls_status st = cls_kargs_end(&ka);
  size_t global = rows; /* a work-item per row (cls_ops_launch_to rounds up to whole work-groups) */
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->concat_xh, "lstm_concat_xh", 1, &global, &p->local, NULL);
  return st;
}

/* db [4H] = (or +=, CLS_ACCUMULATE) the column sums of dz [rows, 4H]: lstm_bias_grad. */
static cls_status enqueue_bias_grad(cls_lstm_plan *p, cl_command_queue q, size_t rows, cls_buf dz, cls_buf dbias,
                                    cls_write_mode mode, cl_event *event) {
  const size_t H4 = 4 * (size_t)p->hidden;
  int nrows = (int)rows, ncols = (int)H4, dzo = (int)dz.offset, dbo = (int)dbias.offset, acc = mode == CLS_ACCUMULATE;
  cls_kargs ka = cls_kargs_begin(p->err, p->bias_grad, "lstm_bias_grad");
  cls_kargs_int(&ka, nrows);
  cls_kargs_int(&ka, ncols);
  cls_kargs_mem(&ka, dz.mem);
  cls_kargs_int(&ka, dzo);
  cls_kargs_mem(&ka, dbias.mem);
  cls_kargs_int(&ka, dbo);
  cls_kargs_int(&ka, acc);
  cls_status st = cls_kargs_end(&ka);
  /* a work-item per 16 columns, in groups of a fixed 4 (few work-items: every core gets some) */
  size_t global = (H4 + CLS_COLSUM_W - 1) / CLS_COLSUM_W, local = CLS_COLSUM_LOCAL;
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->bias_grad, "lstm_bias_grad", 1, &global, &local, event);
  return st;
}

/* What backward through time reads and writes: the packed W_h^T, and the workspace's offsets (in floats). */
typedef struct bwd_args {
  int time, batch;
  cls_buf seq_len, dh;
  cl_mem ws;
  cls_buf wht;               /* packed W_h^T [4H, H] */
  size_t g0, c0, dz0;        /* gates (activations), cells, dz: [T*B, 4H], [T*B, H], [T*B, 4H] */
  int dh_rec_off, dc_off;    /* [B, H] each */
  size_t db_part;            /* [groups, 4H]: the sequence path's sums of dz */
} bwd_args;

/* Per step: dh_rec = dz_{t+1} W_h^T (a GEMM on the packed W_h^T), then lstm_gates_bwd. */
static cls_status run_backward_steps(cls_lstm_plan *p, cl_command_queue q, const bwd_args *a) {
  const int T = a->time, B = a->batch, Hi = p->hidden, len_off = (int)a->seq_len.offset;
  const size_t H = (size_t)p->hidden, H4 = 4 * H;
  cl_mem ws = a->ws;
  cls_status st = CLS_OK;
  for (int t = T - 1; t >= 0 && st == CLS_OK; t--) {
    const int has_next = t < T - 1;
    /* dh_rec [B, H] = dz_{t+1} [B, 4H] * W_h^T [4H, H] */
    if (has_next) {
      st = cls_gemm_packed(p->gemm, q, false, (size_t)B, H, H4, 1.0f,
                           cls_buf_at(ws, a->dz0 + (size_t)(t + 1) * B * H4), H4, a->wht, 0.0f,
                           cls_buf_at(ws, (size_t)a->dh_rec_off), H, NULL);
      if (st != CLS_OK) break;
    }
    int gates_off = (int)(a->g0 + (size_t)t * B * H4), c_off = (int)(a->c0 + (size_t)t * B * H);
    int c_prev_off = t > 0 ? c_off - B * Hi : c_off, has_c_prev = t > 0;
    int dh_off = (int)(a->dh.offset + (size_t)t * B * H), dz_off = (int)(a->dz0 + (size_t)t * B * H4);
    cls_kargs ka = cls_kargs_begin(p->err, p->gates_bwd, "lstm_gates_bwd");
    cls_kargs_int(&ka, B);
    cls_kargs_int(&ka, Hi);
    cls_kargs_int(&ka, T);
    cls_kargs_int(&ka, t);
    cls_kargs_mem(&ka, ws);
    cls_kargs_int(&ka, gates_off);
    cls_kargs_mem(&ka, ws);
    cls_kargs_int(&ka, c_off);
    cls_kargs_int(&ka, c_prev_off);
    cls_kargs_int(&ka, has_c_prev);
    cls_kargs_mem(&ka, a->dh.mem);
    cls_kargs_int(&ka, dh_off);
    cls_kargs_mem(&ka, ws);
    cls_kargs_int(&ka, a->dh_rec_off);
    cls_kargs_int(&ka, has_next);
    cls_kargs_mem(&ka, ws);
    cls_kargs_int(&ka, a->dc_off);
    cls_kargs_mem(&ka, ws);
    cls_kargs_int(&ka, dz_off);
    cls_kargs_mem(&ka, a->seq_len.mem);
    cls_kargs_int(&ka, len_off);
    st = cls_kargs_end(&ka);
    size_t global = (size_t)B * ((H + CLS_LSTM_V - 1) / CLS_LSTM_V); /* kernels/lstm.cl */
    if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->gates_bwd, "lstm_gates_bwd", 1, &global, &p->local, NULL);
  }
  return st;
}

/* Every step in one kernel: lstm_seq_bwd. */
static cls_status run_backward_seq(cls_lstm_plan *p, cl_command_queue q, const bwd_args *a) {
  const int T = a->time, B = a->batch, H = p->hidden, per = seq_rows_per_item(p, B);
  const int wht_off = (int)a->wht.offset, g_off = (int)a->g0, c_off = (int)a->c0, dh_off = (int)a->dh.offset;
  const int dz_off = (int)a->dz0, len_off = (int)a->seq_len.offset, db_off = (int)a->db_part;
  cls_kargs ka = cls_kargs_begin(p->err, p->seq_bwd, "lstm_seq_bwd");
  cls_kargs_int(&ka, B);
  cls_kargs_int(&ka, H);
  cls_kargs_int(&ka, T);
  cls_kargs_int(&ka, per);
  cls_kargs_mem(&ka, a->wht.mem);
  cls_kargs_int(&ka, wht_off);
  cls_kargs_mem(&ka, a->ws);
  cls_kargs_int(&ka, g_off);
  cls_kargs_mem(&ka, a->ws);
  cls_kargs_int(&ka, c_off);
  cls_kargs_mem(&ka, a->dh.mem);
  cls_kargs_int(&ka, dh_off);
  cls_kargs_mem(&ka, a->ws);
  cls_kargs_int(&ka, a->dh_rec_off);
  cls_kargs_mem(&ka, a->ws);
  cls_kargs_int(&ka, a->dc_off);
  cls_kargs_mem(&ka, a->ws);
  cls_kargs_int(&ka, dz_off);
  cls_kargs_mem(&ka, a->ws);
  cls_kargs_int(&ka, db_off);
  cls_kargs_mem(&ka, a->seq_len.mem);
  cls_kargs_int(&ka, len_off);
  cls_status st = cls_kargs_end(&ka);
  size_t global = (size_t)seq_groups(p, B), local = 1;
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->seq_bwd, "lstm_seq_bwd", 1, &global, &local, NULL);
  return st;
}

cls_status cls_lstm_backward(cls_lstm_plan *p, cl_command_queue q, int T, int B, cls_buf x, cls_buf weights,
                             cls_buf seq_len, cls_buf h_out, cls_buf dh, cls_buf workspace, cls_buf dx,
                             cls_buf dweights, cls_buf dbias, cls_write_mode mode, cl_event *event) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  const char *op = "lstm backward";
  cls_status st = check_sizes(p, op, T, B);
  if (st != CLS_OK) return st;
  if (mode != CLS_OVERWRITE && mode != CLS_ACCUMULATE)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: unknown write mode %d", op, (int)mode);
  const size_t rows = (size_t)T * B, I = (size_t)p->input, H = (size_t)p->hidden, H4 = 4 * H;
  ws_layout l = layout_of(p, T, B);
  if ((st = check_backward_views(p, T, B, x, weights, seq_len, h_out, dh, workspace, dx, dweights, dbias)) != CLS_OK)
    return st;

  cl_mem ws = workspace.mem;
  const size_t dz0 = workspace.offset + l.dz;
  bwd_args a = {T, B, seq_len, dh, ws, cls_buf_at(ws, workspace.offset + l.wh), workspace.offset + l.gates,
                workspace.offset + l.cells, dz0, (int)(workspace.offset + l.dh_rec), (int)(workspace.offset + l.dc),
                workspace.offset + l.db_part};
  const bool seq = cls_lstm_path_for(p) == CLS_LSTM_PATH_SEQUENCE;
  /* W_h^T [4H, H] into the workspace, packed once for every step's product */
  st = pack_recurrent(p, q, seq, true, B, weights, a.wht);
  if (st == CLS_OK) st = seq ? run_backward_seq(p, q, &a) : run_backward_steps(p, q, &a);
  if (st != CLS_OK) return st;

  const float beta = mode == CLS_ACCUMULATE ? 1.0f : 0.0f;
  const cls_buf dz = cls_buf_at(ws, dz0);
  /* dW [I+H, 4H] = xh^T [I+H, T*B] * dz [T*B, 4H], W_x's rows and W_h's in one product (xh: x_t and h_{t-1}
     side by side, h_{-1} = 0, which adds nothing), where two products (x^T dz, h_prev^T dz[B..]) packed dz
     twice: at H = 512 the one product took 0.88x and 0.94x the two's time, at H = 2048 1.01x (bench_gemm, two
     rounds and one, 2 Zen 3 cores; docs/lab-notes/gemm-kernels.md); building xh costs a copy (1.2 ms at H = 512) */
  const cls_buf xh = cls_buf_at(ws, workspace.offset + l.xh);
  st = enqueue_concat_xh(p, q, T, B, x, h_out, xh);
  if (st == CLS_OK)
    st = cls_gemm(p->gemm, q, true, false, I + H, H4, rows, 1.0f, xh, I + H, dz, H4, beta, dweights, H4, NULL);
  /* dx [T*B, I] = dz [T*B, 4H] * W_x^T [4H, I] */
  if (st == CLS_OK && dx.mem)
    st = cls_gemm(p->gemm, q, false, true, rows, I, H4, 1.0f, dz, H4, weights, H4, beta, dx, I, NULL);
  /* db [4H] = column sums of dz [T*B, 4H]; on the sequence path, of its sums per group of rows */
  if (st == CLS_OK && seq)
    st = enqueue_bias_grad(p, q, (size_t)seq_groups(p, B), cls_buf_at(ws, a.db_part), dbias, mode, event);
  else if (st == CLS_OK)
    st = enqueue_bias_grad(p, q, rows, dz, dbias, mode, event);
  return st;
}

/* A GEMM plan of its own reports there too (a shared one is its owner's to point). */
void cls_lstm_set_error(cls_lstm_plan *p, cls_error *err) {
  p->err = err;
  if (p->owns_gemm) cls_gemm_set_error(p->gemm, err);
}
