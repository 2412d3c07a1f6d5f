/* --augment's signal-domain augmentations on decoded samples (features/augment/signal_domain.h): time
 * masks, dropout, additive and multiplicative Gaussian noise, drawn from the Philox stream the device's
 * feature-domain ones use. Host-only; nothing here prints or exits. */
#include "features/augment/signal_domain.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "augment_draw.h"
#include "features/augment/draws.h"

static void time_masks(const cls_augmentation *a, int aug, uint32_t seed, uint32_t epoch, uint32_t utterance,
                       double clock, float *x, size_t n, int rate) {
  if (n > (size_t)INT_MAX) return;
  const int masks = cls_augment_mask_count(a, seed, epoch, utterance, aug, clock);
  for (int i = 0; i < masks; i++) {
    int lo, hi;
    if (cls_augment_mask_span(a, 0, rate / 1000.0, (int)n, seed, epoch, utterance, aug, i, clock, &lo, &hi))
      memset(x + lo, 0, (size_t)(hi - lo) * sizeof *x);
  }
}

static void dropout(float *x, size_t n, float rate, uint32_t seed, uint32_t epoch, uint32_t utterance, int aug) {
  for (size_t g = 0; 4 * g < n; g++) {
    const cls_philox4 r = cls_augment_uniform_block(seed, epoch, utterance, (cls_u32)aug, (cls_u32)g, 0u, 4u);
    for (size_t j = 0; j < 4 && 4 * g + j < n; j++)
      if (CLS_AUGMENT_UNIT(r.v[j]) < rate) x[4 * g + j] = x[4 * g + j] * 0.0f;
  }
}

/* A value past float's range as float's largest, so that a huge deviation never makes inf or NaN. */
static float saturate(float v) { return v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : v; }
static float to_float(double v) { return (float)(v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : v); }

static void noise(float *x, size_t n, float stddev, int multiply, uint32_t seed, uint32_t epoch, uint32_t utterance,
                  int aug) {
  for (size_t h = 0; 2 * h < n; h++) {
    const cls_philox4 r = cls_augment_normal_block(seed, epoch, utterance, (cls_u32)aug, (cls_u32)(h / 2),
                                                   (cls_u32)(h % 2), 4u);
    for (size_t k = 0; k < 2 && 2 * h + k < n; k++) {
      const float z = saturate(stddev * cls_augment_block_normal(r, (int)k));
      float *v = &x[2 * h + k];
      *v = saturate(multiply ? *v * (z + 1.0f) : *v + z);
    }
  }
}

int cls_augment_signal(const cls_augmentation *a, int aug, uint32_t seed, uint32_t epoch, uint32_t utterance,
                       double clock, float *x, size_t n, int rate) {
  if (a->domain != CLS_AUGMENT_SIGNAL || !cls_augment_applied(a, seed, epoch, utterance, aug)) return 0;
  clock = cls_augment_clock(clock);
  const double v = cls_augment_pick(&a->param[0], 0, clock, cls_augment_pick_uniform(seed, epoch, utterance, aug, 1));
  switch (a->kind) {
    case CLS_AUGMENT_TIME_MASK: time_masks(a, aug, seed, epoch, utterance, clock, x, n, rate); break;
    case CLS_AUGMENT_DROPOUT: dropout(x, n, to_float(fmax(0.0, v)), seed, epoch, utterance, aug); break;
    case CLS_AUGMENT_ADD: noise(x, n, to_float(v), 0, seed, epoch, utterance, aug); break;
    case CLS_AUGMENT_MULTIPLY: noise(x, n, to_float(v), 1, seed, epoch, utterance, aug); break;
    default: return 0; /* refused before training (cls_augment_check_supported) */
  }
  return 1;
}
