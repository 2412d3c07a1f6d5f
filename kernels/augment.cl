/* --augment on the device (engine/features/mfcc_device.c runs these): the spectrogram-domain
 * operations on the FFT's half spectrum (a masked or dropped value's complex bin set to 0, so its
 * power is 0, as DeepSpeech multiplies the power spectrogram by 0) and the features-domain ones on
 * the MFCC features, each utterance's operations in the order engine/features/augment.c listed them
 * (command-line order within a domain). Element draws: augment_draw.h, keyed by the utterance's index
 * in the epoch and the element's place in its utterance, never by its place in the batch. */
#include "augment_draw.h"

/* The host reference (tests/ref/augment_ref.py) rounds every step: no fused multiply-adds here. */
#pragma OPENCL FP_CONTRACT OFF

/* The utterance-level tables every kernel takes: frame f belongs to utterance frame_utt[f] of the
 * chunk, whose frames start at frame_base[b]; its operations are ops[op_first[b] .. op_first[b+1])
 * (CLS_AUGOP_WORDS ints each), its index in the epoch utt_index[b]. */
#define CLS_AUGMENT_TABLES                                                                             \
  __global const int *frame_utt, __global const int *frame_base, __global const int *op_first,        \
      __global const int *ops, __global const uint *utt_index, const uint seed, const uint epoch

/* Whether spectrogram value (t, bin) of utterance b is zeroed by its operations. */
static int spectrogram_dropped(int b, int t, int bin, int n_bins, __global const int *op_first, __global const int *ops,
                               __global const uint *utt_index, uint seed, uint epoch) {
  for (int i = op_first[b]; i < op_first[b + 1]; i++) {
    __global const int *op = ops + i * CLS_AUGOP_WORDS;
    if (op[1] != CLS_AUGOP_SPECTROGRAM) continue;
    const int kind = op[0];
    if (kind == CLS_AUGOP_FREQUENCY_MASK && bin >= op[2] && bin < op[3]) return 1;
    if (kind == CLS_AUGOP_TIME_MASK && t >= op[2] && t < op[3]) return 1;
    if (kind == CLS_AUGOP_DROPOUT &&
        cls_augment_uniform(seed, epoch, utt_index[b], (uint)op[4], (uint)t * (uint)n_bins + (uint)bin) <
            as_float(op[5]))
      return 1;
  }
  return 0;
}

/* spectrum [n_frames, n_bins] complex (REAL2): one work-item per (bin, frame). */
#define CLS_AUGMENT_SPECTROGRAM(NAME, REAL2)                                                              \
  __kernel void NAME(const int n_frames, const int n_bins, __global REAL2 *spectrum, CLS_AUGMENT_TABLES) { \
    const int bin = (int)get_global_id(0), f = (int)get_global_id(1);                                  \
    if (bin >= n_bins || f >= n_frames) return;                                                        \
    const int b = frame_utt[f];                                                                        \
    if (spectrogram_dropped(b, f - frame_base[b], bin, n_bins, op_first, ops, utt_index, seed, epoch))  \
      spectrum[(size_t)f * n_bins + bin] = (REAL2)(0, 0);                                               \
  }

CLS_AUGMENT_SPECTROGRAM(augment_spectrogram, float2)
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
CLS_AUGMENT_SPECTROGRAM(augment_spectrogram_f64, double2)
#endif

/* feats [n_frames, n_coeff]: one work-item per (coefficient, frame); dropout multiplies by 0, add adds
 * value * z, multiply multiplies by value * z + 1, z = sqrt(-2 ln u1) cos(2 pi u2). */
__kernel void augment_features(const int n_frames, const int n_coeff, __global float *feats, CLS_AUGMENT_TABLES) {
  const int c = (int)get_global_id(0), f = (int)get_global_id(1);
  if (c >= n_coeff || f >= n_frames) return;
  const int b = frame_utt[f];
  const uint e = (uint)(f - frame_base[b]) * (uint)n_coeff + (uint)c, u = utt_index[b];
  float x = feats[(size_t)f * n_coeff + c];
  for (int i = op_first[b]; i < op_first[b + 1]; i++) {
    __global const int *op = ops + i * CLS_AUGOP_WORDS;
    if (op[1] != CLS_AUGOP_FEATURES) continue;
    const float value = as_float(op[5]);
    if (op[0] == CLS_AUGOP_DROPOUT) {
      if (cls_augment_uniform(seed, epoch, u, (uint)op[4], e) < value) x = x * 0.0f;
    } else if (op[0] == CLS_AUGOP_ADD || op[0] == CLS_AUGOP_MULTIPLY) {
      float u1, u2;
      cls_augment_normal_uniforms(seed, epoch, u, (uint)op[4], e, &u1, &u2);
      const float z = sqrt(-2.0f * log(u1)) * cos(6.28318530717958647692f * u2);
      const float noise = value * z;
      x = op[0] == CLS_AUGOP_ADD ? x + noise : x * (noise + 1.0f);
    }
  }
  feats[(size_t)f * n_coeff + c] = x;
}
