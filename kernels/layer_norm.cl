/* Layer normalisation kernels (tf.contrib.layers.layer_norm with its defaults, as DeepSpeech 0.9's
 * --layer_norm applies it): each row of x [rows, H] normalised over its H features,
 *   y = (x - mean) * rsqrt(var + eps) * gamma + beta,  var the population variance,
 * the forward pass (saving each row's mean and rstd = rsqrt(var + eps) as stats [rows, 2]), the input
 * gradient, and the column sums of gamma's and beta's gradients; optionally with inverted dropout after
 * the normalisation, drawing the dense layer's mask (dense.cl: Philox keyed by (seed, step), counted by
 * (layer, global utterance, t, unit) of row t*batch + b) again in backward, 64 or 16 units' keep bits at a
 * time (dropout_keep.h), the sums in the same order with dropout as without.
 * One work-item per row: its sums run over the row in the 8 lanes of a float8 (scalars for a tail of
 * H mod 8), combined in one fixed order, so every device does the same additions whatever its
 * work-group size or vector width. A work-item reads each of its elements before writing it and no
 * other work-item touches its row, so y may be x and dx may be dy. No contraction into fused
 * multiply-adds: the same roundings on every device. */
#pragma OPENCL FP_CONTRACT OFF

#include "dropout_keep.h"
#include "work_items.h"

#define LN_COLS CLS_COLSUM_W
#if LN_COLS != 16
#error "layer_norm_bwd_params sums 16 columns per work-item in two float8"
#endif

static inline float ln_sum8(const float8 v) {
  return ((v.s0 + v.s1) + (v.s2 + v.s3)) + ((v.s4 + v.s5) + (v.s6 + v.s7));
}

/* Dropout's arguments of every kernel: rate (0: none), scale = 1/(1-rate), the Philox key and counters. */
#define LN_DROPOUT_ARGS                                                                                          \
  const float rate, const float scale, const uint seed, const uint step, const uint layer, const int batch, \
      const int utterance_offset
/* Row r's time step and global utterance (batch is 0 without dropout: then 0 and r). */
#define LN_ROW_DRAW(r)                              \
  const int t_ = batch > 0 ? (r) / batch : 0;       \
  const uint utt_ = (uint)(utterance_offset + (r) - t_ * batch)
/* A kernel's dropout: drop (whether there is one) and thr_, the draws' integer threshold. */
#define LN_DROP_SETUP             \
  const int drop = rate > 0.0f; \
  const uint thr_ = drop ? cls_dropout_threshold(rate) : 0u
/* The keep bits of the row's units j0 .. j0+63 (LN_KEEP64) or j0 .. j0+15 (LN_KEEP16), inside LN_ROW_DRAW's scope. */
#define LN_KEEP64(j0) cls_dropout_keep64(thr_, seed, step, layer, utt_, (uint)t_, (j0))
#define LN_KEEP16(j0) cls_dropout_keep16(thr_, seed, step, layer, utt_, (uint)t_, (j0))
/* A row walk reaching unit j: where a run of 64 begins, its keep bits into `keep` (under dropout). */
#define LN_RUN(j) \
  if (drop && ((j) & 63) == 0) keep = LN_KEEP64(j)

/* y[r, :] = (x[r, :] - mean_r) * rstd_r * gamma + beta; stats[2r] = mean_r, stats[2r + 1] = rstd_r.
 * The mean is the row's first value plus the mean of the differences from it, so that a row of one
 * value has exactly that mean (variance 0, y = beta) and a large offset costs no precision in the sum. */
