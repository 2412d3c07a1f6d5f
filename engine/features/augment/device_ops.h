/* --augment's device operations (clspeech/features.h has the parsed entries): an utterance's draws
 * turned into the operations the device feature path applies (kernels/augment.cl, device_ops.c), and
 * a batch's operations as the device MFCC takes them. A tower's batch input draws them for each
 * utterance of its share, from the utterance's index in the epoch and its clock (the loader's). */
#ifndef CLS_FEATURES_AUGMENT_DEVICE_OPS_H
#define CLS_FEATURES_AUGMENT_DEVICE_OPS_H

#include <stdint.h>

#include "clspeech/features.h"

/* One operation on one utterance, in the device's layout (CLS_AUGOP_WORDS ints, augment_draw.h). */
typedef struct cls_augment_op {
  int32_t kind;   /* CLS_AUGOP_* */
  int32_t domain; /* CLS_AUGOP_SPECTROGRAM or CLS_AUGOP_FEATURES */
  int32_t lo, hi; /* a mask's bins or frames [lo, hi) */
  int32_t aug;    /* the augmentation's index on the command line (keys the element draws) */
  float value;    /* dropout's rate, add's and multiply's standard deviation; pitch, tempo factor; warp's
                     time flow deviation (frames) */
  int32_t stage;  /* spectrogram domain: the resizes (pitch, tempo, warp) before it, or a resize's index */
  float value2;   /* warp's frequency flow deviation (bins) */
} cls_augment_op;

/* What an utterance's draws depend on besides itself. */
typedef struct cls_augment_context {
  const cls_augmentation *augs; /* in command-line order */
  int n_augs;
  uint32_t seed, epoch;         /* the Philox key */
  int n_bins;                   /* spectrogram bins (fft_len / 2 + 1) */
  int win_step_ms;              /* --feature_win_step: a time mask's ms to frames */
  int max_frames;               /* the tower's frames per utterance: tempo's cap (0: none) */
} cls_augment_context;

/* The most operations one utterance can get from these augmentations. */
int cls_augment_max_ops(const cls_augmentation *augs, int n_augs);

/* Utterance `utterance` (its index in the epoch) of n_frames frames, whose transcript needs `need`
 * frames (cls_ctc_min_frames: tempo's floor), at training
 * clock `clock` (0 .. 1): each augmentation applied with its probability, its values picked, as
 * operations into ops[] (room for cls_augment_max_ops), spectrogram ones then features ones, each
 * domain in command-line order; a spectrogram operation's stage counts the resizes (pitch, tempo,
 * warp) before it, and a time mask spans the frames of its stage. Returns how many; *frames_out (may be
 * NULL) receives the frames after the tempos (features/augment/tempo.h's count). */
int cls_augment_utterance(const cls_augment_context *c, uint32_t utterance, double clock, int n_frames, int need,
                          cls_augment_op *ops, int *frames_out);

/* A batch's operations for the device MFCC (cls_mfcc_compute_augmented). */
typedef struct cls_augment_batch {
  const cls_augment_op *ops;   /* utterance i's are ops[op_first[i] .. op_first[i+1]) */
  const int *op_first;         /* [batch + 1] */
  const uint32_t *utterance;   /* [batch] index in the epoch */
  uint32_t seed, epoch;
} cls_augment_batch;

#endif
