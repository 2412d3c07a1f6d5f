/* What --augment needs loaded before training: each overlay's source audio, decoded once when the crew
 * is made (data/overlay_source.h) and handed to the batch loader by augmentation index; overlays naming
 * the same source (the same path string) share one pool. */
#ifndef CLS_TRAIN_AUGMENT_SOURCES_H
#define CLS_TRAIN_AUGMENT_SOURCES_H

#include "clspeech/features.h"
#include "device/engine.h"
#include "features/augment/overlay.h"

typedef struct cls_augment_sources {
  cls_audio_pool *pools;             /* [n]: augmentation j's pool (empty for a non-overlay) */
  const cls_audio_pool **by_aug;     /* [n]: &pools[k] for an overlay, k its source's first overlay; else NULL */
  int n;
} cls_augment_sources;

/* Loads the sources of augs[0..n) at `rate` Hz, logging each one's size (and a warning with the count
 * and the first reason where rows were left out unreadable); CLS_ERR_INVALID_ARGUMENT (or
 * the loader's status) through cls_fail naming --augment and the file when one cannot be used. */
cls_status cls_augment_sources_load(cls_engine *e, const cls_augmentation *augs, int n, int rate,
                                    cls_augment_sources *out);
void cls_augment_sources_free(cls_augment_sources *s);

#endif
