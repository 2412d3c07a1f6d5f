/* JSON output through jansson (see json_out.h). */
#include "json_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

json_t *jo_text(const char *s) {
  if (!s) return json_null();
  json_t *v = json_string(s);
  if (v) return v;
  /* not UTF-8 (or out of memory): the same text with every non-ASCII byte as '?' */
  char *ascii = strdup(s);
  if (!ascii) return NULL;
  for (char *c = ascii; *c; c++)
    if ((unsigned char)*c >= 0x80) *c = '?';
  v = json_string(ascii);
  free(ascii);
  return v;
}

json_t *jo_real(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *jo_set(json_t *object, const char *key, json_t *value) {
  /* json_object_set_new releases value on every failure, NULL object included */
  if (json_object_set_new(object, key, value) == 0) return object;
  json_decref(object);
  return NULL;
}

json_t *jo_push(json_t *array, json_t *value) {
  if (json_array_append_new(array, value) == 0) return array;
  json_decref(array);
  return NULL;
}

int jo_dump(json_t *root, FILE *out) {
  if (!root) return -1;
  int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
  json_decref(root);
  if (rc == 0 && fputc('\n', out) == EOF) rc = -1;
  return rc;
}
