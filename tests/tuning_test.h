/* For tests of the GEMM tuning file: tuning_engine, an engine whose kernels and tuning file live in a folder
 * of the test's and whose log goes to log_capture.h's capture; and tuning_rewrite, which edits a stored file
 * (one piece of text replaced by another) and seals it again with a correct checksum line, as a
 * damaged-but-sealed or foreign file would be. */
#ifndef CLS_TEST_TUNING_TEST_H
#define CLS_TEST_TUNING_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "check.h"
#include "clspeech/clspeech.h"
#include "device/gemm_tuning.h"
#include "log_capture.h"

/* An engine (NULL when it fails, the failure checked) with its kernel cache and tuning file in `dir`, the
 * stored tuning loaded or not (`tuning`), no kernel options from the environment, its log (debug and up)
 * captured. */
static cls_engine *tuning_engine(const char *dir, bool tuning) {
  cls_engine_options o = cls_engine_options_from_environment();
  o.log = capture_log;
  o.log_level = CLS_LOG_DEBUG;
  o.kernel_cache = true;
  o.kernel_options = NULL;
  snprintf(o.kernel_cache_dir, sizeof o.kernel_cache_dir, "%s", dir);
  o.gemm_tuning = tuning;
  cls_engine *e = NULL;
  const cls_status st = cls_engine_create(&o, &e);
  CHECK(st == CLS_OK, "engine: %s", cls_engine_error(e));
  if (st != CLS_OK) {
    cls_engine_destroy(e);
    return NULL;
  }
  return e;
}

/* Rewrites the file at path with `from` replaced by `to` and a correct checksum line. */
static void tuning_rewrite(const char *path, const char *from, const char *to) {
  char *text = NULL;
  cls_error err;
  size_t len = 0;
  CHECK(cls_read_file(path, &text, &len, &err) == CLS_OK, "read %s: %s", path, err.text);
  if (!text) return;
  char body[8192];
  char *sum = strstr(text, "sha256 ");
  char *at = strstr(text, from);
  CHECK(sum && at && at < sum, "\"%s\" before the checksum in %s", from, path);
  if (!sum || !at) {
    free(text);
    return;
  }
  snprintf(body, sizeof body, "%.*s%s%.*s", (int)(at - text), text, to, (int)(sum - at - strlen(from)),
           at + strlen(from));
  const size_t sealed = cls_gemm_tuning_seal(body, strlen(body), sizeof body);
  CHECK(sealed > 0, "sealing the rewritten %s", path);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL, "open %s for writing", path);
  if (f) {
    fwrite(body, 1, sealed, f);
    fclose(f);
  }
  free(text);
}

#endif
