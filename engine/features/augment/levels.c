/* --augment's peak levels and the volume augmentation (features/augment/levels.h). Host-only; nothing
 * here prints or exits. */
#include "features/augment/levels.h"

#include <float.h>
#include <math.h>

double cls_audio_peak_dbfs(double peak) { return 20.0 * log10(fmax(1e-16, peak)) + 3.0103; }

double cls_audio_max_dbfs(const float *x, size_t n) {
  double peak = 0;
  for (size_t i = 0; i < n; i++) peak = fmax(peak, fabs((double)x[i]));
  return cls_audio_peak_dbfs(peak);
}

double cls_audio_max_dbfs_double(const double *v, size_t n) {
  double peak = 0;
  for (size_t i = 0; i < n; i++) peak = fmax(peak, fabs(v[i]));
  return cls_audio_peak_dbfs(peak);
}

void cls_audio_normalize(const double *v, size_t n, double dbfs, float *x) {
  const double gain = pow(10.0, (dbfs - cls_audio_max_dbfs_double(v, n)) / 20.0);
  for (size_t i = 0; i < n; i++) {
    const double s = v[i] * gain;
    x[i] = (float)(s > 1.0 ? 1.0 : s < -1.0 ? -1.0 : s);
  }
}

static float clip(float v) { return v > 1.0f ? 1.0f : v < -1.0f ? -1.0f : v; }

void cls_augment_volume(float *x, size_t n, double dbfs) {
  /* A gain past float's range (a huge dbfs, or near-silent audio) is float's largest: 0 stays 0, not NaN. */
  const double g = pow(10.0, (dbfs - cls_audio_max_dbfs(x, n)) / 20.0);
  const float gain = g < FLT_MAX ? (float)g : FLT_MAX;
  for (size_t i = 0; i < n; i++) x[i] = clip(x[i] * gain);
}
