/* The random draws of --augment (engine/features/augment/draws.c on the host, kernels/augment.cl on the
 * device): Philox-4x32-10 (philox.h) keyed by the run's seed and the epoch, counted by the utterance's
 * index in the epoch, the augmentation's index on the command line and what is drawn, so that a draw
 * is the same on every device and for any split of a batch between towers. Common C99 / OpenCL C. */
#ifndef CLS_AUGMENT_DRAW_H
#define CLS_AUGMENT_DRAW_H

#include "philox.h"

/* What a block of draws is for (the third counter word's high half). */
#define CLS_AUGMENT_PICK 0u    /* an utterance's own draws: applied or not, counts, sizes, offsets */
#define CLS_AUGMENT_UNIFORM 1u /* one uniform per element (dropout) */
#define CLS_AUGMENT_NORMAL 2u  /* one normal per element (add, multiply) */
/* The fourth counter word: apart from every other use of Philox in clspeech (dropout counts layers
 * 0..5 there, the initialisation 0x1a17). */
#define CLS_AUGMENT_TAG 0xA06E47u

static inline cls_philox4 cls_augment_block(cls_u32 seed, cls_u32 epoch, cls_u32 utterance, cls_u32 aug,
                                            cls_u32 purpose, cls_u32 counter) {
  cls_philox4 ctr;
  ctr.v[0] = counter;
  ctr.v[1] = utterance;
  ctr.v[2] = (aug & 0xFFFFu) | (purpose << 16);
  ctr.v[3] = CLS_AUGMENT_TAG;
  return cls_philox4x32_10(ctr, seed, epoch);
}

/* Element draws over an utterance's [rows, width] values (frames x bins or coefficients): the
 * uniforms of columns 4g .. 4g+3 of row t are the four words of one block, counter t ceil(width / 4) + g
 * (a word w as (w >> 8) 2^-24: 24 random bits in [0, 1)); the normals of columns 2h and 2h + 1 come from
 * one block, counter t ceil(width / 2) + h, words 2 (c & 1) and 2 (c & 1) + 1 as u1 in (0, 1] and u2 in
 * [0, 1), each with 24 random bits: the normal is sqrt(-2 ln u1) cos(2 pi u2) (Box-Muller). */
static inline cls_philox4 cls_augment_uniform_block(cls_u32 seed, cls_u32 epoch, cls_u32 utterance, cls_u32 aug,
                                                    cls_u32 t, cls_u32 g, cls_u32 width) {
  return cls_augment_block(seed, epoch, utterance, aug, CLS_AUGMENT_UNIFORM, t * ((width + 3u) / 4u) + g);
}

static inline cls_philox4 cls_augment_normal_block(cls_u32 seed, cls_u32 epoch, cls_u32 utterance, cls_u32 aug,
                                                   cls_u32 t, cls_u32 h, cls_u32 width) {
  return cls_augment_block(seed, epoch, utterance, aug, CLS_AUGMENT_NORMAL, t * ((width + 1u) / 2u) + h);
}

#define CLS_AUGMENT_UNIT(word) ((float)((word) >> 8) * (1.0f / 16777216.0f))
#define CLS_AUGMENT_UNIT_OPEN(word) ((float)(((word) >> 8) + 1u) * (1.0f / 16777216.0f))

/* The normal of a block's words 2k, 2k + 1 (Box-Muller in float, as above): the device's kernels and
 * the host's signal domain (engine/features/augment/signal_domain.c) both call this one. */
#ifdef __OPENCL_VERSION__
#define CLS_AUGMENT_SQRT sqrt
#define CLS_AUGMENT_LOG log
#define CLS_AUGMENT_COS cos
#else
#include <math.h>
#define CLS_AUGMENT_SQRT sqrtf
#define CLS_AUGMENT_LOG logf
#define CLS_AUGMENT_COS cosf
#endif
static inline float cls_augment_block_normal(cls_philox4 r, int k) {
  const float u1 = CLS_AUGMENT_UNIT_OPEN(r.v[2 * k]), u2 = CLS_AUGMENT_UNIT(r.v[2 * k + 1]);
  return CLS_AUGMENT_SQRT(-2.0f * CLS_AUGMENT_LOG(u1)) * CLS_AUGMENT_COS(6.28318530717958647692f * u2);
}

/* The kinds of an utterance's device operations (cls_augment_op in engine/features/augment/device_ops.h). */
#define CLS_AUGOP_FREQUENCY_MASK 1 /* spectrogram bins [lo, hi) of every frame to 0 */
#define CLS_AUGOP_TIME_MASK 2      /* frames [lo, hi) to 0 (domain: `domain`) */
#define CLS_AUGOP_DROPOUT 3        /* each value to 0 with probability `value` (domain: lo) */
#define CLS_AUGOP_ADD 4            /* each value + N(0, value) (spectrogram: the power, at least 0) */
#define CLS_AUGOP_MULTIPLY 5       /* each value x N(1, value) (spectrogram: the power, at least 0) */
/* The resizes of the power spectrogram (kernels/augment_resize.cl), each the end of a stage. */
#define CLS_AUGOP_PITCH 6          /* bins resized to lo (then cropped or zero-padded back); value: the pitch */
#define CLS_AUGOP_TEMPO 7          /* frames lo resized to hi; value: the factor */
#define CLS_AUGOP_WARP 8           /* lo x hi inner control points; flow deviations value (frames), value2 (bins) */
#define CLS_AUGOP_IS_RESIZE(kind) ((kind) >= CLS_AUGOP_PITCH && (kind) <= CLS_AUGOP_WARP)
/* The domain of an operation (its `domain` word). */
#define CLS_AUGOP_SPECTROGRAM 0
#define CLS_AUGOP_FEATURES 1
/* An operation's ints on the device: kind, domain, lo, hi, augmentation index, value (float bits), stage
 * (spectrogram domain: the resizes before it, or a resize's own index among the utterance's), value2
 * (float bits). */
#define CLS_AUGOP_WORDS 8

#endif
