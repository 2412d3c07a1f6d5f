/* Numbers stored as text in a file's metadata (checkpoints' safetensors header): parsed whole and
 * bounded, or an error naming the file and the key. The model layer's checkpoint keys and the train
 * layer's loop counters both read their values through these. */
#ifndef CLS_META_NUMBER_H
#define CLS_META_NUMBER_H

#include "clspeech/base.h"

/* `text`, the value of metadata `key` in `path`: a whole decimal number in [lo, hi]. */
cls_status cls_meta_parse_int(const char *path, const char *key, const char *text, long long lo, long long hi,
                              long long *out, cls_error *err);
/* `text`: a number (not NaN) in [lo, hi]. */
cls_status cls_meta_parse_real(const char *path, const char *key, const char *text, double lo, double hi, double *out,
                               cls_error *err);

#endif
