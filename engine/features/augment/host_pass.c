/* --augment's host pass (features/augment/host_pass.h): an utterance's sample-domain draws and their
 * dispatch to the files that define them, then its signal-domain augmentations. Host-only; nothing here
 * prints or exits. */
#include "features/augment/host_pass.h"

#include <math.h>

#include "features/augment/codec.h"
#include "features/augment/draws.h"
#include "features/augment/levels.h"
#include "features/augment/overlay.h"
#include "features/augment/resample.h"
#include "features/augment/reverb.h"
#include "features/augment/signal_domain.h"

int cls_augment_is_sample(cls_augment_kind kind) {
  return kind == CLS_AUGMENT_OVERLAY || kind == CLS_AUGMENT_CODEC || kind == CLS_AUGMENT_VOLUME ||
         kind == CLS_AUGMENT_REVERB || kind == CLS_AUGMENT_RESAMPLE;
}

/* Augmentation j of the command line for this utterance: 1 and *op when it is a sample-domain one and
   applied. */
static int draw_one(const cls_augmentation *a, int j, uint32_t seed, uint32_t epoch, uint32_t utterance, double clock,
                    cls_sample_op *op) {
  if (!cls_augment_is_sample(a->kind) || !cls_augment_applied(a, seed, epoch, utterance, j)) return 0;
  *op = (cls_sample_op){a->kind, j, {0, 0}};
  for (int i = 0; i < 2 && cls_augment_param_name(a->kind, i); i++)
    op->v[i] = cls_augment_pick(&a->param[i], cls_augment_param_integer(a->kind, i), clock,
                                cls_augment_pick_uniform(seed, epoch, utterance, j, 1u + (uint32_t)i));
  /* A radius may carry reverb's delay or decay below 0: taken as 0 (a negative decay would make the
     echoes grow without bound; delays under 16 samples are 16 anyway). */
  if (a->kind == CLS_AUGMENT_REVERB)
    for (int i = 0; i < 2; i++) op->v[i] = fmax(0.0, op->v[i]);
  return 1;
}

int cls_augment_sample_draw(const cls_augmentation *augs, int n_augs, uint32_t seed, uint32_t epoch,
                            uint32_t utterance, double clock, cls_sample_op *ops) {
  clock = cls_augment_clock(clock);
  int n = 0;
  for (int j = 0; j < n_augs; j++) n += draw_one(&augs[j], j, seed, epoch, utterance, clock, &ops[n]);
  return n;
}

cls_status cls_augment_sample_apply(const cls_sample_op *op, const cls_audio_pool *source, uint32_t seed,
                                    uint32_t epoch, uint32_t utterance, float *x, size_t n, int rate, cls_error *err) {
  switch (op->kind) {
    case CLS_AUGMENT_OVERLAY:
      if (!source) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "overlay: its source audio is not loaded");
      if (source->sample_rate != rate)
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                             "overlay: its source audio is at %d Hz, the utterance at %d Hz (decode both at one rate)",
                             source->sample_rate, rate);
      return cls_augment_overlay_drawn(x, n, source, op->v[0], (int)op->v[1], seed, epoch, utterance, op->aug, err);
    case CLS_AUGMENT_CODEC: return cls_augment_codec(x, n, rate, (int)op->v[0], err);
    case CLS_AUGMENT_VOLUME: cls_augment_volume(x, n, op->v[0]); return CLS_OK;
    case CLS_AUGMENT_REVERB: return cls_augment_reverb(x, n, rate, op->v[0], op->v[1], err);
    case CLS_AUGMENT_RESAMPLE: return cls_augment_resample(x, n, rate, (int)op->v[0], err);
    default: return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s is not a sample-domain augmentation",
                                  cls_augment_kind_name(op->kind));
  }
}

cls_status cls_augment_samples(const cls_augmentation *augs, int n_augs, const cls_audio_pool *const *sources,
                               uint32_t seed, uint32_t epoch, uint32_t utterance, double clock, float *x, size_t n,
                               int rate, cls_error *err) {
  clock = cls_augment_clock(clock);
  for (int j = 0; j < n_augs; j++) {
    cls_sample_op op;
    if (!draw_one(&augs[j], j, seed, epoch, utterance, clock, &op)) continue;
    cls_status st = cls_augment_sample_apply(&op, sources ? sources[j] : NULL, seed, epoch, utterance, x, n, rate, err);
    if (st != CLS_OK) return st;
  }
  for (int j = 0; j < n_augs; j++) /* DeepSpeech's order: the sample domain, then the signal's */
    if (augs[j].domain == CLS_AUGMENT_SIGNAL) cls_augment_signal(&augs[j], j, seed, epoch, utterance, clock, x, n, rate);
  return CLS_OK;
}
