/* --augment's sample-domain augmentations on an utterance's decoded audio, on the host (the batch
 * loader's thread): overlay (augment_overlay.c), codec (augment_codec.c), volume, reverb and resample
 * as DeepSpeech 0.9.3 defines them
 * (util/augmentations.py), drawn from the same Philox stream as the device operations
 * (kernels/augment_draw.h: seed, epoch, the utterance's index in the epoch, the augmentation's index on
 * the command line), then the signal-domain ones (augment_signal.c). Also the picks and the mask
 * placement both paths share. Host-only: base and kernels/' plain headers. */
#ifndef CLS_FEATURES_AUGMENT_HOST_PASS_H
#define CLS_FEATURES_AUGMENT_HOST_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/features.h"

/* Training's clock (0 at the start, 1 at the end) clamped to [0, 1], as every pick takes it. */
static inline double cls_augment_clock(double clock) { return clock < 0 ? 0 : clock > 1 ? 1 : clock; }

/* Draw `k` of an utterance's augmentation `aug` (kernels/augment_draw.h's CLS_AUGMENT_PICK block
 * k, word 0): uniform in [0, 1) with 32 random bits. Draw 0 decides whether the augmentation is
 * applied (< p); draw 1 + i picks its parameter i (the masks use more, augment_ops.c). */
double cls_augment_pick_uniform(uint32_t seed, uint32_t epoch, uint32_t utterance, int aug, uint32_t k);

/* Whether augmentation `aug` (`a`, its index on the command line) applies to the utterance: its draw 0
 * below p. Every domain's draws (this file's, augment_signal.c's, augment_ops.c's, augment_tempo.c's)
 * decide by this one rule. */
int cls_augment_applied(const cls_augmentation *a, uint32_t seed, uint32_t epoch, uint32_t utterance, int aug);

/* DeepSpeech's pick_value_from_range: the centre start + clock (end - start), then uniform within
 * +-r by `u`; integer parameters rounded (half to even). */
double cls_augment_pick(const cls_value_range *v, int integer, double clock, double u);

/* DeepSpeech's masks (time_mask in any domain, frequency_mask) of augmentation `aug` of `a`'s kind: how
 * many an utterance gets (draw 1, n rounded), and mask i's span over `extent` frames, bins or samples:
 * its size picked by draw 2 + 2i (an integer for bins; scale > 0: times scale and truncated, a time
 * mask's ms in frames or samples) and clamped to [1, extent - 1], its start uniform in
 * [0, extent - size) by draw 3 + 2i. 0 when extent < 2 leaves no room (DeepSpeech would fail), else 1
 * with the span [*lo, *hi). */
int cls_augment_mask_count(const cls_augmentation *a, uint32_t seed, uint32_t epoch, uint32_t utterance, int aug,
                           double clock);
int cls_augment_mask_span(const cls_augmentation *a, int integer, double scale, int extent, uint32_t seed,
                          uint32_t epoch, uint32_t utterance, int aug, int i, double clock, int *lo, int *hi);

/* The sample-domain augmentations training runs (cls_augment_check_supported): overlay, codec, volume,
 * reverb, resample. */
int cls_augment_is_sample(cls_augment_kind kind);

/* One drawn sample-domain operation. */
typedef struct cls_sample_op {
  cls_augment_kind kind;
  int aug;      /* its index on the command line */
  double v[2];  /* overlay: snr dB, layers (an integer); codec: bitrate bps (an integer); volume: dbfs;
                   reverb: delay ms, decay dB; resample: rate Hz (an integer) */
} cls_sample_op;

/* overlay's decoded source audio (augment_overlay.h). */
typedef struct cls_audio_pool cls_audio_pool;

/* The sample-domain operations utterance `utterance` (its index in the epoch) gets at training clock
 * `clock` (clamped to 0 .. 1), in command-line order, each applied with its probability: into ops[]
 * (room for n_augs). Reverb's delay and decay picks below 0 (a radius reaching past 0) are 0.
 * Returns how many. */
