/* --augment's overlay (features/augment/overlay.h): the layers laid from a pool of decoded clips, the
 * mix at a signal-to-noise ratio and the renormalisation, after DeepSpeech 0.9.3's Overlay.apply and
 * util/audio.py. Host-only; nothing here prints or exits. */
#include "features/augment/overlay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/augment/draws.h"
#include "features/augment/levels.h"

void cls_audio_pool_clear(cls_audio_pool *pool) {
  free(pool->samples);
  free(pool->clip_start);
  memset(pool, 0, sizeof *pool);
}

cls_status cls_augment_overlay(float *x, size_t n, const cls_audio_pool *pool, double snr_db, int layers,
                               const int *first_clip, const size_t *first_offset, cls_error *err) {
  if (n == 0 || layers <= 0 || pool->n_clips <= 0) layers = 0;
  for (int l = 0; l < layers; l++) { /* a start outside the pool would read past its samples */
    const int c = first_clip[l];
    if (c < 0 || c >= pool->n_clips || first_offset[l] >= pool->clip_start[c + 1] - pool->clip_start[c])
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                           "overlay: layer %d starts at sample %zu of clip %d, outside the pool's %d clips", l,
                           first_offset[l], c, pool->n_clips);
  }
  double *mix = calloc(n ? n : 1, sizeof *mix);
  if (!mix) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "overlay: out of host memory for %zu samples", n);
  for (int l = 0; l < layers; l++) {
    int clip = first_clip[l];
    size_t from = pool->clip_start[clip] + first_offset[l], at = 0;
    while (at < n) {
      const size_t end = pool->clip_start[clip + 1], take = end - from < n - at ? end - from : n - at;
      for (size_t i = 0; i < take; i++) mix[at + i] += pool->samples[from + i];
      at += take;
      clip = clip + 1 < pool->n_clips ? clip + 1 : 0;
      from = pool->clip_start[clip];
    }
  }
  const double orig = cls_audio_max_dbfs(x, n);
  const double gain = fmin(1e300, pow(10.0, (orig - cls_audio_max_dbfs_double(mix, n) - snr_db) / 20.0));
  for (size_t i = 0; i < n; i++) mix[i] = (double)x[i] + mix[i] * gain;
  cls_audio_normalize(mix, n, orig, x);
  free(mix);
  return CLS_OK;
}

void cls_augment_overlay_start(const cls_audio_pool *pool, uint32_t seed, uint32_t epoch, uint32_t utterance, int aug,
                               int layer, int *clip, size_t *offset) {
  const uint32_t k = 3u + 2u * (uint32_t)layer;
  int c = (int)floor(cls_augment_pick_uniform(seed, epoch, utterance, aug, k) * pool->n_clips);
  c = c < pool->n_clips ? c : pool->n_clips - 1;
  const size_t length = pool->clip_start[c + 1] - pool->clip_start[c];
  size_t o = (size_t)floor(cls_augment_pick_uniform(seed, epoch, utterance, aug, k + 1) * (double)length);
  *clip = c;
  *offset = o < length ? o : length - 1;
}

cls_status cls_augment_overlay_drawn(float *x, size_t n, const cls_audio_pool *pool, double snr_db, int layers,
                                     uint32_t seed, uint32_t epoch, uint32_t utterance, int aug, cls_error *err) {
  if (layers < 0 || pool->n_clips <= 0) layers = 0;
  int *clip = malloc((size_t)(layers ? layers : 1) * sizeof *clip);
  size_t *offset = malloc((size_t)(layers ? layers : 1) * sizeof *offset);
  cls_status st = CLS_OK;
  if (!clip || !offset) st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "overlay: out of host memory for %d layers", layers);
  for (int l = 0; st == CLS_OK && l < layers; l++)
    cls_augment_overlay_start(pool, seed, epoch, utterance, aug, l, &clip[l], &offset[l]);
  if (st == CLS_OK) st = cls_augment_overlay(x, n, pool, snr_db, layers, clip, offset, err);
  free(clip);
  free(offset);
  return st;
}
