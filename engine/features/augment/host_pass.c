/* --augment's sample-domain augmentations on decoded audio (features/augment/host_pass.h): their draws
 * from the shared Philox stream, the mask placement the signal and spectrogram domains share, the
 * definitions of volume, reverb and resample (overlay's and codec's have their own files), after
 * DeepSpeech 0.9.3's util/augmentations.py and util/audio.py, and an utterance's pass over both host
 * domains. Host-only; nothing here prints or exits. */
#include "features/augment/host_pass.h"

#include <float.h>
#include <math.h>
#include <samplerate.h>
#include <stdlib.h>
#include <string.h>

#include "augment_draw.h"
#include "features/augment/codec.h"
#include "features/augment/overlay.h"
#include "features/augment/signal_domain.h"

/* The converter of the resample augmentation: a round trip that only has to sound like narrowband
   audio, at a fraction of the best converter's cost (the loader's thread runs it for every utterance). */
#define RESAMPLE_CONVERTER SRC_SINC_MEDIUM_QUALITY

double cls_augment_pick_uniform(uint32_t seed, uint32_t epoch, uint32_t utterance, int aug, uint32_t k) {
  cls_philox4 r = cls_augment_block(seed, epoch, utterance, (cls_u32)aug, CLS_AUGMENT_PICK, k);
  return (double)r.v[0] * (1.0 / 4294967296.0);
}

int cls_augment_applied(const cls_augmentation *a, uint32_t seed, uint32_t epoch, uint32_t utterance, int aug) {
  return cls_augment_pick_uniform(seed, epoch, utterance, aug, 0) < a->p;
}

double cls_augment_pick(const cls_value_range *v, int integer, double clock, double u) {
  const double centre = v->start + clock * (v->end - v->start);
  const double x = (centre - v->r) + (2.0 * v->r) * u;
  return integer ? nearbyint(x) : x;
}

int cls_augment_mask_count(const cls_augmentation *a, uint32_t seed, uint32_t epoch, uint32_t utterance, int aug,
                           double clock) {
  return (int)cls_augment_pick(&a->param[0], 1, clock, cls_augment_pick_uniform(seed, epoch, utterance, aug, 1));
}

int cls_augment_mask_span(const cls_augmentation *a, int integer, double scale, int extent, uint32_t seed,
                          uint32_t epoch, uint32_t utterance, int aug, int i, double clock, int *lo, int *hi) {
  const double u = cls_augment_pick_uniform(seed, epoch, utterance, aug, 2u + 2u * (uint32_t)i);
  double size = cls_augment_pick(&a->param[1], integer, clock, u);
  if (scale > 0) size = trunc(size * scale);
  const int s = (int)fmax(1.0, fmin((double)extent - 1.0, size)); /* DeepSpeech's max(1, min(extent - 1, size)) */
  if (extent - s <= 0) return 0;
  *lo = (int)floor(cls_augment_pick_uniform(seed, epoch, utterance, aug, 3u + 2u * (uint32_t)i) * (extent - s));
  *hi = *lo + s;
  return 1;
}

int cls_augment_is_sample(cls_augment_kind kind) {
  return kind == CLS_AUGMENT_OVERLAY || kind == CLS_AUGMENT_CODEC || kind == CLS_AUGMENT_VOLUME ||
         kind == CLS_AUGMENT_REVERB || kind == CLS_AUGMENT_RESAMPLE;
}

/* Augmentation j of the command line for this utterance: 1 and *op when it is a sample-domain one and
   applied. */
static int draw_one(const cls_augmentation *a, int j, uint32_t seed, uint32_t epoch, uint32_t utterance, double clock,
                    cls_sample_op *op) {
  if (!cls_augment_is_sample(a->kind) || !cls_augment_applied(a, seed, epoch, utterance, j)) return 0;
  *op = (cls_sample_op){a->kind, j, {0, 0}};
  for (int i = 0; i < 2 && cls_augment_param_name(a->kind, i); i++)
    op->v[i] = cls_augment_pick(&a->param[i], cls_augment_param_integer(a->kind, i), clock,
                                cls_augment_pick_uniform(seed, epoch, utterance, j, 1u + (uint32_t)i));
  /* A radius may carry reverb's delay or decay below 0: taken as 0 (a negative decay would make the
     echoes grow without bound; delays under 16 samples are 16 anyway). */
  if (a->kind == CLS_AUGMENT_REVERB)
    for (int i = 0; i < 2; i++) op->v[i] = fmax(0.0, op->v[i]);
  return 1;
}

