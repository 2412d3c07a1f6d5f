/* --augment overlay's source audio (data/overlay_source.h, cls_overlay_source_check of clspeech/data.h):
 * the CSV's rows through dataset_paths.h, each decoded or probed through the features' audio input.
 * Nothing here prints or exits. */
#include "data/overlay_source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/data.h"
#include "clspeech/features.h"
#include "data/dataset_paths.h"

static void free_paths(char **paths, int n) {
  for (int i = 0; i < n; i++) free(paths[i]);
  free(paths);
}

static cls_status no_rows(const char *csv, cls_error *err) {
  return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: the CSV lists no audio (a header and no rows)", csv);
}

cls_status cls_overlay_source_check(const char *csv, cls_error *err) {
  char **paths = NULL;
  int n = 0;
  cls_status st = cls_dataset_paths(csv, &paths, &n, err);
  if (st != CLS_OK) return st;
  if (n == 0) st = no_rows(csv, err);
  char first[512] = "";
  int fine = 0;
  for (int i = 0; st == CLS_OK && i < n && !fine; i++) {
    cls_audio_header h;
    cls_error why;
    fine = cls_audio_probe(paths[i], &h, &why) == CLS_AUDIO_FINE;
    if (!fine && !first[0]) snprintf(first, sizeof first, "%s: %.400s", paths[i], why.text);
  }
  if (st == CLS_OK && !fine)
    st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: none of its %d audio files is readable (the first: %s)", csv,
                       n, first);
  free_paths(paths, n);
  return st;
}

/* Appends a's samples to the pool of `csv`'s audio as one more clip. */
static cls_status append(const char *csv, cls_audio_pool *pool, const cls_audio *a, size_t *cap, cls_error *err) {
  if (pool->n_samples + a->n_samples > *cap) {
    size_t c = *cap ? *cap : 1 << 16;
    while (c < pool->n_samples + a->n_samples) c *= 2;
    float *s = realloc(pool->samples, c * sizeof *s);
    if (!s) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of host memory for %zu samples", csv, c);
    pool->samples = s;
    *cap = c;
  }
  memcpy(pool->samples + pool->n_samples, a->samples, a->n_samples * sizeof *a->samples);
  pool->n_samples += a->n_samples;
  pool->clip_start[++pool->n_clips] = pool->n_samples;
  return CLS_OK;
}

cls_status cls_overlay_source_load(const char *csv, int rate, cls_audio_pool *pool, cls_overlay_source_info *info,
                                   cls_error *err) {
  memset(pool, 0, sizeof *pool);
  memset(info, 0, sizeof *info);
  char **paths = NULL;
  int n = 0;
  cls_status st = cls_dataset_paths(csv, &paths, &n, err);
  if (st != CLS_OK) return st;
  info->rows = n;
  pool->sample_rate = rate;
  if (n == 0) st = no_rows(csv, err);
  if (st == CLS_OK && !(pool->clip_start = calloc((size_t)n + 1, sizeof *pool->clip_start)))
    st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of host memory", csv);
  size_t cap = 0;
  cls_error first;
  cls_error_clear(&first);
  for (int i = 0; st == CLS_OK && i < n; i++) {
    cls_audio a;
    cls_error why;
    if (cls_audio_read(paths[i], rate, &a, &why) != CLS_OK) {
      if (first.status == CLS_OK) first = why;
      if (!info->unreadable++) snprintf(info->first_unreadable, sizeof info->first_unreadable, "%.*s",
                                        (int)sizeof info->first_unreadable - 1, why.text);
      continue;
    }
    if (a.n_samples > 0) {
      st = append(csv, pool, &a, &cap, err);
    } else if (!info->unreadable++) {
      snprintf(info->first_unreadable, sizeof info->first_unreadable, "%s: no samples", paths[i]);
    }
    cls_audio_free(&a);
  }
  if (st == CLS_OK && pool->n_clips == 0)
    st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: none of its %d audio files could be decoded (the first: %s)",
                       csv, n, first.status != CLS_OK ? first.text : "no samples");
  float peak = 0;
  for (size_t i = 0; st == CLS_OK && i < pool->n_samples; i++) peak = fmaxf(peak, fabsf(pool->samples[i]));
  if (st == CLS_OK && peak == 0)
    st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: its audio is silence only (nothing to overlay)", csv);
  free_paths(paths, n);
  if (st != CLS_OK) cls_audio_pool_clear(pool);
  return st;
}
