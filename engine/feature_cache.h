/* On-disk cache of per-file features (--feature_cache DIR), so that later epochs skip decoding
 * and feature computation. An entry is keyed by a SHA-256 of the file's path, size and
 * modification time and of every feature parameter; it carries a checksum and is written to a
 * temporary file and renamed. A stale, corrupt or unreadable entry is a miss, never an error. */
#ifndef CLS_FEATURE_CACHE_H
#define CLS_FEATURE_CACHE_H

#include <stddef.h>

#include "clspeech.h"
#include "mfcc.h"

/* Key of `audio_path` under `cfg`; fails (CLS_ERR_IO, err names the file) when it cannot be stat'ed. */
cls_status cls_feature_cache_key(const char *audio_path, const cls_mfcc_config *cfg, char key[65], char *err,
                                 size_t err_cap);

/* On a hit, *features (malloc'ed, [*frames, n_coeff]) and *frames; 1 hit, 0 miss. */
int cls_feature_cache_load(const char *dir, const char *key, int n_coeff, float **features, size_t *frames);

/* Stores an entry (creating dir); CLS_ERR_IO with err set when it cannot. */
cls_status cls_feature_cache_store(const char *dir, const char *key, int n_coeff, const float *features, size_t frames,
                                   char *err, size_t err_cap);

#endif