__kernel void layer_norm_fwd(const int rows, const int h, __global const float *x, const int x_off,
                             __global float *y, const int y_off, __global const float *gamma, const int g_off,
                             __global const float *beta, const int b_off, __global float *stats, const int s_off,
                             const float eps, LN_DROPOUT_ARGS) {
  const int r = (int)get_global_id(0);
  if (r >= rows) return;
  __global const float *xr = x + x_off + (size_t)r * h;
  __global float *yr = y + y_off + (size_t)r * h;
  __global const float *gr = gamma + g_off;
  __global const float *br = beta + b_off;
  const int h8 = h & ~7;
  const float shift = xr[0];
  float8 a = (float8)(0.0f);
  float t = 0.0f;
  int j = 0;
  for (; j < h8; j += 8) a += vload8(0, xr + j) - shift;
  for (; j < h; j++) t += xr[j] - shift;
  const float mean = shift + (ln_sum8(a) + t) / (float)h;
  a = (float8)(0.0f);
  t = 0.0f;
  for (j = 0; j < h8; j += 8) {
    const float8 d = vload8(0, xr + j) - mean;
    a += d * d;
  }
  for (; j < h; j++) {
    const float d = xr[j] - mean;
    t += d * d;
  }
  const float rstd = rsqrt((ln_sum8(a) + t) / (float)h + eps);
  /* 8 units at a time and the tail one at a time, through the dropout as bwd_dx reads it */
  LN_ROW_DRAW(r);
  LN_DROP_SETUP;
  ulong keep = ~0ul;
  for (j = 0; j < h8; j += 8) {
    LN_RUN(j);
    const float8 v = (vload8(0, xr + j) - mean) * rstd * vload8(0, gr + j) + vload8(0, br + j);
    vstore8(cls_dropout8(v, drop, keep, j & 63, scale), 0, yr + j);
  }
  for (; j < h; j++) {
    LN_RUN(j);
    yr[j] = cls_dropout1((xr[j] - mean) * rstd * gr[j] + br[j], drop, keep, j & 63, scale);
  }
  stats[s_off + 2 * r] = mean;
  stats[s_off + 2 * r + 1] = rstd;
}

/* dx[r, :] = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy' * gamma, xhat = (x - mean) * rstd,
 * dy' = dy through the dropout (dy itself without): the gradient of sum(y * dy) through the row's mean
 * and variance; x and stats as the forward had. */
__kernel void layer_norm_bwd_dx(const int rows, const int h, __global const float *x, const int x_off,
                                __global const float *dy, const int dy_off, __global float *dx, const int dx_off,
                                __global const float *gamma, const int g_off, __global const float *stats,
                                const int s_off, LN_DROPOUT_ARGS) {
  const int r = (int)get_global_id(0);
  if (r >= rows) return;
  __global const float *xr = x + x_off + (size_t)r * h;
  __global const float *dyr = dy + dy_off + (size_t)r * h;
  __global float *dxr = dx + dx_off + (size_t)r * h;
  __global const float *gr = gamma + g_off;
  const float mean = stats[s_off + 2 * r], rstd = stats[s_off + 2 * r + 1];
  const int h8 = h & ~7;
  float8 sg = (float8)(0.0f), sgx = (float8)(0.0f);
  float tg = 0.0f, tgx = 0.0f;
  /* dy' = dy through the dropout, 8 units at a time (a run of 64 units' keep bits drawn as j reaches it, in each
     pass), the tail of h mod 8 one at a time; without dropout dy itself */
  LN_ROW_DRAW(r);
  LN_DROP_SETUP;
  ulong keep = ~0ul;
  int j = 0;
  for (; j < h8; j += 8) {
    LN_RUN(j);
    const float8 g = cls_dropout8(vload8(0, dyr + j), drop, keep, j & 63, scale) * vload8(0, gr + j);
    sg += g;
    sgx += g * ((vload8(0, xr + j) - mean) * rstd);
  }
  for (; j < h; j++) {
    LN_RUN(j);
    const float g = cls_dropout1(dyr[j], drop, keep, j & 63, scale) * gr[j];
    tg += g;
    tgx += g * ((xr[j] - mean) * rstd);
  }
  const float mg = (ln_sum8(sg) + tg) / (float)h, mgx = (ln_sum8(sgx) + tgx) / (float)h;
  for (j = 0; j < h8; j += 8) {
    LN_RUN(j);
    const float8 g = cls_dropout8(vload8(0, dyr + j), drop, keep, j & 63, scale) * vload8(0, gr + j);
    const float8 xh = (vload8(0, xr + j) - mean) * rstd;
    vstore8(rstd * ((g - mg) - xh * mgx), 0, dxr + j);
  }
  for (; j < h; j++) {
    LN_RUN(j);
    const float g = cls_dropout1(dyr[j], drop, keep, j & 63, scale) * gr[j];
    const float xh = (xr[j] - mean) * rstd;
    dxr[j] = rstd * ((g - mg) - xh * mgx);
  }
}

/* One row's dy' * xhat for the 8 columns from j (x at the row's start, d their dy'). */
static inline float8 ln_dgamma8(__global const float *xr, const float8 d, const int j, const float mean,
                                const float rstd) {
  return d * ((vload8(0, xr + j) - mean) * rstd);
}

/* dgamma[j] (=|+=) sum over rows of dy'[r, j] * xhat[r, j] and dbeta[j] (=|+=) sum over rows of
 * dy'[r, j] (dy' as layer_norm_bwd_dx's), for the 16 columns 16i .. 16i+15 of work-item i: four partial
 * sums over the rows taken in turn (r mod 4), added in one fixed order, keep long sums' rounding down.
 * The tail of h mod 16 columns (one work-item's, its columns side by side, row by row) does the same additions. */
