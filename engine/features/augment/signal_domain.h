/* --augment's signal-domain augmentations (time_mask, dropout, add and multiply with domain=signal) on
 * an utterance's decoded samples, on the host, after its sample-domain ones (host_pass.c calls
 * them): DeepSpeech 0.9.3's definitions (util/augmentations.py) on its signal [time, 1], a time mask's
 * ms in samples (rate / 1000 per ms). The audio is neither renormalised nor clipped afterwards (as in
 * DeepSpeech). Host-only: base and kernels/' plain headers. */
#ifndef CLS_FEATURES_AUGMENT_SIGNAL_DOMAIN_H
#define CLS_FEATURES_AUGMENT_SIGNAL_DOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/features.h"

/* Augmentation `a` (index `aug` on the command line, domain signal) on utterance `utterance`'s samples
 * x[n] at `rate` Hz and training clock `clock`, in place, when its draw 0 is below p: returns whether it
 * was applied. Its picks are the device's (draw 1: n or the value; a time mask's draws as
 * cls_augment_mask_span's over n samples; masks need n < 2^31). Element draws: kernels/augment_draw.h's
 * blocks with the samples as rows of 4 values, sample i in row i / 4, column i % 4: dropout's uniform is
 * word i % 4 of block i / 4, add's and multiply's normal comes from words 2 (i % 2), 2 (i % 2) + 1 of
 * block i / 2 (cls_augment_block_normal, float). Dropout sets a sample to 0 when its uniform is below
 * max(0, rate) (no rescaling of the others), add adds stddev z, multiply multiplies by stddev z + 1 (a
 * value past float's range saturating at +-FLT_MAX, never inf or NaN). */
int cls_augment_signal(const cls_augmentation *a, int aug, uint32_t seed, uint32_t epoch, uint32_t utterance,
                       double clock, float *x, size_t n, int rate);

#endif
