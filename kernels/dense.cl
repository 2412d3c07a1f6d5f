/* Dense layer kernels around the CLBlast GEMM: the fused bias + clipped ReLU + inverted dropout of
 * the forward pass, its backward (the gradient before the activation), and the bias gradient.
 * Rows are time-major (row = t*B + b); dropout draws come from Philox keyed by (seed, step) and
 * counted by (layer, global utterance, t, unit), so they do not depend on the batch split. */
#include "common.h"
#include "philox.h"

/* keep = the draw survives dropout; `scale` = 1/(1-rate). */
static inline int dense_keep(const float rate, const uint seed, const uint step, const uint layer, const int batch,
                             const int utterance_offset, const int row, const int unit) {
  if (rate <= 0.0f) return 1;
  const int t = row / batch;
  const int b = row - t * batch;
  return cls_dropout_uniform(seed, step, layer, (uint)(utterance_offset + b), (uint)t, (uint)unit) >= rate;
}

/* y[r, j] = dropout(min(max(y[r, j] + bias[j], 0), clip)) in place; y [rows, out], bias [out].
 * relu == 0: y = y + bias (no activation, no dropout). */
__kernel void dense_bias_act(const int rows, const int out, __global float *y, const int y_off,
                             __global const float *bias, const int bias_off, const int relu, const float clip,
                             const float rate, const float scale, const uint seed, const uint step, const uint layer,
                             const int batch, const int utterance_offset) {
  const int j = (int)get_global_id(0);
  const int r = (int)get_global_id(1);
  if (j >= out || r >= rows) return;
  const int idx = y_off + r * out + j;
  float v = y[idx] + bias[bias_off + j];
  if (relu) {
    v = fmin(fmax(v, 0.0f), clip);
    if (rate > 0.0f) v = dense_keep(rate, seed, step, layer, batch, utterance_offset, r, j) ? v * scale : 0.0f;
  }
  y[idx] = v;
}

/* dz[r, j] = dy[r, j] * d act / d z, from the forward output y: the activation passes the gradient
 * where it was kept by dropout (times 1/(1-rate)) and 0 < min(relu(z), clip) < clip, i.e.
 * 0 < y < clip*scale. */
__kernel void dense_act_bwd(const int rows, const int out, __global const float *y, const int y_off,
                            __global const float *dy, const int dy_off, __global float *dz, const int dz_off,
                            const float clip, const float rate, const float scale, const uint seed, const uint step,
                            const uint layer, const int batch, const int utterance_offset) {
  const int j = (int)get_global_id(0);
  const int r = (int)get_global_id(1);
  if (j >= out || r >= rows) return;
  const int e = r * out + j;
  const float yv = y[y_off + e];
  float g = 0.0f;
  if (rate > 0.0f) {
    if (dense_keep(rate, seed, step, layer, batch, utterance_offset, r, j) && yv > 0.0f && yv < clip * scale)
      g = dy[dy_off + e] * scale;
  } else if (yv > 0.0f && yv < clip) {
    g = dy[dy_off + e];
  }
  dz[dz_off + e] = g;
}

/* db[j] (+)= sum over rows of dz[r, j]; one work-item per column, reading rows in order. */
__kernel void dense_bias_grad(const int rows, const int out, __global const float *dz, const int dz_off,
                              __global float *db, const int db_off, const int accumulate) {
  const int j = (int)get_global_id(0);
  if (j >= out) return;
  float sum = 0.0f;
  for (int r = 0; r < rows; r++) sum += dz[dz_off + r * out + j];
  db[db_off + j] = accumulate ? db[db_off + j] + sum : sum;
}
