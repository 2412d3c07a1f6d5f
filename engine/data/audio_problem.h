/* How the data layer words an audio file's problem (cls_audio_probe's verdict, clspeech/features.h) in a
 * skip report: the data sets' skipped samples and `clspeech import`'s excluded rows say it alike. */
#ifndef CLS_DATA_AUDIO_PROBLEM_H
#define CLS_DATA_AUDIO_PROBLEM_H

#include <stddef.h>

#include "clspeech/features.h"

/* The problem `p` with the probe's reason `why` (may be "") into out[cap]: "cannot open the audio file:
 * WHY", "not a readable audio file (WHY)", "the audio file holds no samples", "truncated audio file: ...",
 * "implausible audio header: WHY". */
void cls_audio_problem_describe(cls_audio_problem p, const char *why, char *out, size_t cap);

#endif
