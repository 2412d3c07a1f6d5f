/* --augment's shared draws on the host: training's clock, an utterance's picks from the Philox stream
 * (kernels/augment_draw.h: seed, epoch, the utterance's index in the epoch, the augmentation's index on
 * the command line), whether an augmentation applies, and DeepSpeech 0.9.3's mask placement, which the
 * host's domains and the device operations' draws share. The bottom of features/augment/: it calls no
 * other file of the folder. Host-only: base and kernels/' plain headers. */
#ifndef CLS_FEATURES_AUGMENT_DRAWS_H
#define CLS_FEATURES_AUGMENT_DRAWS_H

#include <stdint.h>

#include "clspeech/features.h"

/* Training's clock (0 at the start, 1 at the end) clamped to [0, 1], as every pick takes it. */
static inline double cls_augment_clock(double clock) { return clock < 0 ? 0 : clock > 1 ? 1 : clock; }

/* Draw `k` of an utterance's augmentation `aug` (kernels/augment_draw.h's CLS_AUGMENT_PICK block
 * k, word 0): uniform in [0, 1) with 32 random bits. Draw 0 decides whether the augmentation is
 * applied (< p); draw 1 + i picks its parameter i (the masks and overlay's layers use more: draws.c,
 * overlay.c). */
double cls_augment_pick_uniform(uint32_t seed, uint32_t epoch, uint32_t utterance, int aug, uint32_t k);

/* Whether augmentation `aug` (`a`, its index on the command line) applies to the utterance: its draw 0
 * below p. Every domain's draws (host_pass.c's, signal_domain.c's, device_ops.c's, tempo.c's) decide by
 * this one rule. */
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

#endif
