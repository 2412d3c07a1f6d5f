/* --augment's reverb (features/augment/reverb.h). Host-only; nothing here prints or exits. */
#include "features/augment/reverb.h"

#include <math.h>
#include <stdlib.h>

#include "features/augment/levels.h"

cls_status cls_augment_reverb(float *x, size_t n, int rate, double delay_ms, double decay_db, cls_error *err) {
  static const int primes[5] = {17, 19, 23, 29, 31};
  if (n == 0) return CLS_OK;
  double *sum = malloc(n * sizeof *sum), *layer = malloc(n * sizeof *layer);
  if (!sum || !layer) {
    free(sum);
    free(layer);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "reverb: out of host memory for %zu samples", n);
  }
  const double orig = cls_audio_max_dbfs(x, n), g = pow(10.0, -decay_db / 20.0);
  for (size_t i = 0; i < n; i++) sum[i] = x[i];
  for (int p = 0; p < 5; p++) {
    double d = floor(delay_ms * ((double)primes[p] / primes[0]) * rate / 1000.0);
    const size_t delay = !(d >= 16) ? 16 : d > (double)n ? n : (size_t)d; /* 16 samples at least, as DeepSpeech */
    for (size_t i = 0; i < n; i++) {
      layer[i] = x[i];
      if (i >= delay) layer[i] += g * layer[i - delay]; /* the echoes of echoes too */
      sum[i] += layer[i];
    }
  }
  cls_audio_normalize(sum, n, orig, x);
  free(sum);
  free(layer);
  return CLS_OK;
}
