/* --augment's tempo on the host: how many frames an utterance has after its tempo augmentations, from
 * the same draws the device operations take (device_ops.c), so that the batch loader knows an
 * augmented utterance's frames before its features are made. Host-only: base and kernels/' plain
 * headers. */
#ifndef CLS_FEATURES_AUGMENT_TEMPO_H
#define CLS_FEATURES_AUGMENT_TEMPO_H

#include <stdint.h>

#include "clspeech/features.h"

/* Frames after one tempo of `a` with the factor picked: DeepSpeech's int(frames / factor), capped at
 * max_time (ms, when > 0) in frames of `win_step_ms`, then raised to `need`, the frames CTC needs for
 * the transcript (cls_ctc_min_frames: its labels and one per adjacent repeat), so that neither a
 * factor nor a cap makes the transcript impossible (DeepSpeech raises to the label count before it
 * caps), then capped at `max_frames` (the tower's room, when > 0); at least 1. */
int cls_augment_tempo_frames(const cls_augmentation *a, double factor, int frames, int need, int max_frames,
                             int win_step_ms);

/* An utterance's frames after all its tempo augmentations, each applied with its probability, in
 * command-line order (its other augmentations keep the frame count). */
int cls_augment_frames(const cls_augmentation *augs, int n_augs, uint32_t seed, uint32_t epoch, uint32_t utterance,
                       double clock, int frames, int need, int max_frames, int win_step_ms);

#endif
