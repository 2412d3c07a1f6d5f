/* LSTM kernels (see engine/ops/lstm.c): the fused gate step of forward and inference, the fused gate
 * gradient step of backward through time, the bias gradient (column sums of dz), and the rows
 * [x_t, h_{t-1}] side by side for the weight gradient in one product. The 4H gate
 * columns are i, j, f, o in that order (TF's BlockLSTM layout). Precise exp and tanh and no
 * contraction into fused multiply-adds, so that results follow TF's float32 arithmetic. */
#include "colsum.h"
#include "common.h"

#pragma OPENCL FP_CONTRACT OFF

/* A work-item takes one run of LSTM_V = 8 neighbouring units of one utterance (lstm_cell.h), in float8
 * (a CPU device's vector lanes; fewer, larger work-items). */
#include "lstm_cell.h"

/* One step t of the recurrence for every (b, k), b < batch, k < hidden: a work-item per run of LSTM_V
 * units of an utterance. gates holds z = x_t*W_x + h_{t-1}*W_h of the step (bias not yet added); with
 * `save` the activations i, j, f, o replace it for backward. Past an utterance's length the output is 0
 * and nothing else is written, so its state (c_out, h_state) stays at its last valid frame. */
__kernel __attribute__((reqd_work_group_size(CLS_WG_1D, 1, 1))) void lstm_gates_fwd(
    const int batch, const int hidden, const int time, const int t,
    __global float *gates, const int gates_off,                           /* [B, 4H] of step t */
    __global const float *bias, const int bias_off,                       /* [4H] */
    __global const float *c_prev, const int c_prev_off, const int has_c_prev, /* [B, H] c_{t-1}; 0 when !has_c_prev */
    __global float *c_out, const int c_out_off,                           /* [B, H] c_t; may alias c_prev */
    __global float *h_out, const int h_out_off,                           /* [B, H] h_t of step t */
    __global float *h_state, const int h_state_off, const int write_h_state, /* [B, H] copy of h_t */
    __global const int *seq_len, const int seq_len_off,                   /* [B] */
    const int save) {
  const int runs = (hidden + LSTM_V - 1) / LSTM_V;
  const int n = (int)get_global_id(0);
  if (n >= batch * runs) return;
  const int b = n / runs, k = (n - b * runs) * LSTM_V, w = min(LSTM_V, hidden - k), e = b * hidden + k;
  const int len = clamp(seq_len[seq_len_off + b], 0, time);
  if (t >= len) {
    lstm_store((float8)(0.0f), h_out + h_out_off + e, w);
    return;
  }
  lstm_cell_fwd(hidden, w, gates + gates_off + b * 4 * hidden + k, bias + bias_off + k, c_prev + c_prev_off + e,
                has_c_prev, c_out + c_out_off + e, h_out + h_out_off + e, h_state + h_state_off + e, write_h_state, save);
}

/* The gradient step t of backward through time, a work-item per run of LSTM_V units of an utterance:
 * from the output gradient dh_t, the recurrent gradient dh_rec = dz_{t+1}*W_h^T and the cell gradient
 * carried in dc, the pre-activation gradients dz_t (i, j, f, o) and the cell gradient for step t-1
 * (replacing dc). In the order of TF's LSTMBlockCellBprop. Past an utterance's length dz and dc are 0. */
__kernel __attribute__((reqd_work_group_size(CLS_WG_1D, 1, 1))) void lstm_gates_bwd(
    const int batch, const int hidden, const int time, const int t,
    __global const float *gates, const int gates_off,                   /* [B, 4H] i, j, f, o of step t */
    __global const float *cells, const int c_off,                       /* [B, H] c_t */
    const int c_prev_off, const int has_c_prev,                         /* [B, H] c_{t-1} in cells; 0 when !has_c_prev */
    __global const float *dh, const int dh_off,                         /* [B, H] dL/dh_t from the output */
    __global const float *dh_rec, const int dh_rec_off, const int has_next, /* [B, H] dz_{t+1}*W_h^T; 0 when !has_next */
    __global float *dc, const int dc_off,                               /* [B, H] in: f_{t+1}*dc_{t+1}; out: f_t*dc_t */
    __global float *dz, const int dz_off,                               /* [B, 4H] dL/dz_t */
    __global const int *seq_len, const int seq_len_off) {               /* [B] */
  const int runs = (hidden + LSTM_V - 1) / LSTM_V;
  const int n = (int)get_global_id(0);
  if (n >= batch * runs) return;
  const int b = n / runs, k = (n - b * runs) * LSTM_V, w = min(LSTM_V, hidden - k), e = b * hidden + k;
  const int len = clamp(seq_len[seq_len_off + b], 0, time);
  __global float *d = dz + dz_off + b * 4 * hidden + k;
  if (t >= len) {
    lstm_cell_bwd_zero(hidden, w, dc + dc_off + e, d);
    return;
  }
  lstm_cell_bwd(hidden, w, gates + gates_off + b * 4 * hidden + k, cells + c_off + e, cells + c_prev_off + e, has_c_prev,
                dh + dh_off + e, dh_rec + dh_rec_off + e, has_next, dc + dc_off + e, d);
}

/* xh [rows, input + hidden] for the weight gradient in one product, dW = xh^T dz (engine/ops/lstm.c): row
 * r = t*batch + b holds x_t of utterance b (input floats), then h_{t-1} (hidden floats: h_out's row r -
 * batch, and 0 for t = 0, r < batch). A work-item per row, copying runs of 8 floats. */
__kernel __attribute__((reqd_work_group_size(CLS_WG_1D, 1, 1))) void lstm_concat_xh(
    const int rows, const int batch, const int input, const int hidden,
    __global const float *x, const int x_off,     /* [rows, input] */
    __global const float *h, const int h_off,     /* [rows, hidden]: h_out */
    __global float *xh, const int xh_off) {       /* [rows, input + hidden] */
  const int r = (int)get_global_id(0);
  if (r >= rows) return;
  __global float *d = xh + xh_off + (size_t)r * (size_t)(input + hidden);
  __global const float *s = x + x_off + (size_t)r * (size_t)input;
  int i = 0;
  for (; i + LSTM_V <= input; i += LSTM_V) vstore8(vload8(0, s + i), 0, d + i);
  for (; i < input; i++) d[i] = s[i];
  d += input;
  if (r < batch) {
    for (int j = 0; j < hidden; j++) d[j] = 0.0f;
    return;
  }
  s = h + h_off + (size_t)(r - batch) * (size_t)hidden;
  int j = 0;
  for (; j + LSTM_V <= hidden; j += LSTM_V) vstore8(vload8(0, s + j), 0, d + j);
  for (; j < hidden; j++) d[j] = s[j];
}

/* db[col] (=|+=) sum over rows of dz[row, col]; work-item i: columns 16i .. 16i+15 (colsum.h), four
 * interleaved partial sums keeping the rounding error of long sums down. */
__kernel void lstm_bias_grad(
    const int rows, const int cols,
    __global const float *dz, const int dz_off,   /* [rows, cols] */
    __global float *db, const int db_off,         /* [cols] */
    const int accumulate) {
  cls_colsum16(rows, cols, (int)get_global_id(0) * CLS_COLSUM_W, dz, dz_off, db, db_off, accumulate, 4);
}
