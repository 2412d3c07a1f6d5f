/* The device half of DeepSpeech's features (engine/mfcc_device.c drives it, clFFT does the FFT in
 * between): framing with the periodic Hann window, the mel filterbank over square-rooted
 * magnitudes with the log floor and the scaled DCT-II, and the overlapping context windows written
 * straight into the first layer's time-major input. Same math as engine/mfcc_host.c, in float32. */
#include "common.h"

/* Framing and the filterbank exist in two precisions: float, and double where the device has
 * cl_khr_fp64. TensorFlow computes the spectrogram in double; in float32 the FFT's rounding noise
 * (about 1e-7 of a frame's peak) swamps bins whose true power lies below it, which the log then
 * turns into large differences on band-limited (e.g. synthetic) audio. The double path matches TF. */

/* frames [F, fft_len]: frame f holds window samples from samples[frame_start[f]], Hann-weighted and
 * zero-padded to fft_len; frames past n_frames (up to the end of the last FFT chunk) are zero. A
 * work-group per frame (dimension 1), its work-items striding along the frame. */
#define CLS_MFCC_FRAME_WINDOW(NAME, REAL)                                                               \
  __kernel void NAME(const int n_frames, const int window, const int fft_len, __global const float *samples, \
                     __global const int *frame_start, __global const REAL *hann, __global REAL *frames) {     \
    const int f = (int)get_group_id(1), lanes = (int)get_local_size(0);                                 \
    const int valid = f < n_frames ? window : 0;                                                        \
    __global const float *src = samples + (f < n_frames ? frame_start[f] : 0);                         \
    __global REAL *dst = frames + (size_t)f * fft_len;                                                  \
    for (int i = (int)get_local_id(0); i < fft_len; i += lanes)                                         \
      dst[i] = i < valid ? (REAL)src[i] * hann[i] : (REAL)0;                                            \
  }

/* feats [F, n_coeff] from the half spectrum [F, n_bins] (complex, interleaved); the power is
 * rounded to float as TF's ops hand it over. One work-item per frame; the channel sums are private
 * (n_channels <= CLS_MFCC_MAX_CHANNELS). */
#ifndef CLS_MFCC_MAX_CHANNELS
#define CLS_MFCC_MAX_CHANNELS 64
#endif
/* Frames per work-group (engine/device/kernel_options.c: 1 on CPU devices). */
#ifndef CLS_MFCC_FILTERBANK_WG
#define CLS_MFCC_FILTERBANK_WG 64
#endif
/* ELEM: the spectrum's element; POWER(z): its power as float (the complex spectrum's squared magnitude,
 * or a float power spectrogram as --augment's power path leaves it, kernels/augment_resize.cl). */
#define CLS_MFCC_SQUARED(z) ((float)(z.x * z.x + z.y * z.y))
#define CLS_MFCC_AS_IS(z) (z)
#define CLS_MFCC_FILTERBANK(NAME, ELEM, POWER)                                                          \
  __kernel __attribute__((reqd_work_group_size(CLS_MFCC_FILTERBANK_WG, 1, 1))) void NAME(const int n_frames, const int n_bins, const int start, const int end, const int n_channels, \
                     const int n_coeff, __global const ELEM *spectrum, __global const int *band,          \
                     __global const float *weight, __global const float *dct, __global float *feats) {    \
    const int f = (int)get_global_id(0);                                                                \
    if (f >= n_frames) return;                                                                          \
    float bank[CLS_MFCC_MAX_CHANNELS];                                                                  \
    for (int c = 0; c < n_channels; c++) bank[c] = 0.0f;                                                \
    __global const ELEM *s = spectrum + (size_t)f * n_bins;                                             \
    for (int i = start; i <= end; i++) {                                                                \
      const ELEM z = s[i];                                                                              \
      const float v = sqrt(POWER(z));                                                                   \
      const float weighted = v * weight[i];                                                             \
      const int ch = band[i];                                                                           \
      if (ch >= 0) bank[ch] += weighted;                                                                \
      if (ch + 1 < n_channels) bank[ch + 1] += v - weighted;                                            \
    }                                                                                                   \
    int c8 = 0; /* the channels' logs 8 at a time: on PoCL a scalar log per channel took a quarter of this */ \
    for (; c8 + 8 <= n_channels; c8 += 8) vstore8(log(fmax(vload8(0, bank + c8), 1e-12f)), 0, bank + c8); \
    for (int c = c8; c < n_channels; c++) bank[c] = log(fmax(bank[c], 1e-12f));                         \
    for (int k = 0; k < n_coeff; k++) {                                                                 \
      float sum = 0.0f;                                                                                 \
      for (int c = 0; c < n_channels; c++) sum += dct[k * n_channels + c] * bank[c];                     \
      feats[(size_t)f * n_coeff + k] = sum;                                                               \
    }                                                                                                   \
  }

