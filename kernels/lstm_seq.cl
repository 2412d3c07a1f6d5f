/* The LSTM's recurrence in one kernel per direction (engine/ops/lstm.c's sequence path, for CPU devices):
 * utterances are independent along the recurrence, so a work-item (work-groups of one) takes a group of
 * the batch's rows and runs every time step for them on its own, the recurrent product of each step
 * (h_{t-1} W_h forward, dz_{t+1} W_h^T backward) and then the cell (lstm_cell.h) of the same rows, with
 * no launch and no wait between steps. The per-step path (lstm.cl's gate kernels and a GEMM call per
 * step) costs two commands per step, which at H = 256 take about as long as their arithmetic.
 *
 * The products take a tile of their own, CLS_LSTM_SEQ_MR rows x CLS_LSTM_SEQ_NV vectors of CLS_GEMM_W floats
 * in registers (per device from engine/device/kernel_options.c's table; the GEMM's vector types from
 * gemm_shape.h, the k loop as gemm_tile.h's plain form, summed in the same order), on a B packed by
 * lstm_seq_pack into panels of NR columns (the last one narrower). Of the GEMM's options this file gets
 * only the width (cls_kernel_options_of_family), and -DCLS_LSTM_SEQ_* go to this file alone: `bench --tune`
 * searches this tile on its own, timing these kernels (engine/bench/lstm_seq_cases.c), and stores it
 * beside the GEMM's. The host reads MR and NR from lstm_seq_geometry's reqd_work_group_size. The products contract into fused multiply-adds; the
 * cell does not (FP_CONTRACT OFF around it, as lstm.cl). The cell walks a row's units in float16 where the
 * device's width is 16 (lstm_cell.h), float8 otherwise. */
#include "common.h"
#include "work_items.h"

#include "gemm_shape.h"

#pragma OPENCL FP_CONTRACT OFF
#if GEMM_W == 16 /* the cell in the device's widest vectors (lstm_cell.h) */
#define LSTM_V 16
#endif
#include "lstm_cell.h"

#ifndef CLS_LSTM_SEQ_MR /* (the defaults and ranges: own_tunables.h, through gemm_shape.h) */
#define CLS_LSTM_SEQ_MR CLS_LSTM_SEQ_MR_DEFAULT
#endif
#ifndef CLS_LSTM_SEQ_NV
#define CLS_LSTM_SEQ_NV CLS_LSTM_SEQ_NV_DEFAULT
#endif
#if CLS_LSTM_SEQ_MR < CLS_LSTM_SEQ_MR_MIN || CLS_LSTM_SEQ_MR > CLS_LSTM_SEQ_MR_MAX || \
    CLS_LSTM_SEQ_NV < CLS_LSTM_SEQ_NV_MIN || CLS_LSTM_SEQ_NV > CLS_LSTM_SEQ_NV_MAX
#error "CLS_LSTM_SEQ_MR or CLS_LSTM_SEQ_NV out of its range (own_tunables.h)"
#endif
/* A test switch, never a tunable: 1 makes the products skip their last step of k, a wrong result that the
 * own search's check must reject (`clspeech bench --tune_try -DCLS_LSTM_SEQ_FAULT=1`, never stored). */
#ifndef CLS_LSTM_SEQ_FAULT
#define CLS_LSTM_SEQ_FAULT 0
#endif
#define SEQ_MR CLS_LSTM_SEQ_MR
#define SEQ_NV CLS_LSTM_SEQ_NV
#define SEQ_NR (SEQ_NV * GEMM_W)

/* Never launched: its required work-group size (MR, NR, 1) tells the host the tile geometry. */
__kernel __attribute__((reqd_work_group_size(SEQ_MR, SEQ_NR, 1))) void lstm_seq_geometry(__global float *unused) {
  (void)unused;
}

