/* The audio headers `clspeech import` checked, kept between runs in a file of the output folder: one
 * entry per audio file keyed by its path, size and mtime, holding cls_audio_probe's answer (the problem,
 * the header, the detail text), so that a second run over a corpus opens no audio it has seen. */
#ifndef CLS_DATA_IMPORT_CACHE_H
#define CLS_DATA_IMPORT_CACHE_H

#include <stdint.h>

#include "clspeech/base.h"
#include "clspeech/features.h"

typedef struct cls_import_cache_entry {
  char *path;
  int64_t size, mtime_ns;
  int problem; /* cls_audio_problem */
  cls_audio_header header;
  char detail[160];
} cls_import_cache_entry;

typedef struct cls_import_cache {
  cls_import_cache_entry *v;
  int n;
} cls_import_cache;

/* Reads the cache file (a missing or unreadable one, or one of another version, is an empty cache;
 * malformed lines are skipped). Fails only for memory. */
cls_status cls_import_cache_read(const char *path, cls_import_cache *cache, cls_error *err);
/* The entry of `path` with that size and mtime, NULL for none. */
const cls_import_cache_entry *cls_import_cache_find(const cls_import_cache *cache, const char *path, int64_t size,
                                                    int64_t mtime_ns);
/* Writes `n` entries (paths holding a tab or a line end are left out) by the output rule. */
cls_status cls_import_cache_write(const char *path, const cls_import_cache_entry *v, int n, cls_error *err);
void cls_import_cache_free(cls_import_cache *cache);

#endif
