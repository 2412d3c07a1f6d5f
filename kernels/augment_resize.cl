/* --augment's power-spectrogram path on the device (engine/features/augment/power.c runs these): for a
 * batch with pitch, tempo or warp, or with add or multiply in the spectrogram domain, the FFT's half
 * spectrum becomes a float power spectrogram [frames, n_bins] (the value the filterbank would take),
 * each utterance's spectrogram operations run on it in stages (stage s: the operations after s resize
 * operations, then the utterance's resize s) and the result feeds the filterbank's power variant.
 *
 * Layout: utterance b owns rows slot_base[b] .. of two ping-pong buffers, room for its most frames at
 * any stage; frames_at[s * batch + b] is its frame count before resize s (frames_at[0]: the FFT's).
 * Resizes follow TensorFlow 1's legacy image ops as DeepSpeech 0.9.3 calls them (align_corners and
 * half-pixel centres off): resize_bilinear (pitch, tempo), resize_bicubic (the warp's flow field, Keys
 * a = -0.75 through a 1025-entry table) and dense_image_warp's clamped bilinear gather. */
#include "augment_draw.h"

/* tests/ref/augment_resize_ref.py follows TensorFlow's float arithmetic step by step. */
#pragma OPENCL FP_CONTRACT OFF

#define CLS_RESIZE_TABLES                                                                                   \
  const int batch, __global const int *slot_utt, __global const int *slot_base, __global const int *frames_at, \
      __global const int *op_first, __global const int *ops

/* Utterance b's resize operation of stage `stage` (its words), or NULL. */
static __global const int *resize_op(int b, int stage, __global const int *op_first, __global const int *ops) {
  for (int i = op_first[b]; i < op_first[b + 1]; i++) {
    __global const int *op = ops + i * CLS_AUGOP_WORDS;
    if (op[1] == CLS_AUGOP_SPECTROGRAM && op[6] == stage && CLS_AUGOP_IS_RESIZE(op[0])) return op;
  }
  return 0;
}

/* The stage-0 power itself comes from kernels/mfcc.cl's mfcc_power (the filterbank's own rounding). */

/* Stage `stage`'s masks, dropouts, adds and multiplies on the power, in the utterance's order: one
 * work-item per 4 bins of a row (the draws' layout of augment.cl). A power pushed below 0 by add or
 * multiply is 0 (DeepSpeech's would make NaN features). */
__kernel void augment_power_ops(const int stage, const int n_slots, const int n_bins, __global float *power,
                                __global const uint *utt_index, const uint seed, const uint epoch, CLS_RESIZE_TABLES) {
  const int g = (int)get_global_id(0), s = (int)get_global_id(1);
  if (4 * g >= n_bins || s >= n_slots) return;
  const int b = slot_utt[s], t = s - slot_base[b];
  if (t >= frames_at[stage * batch + b]) return;
  const int c0 = 4 * g, n = min(4, n_bins - c0);
  __global float *row = power + (size_t)s * n_bins + c0;
  float x[4];
  for (int j = 0; j < 4; j++) x[j] = j < n ? row[j] : 0.0f;
  const uint u = utt_index[b];
  for (int i = op_first[b]; i < op_first[b + 1]; i++) {
    __global const int *op = ops + i * CLS_AUGOP_WORDS;
    if (op[1] != CLS_AUGOP_SPECTROGRAM || op[6] != stage) continue;
    const int kind = op[0];
    const float value = as_float(op[5]);
    if (kind == CLS_AUGOP_FREQUENCY_MASK) {
      for (int j = 0; j < 4; j++)
        if (c0 + j >= op[2] && c0 + j < op[3]) x[j] = x[j] * 0.0f;
    } else if (kind == CLS_AUGOP_TIME_MASK) {
      if (t >= op[2] && t < op[3])
        for (int j = 0; j < 4; j++) x[j] = x[j] * 0.0f;
    } else if (kind == CLS_AUGOP_DROPOUT) {
      const cls_philox4 r = cls_augment_uniform_block(seed, epoch, u, (uint)op[4], (uint)t, (uint)g, (uint)n_bins);
      for (int j = 0; j < 4; j++)
        if (CLS_AUGMENT_UNIT(r.v[j]) < value) x[j] = x[j] * 0.0f;
    } else if (kind == CLS_AUGOP_ADD || kind == CLS_AUGOP_MULTIPLY) {
      for (int h = 0; h < 2; h++) {
        const cls_philox4 r = cls_augment_normal_block(seed, epoch, u, (uint)op[4], (uint)t, (uint)(2 * g + h), (uint)n_bins);
        for (int k = 0; k < 2; k++) {
          const float noise = value * cls_augment_block_normal(r, k);
          const int j = 2 * h + k;
          x[j] = fmax(kind == CLS_AUGOP_ADD ? x[j] + noise : x[j] * (noise + 1.0f), 0.0f);
        }
      }
    }
  }
  for (int j = 0; j < n; j++) row[j] = x[j];
}

