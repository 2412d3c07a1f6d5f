/* --augment's tempo frame counts on the host (features/augment/tempo.h). */
#include "features/augment/tempo.h"

#include <math.h>

#include "features/augment/draws.h"

int cls_augment_tempo_frames(const cls_augmentation *a, double factor, int frames, int need, int max_frames,
                             int win_step_ms) {
  /* DeepSpeech computes in float32: original_time / factor, compared with max_time * units_per_ms and
     the transcript's need, then truncated. */
  double t = (double)((float)frames / (float)factor);
  const double max_time = a->param[1].start;
  /* max_time * units_per_ms in double (Python's floats), then float32 as tf.cast takes it */
  if (max_time > 0) t = fmin(t, (double)(float)(max_time * (1.0 / (double)win_step_ms)));
  t = fmax(trunc(fmin(t, 1e9)), (double)need);
  if (max_frames > 0) t = fmin(t, (double)max_frames);
  return t < 1 ? 1 : (int)t;
}

int cls_augment_frames(const cls_augmentation *augs, int n_augs, uint32_t seed, uint32_t epoch, uint32_t utterance,
                       double clock, int frames, int need, int max_frames, int win_step_ms) {
  clock = cls_augment_clock(clock);
  for (int j = 0; j < n_augs; j++) {
    const cls_augmentation *a = &augs[j];
    if (a->kind != CLS_AUGMENT_TEMPO || !cls_augment_applied(a, seed, epoch, utterance, j)) continue;
    const double factor = cls_augment_pick(&a->param[0], 0, clock, cls_augment_pick_uniform(seed, epoch, utterance, j, 1));
    frames = cls_augment_tempo_frames(a, factor, frames, need, max_frames, win_step_ms);
  }
  return frames;
}
