/* --augment's reverb on the host (host_pass.c applies it in the sample domain): DeepSpeech 0.9.3's
 * Reverb (util/augmentations.py), echo layers of the utterance mixed in double and renormalised
 * (levels.h). Host-only: base. */
#ifndef CLS_FEATURES_AUGMENT_REVERB_H
#define CLS_FEATURES_AUGMENT_REVERB_H

#include <stddef.h>

#include "clspeech/base.h"

/* reverb: in double, the sum of x and five echo layers y = x + g y[t - d] (g = 10^(-decay/20),
 * d = max(16, floor(delay (p / 17) rate / 1000)) for p = 17, 19, 23, 29, 31), scaled back to x's peak
 * level and clipped to [-1, 1]. CLS_ERR_OUT_OF_MEMORY when its scratch cannot be had. */
cls_status cls_augment_reverb(float *x, size_t n, int rate, double delay_ms, double decay_db, cls_error *err);

#endif
