/* The skip report's words for an audio file's problem (see audio_problem.h). */
#include "data/audio_problem.h"

#include <stdio.h>

void cls_audio_problem_describe(cls_audio_problem p, const char *why, char *out, size_t cap) {
  switch (p) {
    case CLS_AUDIO_FINE: snprintf(out, cap, "readable"); return;
    case CLS_AUDIO_MISSING: snprintf(out, cap, "cannot open the audio file: %.200s", why); return;
    case CLS_AUDIO_NOT_AUDIO: snprintf(out, cap, "not a readable audio file (%.200s)", why); return;
    case CLS_AUDIO_EMPTY: snprintf(out, cap, "the audio file holds no samples"); return;
    case CLS_AUDIO_TRUNCATED:
      snprintf(out, cap, "truncated audio file: its header promises more sample data than the file holds");
      return;
    case CLS_AUDIO_BAD_HEADER: snprintf(out, cap, "implausible audio header: %.200s", why); return;
  }
  snprintf(out, cap, "not a readable audio file (%.200s)", why);
}