int cls_augment_sample_draw(const cls_augmentation *augs, int n_augs, uint32_t seed, uint32_t epoch,
                            uint32_t utterance, double clock, cls_sample_op *ops) {
  clock = cls_augment_clock(clock);
  int n = 0;
  for (int j = 0; j < n_augs; j++) n += draw_one(&augs[j], j, seed, epoch, utterance, clock, &ops[n]);
  return n;
}

double cls_audio_peak_dbfs(double peak) { return 20.0 * log10(fmax(1e-16, peak)) + 3.0103; }

double cls_audio_max_dbfs(const float *x, size_t n) {
  double peak = 0;
  for (size_t i = 0; i < n; i++) peak = fmax(peak, fabs((double)x[i]));
  return cls_audio_peak_dbfs(peak);
}

double cls_audio_max_dbfs_double(const double *v, size_t n) {
  double peak = 0;
  for (size_t i = 0; i < n; i++) peak = fmax(peak, fabs(v[i]));
  return cls_audio_peak_dbfs(peak);
}

void cls_audio_normalize(const double *v, size_t n, double dbfs, float *x) {
  const double gain = pow(10.0, (dbfs - cls_audio_max_dbfs_double(v, n)) / 20.0);
  for (size_t i = 0; i < n; i++) {
    const double s = v[i] * gain;
    x[i] = (float)(s > 1.0 ? 1.0 : s < -1.0 ? -1.0 : s);
  }
}

static float clip(float v) { return v > 1.0f ? 1.0f : v < -1.0f ? -1.0f : v; }

void cls_augment_volume(float *x, size_t n, double dbfs) {
  /* A gain past float's range (a huge dbfs, or near-silent audio) is float's largest: 0 stays 0, not NaN. */
  const double g = pow(10.0, (dbfs - cls_audio_max_dbfs(x, n)) / 20.0);
  const float gain = g < FLT_MAX ? (float)g : FLT_MAX;
  for (size_t i = 0; i < n; i++) x[i] = clip(x[i] * gain);
}

cls_status cls_augment_reverb(float *x, size_t n, int rate, double delay_ms, double decay_db, cls_error *err) {
  static const int primes[5] = {17, 19, 23, 29, 31};
  if (n == 0) return CLS_OK;
  double *sum = malloc(n * sizeof *sum), *layer = malloc(n * sizeof *layer);
  if (!sum || !layer) {
    free(sum);
    free(layer);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "reverb: out of host memory for %zu samples", n);
  }
  const double orig = cls_audio_max_dbfs(x, n), g = pow(10.0, -decay_db / 20.0);
  for (size_t i = 0; i < n; i++) sum[i] = x[i];
  for (int p = 0; p < 5; p++) {
    double d = floor(delay_ms * ((double)primes[p] / primes[0]) * rate / 1000.0);
    const size_t delay = !(d >= 16) ? 16 : d > (double)n ? n : (size_t)d; /* 16 samples at least, as DeepSpeech */
    for (size_t i = 0; i < n; i++) {
      layer[i] = x[i];
      if (i >= delay) layer[i] += g * layer[i - delay]; /* the echoes of echoes too */
      sum[i] += layer[i];
    }
  }
  cls_audio_normalize(sum, n, orig, x);
  free(sum);
  free(layer);
  return CLS_OK;
}

cls_status cls_augment_convert(const float *in, size_t n_in, int from_rate, int to_rate, float *out, size_t cap,
                               size_t *got, cls_error *err) {
  SRC_DATA d = {.data_in = in, .data_out = out, .input_frames = (long)n_in, .output_frames = (long)cap,
                .src_ratio = (double)to_rate / from_rate};
  const int rc = src_simple(&d, RESAMPLE_CONVERTER, 1);
  *got = rc == 0 ? (size_t)d.output_frames_gen : 0;
  if (rc != 0)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "resample %d Hz -> %d Hz: %s", from_rate, to_rate,
                         src_strerror(rc));
  return CLS_OK;
}