/* packed[p * k * NR + kk * w + c] = op(B)[kk][p * NR + c], w the panel's width: NR, or the n % NR columns left
 * for the last panel (so that B packed is k x n floats, as the GEMM's, engine/ops/lstm.c's layout): a
 * work-item per (panel p, block of kb steps of k). op(B)[kk][j] is b[kk * ldb + j] (whole rows of a panel
 * copied as vectors), or b[j * ldb + kk] when trans (read along k, column after column: runs of kb floats). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void lstm_seq_pack(
    const int k, const int n, __global const float *b, const int b_off, const int ldb, const int trans,
    __global float *packed, const int p_off, const int kb) {
  const int p = (int)get_global_id(0), k0 = (int)get_global_id(1) * kb;
  const int panels = (n + SEQ_NR - 1) / SEQ_NR;
  if (p >= panels || k0 >= k) return;
  const int steps = min(kb, k - k0), j0 = p * SEQ_NR, w = min(SEQ_NR, n - j0);
  __global float *dst = packed + p_off + (size_t)p * (size_t)k * SEQ_NR + (size_t)k0 * (size_t)w;
  if (trans) {
    for (int c = 0; c < w; c++) {
      __global const float *src = b + b_off + (size_t)(j0 + c) * (size_t)ldb + k0;
      for (int kk = 0; kk < steps; kk++) dst[(size_t)kk * w + c] = src[kk];
    }
  } else if (w == SEQ_NR) {
    __global const float *src = b + b_off + (size_t)k0 * (size_t)ldb + j0;
    for (int kk = 0; kk < steps; kk++, src += ldb, dst += SEQ_NR)
#pragma unroll
      for (int v = 0; v < SEQ_NV; v++) GEMM_VSTORE(GEMM_VLOAD(v, src), v, dst);
  } else {
    __global const float *src = b + b_off + (size_t)k0 * (size_t)ldb + j0;
    for (int kk = 0; kk < steps; kk++, src += ldb, dst += w)
      for (int c = 0; c < w; c++) dst[c] = src[c];
  }
}

#pragma OPENCL FP_CONTRACT ON
/* c [rows, n] (+= when accumulate) = a [rows, k] (rows lda apart) * B [k, n] (packed), for rows <= MR: the
 * rows past `rows` read row rows-1 again and are not stored. */
static inline void seq_product(const int rows, const int k, const int n, __global const float *a, const int lda,
                               __global const float *bp, __global float *c, const int ldc, const int accumulate) {
  __global const float *ar[SEQ_MR];
#pragma unroll
  for (int r = 0; r < SEQ_MR; r++) ar[r] = a + (size_t)min(r, rows - 1) * (size_t)lda;
  const int panels = (n + SEQ_NR - 1) / SEQ_NR, steps = CLS_LSTM_SEQ_FAULT ? k - 1 : k;
  for (int p = 0; p < panels; p++) {
    __global const float *b = bp + (size_t)p * (size_t)k * SEQ_NR;
    gemm_vec acc[SEQ_MR][SEQ_NV];
#pragma unroll
    for (int r = 0; r < SEQ_MR; r++)
#pragma unroll
      for (int v = 0; v < SEQ_NV; v++) acc[r][v] = (gemm_vec)(0.0f);
    const int j0 = p * SEQ_NR, cols = min(SEQ_NR, n - j0);
#define SEQ_K_STEP(LOAD_B)                                                                  \
  do {                                                                                      \
    gemm_vec bv[SEQ_NV];                                                                    \
    _Pragma("unroll") for (int v = 0; v < SEQ_NV; v++) bv[v] = LOAD_B;                      \
    _Pragma("unroll") for (int r = 0; r < SEQ_MR; r++) {                                    \
      const gemm_vec av = (gemm_vec)(ar[r][kk]);                                            \
      _Pragma("unroll") for (int v = 0; v < SEQ_NV; v++) acc[r][v] = av * bv[v] + acc[r][v]; \
    }                                                                                       \
  } while (0)
    if (cols == SEQ_NR) {
      for (int kk = 0; kk < steps; kk++, b += SEQ_NR) SEQ_K_STEP(GEMM_VLOAD(v, b));
    } else { /* the last panel, rows of `cols` floats: through a private row, zero past them */
      float row[SEQ_NR];
      for (int kk = 0; kk < steps; kk++, b += cols) {
        for (int j = 0; j < SEQ_NR; j++) row[j] = j < cols ? b[j] : 0.0f;
        SEQ_K_STEP(GEMM_VLOAD(v, row));
      }
    }
#undef SEQ_K_STEP
#pragma unroll
    for (int r = 0; r < SEQ_MR; r++) {
      if (r < rows) {
        __global float *row = c + (size_t)r * (size_t)ldc + j0;
        if (cols == SEQ_NR) {
          __global gemm_uvec *rv = (__global gemm_uvec *)row;
#pragma unroll
          for (int v = 0; v < SEQ_NV; v++) rv[v] = accumulate ? acc[r][v] + rv[v] : acc[r][v];
        } else {
          float tmp[SEQ_NR];
#pragma unroll
          for (int v = 0; v < SEQ_NV; v++) GEMM_VSTORE(acc[r][v], v, tmp);
          for (int j = 0; j < cols; j++) row[j] = accumulate ? tmp[j] + row[j] : tmp[j];
        }
      }
    }
  }
}
#pragma OPENCL FP_CONTRACT OFF

