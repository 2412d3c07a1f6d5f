/* The audio paths of one DeepSpeech CSV file, read as the data sets read theirs (dataset.c: the header's
 * columns, the rows, paths resolved against the CSV's folder), for what reads audio lists that are not
 * data sets (overlay_source.c). */
#ifndef CLS_DATA_DATASET_PATHS_H
#define CLS_DATA_DATASET_PATHS_H

#include "clspeech/base.h"

/* Every row's resolved wav_filename in file order: *paths [*n] (malloc'd, each and the array; free both).
 * The data sets' errors (missing or empty file, no header, malformed rows) with `err` naming the file. */
cls_status cls_dataset_paths(const char *csv, char ***paths, int *n, cls_error *err);

#endif
