/* DeepSpeech's features, exactly as TensorFlow's AudioSpectrogram + Mfcc ops compute them: a
 * periodic Hann window, a real FFT of the next power of two, the squared magnitude, 40 triangular
 * mel channels over the square-rooted magnitudes (20 Hz .. rate/2), log with a 1e-12 floor, and a
 * DCT-II scaled by sqrt(2/40) keeping 26 coefficients. This file holds the configuration, the
 * tables derived from it (shared with the device path) and the plain-C host implementation. */
#ifndef CLS_MFCC_H
#define CLS_MFCC_H

#include <stddef.h>

#include "clspeech.h"

typedef struct cls_mfcc_config {
  int sample_rate;    /* Hz (--audio_sample_rate, 16000) */
  int win_len_ms;     /* --feature_win_len: 32 */
  int win_step_ms;    /* --feature_win_step: 20 */
  int n_coeff;        /* DCT coefficients kept: 26 */
  int n_channels;     /* mel channels: 40 */
  double lower_hz;    /* 20 */
  double upper_hz;    /* sample_rate / 2 */
} cls_mfcc_config;

/* DeepSpeech's defaults at a sample rate. */
cls_mfcc_config cls_mfcc_default(int sample_rate);

typedef struct cls_mfcc_tables {
  cls_mfcc_config cfg;
  int window;          /* samples per frame: rate * win_len / 1000 */
  int step;            /* samples between frames */
  int fft_len;         /* next power of two >= window */
  int n_bins;          /* fft_len / 2 + 1 */
  int start, end;      /* spectrum bins that feed the filterbank, inclusive */
  double *hann;        /* [window] periodic Hann */
  int *band;           /* [n_bins] channel whose falling side bin i feeds (-1: only the first rising side; -2 unused) */
  double *weight;      /* [n_bins] share of bin i for channel band[i]; 1 - share goes to band[i] + 1 */
  double *dct;         /* [n_coeff, n_channels] sqrt(2/n) cos(i pi/n (j + 1/2)) */
  double *twiddle;     /* [fft_len] cos, sin of -2 pi k / fft_len for k < fft_len/2 (host FFT) */
} cls_mfcc_tables;

/* Validates the configuration (window and step must be whole samples, as DeepSpeech requires) and
 * derives the tables; `err` says what is wrong otherwise. */
cls_status cls_mfcc_tables_create(const cls_mfcc_config *cfg, cls_mfcc_tables **out, char *err, size_t err_cap);
void cls_mfcc_tables_destroy(cls_mfcc_tables *t);

/* Frames in n samples: 1 + (n - window) / step, 0 when shorter than one window (no end padding). */
size_t cls_mfcc_frames(const cls_mfcc_tables *t, size_t n_samples);

/* Host features: out [frames, n_coeff] for cls_mfcc_frames(t, n) frames. Double precision inside,
 * with the spectrogram rounded to float between the two stages as TensorFlow's ops pass it. */
void cls_mfcc_host(const cls_mfcc_tables *t, const float *samples, size_t n, float *out);

#endif
