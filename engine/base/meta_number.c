/* Bounded numbers from metadata text (see meta_number.h). */
#include "base/meta_number.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

cls_status cls_meta_parse_int(const char *path, const char *key, const char *text, long long lo, long long hi,
                              long long *out, cls_error *err) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (!*text || *end || errno || v < lo || v > hi)
    return cls_error_set(err, CLS_ERR_IO, "%s: metadata %s is \"%.40s\", not a whole number in %lld..%lld", path, key,
                         text, lo, hi);
  *out = v;
  return CLS_OK;
}

cls_status cls_meta_parse_real(const char *path, const char *key, const char *text, double lo, double hi, double *out,
                               cls_error *err) {
  char *end = NULL;
  double v = strtod(text, &end);
  if (!*text || *end || isnan(v) || v < lo || v > hi)
    return cls_error_set(err, CLS_ERR_IO, "%s: metadata %s is \"%.40s\", not a number in %g..%g", path, key, text, lo,
                         hi);
  *out = v;
  return CLS_OK;
}
