/* --augment's sample-domain augmentations on an utterance's decoded audio, on the host (the batch
 * loader's thread): volume, reverb and resample as DeepSpeech 0.9.3 defines them
 * (util/augmentations.py), drawn from the same Philox stream as the device operations
 * (kernels/augment_draw.h: seed, epoch, the utterance's index in the epoch, the augmentation's index on
 * the command line). Also the picks both paths share. Host-only: base and kernels/' plain headers. */
#ifndef CLS_FEATURES_AUGMENT_SAMPLE_H
#define CLS_FEATURES_AUGMENT_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/features.h"

/* Draw `k` of an utterance's augmentation `aug` (kernels/augment_draw.h's CLS_AUGMENT_PICK block
 * k, word 0): uniform in [0, 1) with 32 random bits. Draw 0 decides whether the augmentation is
 * applied (< p); draw 1 + i picks its parameter i (the masks use more, augment_ops.c). */
double cls_augment_pick_uniform(uint32_t seed, uint32_t epoch, uint32_t utterance, int aug, uint32_t k);

/* DeepSpeech's pick_value_from_range: the centre start + clock (end - start), then uniform within
 * +-r by `u`; integer parameters rounded (half to even). */
double cls_augment_pick(const cls_value_range *v, int integer, double clock, double u);

/* The sample-domain augmentations training runs (cls_augment_check_supported): volume, reverb, resample. */
int cls_augment_is_sample(cls_augment_kind kind);

/* One drawn sample-domain operation. */
typedef struct cls_sample_op {
  cls_augment_kind kind;
  int aug;      /* its index on the command line */
  double v[2];  /* volume: dbfs; reverb: delay ms, decay dB; resample: rate Hz (an integer) */
} cls_sample_op;

/* The sample-domain operations utterance `utterance` (its index in the epoch) gets at training clock
 * `clock` (clamped to 0 .. 1), in command-line order, each applied with its probability: into ops[]
 * (room for n_augs). Reverb's delay and decay picks below 0 (a radius reaching past 0) are 0.
 * Returns how many. */
int cls_augment_sample_draw(const cls_augmentation *augs, int n_augs, uint32_t seed, uint32_t epoch,
                            uint32_t utterance, double clock, cls_sample_op *ops);

/* DeepSpeech's peak level, 20 log10(max(1e-16, max |x|)) + 3.0103 dBFS (a full-scale sine is 0). */
double cls_audio_max_dbfs(const float *x, size_t n);

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

/* Applies one drawn operation to x[n] at `rate` Hz, in place. */
cls_status cls_augment_sample_apply(const cls_sample_op *op, float *x, size_t n, int rate, cls_error *err);

/* Draws and applies an utterance's sample-domain augmentations, in command-line order: its samples
 * change in place, their number never. */
cls_status cls_augment_samples(const cls_augmentation *augs, int n_augs, uint32_t seed, uint32_t epoch,
                               uint32_t utterance, double clock, float *x, size_t n, int rate, cls_error *err);

#endif
