/* LSTM op plan (see clspeech/ops.h): owns the lstm_* kernels of one device, the workspace layout, and the
 * sequence of GEMMs (CLBlast) and fused gate kernels of forward, backward through time and
 * streaming inference. Everything is enqueued on the caller's in-order queue; nothing waits. */
#include "clspeech/ops.h"

#include <clblast_c.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"

struct cls_lstm_plan {
  cls_engine *engine;
  int max_time, max_batch, input, hidden;
  cl_kernel gates_fwd, gates_bwd, bias_grad;
  size_t local; /* the kernels' work-group size (CLS_WG_1D of the device) */
};

/* Workspace layout, in floats from the workspace view's offset. W_h is staged first, so that with the
 * workspace at offset 0 of its buffer CLBlast's large-matrix GEMM reads it in place: a matrix at a
 * non-zero offset (W_h inside the weights) or one to be transposed (W_h^T of backward) it would
 * otherwise copy into a padded temporary on every step. */
typedef struct ws_layout {
  size_t wh;    /* [H, 4H] W_h (forward, inference) or [4H, H] W_h^T (backward) */
  size_t gates; /* [T*B, 4H] projection, then i, j, f, o */
  size_t cells; /* [T*B, H] c_t */
  size_t dz;    /* [T*B, 4H] */
  size_t dh_rec; /* [B, H] */
  size_t dc;    /* [B, H] */
  size_t total;
} ws_layout;

static ws_layout layout_of(const cls_lstm_plan *p, int time, int batch) {
  size_t rows = (size_t)time * (size_t)batch, h = (size_t)p->hidden;
  ws_layout l;
  l.wh = 0;
  l.gates = l.wh + h * 4 * h;
  l.cells = l.gates + rows * 4 * h;
  l.dz = l.cells + rows * h;
  l.dh_rec = l.dz + rows * 4 * h;
  l.dc = l.dh_rec + (size_t)batch * h;
  l.total = l.dc + (size_t)batch * h;
  return l;
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
  p->max_time = max_time;
  p->max_batch = max_batch;
  p->input = input_size;
  p->hidden = hidden;
  st = cls_device_kernel(e, d, "lstm", "lstm_gates_fwd", &p->gates_fwd);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "lstm", "lstm_gates_bwd", &p->gates_bwd);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "lstm", "lstm_bias_grad", &p->bias_grad);
  if (st == CLS_OK) {
    size_t wg[3] = {0, 0, 0};
    cl_int err = clGetKernelWorkGroupInfo(p->gates_fwd, d->id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof wg, wg, NULL);
    if (err != CL_SUCCESS)
      st = cls_fail(e, CLS_ERR_OPENCL, "lstm: clGetKernelWorkGroupInfo(CL_KERNEL_COMPILE_WORK_GROUP_SIZE) failed: %s",
                    cls_cl_error_name(err));
    p->local = wg[0] ? wg[0] : 64;
  }
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
  free(p);
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
    return cls_fail(p->engine, CLS_ERR_INVALID_ARGUMENT,
                    "%s: time %d and batch %d must be within 1..%d and 1..%d (the plan's maximum shapes)", op, time,
                    batch, p->max_time, p->max_batch);
  return CLS_OK;
}

/* A view of n elements of 4 bytes: a buffer is given, the kernels' 32-bit offsets reach its end, and
 * the buffer holds it. */
