/* For tests that assert what the engine logged: capture_log, an engine log callback
 * (cls_engine_options.log) appending "[level] message\n" to log_text (clear it with log_text[0] = '\0'). */
#ifndef CLS_TEST_LOG_CAPTURE_H
#define CLS_TEST_LOG_CAPTURE_H

#include <stdio.h>
#include <string.h>

#include "clspeech/base.h"

static char log_text[65536];

static void capture_log(void *user, cls_log_level level, const char *message) {
  (void)user;
  size_t used = strlen(log_text);
  snprintf(log_text + used, sizeof log_text - used, "[%d] %s\n", (int)level, message);
}

#endif
