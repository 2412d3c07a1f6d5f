/* --augment's host pass over an utterance's decoded audio (the batch loader's thread): its
 * sample-domain augmentations — overlay (overlay.c), codec (codec.c), volume (levels.c), reverb
 * (reverb.c) and resample (resample.c), as DeepSpeech 0.9.3 defines them (util/augmentations.py) —
 * drawn from the same Philox stream as the device operations (draws.h), then the signal-domain ones
 * (signal_domain.c). Host-only: base and kernels/' plain headers. */
#ifndef CLS_FEATURES_AUGMENT_HOST_PASS_H
#define CLS_FEATURES_AUGMENT_HOST_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/features.h"

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

/* overlay's decoded source audio (overlay.h). */
typedef struct cls_audio_pool cls_audio_pool;

/* The sample-domain operations utterance `utterance` (its index in the epoch) gets at training clock
 * `clock` (clamped to 0 .. 1), in command-line order, each applied with its probability: into ops[]
 * (room for n_augs). Reverb's delay and decay picks below 0 (a radius reaching past 0) are 0.
 * Returns how many. */
int cls_augment_sample_draw(const cls_augmentation *augs, int n_augs, uint32_t seed, uint32_t epoch,
                            uint32_t utterance, double clock, cls_sample_op *ops);

/* Applies one drawn operation to x[n] at `rate` Hz, in place; an overlay mixes in `source` (its
 * augmentation's decoded audio; NULL, or at another sample rate than `rate`: CLS_ERR_INVALID_ARGUMENT
 * naming both rates) from the layer starts utterance `utterance` draws. */
cls_status cls_augment_sample_apply(const cls_sample_op *op, const cls_audio_pool *source, uint32_t seed,
                                    uint32_t epoch, uint32_t utterance, float *x, size_t n, int rate, cls_error *err);

/* Draws and applies an utterance's sample-domain augmentations, then its signal-domain ones
 * (signal_domain.h), each domain in command-line order: its samples change in place, their number
 * never. sources[j] (NULL, or NULL entries, where no overlay is) is augmentation j's decoded overlay
 * source. */
cls_status cls_augment_samples(const cls_augmentation *augs, int n_augs, const cls_audio_pool *const *sources,
                               uint32_t seed, uint32_t epoch, uint32_t utterance, double clock, float *x, size_t n,
                               int rate, cls_error *err);

#endif