static cls_status check_view(cls_lstm_plan *p, const char *op, const char *name, cls_buf v, size_t n) {
  if (!v.mem) return cls_fail(p->engine, CLS_ERR_INVALID_ARGUMENT, "%s: no buffer given for %s", op, name);
  if (v.offset > (size_t)INT_MAX || n > (size_t)INT_MAX - v.offset)
    return cls_fail(p->engine, CLS_ERR_INVALID_ARGUMENT,
                    "%s: %s: offset %zu + %zu elements exceeds 2^31-1 elements", op, name, v.offset, n);
  size_t bytes = 0;
  cl_int err = clGetMemObjectInfo(v.mem, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
  if (err != CL_SUCCESS)
    return cls_fail(p->engine, CLS_ERR_OPENCL, "%s: %s: clGetMemObjectInfo(CL_MEM_SIZE) failed: %s", op, name,
                    cls_cl_error_name(err));
  if ((v.offset + n) * 4 > bytes)
    return cls_fail(p->engine, CLS_ERR_INVALID_ARGUMENT,
                    "%s: %s needs %zu elements at offset %zu (%zu bytes), but its buffer holds %zu bytes", op, name, n,
                    v.offset, (v.offset + n) * 4, bytes);
  return CLS_OK;
}

/* ---- enqueue helpers ---- */

/* C[m, n] = A[m, k]*B[k, n] + beta*C (A, B optionally stored transposed), row-major, offsets and
 * leading dimensions in elements. */
static cls_status gemm(cls_lstm_plan *p, cl_command_queue *q, const char *what, bool ta, bool tb, size_t m, size_t n,
                       size_t k, cl_mem a, size_t a_off, size_t lda, cl_mem b, size_t b_off, size_t ldb, float beta,
                       cl_mem c, size_t c_off, size_t ldc, cl_event *event) {
  CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor, ta ? CLBlastTransposeYes : CLBlastTransposeNo,
                                     tb ? CLBlastTransposeYes : CLBlastTransposeNo, m, n, k, 1.0f, a, a_off, lda, b,
                                     b_off, ldb, beta, c, c_off, ldc, q, event);
  if (s != CLBlastSuccess)
    return cls_fail(p->engine, CLS_ERR_BLAS, "%s: CLBlastSgemm (m %zu, n %zu, k %zu) failed with status %d", what, m, n,
                    k, (int)s);
  return CLS_OK;
}

typedef struct fwd_args {
  int time, batch;
  cls_buf x, weights, bias, seq_len, h_out;
  cl_mem ws;    /* the workspace buffer: W_h at wh_off, gates at gates_off, cells at cells_off */
  size_t wh_off, gates_off, cells_off;
  bool infer;   /* state from and to h_state/c_state, nothing saved */
  cls_buf h_state, c_state;
} fwd_args;

