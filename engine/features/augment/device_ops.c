/* An utterance's --augment draws for the device (features/augment/device_ops.h): Philox
 * (kernels/augment_draw.h, through draws.h) keyed by the run's seed and the epoch, counted by the
 * utterance's index in the epoch and the augmentation's on the command line, turned into the
 * operations kernels/augment.cl and the power path (power.c) apply (the host's are host_pass.c's). */
#include <math.h>

#include "augment_draw.h"
#include "features/augment/device_ops.h"
#include "features/augment/draws.h"
#include "features/augment/tempo.h"

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

/* Draw `k` of an utterance's augmentation `aug` (the host's, draws.h). */
static double pick_uniform(const cls_augment_context *c, uint32_t utterance, int aug, uint32_t k) {
  return cls_augment_pick_uniform(c->seed, c->epoch, utterance, aug, k);
}

/* n masks at uniform offsets (draws.h's cls_augment_mask_span: the same draws as the signal
   domain's time masks), in `domain` at `stage`; a time mask's ms in frames. */
static int masks(const cls_augment_context *c, uint32_t utterance, int aug, double clock, const cls_augmentation *a,
                 int extent, int kind, int32_t domain, int32_t stage, cls_augment_op *ops) {
  const int n = cls_augment_mask_count(a, c->seed, c->epoch, utterance, aug, clock);
  const int bins = kind == CLS_AUGOP_FREQUENCY_MASK;
  int made = 0;
  for (int i = 0; i < n; i++) {
    int lo, hi;
    if (!cls_augment_mask_span(a, bins, bins ? 0.0 : 1.0 / c->win_step_ms, extent, c->seed, c->epoch, utterance, aug,
                               i, clock, &lo, &hi))
      continue;
    cls_augment_op op = {kind, domain, lo, hi, aug, 0.0f, stage, 0.0f};
    ops[made++] = op;
  }
  return made;
}

/* Warp's control points and flow deviations: DeepSpeech's w * size / (2 (n + 1)) in float32. */
static cls_augment_op warp(const cls_augment_context *c, uint32_t utterance, int j, double clock,
                           const cls_augmentation *a, int frames, int32_t stage) {
  double v[4];
  for (int i = 0; i < 4; i++)
    v[i] = cls_augment_pick(&a->param[i], i < 2, clock, pick_uniform(c, utterance, j, 1u + (uint32_t)i));
  const int nt = (int)fmax(0.0, v[0]), nf = (int)fmax(0.0, v[1]);
  const float wt = (float)fmax(0.0, v[2]) * (float)frames / (float)(2 * (nt + 1));
  const float wf = (float)fmax(0.0, v[3]) * (float)c->n_bins / (float)(2 * (nf + 1));
  return (cls_augment_op){CLS_AUGOP_WARP, CLS_AUGOP_SPECTROGRAM, nt, nf, j, wt, stage, wf};
}

int cls_augment_utterance(const cls_augment_context *c, uint32_t utterance, double clock, int n_frames, int need,
                          cls_augment_op *ops, int *frames_out) {
  clock = cls_augment_clock(clock);
  int n = 0, frames = n_frames;
  int32_t stage = 0; /* the resizes so far (spectrogram domain) */
  for (int pass = 0; pass < 2; pass++) { /* spectrogram, then features */
    const cls_augment_domain want = pass == 0 ? CLS_AUGMENT_SPECTROGRAM : CLS_AUGMENT_FEATURES;
    for (int j = 0; j < c->n_augs; j++) {
      const cls_augmentation *a = &c->augs[j];
      if (a->domain != want || !cls_augment_applied(a, c->seed, c->epoch, utterance, j)) continue;
      const int32_t domain = pass == 0 ? CLS_AUGOP_SPECTROGRAM : CLS_AUGOP_FEATURES;
      const int32_t at = pass == 0 ? stage : 0;
      const double v = cls_augment_pick(&a->param[0], 0, clock, pick_uniform(c, utterance, j, 1));
      switch (a->kind) {
        case CLS_AUGMENT_FREQUENCY_MASK:
          n += masks(c, utterance, j, clock, a, c->n_bins, CLS_AUGOP_FREQUENCY_MASK, domain, at, ops + n);
          break;
        case CLS_AUGMENT_TIME_MASK:
          n += masks(c, utterance, j, clock, a, frames, CLS_AUGOP_TIME_MASK, domain, at, ops + n);
          break;
        case CLS_AUGMENT_DROPOUT:
          ops[n++] = (cls_augment_op){CLS_AUGOP_DROPOUT, domain, 0, 0, j, (float)fmax(0.0, v), at, 0.0f};
          break;
        case CLS_AUGMENT_ADD: ops[n++] = (cls_augment_op){CLS_AUGOP_ADD, domain, 0, 0, j, (float)v, at, 0.0f}; break;
        case CLS_AUGMENT_MULTIPLY:
          ops[n++] = (cls_augment_op){CLS_AUGOP_MULTIPLY, domain, 0, 0, j, (float)v, at, 0.0f};
          break;
        case CLS_AUGMENT_PITCH: {
          /* DeepSpeech: int(float32(bins) * pitch), at least 1 here (0 would fail there) */
          const double wide = fmin(fmax((double)((float)c->n_bins * (float)v), 1.0), 1 << 24);
          ops[n++] = (cls_augment_op){CLS_AUGOP_PITCH, domain, (int32_t)wide, c->n_bins, j, (float)v, stage++, 0.0f};
          break;
        }
        case CLS_AUGMENT_TEMPO: {
          const int to = cls_augment_tempo_frames(a, v, frames, need, c->max_frames, c->win_step_ms);
          ops[n++] = (cls_augment_op){CLS_AUGOP_TEMPO, domain, frames, to, j, (float)v, stage++, 0.0f};
          frames = to;
          break;
        }
        case CLS_AUGMENT_WARP: ops[n++] = warp(c, utterance, j, clock, a, frames, stage++); break;
        default: break; /* refused before training (cls_augment_check_supported) */
      }
    }
  }
  if (frames_out) *frames_out = frames;
  return n;
}
