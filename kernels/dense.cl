/* Dense layer kernels around the GEMM: the fused bias + clipped ReLU + inverted dropout of the forward
 * pass, its backward (the gradient before the activation), and the bias gradient (colsum.h).
 * Rows are time-major (row = t*B + b); dropout draws come from Philox keyed by (seed, step) and
 * counted by (layer, global utterance, t, unit), so they do not depend on the batch split. One Philox
 * block gives the draws of 4 neighbouring units (philox.h), so a work-item takes DENSE_RUN = 32 units of
 * a row: 8 blocks side by side in uint8 lanes, the values in float8. */
#include "colsum.h"
#include "common.h"
#include "philox.h"

#include "work_items.h"
#define DENSE_RUN CLS_DENSE_RUN
#if DENSE_RUN != 32
#error "dense_keep32 draws 8 Philox blocks of 4 units: 32 per work-item"
#endif

/* keep = the draw survives dropout; `scale` = 1/(1-rate). */
static inline int dense_keep(const float rate, const uint seed, const uint step, const uint layer, const int batch,
                             const int utterance_offset, const int row, const int unit) {
  if (rate <= 0.0f) return 1;
  const int t = row / batch;
  const int b = row - t * batch;
  return cls_dropout_uniform(seed, step, layer, (uint)(utterance_offset + b), (uint)t, (uint)unit) >= rate;
}

/* The high 32 bits of eight 32 x 32-bit products: mul_hi, or with CLS_DENSE_WIDE_MULHI (engine/device/
 * kernel_options.c: CPU devices, where PoCL's vector mul_hi is slow) through 64-bit lanes. */
#ifndef CLS_DENSE_WIDE_MULHI
#define CLS_DENSE_WIDE_MULHI 0
#endif
#if CLS_DENSE_WIDE_MULHI
#define DENSE_MULHI8(a, b) convert_uint8((convert_ulong8(a) * convert_ulong8(b)) >> 32)
#else
#define DENSE_MULHI8(a, b) mul_hi((a), (b))
#endif

/* The keep masks (-1 kept, 0 dropped) of units j0 .. j0+31 of one row (j0 a multiple of 4): word c of
 * block g is unit j0 + 4g + c; m[q] holds units j0 + 8q .. j0 + 8q + 7. */
static inline void dense_keep32(const float rate, const uint seed, const uint step, const uint layer, const uint utt,
                                const uint t, const int j0, int8 m[4]) {
  /* Philox-4x32-10 (philox.h) of 8 counters at once, block g in lane g; w0..w3 its four words */
  uint8 w0 = (uint8)((uint)j0 >> 2) + (uint8)(0, 1, 2, 3, 4, 5, 6, 7), w1 = (uint8)(t), w2 = (uint8)(utt);
  uint8 w3 = (uint8)(layer);
  uint k0_ = seed, k1_ = step;
  CLS_PHILOX_10_ROUNDS(uint8, DENSE_MULHI8, w0, w1, w2, w3, k0_, k1_)
  const float k = CLS_DROPOUT_UNIT;
  const int8 k0 = convert_float8(CLS_DROPOUT_BITS(w0)) * k >= rate;
  const int8 k1 = convert_float8(CLS_DROPOUT_BITS(w1)) * k >= rate;
  const int8 k2 = convert_float8(CLS_DROPOUT_BITS(w2)) * k >= rate;
  const int8 k3 = convert_float8(CLS_DROPOUT_BITS(w3)) * k >= rate;
  m[0] = (int8)(k0.s0, k1.s0, k2.s0, k3.s0, k0.s1, k1.s1, k2.s1, k3.s1);
  m[1] = (int8)(k0.s2, k1.s2, k2.s2, k3.s2, k0.s3, k1.s3, k2.s3, k3.s3);
  m[2] = (int8)(k0.s4, k1.s4, k2.s4, k3.s4, k0.s5, k1.s5, k2.s5, k3.s5);
  m[3] = (int8)(k0.s6, k1.s6, k2.s6, k3.s6, k0.s7, k1.s7, k2.s7, k3.s7);
}