/* The forward recurrence shared by training forward and inference. */
static cls_status run_forward(cls_lstm_plan *p, cl_command_queue q, const char *op, const fwd_args *a,
                              cl_event *event) {
  const int T = a->time, B = a->batch, I = p->input, H = p->hidden;
  const size_t H4 = 4 * (size_t)H, rows = (size_t)T * (size_t)B;
  /* workspace W_h [H, 4H] = rows I.. of weights */
  cl_int err = clEnqueueCopyBuffer(q, a->weights.mem, a->ws, (a->weights.offset + (size_t)I * H4) * sizeof(float),
                                   a->wh_off * sizeof(float), (size_t)H * H4 * sizeof(float), 0, NULL, NULL);
  if (err != CL_SUCCESS)
    return cls_fail(p->engine, CLS_ERR_OPENCL, "%s: staging W_h: clEnqueueCopyBuffer failed: %s", op,
                    cls_cl_error_name(err));
  /* gates [T*B, 4H] = x [T*B, I] * W_x [I, 4H] */
  cls_status st = gemm(p, &q, op, false, false, rows, H4, (size_t)I, a->x.mem, a->x.offset, (size_t)I,
                       a->weights.mem, a->weights.offset, H4, 0.0f, a->ws, a->gates_off, H4, NULL);
  const int bias_off = (int)a->bias.offset, len_off = (int)a->seq_len.offset;
  const int save = a->infer ? 0 : 1, write_h_state = a->infer ? 1 : 0;
  cl_mem c_mem = a->infer ? a->c_state.mem : a->ws;
  cl_mem hs_mem = a->infer ? a->h_state.mem : a->h_out.mem;
  const int hs_off = a->infer ? (int)a->h_state.offset : 0;
  for (int t = 0; t < T && st == CLS_OK; t++) {
    const size_t g_off = a->gates_off + (size_t)t * B * H4;
    /* gates[t] [B, 4H] += h_{t-1} [B, H] * W_h [H, 4H]; h_{-1} is 0 in training, h_state in inference */
    if (a->infer || t > 0) {
      cl_mem hp = t > 0 ? a->h_out.mem : a->h_state.mem;
      size_t hp_off = t > 0 ? a->h_out.offset + (size_t)(t - 1) * B * H : a->h_state.offset;
      st = gemm(p, &q, op, false, false, (size_t)B, H4, (size_t)H, hp, hp_off, (size_t)H, a->ws, a->wh_off, H4,
                1.0f, a->ws, g_off, H4, NULL);
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
    st = cls_ops_args(p->engine, p->gates_fwd, "lstm_gates_fwd", 21, sizeof B, &B, sizeof H, &H, sizeof T, &T,
                      sizeof t, &t, sizeof a->ws, &a->ws, sizeof gates_off, &gates_off, sizeof a->bias.mem,
                      &a->bias.mem, sizeof bias_off, &bias_off, sizeof c_mem, &c_mem, sizeof c_prev_off, &c_prev_off,
                      sizeof has_c_prev, &has_c_prev, sizeof c_mem, &c_mem, sizeof c_out_off, &c_out_off,
                      sizeof a->h_out.mem, &a->h_out.mem, sizeof h_off, &h_off, sizeof hs_mem, &hs_mem, sizeof hs_off,
                      &hs_off, sizeof write_h_state, &write_h_state, sizeof a->seq_len.mem, &a->seq_len.mem,
                      sizeof len_off, &len_off, sizeof save, &save);
    size_t global = (size_t)B * H;
    if (st == CLS_OK)
      st = cls_ops_launch(p->engine, q, p->gates_fwd, "lstm_gates_fwd", 1, &global, &p->local,
                          t == T - 1 ? event : NULL);
  }
  return st;
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
  return run_forward(p, q, op, &a, event);
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
  return run_forward(p, q, op, &a, event);
}

cls_status cls_lstm_backward(cls_lstm_plan *p, cl_command_queue q, int T, int B, cls_buf x, cls_buf weights,
                             cls_buf seq_len, cls_buf h_out, cls_buf dh, cls_buf workspace, cls_buf dx,
                             cls_buf dweights, cls_buf dbias, cls_write_mode mode, cl_event *event) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  const char *op = "lstm backward";
  cls_status st = check_sizes(p, op, T, B);
  if (st != CLS_OK) return st;
  if (mode != CLS_OVERWRITE && mode != CLS_ACCUMULATE)
    return cls_fail(p->engine, CLS_ERR_INVALID_ARGUMENT, "%s: unknown write mode %d", op, (int)mode);
  const size_t rows = (size_t)T * B, I = (size_t)p->input, H = (size_t)p->hidden, H4 = 4 * H;
  ws_layout l = layout_of(p, T, B);
  if ((st = check_view(p, op, "x [T*B, I]", x, rows * I)) != CLS_OK) return st;
  if ((st = check_view(p, op, "weights [I+H, 4H]", weights, (I + H) * H4)) != CLS_OK) return st;
  if ((st = check_view(p, op, "seq_len [B]", seq_len, (size_t)B)) != CLS_OK) return st;
  if ((st = check_view(p, op, "h_out [T*B, H]", h_out, rows * H)) != CLS_OK) return st;
  if ((st = check_view(p, op, "dh [T*B, H]", dh, rows * H)) != CLS_OK) return st;
  if ((st = check_view(p, op, "workspace", workspace, l.total)) != CLS_OK) return st;
  if (dx.mem && (st = check_view(p, op, "dx [T*B, I]", dx, rows * I)) != CLS_OK) return st;
  if ((st = check_view(p, op, "dweights [I+H, 4H]", dweights, (I + H) * H4)) != CLS_OK) return st;
  if ((st = check_view(p, op, "dbias [4H]", dbias, H4)) != CLS_OK) return st;

  cl_mem ws = workspace.mem;
  const size_t g0 = workspace.offset + l.gates, c0 = workspace.offset + l.cells, dz0 = workspace.offset + l.dz;
  const int dh_rec_off = (int)(workspace.offset + l.dh_rec), dc_off = (int)(workspace.offset + l.dc);
  const int len_off = (int)seq_len.offset, Bi = B, Hi = p->hidden;
  /* workspace W_h^T [4H, H] = transpose of rows I.. of weights */
  const size_t wht_off = workspace.offset + l.wh;
  CLBlastStatusCode bs = CLBlastSomatcopy(CLBlastLayoutRowMajor, CLBlastTransposeYes, H, H4, 1.0f, weights.mem,
                                          weights.offset + I * H4, H4, ws, wht_off, H, &q, NULL);
  if (bs != CLBlastSuccess)
    return cls_fail(p->engine, CLS_ERR_BLAS, "%s: staging W_h^T: CLBlastSomatcopy (%zu x %zu) failed with status %d", op,
                    H, H4, (int)bs);
  for (int t = T - 1; t >= 0 && st == CLS_OK; t--) {
    const int has_next = t < T - 1;
    /* dh_rec [B, H] = dz_{t+1} [B, 4H] * W_h^T [4H, H] */
    if (has_next) {
      st = gemm(p, &q, op, false, false, (size_t)B, H, H4, ws, dz0 + (size_t)(t + 1) * B * H4, H4, ws, wht_off, H,
                0.0f, ws, (size_t)dh_rec_off, H, NULL);
      if (st != CLS_OK) break;
    }
    int gates_off = (int)(g0 + (size_t)t * B * H4), c_off = (int)(c0 + (size_t)t * B * H);
    int c_prev_off = t > 0 ? c_off - B * Hi : c_off, has_c_prev = t > 0;
    int dh_off = (int)(dh.offset + (size_t)t * B * H), dz_off = (int)(dz0 + (size_t)t * B * H4);
    st = cls_ops_args(p->engine, p->gates_bwd, "lstm_gates_bwd", 21, sizeof Bi, &Bi, sizeof Hi, &Hi, sizeof T, &T,
                      sizeof t, &t, sizeof ws, &ws, sizeof gates_off, &gates_off, sizeof ws, &ws, sizeof c_off, &c_off,
                      sizeof c_prev_off, &c_prev_off, sizeof has_c_prev, &has_c_prev, sizeof dh.mem, &dh.mem,
                      sizeof dh_off, &dh_off, sizeof ws, &ws, sizeof dh_rec_off, &dh_rec_off, sizeof has_next,
                      &has_next, sizeof ws, &ws, sizeof dc_off, &dc_off, sizeof ws, &ws, sizeof dz_off, &dz_off,
                      sizeof seq_len.mem, &seq_len.mem, sizeof len_off, &len_off);
    size_t global = (size_t)B * H;
    if (st == CLS_OK) st = cls_ops_launch(p->engine, q, p->gates_bwd, "lstm_gates_bwd", 1, &global, &p->local, NULL);
  }
  if (st != CLS_OK) return st;

  const float beta = mode == CLS_ACCUMULATE ? 1.0f : 0.0f;
  /* dW_x [I, 4H] = x^T [I, T*B] * dz [T*B, 4H] */
  st = gemm(p, &q, op, true, false, I, H4, rows, x.mem, x.offset, I, ws, dz0, H4, beta, dweights.mem, dweights.offset,
            H4, NULL);
  /* dW_h [H, 4H] = h_prev^T [H, (T-1)*B] * dz[1..T-1] [(T-1)*B, 4H]; h_prev of step t is h_out of step
     t-1 (rows 0..(T-1)*B-1 of h_out), and 0 for t = 0, which adds nothing. */
  if (st == CLS_OK && T > 1)
    st = gemm(p, &q, op, true, false, H, H4, rows - (size_t)B, h_out.mem, h_out.offset, H, ws, dz0 + (size_t)B * H4,
              H4, beta, dweights.mem, dweights.offset + I * H4, H4, NULL);
  else if (st == CLS_OK && mode == CLS_OVERWRITE)
    st = cls_ops_fill(p->engine, q, cls_buf_at(dweights.mem, dweights.offset + I * H4), H * H4, 0.0f);
  /* dx [T*B, I] = dz [T*B, 4H] * W_x^T [4H, I] */
  if (st == CLS_OK && dx.mem)
    st = gemm(p, &q, op, false, true, rows, I, H4, ws, dz0, H4, weights.mem, weights.offset, H4, beta, dx.mem,
              dx.offset, I, NULL);
  /* db [4H] = column sums of dz [T*B, 4H] */
  if (st == CLS_OK) {
    int nrows = (int)rows, ncols = (int)H4, dzo = (int)dz0, dbo = (int)dbias.offset, acc = mode == CLS_ACCUMULATE;
    st = cls_ops_args(p->engine, p->bias_grad, "lstm_bias_grad", 7, sizeof nrows, &nrows, sizeof ncols, &ncols,
                      sizeof ws, &ws, sizeof dzo, &dzo, sizeof dbias.mem, &dbias.mem, sizeof dbo, &dbo, sizeof acc,
                      &acc);
    if (st == CLS_OK) st = cls_ops_launch(p->engine, q, p->bias_grad, "lstm_bias_grad", 1, &H4, &p->local, event);
  }
  return st;
}
