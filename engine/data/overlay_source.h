/* --augment overlay's source: a DeepSpeech CSV of audio (wav_filename, wav_filesize, transcript; paths
 * resolved as the data sets resolve them) decoded once, at training start, into a pool of clips the
 * batch loader mixes in (features/augment/overlay.h). The frontend's quick check before any work is
 * cls_overlay_source_check (clspeech/data.h). */
#ifndef CLS_DATA_OVERLAY_SOURCE_H
#define CLS_DATA_OVERLAY_SOURCE_H

#include "clspeech/base.h"
#include "features/augment/overlay.h"

/* What a load found, for the log. */
typedef struct cls_overlay_source_info {
  int rows;       /* the CSV's rows */
  int unreadable; /* rows whose audio could not be decoded (or had no samples): left out */
  char first_unreadable[512]; /* the first of them and why ("" when none), cut short when longer */
} cls_overlay_source_info;

/* Decodes every row's audio of `csv` at `rate` Hz (cls_audio_read: mono, resampled) into *pool, in CSV
 * order, leaving out what cannot be decoded. CLS_ERR_INVALID_ARGUMENT with `err` naming the file when
 * it has no rows, none of its audio decodes (naming the first failure), or all of it is silence; the
 * CSV's own errors (missing, malformed) as the data sets give them; CLS_ERR_OUT_OF_MEMORY. */
cls_status cls_overlay_source_load(const char *csv, int rate, cls_audio_pool *pool, cls_overlay_source_info *info,
                                   cls_error *err);

#endif
