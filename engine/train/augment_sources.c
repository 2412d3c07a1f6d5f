/* --augment's sources for training (train/augment_sources.h). */
#include "train/augment_sources.h"

#include <stdlib.h>
#include <string.h>

#include "data/overlay_source.h"
#include "device/log.h"

cls_status cls_augment_sources_load(cls_engine *e, const cls_augmentation *augs, int n, int rate,
                                    cls_augment_sources *out) {
  memset(out, 0, sizeof *out);
  int overlays = 0;
  for (int j = 0; j < n; j++) overlays += augs[j].kind == CLS_AUGMENT_OVERLAY;
  if (overlays == 0) return CLS_OK;
  out->pools = calloc((size_t)n, sizeof *out->pools);
  out->by_aug = calloc((size_t)n, sizeof *out->by_aug);
  out->n = n;
  if (!out->pools || !out->by_aug) {
    cls_augment_sources_free(out);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "--augment overlay: out of host memory");
  }
  for (int j = 0; j < n; j++) {
    if (augs[j].kind != CLS_AUGMENT_OVERLAY) continue;
    int same = 0; /* an earlier overlay of the same source: its pool shared, not decoded twice */
    while (same < j && (augs[same].kind != CLS_AUGMENT_OVERLAY || strcmp(augs[same].source, augs[j].source))) same++;
    if (same < j) {
      out->by_aug[j] = out->by_aug[same];
      continue;
    }
    cls_overlay_source_info info;
    cls_error err;
    cls_status st = cls_overlay_source_load(augs[j].source, rate, &out->pools[j], &info, &err);
    if (st != CLS_OK) {
      cls_augment_sources_free(out);
      return cls_fail(e, st, "--augment overlay: source %s", err.text);
    }
    const cls_audio_pool *p = &out->pools[j];
    out->by_aug[j] = p;
    cls_log(e, CLS_LOG_NOTICE,
            "--augment overlay: source %s: %d clip%s, %.1f s at %d Hz (%.1f MiB in memory)", augs[j].source,
            p->n_clips, p->n_clips == 1 ? "" : "s", (double)p->n_samples / rate, rate,
            (double)p->n_samples * sizeof(float) / 1048576.0);
    if (info.unreadable)
      cls_log(e, CLS_LOG_WARNING, "--augment overlay: source %s: %d of its %d rows unreadable, left out (the first: %s)",
              augs[j].source, info.unreadable, info.rows, info.first_unreadable);
  }
  return CLS_OK;
}

void cls_augment_sources_free(cls_augment_sources *s) {
  for (int j = 0; s->pools && j < s->n; j++) cls_audio_pool_clear(&s->pools[j]);
  free(s->pools);
  free((void *)s->by_aug);
  memset(s, 0, sizeof *s);
}