/* --augment's power spectrogram (engine/features/augment/power.c): power [slots, n_bins] from the
 * complex spectrum, utterance b's stage-0 frames at slots slot_base[b] ... Here, beside the filterbank
 * and with its expression (CLS_MFCC_SQUARED) under this file's contraction rules, so that a compiler
 * that fuses z.x * z.x + z.y * z.y does so in both: an utterance's features are the same whether its
 * batch takes the power path or not. The trailing tables are kernels/augment_resize.cl's. */
#define CLS_MFCC_POWER(NAME, REAL2)                                                                       \
  __kernel void NAME(const int n_slots, const int n_bins, __global const REAL2 *spectrum,                \
                     __global const int *spectrum_base, __global float *power, const int batch,           \
                     __global const int *slot_utt, __global const int *slot_base, __global const int *frames_at, \
                     __global const int *op_first, __global const int *ops) {                             \
    const int i = (int)get_global_id(0), s = (int)get_global_id(1);                                       \
    if (i >= n_bins || s >= n_slots) return;                                                              \
    const int b = slot_utt[s], t = s - slot_base[b];                                                      \
    if (t >= frames_at[b]) return;                                                                        \
    const REAL2 z = spectrum[(size_t)(spectrum_base[b] + t) * n_bins + i];                                \
    power[(size_t)s * n_bins + i] = CLS_MFCC_SQUARED(z);                                                  \
  }

CLS_MFCC_FRAME_WINDOW(mfcc_frame_window, float)
CLS_MFCC_FILTERBANK(mfcc_filterbank_dct, float2, CLS_MFCC_SQUARED)
CLS_MFCC_FILTERBANK(mfcc_filterbank_dct_power, float, CLS_MFCC_AS_IS)
CLS_MFCC_POWER(mfcc_power, float2)

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
CLS_MFCC_FRAME_WINDOW(mfcc_frame_window_f64, double)
CLS_MFCC_FILTERBANK(mfcc_filterbank_dct_f64, double2, CLS_MFCC_SQUARED)
CLS_MFCC_POWER(mfcc_power_f64, double2)
#endif

/* windows [T*B, (2*n_context+1)*n_coeff], row t*B + b: frames t-n_context .. t+n_context of
 * utterance b (its features start at feats row frame_base[b], n_frames[b] of them), zero outside
 * the utterance, as DeepSpeech's SAME-padded convolution with an identity filter gives. Those frames
 * are neighbouring rows of feats, so a window is one run of feats' floats from frame t - n_context on:
 * a work-group per window row (dimension 1), its work-items striding along the run. */
__kernel void mfcc_context_windows(const int time, const int batch, const int n_context, const int n_coeff,
                                   __global const float *feats, __global const int *frame_base,
                                   __global const int *n_frames, __global float *windows, const int windows_off) {
  const int row = (int)get_group_id(1);
  if (row >= time * batch) return;
  const int width = (2 * n_context + 1) * n_coeff, lanes = (int)get_local_size(0);
  const int t = row / batch, b = row - t * batch;
  const int first = (t - n_context) * n_coeff, valid = n_frames[b] * n_coeff;
  __global const float *src = feats + (size_t)frame_base[b] * n_coeff;
  __global float *dst = windows + windows_off + (size_t)row * width;
  for (int col = (int)get_local_id(0); col < width; col += lanes) {
    const int at = first + col;
    dst[col] = at >= 0 && at < valid ? src[at] : 0.0f;
  }
}