int cls_augment_sample_draw(const cls_augmentation *augs, int n_augs, uint32_t seed, uint32_t epoch,
                            uint32_t utterance, double clock, cls_sample_op *ops);

/* DeepSpeech's peak level, 20 log10(max(1e-16, max |x|)) + 3.0103 dBFS (a full-scale sine is 0). */
double cls_audio_max_dbfs(const float *x, size_t n);
/* The same level of a peak (max |x|) already found, and of a double buffer. */
double cls_audio_peak_dbfs(double peak);
double cls_audio_max_dbfs_double(const double *v, size_t n);

/* DeepSpeech's normalize_audio after a mix in double (overlay, reverb): v[n] scaled, in double, so that
 * its peak level is `dbfs`, clipped to [-1, 1] and stored into x[n] as float. */
void cls_audio_normalize(const double *v, size_t n, double dbfs, float *x);

/* volume: x scaled (in float) so that its peak level is `dbfs`, then clipped to [-1, 1]; a gain beyond
 * float's range is FLT_MAX (so silence stays silence, never NaN). */
void cls_augment_volume(float *x, size_t n, double dbfs);

/* reverb: in double, the sum of x and five echo layers y = x + g y[t - d] (g = 10^(-decay/20),
 * d = max(16, floor(delay (p / 17) rate / 1000)) for p = 17, 19, 23, 29, 31), scaled back to x's peak
 * level and clipped to [-1, 1]. CLS_ERR_OUT_OF_MEMORY when its scratch cannot be had. */
cls_status cls_augment_reverb(float *x, size_t n, int rate, double delay_ms, double decay_db, cls_error *err);

/* resample: x down to `to_rate` and back up to `rate` with libsamplerate's medium sinc converter, kept
 * at n samples (the round trip's end cut off or zero-filled). A `to_rate` at or above `rate` leaves x
 * as it is; one below rate / 256 (libsamplerate's limit) is taken as rate / 256. */
cls_status cls_augment_resample(float *x, size_t n, int rate, int to_rate, cls_error *err);

/* libsamplerate's medium sinc converter on in[n_in] from `from_rate` to `to_rate` Hz into out[cap]:
 * *got samples. The resample and codec augmentations' one wrapper. */
cls_status cls_augment_convert(const float *in, size_t n_in, int from_rate, int to_rate, float *out, size_t cap,
                               size_t *got, cls_error *err);

/* x[n] at `rate` converted to `via` Hz (cls_augment_convert), passed through `step` there in place (NULL:
 * nothing), converted back and kept at n samples (the end cut off or zero-filled); via == rate: `step`
 * on x itself. Audio so short that the conversion leaves no sample at `via` (1 sample halved) is kept as
 * it is, `step` not called. The resample and codec augmentations' round trip. */
typedef cls_status (*cls_rate_step)(float *y, size_t m, int rate, void *user, cls_error *err);
cls_status cls_augment_through_rate(float *x, size_t n, int rate, int via, cls_rate_step step, void *user,
                                   cls_error *err);

/* Applies one drawn operation to x[n] at `rate` Hz, in place; an overlay mixes in `source` (its
 * augmentation's decoded audio; NULL, or at another sample rate than `rate`: CLS_ERR_INVALID_ARGUMENT
 * naming both rates) from the layer starts utterance `utterance` draws. */
cls_status cls_augment_sample_apply(const cls_sample_op *op, const cls_audio_pool *source, uint32_t seed,
                                    uint32_t epoch, uint32_t utterance, float *x, size_t n, int rate, cls_error *err);

/* Draws and applies an utterance's sample-domain augmentations, then its signal-domain ones
 * (augment_signal.h), each domain in command-line order: its samples change in place, their number
 * never. sources[j] (NULL, or NULL entries, where no overlay is) is augmentation j's decoded overlay
 * source. */
cls_status cls_augment_samples(const cls_augmentation *augs, int n_augs, const cls_audio_pool *const *sources,
                               uint32_t seed, uint32_t epoch, uint32_t utterance, double clock, float *x, size_t n,
                               int rate, cls_error *err);

#endif
