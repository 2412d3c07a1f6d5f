/* MFCC configuration, tables and the plain-C host implementation (see clspeech/features.h): the
 * reference for the device path and the --features_device host fallback; and the one count of an
 * audio file's frames from its header. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/features.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

cls_mfcc_config cls_mfcc_default(int sample_rate) {
  cls_mfcc_config c = {sample_rate, 32, 20, 26, 40, 20.0, sample_rate / 2.0};
  return c;
}

static double mel(double hz) { return 1127.0 * log1p(hz / 700.0); }

cls_status cls_mfcc_tables_create(const cls_mfcc_config *cfg, cls_mfcc_tables **out, cls_error *err) {
  *out = NULL;
  if (cfg->sample_rate < CLS_MFCC_MIN_RATE || cfg->sample_rate > CLS_MFCC_MAX_RATE || cfg->win_len_ms < 1 ||
      cfg->win_len_ms > CLS_MFCC_MAX_MS || cfg->win_step_ms < 1 || cfg->win_step_ms > CLS_MFCC_MAX_MS) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "feature window %d ms and step %d ms at %d Hz out of bounds: "
                         "windows and steps of 1..%d ms at %d..%d Hz",
                         cfg->win_len_ms, cfg->win_step_ms, cfg->sample_rate, CLS_MFCC_MAX_MS, CLS_MFCC_MIN_RATE,
                         CLS_MFCC_MAX_RATE);
  }
  if (((long)cfg->sample_rate * cfg->win_len_ms) % 1000 || ((long)cfg->sample_rate * cfg->win_step_ms) % 1000) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "feature window %d ms and step %d ms at %d Hz must be whole numbers of samples "
                         "(sample_rate * ms divisible by 1000)", cfg->win_len_ms, cfg->win_step_ms, cfg->sample_rate);
  }
  if (cfg->n_channels < 1 || cfg->n_coeff < 1 || cfg->n_coeff > cfg->n_channels || cfg->lower_hz < 0 ||
      cfg->upper_hz <= cfg->lower_hz || cfg->upper_hz > cfg->sample_rate / 2.0) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "invalid MFCC parameters (%d coefficients of %d channels, %g..%g Hz at %d Hz)", cfg->n_coeff,
                         cfg->n_channels, cfg->lower_hz, cfg->upper_hz, cfg->sample_rate);
  }
  cls_mfcc_tables *t = calloc(1, sizeof *t);
  if (!t) goto oom;
  t->cfg = *cfg;
  t->window = (int)((long)cfg->sample_rate * cfg->win_len_ms / 1000);
  t->step = (int)((long)cfg->sample_rate * cfg->win_step_ms / 1000);
  for (t->fft_len = 1; t->fft_len < t->window;) t->fft_len *= 2;
  t->n_bins = t->fft_len / 2 + 1;
  t->hann = malloc((size_t)t->window * sizeof *t->hann);
  t->band = malloc((size_t)t->n_bins * sizeof *t->band);
  t->weight = malloc((size_t)t->n_bins * sizeof *t->weight);
  t->dct = malloc((size_t)cfg->n_coeff * cfg->n_channels * sizeof *t->dct);
  t->twiddle = malloc((size_t)t->fft_len * sizeof *t->twiddle);
  double *center = malloc((size_t)(cfg->n_channels + 1) * sizeof *center);
  if (!t->hann || !t->band || !t->weight || !t->dct || !t->twiddle || !center) {
    free(center);
    cls_mfcc_tables_destroy(t);
    goto oom;
  }
  for (int i = 0; i < t->window; i++) t->hann[i] = 0.5 - 0.5 * cos(2.0 * M_PI * i / t->window);
  for (int k = 0; k < t->fft_len / 2; k++) {
    t->twiddle[2 * k] = cos(-2.0 * M_PI * k / t->fft_len);
    t->twiddle[2 * k + 1] = sin(-2.0 * M_PI * k / t->fft_len);
  }

  const int nc = cfg->n_channels;
  const double mel_low = mel(cfg->lower_hz), mel_hi = mel(cfg->upper_hz), spacing = (mel_hi - mel_low) / (nc + 1);
  for (int i = 0; i <= nc; i++) center[i] = mel_low + spacing * (i + 1);
  const double hz_per_bin = 0.5 * cfg->sample_rate / (double)(t->n_bins - 1);
  t->start = (int)(1.5 + cfg->lower_hz / hz_per_bin); /* DC excluded, as HTK does */
  t->end = (int)(cfg->upper_hz / hz_per_bin);
  int channel = 0;
  for (int i = 0; i < t->n_bins; i++) {
    double m = mel(i * hz_per_bin);
    if (i < t->start || i > t->end) {
      t->band[i] = -2;
      t->weight[i] = 0.0;
      continue;
    }
    while (channel < nc && center[channel] < m) channel++;
    t->band[i] = channel - 1;
    t->weight[i] = channel - 1 >= 0 ? (center[channel] - m) / (center[channel] - center[channel - 1])
                                    : (center[0] - m) / (center[0] - mel_low);
  }
  free(center);
  const double norm = sqrt(2.0 / nc);
  for (int i = 0; i < cfg->n_coeff; i++)
    for (int j = 0; j < nc; j++) t->dct[i * nc + j] = norm * cos(i * (M_PI / nc) * (j + 0.5));
  *out = t;
  return CLS_OK;
