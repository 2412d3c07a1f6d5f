/* The LSTM cell's element-wise arithmetic for one run of LSTM_V neighbouring units of one utterance,
 * forward (the gates and the new state) and backward (the gates' gradients), shared by the kernels of one
 * time step each (lstm.cl) and the recurrence in one kernel (lstm_seq.cl), so that both compute the same
 * numbers. Gate columns i, j, f, o (TF's BlockLSTM layout), precise exp and tanh; the includer turns
 * contraction off (#pragma OPENCL FP_CONTRACT OFF) before including, so that results follow TF's float32
 * arithmetic. A run that passes the hidden size (hidden not a multiple of LSTM_V) is read and written
 * through a private copy, its lanes past the end zero and never stored.
 * LSTM_V is the includer's: 8 by default (lstm.cl, a work-item per float8, CLS_LSTM_V on the host), or 16
 * (lstm_seq.cl on a 16-float device, whose one work-item walks the units: half the instructions). Each
 * lane's arithmetic is the same at either width. */
#ifndef CLS_KERNELS_LSTM_CELL_H
#define CLS_KERNELS_LSTM_CELL_H

#include "work_items.h"
#ifndef LSTM_V
#define LSTM_V CLS_LSTM_V
#endif
#if LSTM_V == 8
typedef float8 lstm_vec;
#define LSTM_VLOAD vload8
#define LSTM_VSTORE vstore8
#elif LSTM_V == 16
typedef float16 lstm_vec;
#define LSTM_VLOAD vload16
#define LSTM_VSTORE vstore16
#else
#error "the LSTM cell takes a float8 or a float16 of units"
#endif

static inline lstm_vec lstm_sigmoid(const lstm_vec z) { return 1.0f / (1.0f + exp(-z)); }

static inline lstm_vec lstm_load(__global const float *p, const int w) {
  if (w == LSTM_V) return LSTM_VLOAD(0, p);
  float v[LSTM_V];
  for (int l = 0; l < LSTM_V; l++) v[l] = l < w ? p[l] : 0.0f;
  return LSTM_VLOAD(0, v);
}

static inline void lstm_store(const lstm_vec x, __global float *p, const int w) {
  if (w == LSTM_V) {
    LSTM_VSTORE(x, 0, p);
    return;
  }
  float v[LSTM_V];
  LSTM_VSTORE(x, 0, v);
  for (int l = 0; l < w; l++) p[l] = v[l];
}

/* Forward, for `w` units: z holds the run's 4 gate pre-activations (z, z + hidden, ..) without the bias;
 * c_prev (when has_c_prev, else 0) the cell state before. Writes c and h (and h to h_copy when given), and
 * with `save` the activations i, j, f, o over z. c_out may alias c_prev. */
static inline void lstm_cell_fwd(const int hidden, const int w, __global float *z, __global const float *bias,
                                 __global const float *c_prev, const int has_c_prev, __global float *c_out,
                                 __global float *h_out, __global float *h_copy, const int write_copy, const int save) {
  const lstm_vec zi = lstm_load(z, w) + lstm_load(bias, w);
  const lstm_vec zj = lstm_load(z + hidden, w) + lstm_load(bias + hidden, w);
  const lstm_vec zf = lstm_load(z + 2 * hidden, w) + lstm_load(bias + 2 * hidden, w); /* forget_bias is 0 */
  const lstm_vec zo = lstm_load(z + 3 * hidden, w) + lstm_load(bias + 3 * hidden, w);
  const lstm_vec i = lstm_sigmoid(zi), j = tanh(zj), f = lstm_sigmoid(zf), o = lstm_sigmoid(zo);
  const lstm_vec cp = has_c_prev ? lstm_load(c_prev, w) : (lstm_vec)(0.0f);
  const lstm_vec c = j * i + f * cp;
  const lstm_vec h = tanh(c) * o;
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
  const lstm_vec i = lstm_load(g, w), j = lstm_load(g + hidden, w);
  const lstm_vec f = lstm_load(g + 2 * hidden, w), o = lstm_load(g + 3 * hidden, w);
  const lstm_vec c = lstm_load(c_at, w);
  const lstm_vec cp = has_c_prev ? lstm_load(c_prev, w) : (lstm_vec)(0.0f);
  const lstm_vec co = tanh(c);
  const lstm_vec dhv = lstm_load(dh, w);
  const lstm_vec h_grad = has_next ? dhv + lstm_load(dh_rec, w) : dhv;
  const lstm_vec c_next = has_next ? lstm_load(dc, w) : (lstm_vec)(0.0f);
  const lstm_vec d_o = o * (1.0f - o) * h_grad * co;
  const lstm_vec dcs = (1.0f - co * co) * h_grad * o + c_next;
  const lstm_vec d_j = (1.0f - j * j) * dcs * i;
  const lstm_vec d_f = f * (1.0f - f) * dcs * cp;
  const lstm_vec d_i = i * (1.0f - i) * dcs * j;
  lstm_store(d_i, d, w);
  lstm_store(d_j, d + hidden, w);
  lstm_store(d_f, d + 2 * hidden, w);
  lstm_store(d_o, d + 3 * hidden, w);
  lstm_store(dcs * f, dc, w);
}

/* Past an utterance's length: the step's gradients are 0. */
static inline void lstm_cell_bwd_zero(const int hidden, const int w, __global float *dc, __global float *d) {
  const lstm_vec zero = (lstm_vec)(0.0f);
  lstm_store(zero, d, w);
  lstm_store(zero, d + hidden, w);
  lstm_store(zero, d + 2 * hidden, w);
  lstm_store(zero, d + 3 * hidden, w);
  lstm_store(zero, dc, w);
}

#endif
