/* --augment on the device (engine/features/mfcc_device.c runs these): the spectrogram-domain
 * operations on the FFT's half spectrum (a masked or dropped value's complex bin set to 0, so its
 * power is 0, as DeepSpeech multiplies the power spectrogram by 0) and the features-domain ones on
 * the MFCC features, each utterance's operations in the order engine/features/augment/device_ops.c listed
 * them (command-line order within a domain). Element draws: augment_draw.h, keyed by the utterance's
 * index in the epoch and the element's place in its utterance, never by its place in the batch. A
 * work-item takes 4 neighbouring values of a frame: one Philox block gives their 4 uniforms. */
#include "augment_draw.h"

/* The host reference (tests/ref/augment_ref.py) rounds every step: no fused multiply-adds here. */
#pragma OPENCL FP_CONTRACT OFF

/* The utterance-level tables every kernel takes: frame f belongs to utterance frame_utt[f] of the
 * chunk, whose frames start at frame_base[b]; its operations are ops[op_first[b] .. op_first[b+1])
 * (CLS_AUGOP_WORDS ints each), its index in the epoch utt_index[b]. */
#define CLS_AUGMENT_TABLES                                                                             \
  __global const int *frame_utt, __global const int *frame_base, __global const int *op_first,        \
      __global const int *ops, __global const uint *utt_index, const uint seed, const uint epoch

/* Which of bins 4g .. 4g+3 of frame t of utterance b its operations keep (bit i: bin 4g + i). */
static uint spectrogram_kept(int b, int t, int g, int n_bins, __global const int *op_first, __global const int *ops,
                             __global const uint *utt_index, uint seed, uint epoch) {
  uint keep = 15u;
  const int bin0 = 4 * g;
  for (int i = op_first[b]; i < op_first[b + 1]; i++) {
    __global const int *op = ops + i * CLS_AUGOP_WORDS;
    if (op[1] != CLS_AUGOP_SPECTROGRAM) continue;
    const int kind = op[0];
    if (kind == CLS_AUGOP_FREQUENCY_MASK) {
      for (int j = 0; j < 4; j++)
        if (bin0 + j >= op[2] && bin0 + j < op[3]) keep &= ~(1u << j);
    } else if (kind == CLS_AUGOP_TIME_MASK) {
      if (t >= op[2] && t < op[3]) keep = 0u;
    } else if (kind == CLS_AUGOP_DROPOUT) {
      const float rate = as_float(op[5]);
      const cls_philox4 r = cls_augment_uniform_block(seed, epoch, utt_index[b], (uint)op[4], (uint)t, (uint)g,
                                                      (uint)n_bins);
      for (int j = 0; j < 4; j++)
        if (CLS_AUGMENT_UNIT(r.v[j]) < rate) keep &= ~(1u << j);
    }
  }
  return keep;
}

/* spectrum [n_frames, n_bins] complex (REAL2): one work-item per 4 bins of a frame. */
#define CLS_AUGMENT_SPECTROGRAM(NAME, REAL2)                                                              \
  __kernel void NAME(const int n_frames, const int n_bins, __global REAL2 *spectrum, CLS_AUGMENT_TABLES) { \
    const int g = (int)get_global_id(0), f = (int)get_global_id(1);                                    \
    if (4 * g >= n_bins || f >= n_frames) return;                                                      \
    const int b = frame_utt[f];                                                                        \
    const uint keep = spectrogram_kept(b, f - frame_base[b], g, n_bins, op_first, ops, utt_index, seed, epoch); \
    for (int j = 0; j < 4 && 4 * g + j < n_bins; j++)                                                   \
      if (!(keep & (1u << j))) spectrum[(size_t)f * n_bins + 4 * g + j] = (REAL2)(0, 0);                \
  }

CLS_AUGMENT_SPECTROGRAM(augment_spectrogram, float2)
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
CLS_AUGMENT_SPECTROGRAM(augment_spectrogram_f64, double2)
#endif

/* feats [n_frames, n_coeff]: one work-item per 4 coefficients of a frame; a time mask's frames and
 * dropout multiply by 0, add adds value z, multiply multiplies by value z + 1. */
__kernel void augment_features(const int n_frames, const int n_coeff, __global float *feats, CLS_AUGMENT_TABLES) {
  const int g = (int)get_global_id(0), f = (int)get_global_id(1);
  if (4 * g >= n_coeff || f >= n_frames) return;
  const int b = frame_utt[f], c0 = 4 * g, n = min(4, n_coeff - c0);
  const uint t = (uint)(f - frame_base[b]), u = utt_index[b];
  __global float *row = feats + (size_t)f * n_coeff + c0;
  float x[4];
  for (int j = 0; j < 4; j++) x[j] = j < n ? row[j] : 0.0f;
  for (int i = op_first[b]; i < op_first[b + 1]; i++) {
    __global const int *op = ops + i * CLS_AUGOP_WORDS;
    if (op[1] != CLS_AUGOP_FEATURES) continue;
    const float value = as_float(op[5]);
    if (op[0] == CLS_AUGOP_TIME_MASK) {
      if ((int)t >= op[2] && (int)t < op[3])
        for (int j = 0; j < 4; j++) x[j] = x[j] * 0.0f;
    } else if (op[0] == CLS_AUGOP_DROPOUT) {
      const cls_philox4 r = cls_augment_uniform_block(seed, epoch, u, (uint)op[4], t, (uint)g, (uint)n_coeff);
      for (int j = 0; j < 4; j++)
        if (CLS_AUGMENT_UNIT(r.v[j]) < value) x[j] = x[j] * 0.0f;
    } else if (op[0] == CLS_AUGOP_ADD || op[0] == CLS_AUGOP_MULTIPLY) {
      /* columns c0, c0 + 1 from block c0 / 2, columns c0 + 2, c0 + 3 from the next */
      for (int h = 0; h < 2; h++) {
        const cls_philox4 r = cls_augment_normal_block(seed, epoch, u, (uint)op[4], t, (uint)(2 * g + h), (uint)n_coeff);
        for (int k = 0; k < 2; k++) {
          const float noise = value * cls_augment_block_normal(r, k);
          const int j = 2 * h + k;
          x[j] = op[0] == CLS_AUGOP_ADD ? x[j] + noise : x[j] * (noise + 1.0f);
        }
      }
    }
  }
  for (int j = 0; j < n; j++) row[j] = x[j];
}