__kernel void layer_norm_bwd_params(const int rows, const int h, __global const float *x, const int x_off,
                                    __global const float *dy, const int dy_off, __global const float *stats,
                                    const int s_off, __global float *dgamma, const int dg_off,
                                    __global float *dbeta, const int db_off, const int accumulate,
                                    LN_DROPOUT_ARGS) {
  const int j0 = (int)get_global_id(0) * LN_COLS;
  if (j0 >= h) return;
  __global const float *xs = x + x_off, *dys = dy + dy_off, *st = stats + s_off;
  LN_DROP_SETUP;
  if (j0 + LN_COLS <= h) {
    float8 g[4][2], b[4][2];
    for (int k = 0; k < 4; k++) g[k][0] = g[k][1] = b[k][0] = b[k][1] = (float8)(0.0f);
/* Row R into partial sum K (a constant, so that the sums stay in registers). */
#define LN_PARAMS_ROW(R, K)                                         \
  do {                                                              \
    const size_t row = (size_t)(R) * h;                             \
    const float mean = st[2 * (R)], rstd = st[2 * (R) + 1];         \
    ulong keep = ~0ul;                                              \
    if (drop) {                                                     \
      LN_ROW_DRAW(R);                                               \
      keep = LN_KEEP16(j0);                                         \
    }                                                               \
    const float8 d0 = cls_dropout8(vload8(0, dys + row + j0), drop, keep, 0, scale); \
    const float8 d1 = cls_dropout8(vload8(1, dys + row + j0), drop, keep, 8, scale); \
    g[K][0] += ln_dgamma8(xs + row, d0, j0, mean, rstd);            \
    g[K][1] += ln_dgamma8(xs + row, d1, j0 + 8, mean, rstd);        \
    b[K][0] += d0;                                                  \
    b[K][1] += d1;                                                  \
  } while (0)
    int r = 0;
    for (; r + 4 <= rows; r += 4) {
      LN_PARAMS_ROW(r, 0);
      LN_PARAMS_ROW(r + 1, 1);
      LN_PARAMS_ROW(r + 2, 2);
      LN_PARAMS_ROW(r + 3, 3);
    }
    for (; r < rows; r++) LN_PARAMS_ROW(r, 0);
#undef LN_PARAMS_ROW
    for (int q = 0; q < 2; q++) {
      const float8 sg = (g[0][q] + g[1][q]) + (g[2][q] + g[3][q]);
      const float8 sb = (b[0][q] + b[1][q]) + (b[2][q] + b[3][q]);
      __global float *pg = dgamma + dg_off + j0 + 8 * q, *pb = dbeta + db_off + j0 + 8 * q;
      vstore8(accumulate ? vload8(0, pg) + sg : sg, 0, pg);
      vstore8(accumulate ? vload8(0, pb) + sb : sb, 0, pb);
    }
    return;
  }
  /* the tail of h mod 16 columns side by side, row by row: each column's additions in the vector path's order
     (row r into partial sum r mod 4, whole groups of 4 first, the rest into the first) */
  const int n = h - j0;
  float g[LN_COLS][4], b[LN_COLS][4];
  for (int c = 0; c < LN_COLS; c++)
    for (int k = 0; k < 4; k++) g[c][k] = b[c][k] = 0.0f;
  for (int r = 0; r < rows; r++) {
    ulong keep = ~0ul;
    if (drop) {
      LN_ROW_DRAW(r);
      keep = LN_KEEP16(j0);
    }
    const int k = r < (rows & ~3) ? (r & 3) : 0;
    const float mean = st[2 * r], rstd = st[2 * r + 1];
    for (int c = 0; c < n; c++) {
      const size_t at = (size_t)r * h + j0 + c;
      const float d = cls_dropout1(dys[at], drop, keep, c, scale);
      g[c][k] += d * ((xs[at] - mean) * rstd);
      b[c][k] += d;
    }
  }
  for (int c = 0; c < n; c++) {
    const int j = j0 + c;
    const float sg = (g[c][0] + g[c][1]) + (g[c][2] + g[c][3]), sb = (b[c][0] + b[c][1]) + (b[c][2] + b[c][3]);
    dgamma[dg_off + j] = accumulate ? dgamma[dg_off + j] + sg : sg;
    dbeta[db_off + j] = accumulate ? dbeta[db_off + j] + sb : sb;
  }
}
