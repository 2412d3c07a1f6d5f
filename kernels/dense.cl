/* Dense layer kernels around the GEMM: the fused bias + clipped ReLU + inverted dropout of the forward
 * pass, its backward (the gradient before the activation), and the bias gradient (colsum.h).
 * Rows are time-major (row = t*B + b); dropout draws come from Philox keyed by (seed, step) and
 * counted by (layer, global utterance, t, unit), so they do not depend on the batch split. One Philox
 * block gives the draws of 4 neighbouring units (philox.h), so a work-item takes DENSE_RUN = 64 units of
 * a row: 16 blocks side by side (dense_keep64), the values in float16. */
#include "colsum.h"
#include "common.h"
#include "philox.h"

#include "work_items.h"
#define DENSE_RUN CLS_DENSE_RUN
#if DENSE_RUN != 64
#error "dense_keep64 draws 16 Philox blocks of 4 units: 64 per work-item"
#endif

/* Dropout's keep bits for 64 units of a row come from 16 Philox blocks (4 units each) run side by side, one
 * block per 64-bit lane of a ulong16, its 32-bit words in the lanes' low halves: each round's two products
 * M * c are one 32 x 32 -> 64-bit multiply per lane, the high half shifted down and the low half kept as it is
 * (the high halves of the words are don't-care: the next product masks them off). On AVX-512 a round is
 * 17 vector instructions for the 16 blocks, where 8 blocks in uint8 lanes (mul_hi through 64-bit lanes and
 * a separate multiply) took 20; the keep bits then gather into one 64-bit mask rather than shuffled int
 * masks. docs/lab-notes/step-small-kernels.md has the figures. */
#define DENSE_MULHILO(T, M, c, hi, lo)                                          \
  do {                                                                          \
    const ulong16 p_ = ((c) & (ulong16)(0xFFFFFFFFul)) * (ulong16)((ulong)(M)); \
    hi = p_ >> 32;                                                              \
    lo = p_;                                                                    \
  } while (0)

/* Bit u of the result: unit j0 + u (0 <= u < 64) of the row kept (j0 a multiple of 4), units past the row's
 * end included (each draw is a function of its unit alone). Word c of block g is unit j0 + 4g + c, and the
 * draw keeps it when its 24 bits, as a fraction of 2^24, are at least `rate`: bits >= thr, thr = ceil(rate
 * 2^24) (exact in float: rate scaled by a power of two), as philox.h's cls_dropout_uniform compares. */
static inline ulong dense_keep64(const uint thr, const uint seed, const uint step, const uint layer, const uint utt,
                                 const uint t, const int j0) {
  const ulong16 g = (ulong16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  ulong16 w0 = (ulong16)((ulong)((uint)j0 >> 2)) + g, w1 = (ulong16)((ulong)t), w2 = (ulong16)((ulong)utt);
  ulong16 w3 = (ulong16)((ulong)layer);
  uint k0_ = seed, k1_ = step;
  CLS_PHILOX_10_ROUNDS(ulong16, DENSE_MULHILO, w0, w1, w2, w3, k0_, k1_)
  const ulong16 lo = (ulong16)(0xFFFFFFFFul), th = (ulong16)((ulong)thr), one = (ulong16)(1ul), bit = 4 * g;
  const ulong16 m = (as_ulong16(CLS_DROPOUT_BITS(w0 & lo) >= th) & (one << bit)) |
                    (as_ulong16(CLS_DROPOUT_BITS(w1 & lo) >= th) & (one << (bit + 1))) |
                    (as_ulong16(CLS_DROPOUT_BITS(w2 & lo) >= th) & (one << (bit + 2))) |
                    (as_ulong16(CLS_DROPOUT_BITS(w3 & lo) >= th) & (one << (bit + 3)));
  const ulong8 m8 = m.lo | m.hi;
  const ulong4 m4 = m8.lo | m8.hi;
  const ulong2 m2 = m4.lo | m4.hi;
  return m2.lo | m2.hi;
}

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
    const uint thr = (uint)ceil(rate * 16777216.0f);
    keep = dense_keep64(thr, seed, step, layer, (uint)(utterance_offset + r - t * batch), (uint)t, j0);
  }
  const uint16 lane_bit = (uint16)(1u) << (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  if (j0 + DENSE_RUN <= out) {
    for (int q = 0; q < DENSE_RUN / 16; q++) {
      float16 v = vload16(0, yr + j0 + 16 * q) + vload16(0, br + j0 + 16 * q);
      if (relu) {
        v = fmin(fmax(v, (float16)(0.0f)), (float16)(clip));
        if (drop) v = select((float16)(0.0f), v * scale, ((uint16)((uint)(keep >> (16 * q))) & lane_bit) != 0);
      }
      vstore16(v, 0, yr + j0 + 16 * q);
    }
    return;
  }
  for (int j = j0; j < out; j++) {
    float v = yr[j] + br[j];
    if (relu) {
      v = fmin(fmax(v, 0.0f), clip);
      if (drop) v = (keep >> (j - j0)) & 1ul ? v * scale : 0.0f;
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