oom:
  return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory for MFCC tables");
}

void cls_mfcc_tables_destroy(cls_mfcc_tables *t) {
  if (!t) return;
  free(t->hann);
  free(t->band);
  free(t->weight);
  free(t->dct);
  free(t->twiddle);
  free(t);
}

static int64_t frames_of(int64_t n, int window, int step) { return n < window ? 0 : 1 + (n - window) / step; }

size_t cls_mfcc_frames(const cls_mfcc_tables *t, size_t n) { return (size_t)frames_of((int64_t)n, t->window, t->step); }

double cls_frames_seconds(int64_t frames, int rate, int window, int step) {
  return rate > 0 ? ((double)(frames > 0 ? frames - 1 : 0) * step + window) / rate : 0.0;
}

cls_frame_count cls_audio_frame_count(const cls_audio_header *h, int rate, int window, int step) {
  cls_frame_count c = {0, 0, 0};
  if (!h || h->sample_rate <= 0 || h->frames <= 0 || rate <= 0 || window <= 0 || step <= 0) return c; /* no audio */
  const int resampled = h->sample_rate != rate;
  c.n_samples = resampled ? (int64_t)h->frames * rate / h->sample_rate : (int64_t)h->frames;
  c.frames = frames_of(c.n_samples, window, step);
  c.max_frames = resampled ? frames_of(c.n_samples + 1, window, step) : c.frames;
  return c;
}

/* In-place iterative radix-2 FFT of n (a power of two) complex values; tw holds the n/2 twiddles. */
static void fft(double *re, double *im, int n, const double *tw) {
  for (int i = 1, j = 0; i < n; i++) {
    int bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double tr = re[i], ti = im[i];
      re[i] = re[j];
      im[i] = im[j];
      re[j] = tr;
      im[j] = ti;
    }
  }
  for (int len = 2; len <= n; len <<= 1) {
    const int stride = n / len;
    for (int i = 0; i < n; i += len)
      for (int k = 0; k < len / 2; k++) {
        double wr = tw[2 * k * stride], wi = tw[2 * k * stride + 1];
        double xr = re[i + k + len / 2] * wr - im[i + k + len / 2] * wi;
        double xi = re[i + k + len / 2] * wi + im[i + k + len / 2] * wr;
        re[i + k + len / 2] = re[i + k] - xr;
        im[i + k + len / 2] = im[i + k] - xi;
        re[i + k] += xr;
        im[i + k] += xi;
      }
  }
}

void cls_mfcc_host(const cls_mfcc_tables *t, const float *samples, size_t n, float *out) {
  const size_t frames = cls_mfcc_frames(t, n);
  const int nc = t->cfg.n_channels;
  double *re = malloc((size_t)t->fft_len * sizeof *re), *im = malloc((size_t)t->fft_len * sizeof *im);
  double *bank = malloc((size_t)nc * sizeof *bank);
  if (!re || !im || !bank) {
    free(re);
    free(im);
    free(bank);
    return;
  }
  for (size_t f = 0; f < frames; f++) {
    const float *x = samples + f * (size_t)t->step;
    for (int i = 0; i < t->fft_len; i++) {
      re[i] = i < t->window ? (double)x[i] * t->hann[i] : 0.0;
      im[i] = 0.0;
    }
    fft(re, im, t->fft_len, t->twiddle);
    memset(bank, 0, (size_t)nc * sizeof *bank);
    for (int i = t->start; i <= t->end; i++) {
      /* TensorFlow hands the spectrogram from one op to the next as float32. */
      double power = (double)(float)(re[i] * re[i] + im[i] * im[i]);
      double v = sqrt(power), weighted = v * t->weight[i];
      int ch = t->band[i];
      if (ch >= 0) bank[ch] += weighted;
      if (ch + 1 < nc) bank[ch + 1] += v - weighted;
    }
    for (int c = 0; c < nc; c++) bank[c] = log(bank[c] < 1e-12 ? 1e-12 : bank[c]);
    for (int k = 0; k < t->cfg.n_coeff; k++) {
      double sum = 0;
      for (int c = 0; c < nc; c++) sum += t->dct[k * nc + c] * bank[c];
      out[f * (size_t)t->cfg.n_coeff + (size_t)k] = (float)sum;
    }
  }
  free(re);
  free(im);
  free(bank);
}