/* TensorFlow's legacy source coordinate of output `out` at `scale` = in / out (float), and the two
 * neighbours and the weight of the upper one (resize_bilinear's compute_interpolation_weights). */
static void bilinear_axis(int out, float scale, int in_size, int *lo, int *hi, float *lerp) {
  const float in = (float)out * scale;
  const float in_f = floor(in);
  *lo = max((int)in_f, 0);
  *hi = min((int)ceil(in), in_size - 1);
  *lerp = in - in_f;
}

/* The bilinear blend of rows y0, y1 and columns x0, x1 of `in` (n_bins a row) with weights ay, ax of
 * the second ones: TF's a + (b - a) w, rows blended first (resize_bilinear's top/bottom, also
 * dense_image_warp's interpolate_bilinear, whose w (b - a) + a rounds the same without contraction). */
static float blend(__global const float *in, int n_bins, int y0, int y1, int x0, int x1, float ay, float ax) {
  const float tl = in[(size_t)y0 * n_bins + x0], tr = in[(size_t)y0 * n_bins + x1];
  const float bl = in[(size_t)y1 * n_bins + x0], br = in[(size_t)y1 * n_bins + x1];
  const float top = tl + (tr - tl) * ax, bottom = bl + (br - bl) * ax;
  return top + (bottom - top) * ay;
}

/* Resize `stage` of the utterances with pitch or tempo (resize_bilinear), and a copy for those with no
 * resize at this stage; warps are augment_warp's. src and dst share the slot layout. */
__kernel void augment_resize_bilinear(const int stage, const int n_slots, const int n_bins, __global const float *src,
                                      __global float *dst, CLS_RESIZE_TABLES) {
  const int i = (int)get_global_id(0), s = (int)get_global_id(1);
  if (i >= n_bins || s >= n_slots) return;
  const int b = slot_utt[s], t = s - slot_base[b];
  if (t >= frames_at[(stage + 1) * batch + b]) return;
  __global const int *op = resize_op(b, stage, op_first, ops);
  __global const float *in = src + (size_t)slot_base[b] * n_bins;
  if (op && op[0] == CLS_AUGOP_WARP) return;
  float v;
  if (!op) {
    v = in[(size_t)t * n_bins + i];
  } else {
    /* pitch: [T, n_bins] -> [T, op[2]] cropped or zero-padded to n_bins; tempo: [T, n_bins] -> [T', n_bins]
       (T, T': the frames before and after the stage) */
    const int in_h = frames_at[stage * batch + b], out_h = frames_at[(stage + 1) * batch + b];
    const int out_w = op[0] == CLS_AUGOP_PITCH ? op[2] : n_bins;
    if (i >= out_w) {
      v = 0.0f;
    } else {
      int y0, y1, x0, x1;
      float yl, xl;
      bilinear_axis(t, (float)in_h / (float)out_h, in_h, &y0, &y1, &yl);
      bilinear_axis(i, (float)n_bins / (float)out_w, n_bins, &x0, &x1, &xl);
      v = blend(in, n_bins, y0, y1, x0, x1, yl, xl);
    }
  }
  dst[(size_t)s * n_bins + i] = v;
}

/* The warp's control points of stage `stage`: grid [batch, grid_cap, 2] holds utterance b's
 * [nt + 2, nf + 2] points (time flow, frequency flow), 0 on the edges, inside a normal of the op's
 * deviations (time: value, frequency: word 7): point (i, j) of the inner [nt, nf] takes Philox block
 * i nf + j of the op's augmentation, words 0, 1 for time and 2, 3 for frequency. */
__kernel void augment_warp_grid(const int stage, const int grid_cap, __global float *grid, __global const uint *utt_index,
                                const uint seed, const uint epoch, CLS_RESIZE_TABLES) {
  const int p = (int)get_global_id(0), b = (int)get_global_id(1);
  if (p >= grid_cap || b >= batch) return;
  __global const int *op = resize_op(b, stage, op_first, ops);
  if (!op || op[0] != CLS_AUGOP_WARP) return;
  const int nt = op[2], nf = op[3];
  if (p >= (nt + 2) * (nf + 2)) return;
  const int i = p / (nf + 2) - 1, j = p % (nf + 2) - 1;
  float ft = 0.0f, ff = 0.0f;
  if (i >= 0 && i < nt && j >= 0 && j < nf) {
    const cls_philox4 r = cls_augment_block(seed, epoch, utt_index[b], (uint)op[4], CLS_AUGMENT_NORMAL, (uint)(i * nf + j));
    ft = cls_augment_block_normal(r, 0) * as_float(op[5]);
    ff = cls_augment_block_normal(r, 1) * as_float(op[7]);
  }
  grid[((size_t)b * grid_cap + p) * 2] = ft;
  grid[((size_t)b * grid_cap + p) * 2 + 1] = ff;
}

