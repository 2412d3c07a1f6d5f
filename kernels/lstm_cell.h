/* The LSTM cell's element-wise arithmetic for one run of LSTM_V = 8 neighbouring units of one utterance,
 * forward (the gates and the new state) and backward (the gates' gradients), shared by the kernels of one
 * time step each (lstm.cl) and the recurrence in one kernel (lstm_seq.cl), so that both compute the same
 * numbers. Gate columns i, j, f, o (TF's BlockLSTM layout), precise exp and tanh; the includer turns
 * contraction off (#pragma OPENCL FP_CONTRACT OFF) before including, so that results follow TF's float32
 * arithmetic. A run that passes the hidden size (hidden not a multiple of 8) is read and written through
 * a private copy, its lanes past the end zero and never stored. */
#ifndef CLS_KERNELS_LSTM_CELL_H
#define CLS_KERNELS_LSTM_CELL_H

#include "work_items.h"
#define LSTM_V CLS_LSTM_V
#if LSTM_V != 8
#error "the LSTM cell takes one float8 of units"
#endif

static inline float8 lstm_sigmoid(const float8 z) { return 1.0f / (1.0f + exp(-z)); }

static inline float8 lstm_load(__global const float *p, const int w) {
  if (w == LSTM_V) return vload8(0, p);
  float v[LSTM_V];
  for (int l = 0; l < LSTM_V; l++) v[l] = l < w ? p[l] : 0.0f;
  return vload8(0, v);
}

static inline void lstm_store(const float8 x, __global float *p, const int w) {
  if (w == LSTM_V) {
    vstore8(x, 0, p);
    return;
  }
  float v[LSTM_V];
  vstore8(x, 0, v);
  for (int l = 0; l < w; l++) p[l] = v[l];
}

/* Forward, for `w` units: z holds the run's 4 gate pre-activations (z, z + hidden, ..) without the bias;
 * c_prev (when has_c_prev, else 0) the cell state before. Writes c and h (and h to h_copy when given), and
 * with `save` the activations i, j, f, o over z. c_out may alias c_prev. */
static inline void lstm_cell_fwd(const int hidden, const int w, __global float *z, __global const float *bias,
                                 __global const float *c_prev, const int has_c_prev, __global float *c_out,
                                 __global float *h_out, __global float *h_copy, const int write_copy, const int save) {
  const float8 zi = lstm_load(z, w) + lstm_load(bias, w);
  const float8 zj = lstm_load(z + hidden, w) + lstm_load(bias + hidden, w);
  const float8 zf = lstm_load(z + 2 * hidden, w) + lstm_load(bias + 2 * hidden, w); /* forget_bias is 0 */
  const float8 zo = lstm_load(z + 3 * hidden, w) + lstm_load(bias + 3 * hidden, w);
  const float8 i = lstm_sigmoid(zi), j = tanh(zj), f = lstm_sigmoid(zf), o = lstm_sigmoid(zo);
  const float8 cp = has_c_prev ? lstm_load(c_prev, w) : (float8)(0.0f);
  const float8 c = j * i + f * cp;
  const float8 h = tanh(c) * o;
  lstm_store(c, c_out, w);
  lstm_store(h, h_out, w);
  if (write_copy) lstm_store(h, h_copy, w);
  if (save) {
    lstm_store(i, z, w);
    lstm_store(j, z + hidden, w);
    lstm_store(f, z + 2 * hidden, w);
    lstm_store(o, z + 3 * hidden, w);
  }
}

/* Backward, for `w` units, in the order of TF's LSTMBlockCellBprop: g holds the run's saved activations
 * i, j, f, o; c the cell state, c_prev the one before (when has_c_prev, else 0); dh the output's gradient
 * and dh_rec the recurrent one (dz_{t+1} W_h^T, when has_next); dc in: f_{t+1} dc_{t+1} (when has_next),
 * out: f_t dc_t. Writes the pre-activation gradients to d (d, d + hidden, ..). */
static inline void lstm_cell_bwd(const int hidden, const int w, __global const float *g, __global const float *c_at,
                                 __global const float *c_prev, const int has_c_prev, __global const float *dh,
                                 __global const float *dh_rec, const int has_next, __global float *dc,
                                 __global float *d) {
  const float8 i = lstm_load(g, w), j = lstm_load(g + hidden, w);
  const float8 f = lstm_load(g + 2 * hidden, w), o = lstm_load(g + 3 * hidden, w);
  const float8 c = lstm_load(c_at, w);
  const float8 cp = has_c_prev ? lstm_load(c_prev, w) : (float8)(0.0f);
  const float8 co = tanh(c);
  const float8 dhv = lstm_load(dh, w);
  const float8 h_grad = has_next ? dhv + lstm_load(dh_rec, w) : dhv;
  const float8 c_next = has_next ? lstm_load(dc, w) : (float8)(0.0f);
  const float8 d_o = o * (1.0f - o) * h_grad * co;
  const float8 dcs = (1.0f - co * co) * h_grad * o + c_next;
  const float8 d_j = (1.0f - j * j) * dcs * i;
  const float8 d_f = f * (1.0f - f) * dcs * cp;
  const float8 d_i = i * (1.0f - i) * dcs * j;
  lstm_store(d_i, d, w);
  lstm_store(d_j, d + hidden, w);
  lstm_store(d_f, d + 2 * hidden, w);
  lstm_store(d_o, d + 3 * hidden, w);
  lstm_store(dcs * f, dc, w);
}

/* Past an utterance's length: the step's gradients are 0. */
static inline void lstm_cell_bwd_zero(const int hidden, const int w, __global float *dc, __global float *d) {
  const float8 zero = (float8)(0.0f);
  lstm_store(zero, d, w);
  lstm_store(zero, d + hidden, w);
  lstm_store(zero, d + 2 * hidden, w);
  lstm_store(zero, d + 3 * hidden, w);
  lstm_store(zero, dc, w);
}

#endif
