/* An utterance's --augment draws (features/augment.h): Philox (kernels/augment_draw.h) keyed by the
 * run's seed and the epoch, counted by the utterance's index in the epoch and the augmentation's on
 * the command line, turned into the operations kernels/augment.cl applies (the sample domain's are
 * features/augment_sample.c's). */
#include <math.h>

#include "augment_draw.h"
#include "features/augment.h"
#include "features/augment_sample.h"

int cls_augment_max_ops(const cls_augmentation *augs, int n) {
  int total = 0;
  for (int i = 0; i < n; i++) {
    const cls_augmentation *a = &augs[i];
    if (a->kind == CLS_AUGMENT_FREQUENCY_MASK || a->kind == CLS_AUGMENT_TIME_MASK) {
      const double most = fmax(a->param[0].start, a->param[0].end) + a->param[0].r;
      total += (int)ceil(most) + 1;
    } else {
      total += 1;
    }
  }
  return total;
}

/* Draw `k` of an utterance's augmentation `aug` and DeepSpeech's pick, shared with the sample domain. */
static double pick_uniform(const cls_augment_context *c, uint32_t utterance, int aug, uint32_t k) {
  return cls_augment_pick_uniform(c->seed, c->epoch, utterance, aug, k);
}

static double pick(const cls_value_range *v, int integer, double clock, double u) {
  return cls_augment_pick(v, integer, clock, u);
}

/* n masks at uniform offsets (augment_sample.h's cls_augment_mask_span: the same draws as the signal
   domain's time masks); a time mask's ms in frames. */
static int masks(const cls_augment_context *c, uint32_t utterance, int aug, double clock, const cls_augmentation *a,
                 int extent, int kind, cls_augment_op *ops) {
  const int n = cls_augment_mask_count(a, c->seed, c->epoch, utterance, aug, clock);
  const int bins = kind == CLS_AUGOP_FREQUENCY_MASK;
  int made = 0;
  for (int i = 0; i < n; i++) {
    int lo, hi;
    if (!cls_augment_mask_span(a, bins, bins ? 0.0 : 1.0 / c->win_step_ms, extent, c->seed, c->epoch, utterance, aug,
                               i, clock, &lo, &hi))
      continue;
    cls_augment_op op = {kind, CLS_AUGOP_SPECTROGRAM, lo, hi, aug, 0.0f, {0, 0}};
    ops[made++] = op;
  }
  return made;
}

int cls_augment_utterance(const cls_augment_context *c, uint32_t utterance, double clock, int n_frames,
                          cls_augment_op *ops) {
  clock = cls_augment_clock(clock);
  int n = 0;
  for (int pass = 0; pass < 2; pass++) { /* spectrogram, then features */
    const cls_augment_domain want = pass == 0 ? CLS_AUGMENT_SPECTROGRAM : CLS_AUGMENT_FEATURES;
    for (int j = 0; j < c->n_augs; j++) {
      const cls_augmentation *a = &c->augs[j];
      if (a->domain != want || pick_uniform(c, utterance, j, 0) >= a->p) continue;
      const int32_t domain = pass == 0 ? CLS_AUGOP_SPECTROGRAM : CLS_AUGOP_FEATURES;
      const double v = pick(&a->param[0], 0, clock, pick_uniform(c, utterance, j, 1));
      switch (a->kind) {
        case CLS_AUGMENT_FREQUENCY_MASK:
          n += masks(c, utterance, j, clock, a, c->n_bins, CLS_AUGOP_FREQUENCY_MASK, ops + n);
          break;
        case CLS_AUGMENT_TIME_MASK: n += masks(c, utterance, j, clock, a, n_frames, CLS_AUGOP_TIME_MASK, ops + n); break;
        case CLS_AUGMENT_DROPOUT:
          ops[n++] = (cls_augment_op){CLS_AUGOP_DROPOUT, domain, 0, 0, j, (float)fmax(0.0, v), {0, 0}};
          break;
        case CLS_AUGMENT_ADD: ops[n++] = (cls_augment_op){CLS_AUGOP_ADD, domain, 0, 0, j, (float)v, {0, 0}}; break;
        case CLS_AUGMENT_MULTIPLY:
          ops[n++] = (cls_augment_op){CLS_AUGOP_MULTIPLY, domain, 0, 0, j, (float)v, {0, 0}};
          break;
        default: break; /* refused before training (cls_augment_check_supported) */
      }
    }
  }
  return n;
}