/* Forward (training) or inference over `time` steps for rows [g * per, min(batch, (g + 1) * per)), g the
 * work-item. gates [time, batch, 4H] holds x_t W_x on entry; each step adds h_{t-1} W_h (h_{-1}: 0 in
 * training, h_state in inference) and runs the cell: h_t to h_out [time, batch, H]; in training c_t to
 * cells [time, batch, H] and the activations over gates (for backward); in inference the state lives in
 * c_state and h_state [batch, H], updated every step. Past an utterance's length h_t is 0 and nothing
 * else is written, so its state stays at its last valid frame (as lstm_gates_fwd). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void lstm_seq_fwd(
    const int batch, const int hidden, const int time, const int per,
    __global const float *whp, const int whp_off,                 /* W_h [H, 4H], packed by lstm_seq_pack */
    __global float *gates, const int gates_off,                   /* [time, batch, 4H] */
    __global const float *bias, const int bias_off,               /* [4H] */
    __global float *cells, const int cells_off,                   /* training: [time, batch, H]; inference: c_state [batch, H] */
    __global float *h_out, const int h_off,                       /* [time, batch, H] */
    __global float *h_state, const int hs_off, const int infer,   /* inference: [batch, H] */
    __global const int *seq_len, const int len_off) {             /* [batch] */
  const int r0 = (int)get_global_id(0) * per, r1 = min(batch, r0 + per), H4 = 4 * hidden;
  if (r0 >= batch) return;
  const int runs = (hidden + LSTM_V - 1) / LSTM_V;
  __global const float *wh = whp + whp_off;
  for (int t = 0; t < time; t++) {
    for (int i0 = r0; i0 < r1; i0 += SEQ_MR) {
      const int rows = min(SEQ_MR, r1 - i0);
      __global float *z = gates + gates_off + ((size_t)t * batch + i0) * H4;
      if (t > 0 || infer) {
        __global const float *hp = t > 0 ? h_out + h_off + ((size_t)(t - 1) * batch + i0) * hidden
                                         : h_state + hs_off + (size_t)i0 * hidden;
        seq_product(rows, hidden, H4, hp, hidden, wh, z, H4, 1);
      }
      for (int b = i0; b < i0 + rows; b++) {
        const int len = clamp(seq_len[len_off + b], 0, time);
        __global float *zb = z + (size_t)(b - i0) * H4;
        __global float *hb = h_out + h_off + ((size_t)t * batch + b) * hidden;
        __global float *cb = infer ? cells + cells_off + (size_t)b * hidden
                                   : cells + cells_off + ((size_t)t * batch + b) * hidden;
        __global const float *cp = infer || t == 0 ? cb : cb - (size_t)batch * hidden; /* read only when infer || t > 0 */
        __global float *hs = h_state + hs_off + (size_t)b * hidden;
        for (int u = 0; u < runs; u++) {
          const int k = u * LSTM_V, w = min(LSTM_V, hidden - k);
          if (t >= len)
            lstm_store((lstm_vec)(0.0f), hb + k, w);
          else
            lstm_cell_fwd(hidden, w, zb + k, bias + bias_off + k, cp + k, infer || t > 0, cb + k, hb + k, hs + k,
                          infer, !infer);
        }
      }
    }
  }
}