cls_status cls_augment_through_rate(float *x, size_t n, int rate, int via, cls_rate_step step, void *user,
                                   cls_error *err) {
  if (n == 0) return CLS_OK;
  if (via == rate) return step ? step(x, n, rate, user, err) : CLS_OK;
  const size_t mid_cap = (size_t)ceil((double)n * via / rate) + 16, out_cap = n + 64;
  float *mid = malloc(mid_cap * sizeof *mid), *back = malloc(out_cap * sizeof *back);
  if (!mid || !back) {
    free(mid);
    free(back);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu samples at %d Hz", n, via);
  }
  size_t got = 0;
  cls_status st = cls_augment_convert(x, n, rate, via, mid, mid_cap, &got, err);
  const int empty = st == CLS_OK && got == 0; /* too short to leave a sample at `via`: x kept as it is */
  if (st == CLS_OK && !empty && step) st = step(mid, got, via, user, err);
  if (st == CLS_OK && !empty) st = cls_augment_convert(mid, got, via, rate, back, out_cap, &got, err);
  if (st == CLS_OK && !empty) {
    const size_t keep = got < n ? got : n;
    memcpy(x, back, keep * sizeof *x);
    memset(x + keep, 0, (n - keep) * sizeof *x);
  }
  free(mid);
  free(back);
  return st;
}

cls_status cls_augment_resample(float *x, size_t n, int rate, int to_rate, cls_error *err) {
  if (n == 0 || to_rate >= rate) return CLS_OK;
  const int lowest = (rate + 255) / 256;
  return cls_augment_through_rate(x, n, rate, to_rate < lowest ? lowest : to_rate, NULL, NULL, err);
}

cls_status cls_augment_sample_apply(const cls_sample_op *op, const cls_audio_pool *source, uint32_t seed,
                                    uint32_t epoch, uint32_t utterance, float *x, size_t n, int rate, cls_error *err) {
  switch (op->kind) {
    case CLS_AUGMENT_OVERLAY:
      if (!source) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "overlay: its source audio is not loaded");
      if (source->sample_rate != rate)
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                             "overlay: its source audio is at %d Hz, the utterance at %d Hz (decode both at one rate)",
                             source->sample_rate, rate);
      return cls_augment_overlay_drawn(x, n, source, op->v[0], (int)op->v[1], seed, epoch, utterance, op->aug, err);
    case CLS_AUGMENT_CODEC: return cls_augment_codec(x, n, rate, (int)op->v[0], err);
    case CLS_AUGMENT_VOLUME: cls_augment_volume(x, n, op->v[0]); return CLS_OK;
    case CLS_AUGMENT_REVERB: return cls_augment_reverb(x, n, rate, op->v[0], op->v[1], err);
    case CLS_AUGMENT_RESAMPLE: return cls_augment_resample(x, n, rate, (int)op->v[0], err);
    default: return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s is not a sample-domain augmentation",
                                  cls_augment_kind_name(op->kind));
  }
}

cls_status cls_augment_samples(const cls_augmentation *augs, int n_augs, const cls_audio_pool *const *sources,
                               uint32_t seed, uint32_t epoch, uint32_t utterance, double clock, float *x, size_t n,
                               int rate, cls_error *err) {
  clock = cls_augment_clock(clock);
  for (int j = 0; j < n_augs; j++) {
    cls_sample_op op;
    if (!draw_one(&augs[j], j, seed, epoch, utterance, clock, &op)) continue;
    cls_status st = cls_augment_sample_apply(&op, sources ? sources[j] : NULL, seed, epoch, utterance, x, n, rate, err);
    if (st != CLS_OK) return st;
  }
  for (int j = 0; j < n_augs; j++) /* DeepSpeech's order: the sample domain, then the signal's */
    if (augs[j].domain == CLS_AUGMENT_SIGNAL) cls_augment_signal(&augs[j], j, seed, epoch, utterance, clock, x, n, rate);
  return CLS_OK;
}
