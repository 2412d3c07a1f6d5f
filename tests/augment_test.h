/* What the --augment tests share: a specification parsed (and accepted for training), and the
 * specifications a fixture's metadata lists ("specs": a JSON list of strings without escapes).
 * Include after check.h and ops_test.h. */
#ifndef CLS_AUGMENT_TEST_H
#define CLS_AUGMENT_TEST_H

#include <stdio.h>
#include <string.h>

#include "clspeech/features.h"

/* A specification parsed (whether training runs it is not asked). */
static inline cls_augmentation augment_parse(const char *spec) {
  cls_augmentation a;
  cls_error err;
  cls_error_clear(&err);
  CHECK(cls_augment_parse(spec, &a, &err) == CLS_OK, "parse \"%s\": %s", spec, err.text);
  return a;
}

static inline cls_augmentation augment_parse_supported(const char *spec) {
  cls_augmentation a;
  cls_error err;
  cls_error_clear(&err);
  CHECK(cls_augment_parse(spec, &a, &err) == CLS_OK, "parse \"%s\": %s", spec, err.text);
  CHECK(cls_augment_check_supported(&a, &err) == CLS_OK, "\"%s\" refused: %s", spec, err.text);
  return a;
}

static inline int augment_fixture_specs(const cls_safetensors *fx, cls_augmentation *augs, int cap) {
  const char *s = cls_safetensors_meta(fx, "specs");
  int n = 0;
  while (s && (s = strchr(s, '"')) && n < cap) {
    const char *end = strchr(s + 1, '"');
    if (!end) break;
    char spec[256];
    snprintf(spec, sizeof spec, "%.*s", (int)(end - s - 1), s + 1);
    augs[n++] = augment_parse_supported(spec);
    s = end + 1;
  }
  return n;
}

#endif