/* y[r, j] = dropout(min(max(y[r, j] + bias[j], 0), clip)) in place; y [rows, out], bias [out].
 * relu == 0: y = y + bias (no activation, no dropout). Work-item r * runs + u, runs = ceil(out / 32):
 * units 32u .. 32u+31 of row r. */
__kernel void dense_bias_act(const int rows, const int out, __global float *y, const int y_off,
                             __global const float *bias, const int bias_off, const int relu, const float clip,
                             const float rate, const float scale, const uint seed, const uint step, const uint layer,
                             const int batch, const int utterance_offset) {
  const int runs = (out + DENSE_RUN - 1) / DENSE_RUN, item = (int)get_global_id(0);
  const int r = item / runs, j0 = (item - r * runs) * DENSE_RUN;
  if (r >= rows) return;
  __global float *yr = y + y_off + r * out;
  __global const float *br = bias + bias_off;
  const int drop = relu && rate > 0.0f;
  if (j0 + DENSE_RUN <= out) {
    int8 keep[4] = {(int8)(-1), (int8)(-1), (int8)(-1), (int8)(-1)};
    if (drop) {
      const int t = r / batch;
      dense_keep32(rate, seed, step, layer, (uint)(utterance_offset + r - t * batch), (uint)t, j0, keep);
    }
    for (int q = 0; q < DENSE_RUN / 8; q++) {
      float8 v = vload8(0, yr + j0 + 8 * q) + vload8(0, br + j0 + 8 * q);
      if (relu) {
        v = fmin(fmax(v, (float8)(0.0f)), (float8)(clip));
        if (drop) v = select((float8)(0.0f), v * scale, keep[q]);
      }
      vstore8(v, 0, yr + j0 + 8 * q);
    }
    return;
  }
  for (int j = j0; j < out; j++) {
    float v = yr[j] + br[j];
    if (relu) {
      v = fmin(fmax(v, 0.0f), clip);
      if (drop) v = dense_keep(rate, seed, step, layer, batch, utterance_offset, r, j) ? v * scale : 0.0f;
    }
    yr[j] = v;
  }
}

/* dz = dy * d act / d z over n = rows*out elements, from the forward output y: the activation passes the
 * gradient (times scale = 1/(1-rate), 1 without dropout) where 0 < min(relu(z), clip) < clip and the unit
 * was kept, i.e. where 0 < y < clip*scale: a dropped unit's y is 0, so y alone says it (no draw again).
 * Work-item i: elements 32i .. 32i+31. */
__kernel void dense_act_bwd(const int n, __global const float *y, const int y_off, __global const float *dy,
                            const int dy_off, __global float *dz, const int dz_off, const float clip,
                            const float scale) {
  const int e0 = (int)get_global_id(0) * DENSE_RUN;
  if (e0 >= n) return;
  const float hi = clip * scale;
  if (e0 + DENSE_RUN <= n) {
    for (int q = 0; q < DENSE_RUN / 8; q++) {
      const int e = e0 + 8 * q;
      const float8 yv = vload8(0, y + y_off + e);
      const float8 g = vload8(0, dy + dy_off + e) * scale;
      vstore8(select((float8)(0.0f), g, yv > 0.0f && yv < hi), 0, dz + dz_off + e);
    }
    return;
  }
  for (int e = e0; e < n; e++) {
    const float yv = y[y_off + e];
    dz[dz_off + e] = yv > 0.0f && yv < hi ? dy[dy_off + e] * scale : 0.0f;
  }
}

/* db[j] (+)= sum over rows of dz[r, j], in row order; work-item i: columns 16i .. 16i+15. */
__kernel void dense_bias_grad(const int rows, const int out, __global const float *dz, const int dz_off,
                              __global float *db, const int db_off, const int accumulate) {
  cls_colsum16(rows, out, (int)get_global_id(0) * CLS_COLSUM_W, dz, dz_off, db, db_off, accumulate, 1);
}
