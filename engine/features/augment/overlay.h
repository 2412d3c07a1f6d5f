/* --augment's overlay on the host (host_pass.c applies it in the sample domain): DeepSpeech 0.9.3's
 * Overlay.apply (util/augmentations.py) mixing clips of a source into an utterance at a signal-to-noise
 * ratio, from source audio decoded once at training start (engine/data/overlay_source.c fills the pool).
 * Deviation for determinism: DeepSpeech takes the clips from a queue that processes share, so that a
 * clip's tail continues the next layer or utterance; clspeech draws each layer's first clip and the
 * offset within it from Philox, so every tower and rank mixes the same. Host-only: base and kernels/'
 * plain headers. */
#ifndef CLS_FEATURES_AUGMENT_OVERLAY_H
#define CLS_FEATURES_AUGMENT_OVERLAY_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/base.h"

/* Decoded audio clips, end to end. */
typedef struct cls_audio_pool {
  float *samples;     /* [n_samples], mono at sample_rate */
  size_t n_samples;
  size_t *clip_start; /* [n_clips + 1]: clip i is samples[clip_start[i] .. clip_start[i + 1]), never empty */
  int n_clips;
  int sample_rate;
} cls_audio_pool;

/* Frees what a pool holds (not the struct) and zeroes it. */
void cls_audio_pool_clear(cls_audio_pool *pool);

/* Overlay with the layers' starts given: layer L lays the pool's clips end to end over the utterance's
 * n samples, from sample first_offset[L] of clip first_clip[L] on, the next clip after the last (the
 * last wrapping to the first); the layers add up. Then, as DeepSpeech, in double: the overlay scaled to
 * max_dbfs(x) - max_dbfs(overlay) - snr_db dB (at most 10^300), added to x, and the sum scaled back to
 * x's former peak level and clipped to [-1, 1] (normalize_audio). CLS_ERR_INVALID_ARGUMENT, x untouched,
 * when a layer starts outside the pool (first_clip[L] not a clip, first_offset[L] not below its length);
 * CLS_ERR_OUT_OF_MEMORY when its scratch cannot be had. */
cls_status cls_augment_overlay(float *x, size_t n, const cls_audio_pool *pool, double snr_db, int layers,
                               const int *first_clip, const size_t *first_offset, cls_error *err);

/* Layer L's start for utterance `utterance`, augmentation `aug` (after its parameter draws 1, 2): clip
 * floor(u n_clips) by draw 3 + 2L, offset floor(u length) within it by draw 4 + 2L. */
void cls_augment_overlay_start(const cls_audio_pool *pool, uint32_t seed, uint32_t epoch, uint32_t utterance, int aug,
                               int layer, int *clip, size_t *offset);

/* cls_augment_overlay with the layers' starts drawn (cls_augment_overlay_start). */
cls_status cls_augment_overlay_drawn(float *x, size_t n, const cls_audio_pool *pool, double snr_db, int layers,
                                     uint32_t seed, uint32_t epoch, uint32_t utterance, int aug, cls_error *err);

#endif