/* Backward through time over `time` steps for the work-item's rows (as lstm_seq_fwd): each step from the
 * last, dh_rec = dz_{t+1} W_h^T (for t < time - 1) and the cell's gradient (as lstm_gates_bwd): dz_t over
 * dz [time, batch, 4H], the carried cell gradient in dc [batch, H]. gates holds the forward's activations,
 * cells its c_t. Row g of db_part [groups, 4H] (g the work-item) gets the sum of the rows' dz over every
 * step, while they are in cache: the bias gradient then sums `groups` rows, not time x batch. */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void lstm_seq_bwd(
    const int batch, const int hidden, const int time, const int per,
    __global const float *whtp, const int whtp_off,               /* W_h^T [4H, H], packed by lstm_seq_pack */
    __global const float *gates, const int gates_off,             /* [time, batch, 4H] */
    __global const float *cells, const int cells_off,             /* [time, batch, H] */
    __global const float *dh, const int dh_off,                   /* [time, batch, H] */
    __global float *dh_rec, const int dh_rec_off,                 /* [batch, H] */
    __global float *dc, const int dc_off,                         /* [batch, H] */
    __global float *dz, const int dz_off,                         /* [time, batch, 4H] */
    __global float *db_part, const int db_off,                    /* [groups, 4H] */
    __global const int *seq_len, const int len_off) {             /* [batch] */
  const int r0 = (int)get_global_id(0) * per, r1 = min(batch, r0 + per), H4 = 4 * hidden;
  if (r0 >= batch) return;
  const int runs = (hidden + LSTM_V - 1) / LSTM_V;
  __global const float *wht = whtp + whtp_off;
  __global float *part = db_part + db_off + (size_t)get_global_id(0) * H4;
  for (int j = 0; j < H4; j++) part[j] = 0.0f;
  for (int t = time - 1; t >= 0; t--) {
    const int has_next = t < time - 1;
    for (int i0 = r0; i0 < r1; i0 += SEQ_MR) {
      const int rows = min(SEQ_MR, r1 - i0);
      if (has_next)
        seq_product(rows, H4, hidden, dz + dz_off + ((size_t)(t + 1) * batch + i0) * H4, H4, wht,
                    dh_rec + dh_rec_off + (size_t)i0 * hidden, hidden, 0);
      for (int b = i0; b < i0 + rows; b++) {
        const int len = clamp(seq_len[len_off + b], 0, time);
        const size_t e = ((size_t)t * batch + b) * hidden;
        __global float *d = dz + dz_off + ((size_t)t * batch + b) * H4;
        __global float *dcb = dc + dc_off + (size_t)b * hidden;
        __global const float *g = gates + gates_off + ((size_t)t * batch + b) * H4;
        __global const float *cb = cells + cells_off + e;
        __global const float *cp = t > 0 ? cb - (size_t)batch * hidden : cb; /* read only when t > 0 */
        __global const float *dr = dh_rec + dh_rec_off + (size_t)b * hidden;
        for (int u = 0; u < runs; u++) {
          const int k = u * LSTM_V, w = min(LSTM_V, hidden - k);
          if (t >= len)
            lstm_cell_bwd_zero(hidden, w, dcb + k, d + k);
          else
            lstm_cell_bwd(hidden, w, g + k, cb + k, cp + k, t > 0, dh + dh_off + e + k,
                          dr + k, has_next, dcb + k, d + k);
        }
        if (t < len) {
          int j = 0;
          for (; j + LSTM_V <= H4; j += LSTM_V) LSTM_VSTORE(LSTM_VLOAD(0, part + j) + LSTM_VLOAD(0, d + j), 0, part + j);
          for (; j < H4; j++) part[j] += d[j];
        }
      }
    }
  }
}
