/* --augment's peak levels on the host, after DeepSpeech 0.9.3's util/audio.py: a buffer's level in
 * dBFS, normalize_audio after a mix (overlay and reverb call it), and the volume augmentation, which
 * sets the level. Calls no other file of features/augment/. Host-only: base. */
#ifndef CLS_FEATURES_AUGMENT_LEVELS_H
#define CLS_FEATURES_AUGMENT_LEVELS_H

#include <stddef.h>

/* DeepSpeech's peak level, 20 log10(max(1e-16, max |x|)) + 3.0103 dBFS (a full-scale sine is 0). */
double cls_audio_max_dbfs(const float *x, size_t n);
/* The same level of a peak (max |x|) already found, and of a double buffer. */
double cls_audio_peak_dbfs(double peak);
double cls_audio_max_dbfs_double(const double *v, size_t n);

/* DeepSpeech's normalize_audio after a mix in double (overlay, reverb): v[n] scaled, in double, so that
 * its peak level is `dbfs`, clipped to [-1, 1] and stored into x[n] as float. */
void cls_audio_normalize(const double *v, size_t n, double dbfs, float *x);

/* volume: x scaled (in float) so that its peak level is `dbfs`, then clipped to [-1, 1]; a gain beyond
 * float's range is FLT_MAX (so silence stays silence, never NaN). */
void cls_augment_volume(float *x, size_t n, double dbfs);

#endif
