/* Dense layer kernels around the GEMM: the fused bias + clipped ReLU + inverted dropout of the forward
 * pass, its backward (the gradient before the activation), and the bias gradient (colsum.h).
 * Rows are time-major (row = t*B + b); dropout draws come from Philox keyed by (seed, step) and
 * counted by (layer, global utterance, t, unit), so they do not depend on the batch split. One Philox
 * block gives the draws of 4 neighbouring units (philox.h), so a work-item takes DENSE_RUN = 64 units of
 * a row: 16 blocks side by side (dropout_keep.h), the values in float16. */
#include "colsum.h"
#include "common.h"
#include "dropout_keep.h"

#include "work_items.h"
#define DENSE_RUN CLS_DENSE_RUN
#if DENSE_RUN != 64
#error "cls_dropout_keep64 draws 16 Philox blocks of 4 units: 64 per work-item"
#endif

/* y[r, j] = dropout(min(max(y[r, j] + bias[j], 0), clip)) in place; y [rows, out], bias [out].
 * relu == 0: y = y + bias (no activation, no dropout). Work-item r * runs + u, runs = ceil(out / 64):
 * units 64u .. 64u+63 of row r (a row's last run, past `out`, element by element with the same masks). */
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
  ulong keep = ~0ul;
  if (drop) {
    const int t = r / batch;
    keep = cls_dropout_keep64(cls_dropout_threshold(rate), seed, step, layer, (uint)(utterance_offset + r - t * batch),
                              (uint)t, j0);
  }
  if (j0 + DENSE_RUN <= out) {
    for (int q = 0; q < DENSE_RUN / 16; q++) {
      float16 v = vload16(0, yr + j0 + 16 * q) + vload16(0, br + j0 + 16 * q);
      if (relu) {
        v = fmin(fmax(v, (float16)(0.0f)), (float16)(clip));
        v = cls_dropout16(v, drop, keep, 16 * q, scale);
      }
      vstore16(v, 0, yr + j0 + 16 * q);
    }
    return;
  }
  for (int j = j0; j < out; j++) {
    float v = yr[j] + br[j];
    if (relu) {
      v = fmin(fmax(v, 0.0f), clip);
      v = cls_dropout1(v, drop, keep, j - j0, scale);
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
