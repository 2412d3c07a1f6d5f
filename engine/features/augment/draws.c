/* --augment's shared draws (features/augment/draws.h): the picks and the mask placement from the
 * Philox stream of kernels/augment_draw.h. Host-only; nothing here prints or exits. */
#include "features/augment/draws.h"

#include <math.h>

#include "augment_draw.h"

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