/* resize_bicubic's legacy weights and indices of output `out` (coeffs: TensorFlow's table, (1024 + 1) x 2). */
static void bicubic_axis(int out, float scale, int limit, __global const float *coeffs, int *idx, float *w) {
  const float in_f = (float)out * scale;
  const int in = (int)floor(in_f);
  const float delta = in_f - (float)in;
  const int offset = (int)rint(delta * 1024.0f);
  w[0] = coeffs[offset * 2 + 1];
  w[1] = coeffs[offset * 2];
  w[2] = coeffs[(1024 - offset) * 2];
  w[3] = coeffs[(1024 - offset) * 2 + 1];
  for (int k = 0; k < 4; k++) idx[k] = min(limit - 1, max(0, in - 1 + k));
}

/* dense_image_warp's gather along one axis: the clamped floor and weight of query q on `size` points. */
static void warp_axis(float q, int size, int *lo, float *alpha) {
  const float fl = fmin(fmax(0.0f, floor(q)), (float)(size - 2));
  *lo = (int)fl;
  *alpha = fmin(fmax(0.0f, q - fl), 1.0f);
}

/* Warp `stage`, first half of resize_bicubic: the flows interpolated along time, for each frame t and
 * control column k, rows [slots, cols_cap, 2] (TensorFlow interpolates the rows first, then along x). */
__kernel void augment_warp_rows(const int stage, const int n_slots, const int cols_cap, __global float *rows,
                                const int grid_cap, __global const float *grid, __global const float *coeffs,
                                CLS_RESIZE_TABLES) {
  const int kc = (int)get_global_id(0), s = (int)get_global_id(1);
  if (kc >= 2 * cols_cap || s >= n_slots) return;
  const int b = slot_utt[s], t = s - slot_base[b], T = frames_at[stage * batch + b];
  if (t >= T || T < 2) return;
  __global const int *op = resize_op(b, stage, op_first, ops);
  if (!op || op[0] != CLS_AUGOP_WARP) return;
  const int gh = op[2] + 2, gw = op[3] + 2, k = kc / 2, c = kc % 2;
  if (k >= gw) return;
  int yi[4];
  float yw[4];
  bicubic_axis(t, (float)gh / (float)T, gh, coeffs, yi, yw);
  __global const float *g = grid + (size_t)b * grid_cap * 2;
  rows[((size_t)s * cols_cap + k) * 2 + c] = g[(yi[0] * gw + k) * 2 + c] * yw[0] + g[(yi[1] * gw + k) * 2 + c] * yw[1] +
                                             g[(yi[2] * gw + k) * 2 + c] * yw[2] + g[(yi[3] * gw + k) * 2 + c] * yw[3];
}

/* Warp `stage`: the flows' second half of resize_bicubic (along frequency, from augment_warp_rows), then
 * each output point the bilinear gather at (t, bin) - flow (dense_image_warp); an utterance shorter than
 * 2 frames is copied. */
__kernel void augment_warp(const int stage, const int n_slots, const int n_bins, __global const float *src,
                           __global float *dst, const int cols_cap, __global const float *rows,
                           __global const float *coeffs, CLS_RESIZE_TABLES) {
  const int i = (int)get_global_id(0), s = (int)get_global_id(1);
  if (i >= n_bins || s >= n_slots) return;
  const int b = slot_utt[s], t = s - slot_base[b], T = frames_at[stage * batch + b];
  if (t >= T) return;
  __global const int *op = resize_op(b, stage, op_first, ops);
  if (!op || op[0] != CLS_AUGOP_WARP) return;
  __global const float *in = src + (size_t)slot_base[b] * n_bins;
  if (T < 2 || n_bins < 2) {
    dst[(size_t)s * n_bins + i] = in[(size_t)t * n_bins + i];
    return;
  }
  const int gw = op[3] + 2;
  int xi[4];
  float xw[4];
  bicubic_axis(i, (float)gw / (float)n_bins, gw, coeffs, xi, xw);
  __global const float *r = rows + (size_t)s * cols_cap * 2;
  float flow[2];
  for (int c = 0; c < 2; c++)
    flow[c] = r[xi[0] * 2 + c] * xw[0] + r[xi[1] * 2 + c] * xw[1] + r[xi[2] * 2 + c] * xw[2] + r[xi[3] * 2 + c] * xw[3];
  int y0, x0;
  float ay, ax;
  warp_axis((float)t - flow[0], T, &y0, &ay);
  warp_axis((float)i - flow[1], n_bins, &x0, &ax);
  dst[(size_t)s * n_bins + i] = blend(in, n_bins, y0, y0 + 1, x0, x0 + 1, ay, ax);
}

/* The last stage's rows gathered into the filterbank's layout: power [frames, n_bins], utterance b's
 * final frames from out_base[b] (out_utt: each output row's utterance). */
__kernel void augment_power_gather(const int n_frames, const int n_bins, __global const float *src, __global float *dst,
                                   __global const int *out_utt, __global const int *out_base,
                                   __global const int *slot_base) {
  const int i = (int)get_global_id(0), f = (int)get_global_id(1);
  if (i >= n_bins || f >= n_frames) return;
  const int b = out_utt[f];
  dst[(size_t)f * n_bins + i] = src[(size_t)(slot_base[b] + f - out_base[b]) * n_bins + i];
}
