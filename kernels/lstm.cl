/* LSTM kernels (see engine/lstm.h): the fused gate step of forward and inference, the fused gate
 * gradient step of backward through time, and the bias gradient (column sums of dz). The 4H gate
 * columns are i, j, f, o in that order (TF's BlockLSTM layout). Precise exp and tanh and no
 * contraction into fused multiply-adds, so that results follow TF's float32 arithmetic. */
#include "common.h"

#pragma OPENCL FP_CONTRACT OFF

static float lstm_sigmoid(const float z) { return 1.0f / (1.0f + exp(-z)); }

/* One step t of the recurrence for every (b, k), b < batch, k < hidden: one work-item each.
 * gates holds z = x_t*W_x + h_{t-1}*W_h of the step (bias not yet added); with `save` the activations
 * i, j, f, o replace it for backward. Past an utterance's length the output is 0 and nothing else is
 * written, so its state (c_out, h_state) stays at its last valid frame. */
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
  const int n = (int)get_global_id(0);
  if (n >= batch * hidden) return;
  const int b = n / hidden, k = n - b * hidden;
  const int len = clamp(seq_len[seq_len_off + b], 0, time);
  if (t >= len) {
    h_out[h_out_off + n] = 0.0f;
    return;
  }
  __global float *z = gates + gates_off + b * 4 * hidden + k;
  __global const float *bb = bias + bias_off + k;
  const float zi = z[0] + bb[0];
  const float zj = z[hidden] + bb[hidden];
  const float zf = z[2 * hidden] + bb[2 * hidden]; /* forget_bias is 0 */
  const float zo = z[3 * hidden] + bb[3 * hidden];
  const float i = lstm_sigmoid(zi), j = tanh(zj), f = lstm_sigmoid(zf), o = lstm_sigmoid(zo);
  const float cp = has_c_prev ? c_prev[c_prev_off + n] : 0.0f;
  const float c = j * i + f * cp;
  const float h = tanh(c) * o;
  c_out[c_out_off + n] = c;
  h_out[h_out_off + n] = h;
  if (write_h_state) h_state[h_state_off + n] = h;
  if (save) {
    z[0] = i;
    z[hidden] = j;
    z[2 * hidden] = f;
    z[3 * hidden] = o;
  }
}

/* The gradient step t of backward through time, one work-item per (b, k): from the output gradient
 * dh_t, the recurrent gradient dh_rec = dz_{t+1}*W_h^T and the cell gradient carried in dc, the
 * pre-activation gradients dz_t (i, j, f, o) and the cell gradient for step t-1 (replacing dc).
 * In the order of TF's LSTMBlockCellBprop. Past an utterance's length dz and dc are 0. */
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
  const int n = (int)get_global_id(0);
  if (n >= batch * hidden) return;
  const int b = n / hidden, k = n - b * hidden;
  const int len = clamp(seq_len[seq_len_off + b], 0, time);
  __global float *d = dz + dz_off + b * 4 * hidden + k;
  if (t >= len) {
    d[0] = 0.0f;
    d[hidden] = 0.0f;
    d[2 * hidden] = 0.0f;
    d[3 * hidden] = 0.0f;
    dc[dc_off + n] = 0.0f;
    return;
  }
  __global const float *g = gates + gates_off + b * 4 * hidden + k;
  const float i = g[0], j = g[hidden], f = g[2 * hidden], o = g[3 * hidden];
  const float c = cells[c_off + n];
  const float cp = has_c_prev ? cells[c_prev_off + n] : 0.0f;
  const float co = tanh(c);
  const float h_grad = has_next ? dh[dh_off + n] + dh_rec[dh_rec_off + n] : dh[dh_off + n];
  const float c_next = has_next ? dc[dc_off + n] : 0.0f;
  const float d_o = o * (1.0f - o) * h_grad * co;
  const float dcs = (1.0f - co * co) * h_grad * o + c_next;
  const float d_j = (1.0f - j * j) * dcs * i;
  const float d_f = f * (1.0f - f) * dcs * cp;
  const float d_i = i * (1.0f - i) * dcs * j;
  d[0] = d_i;
  d[hidden] = d_j;
  d[2 * hidden] = d_f;
  d[3 * hidden] = d_o;
  dc[dc_off + n] = dcs * f;
}

/* db[col] (=|+=) sum over rows of dz[row, col], one work-item per column; four interleaved partial
 * sums keep the rounding error of long sums down. */
__kernel __attribute__((reqd_work_group_size(CLS_WG_1D, 1, 1))) void lstm_bias_grad(
    const int rows, const int cols,
    __global const float *dz, const int dz_off,   /* [rows, cols] */
    __global float *db, const int db_off,         /* [cols] */
    const int accumulate) {
  const int col = (int)get_global_id(0);
  if (col >= cols) return;
  __global const float *p = dz + dz_off + col;
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  int r = 0;
  for (; r + 4 <= rows; r += 4) {
    s0 += p[(size_t)r * cols];
    s1 += p[(size_t)(r + 1) * cols];
    s2 += p[(size_t)(r + 2) * cols];
    s3 += p[(size_t)(r + 3) * cols];
  }
  for (; r < rows; r++) s0 += p[(size_t)r * cols];
  const float s = (s0 + s1) + (s2 + s3);
  if (accumulate)
    db[db_off + col] += s;
  else
    db[db_off + col] = s;
}
