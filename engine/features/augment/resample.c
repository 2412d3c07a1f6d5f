/* --augment's rate conversions and the resample augmentation (features/augment/resample.h), through
 * libsamplerate. Host-only; nothing here prints or exits. */
#include "features/augment/resample.h"

#include <math.h>
#include <samplerate.h>
#include <stdlib.h>
#include <string.h>

/* The converter of the resample augmentation: a round trip that only has to sound like narrowband
   audio, at a fraction of the best converter's cost (the loader's thread runs it for every utterance). */
#define RESAMPLE_CONVERTER SRC_SINC_MEDIUM_QUALITY

cls_status cls_augment_convert(const float *in, size_t n_in, int from_rate, int to_rate, float *out, size_t cap,
                               size_t *got, cls_error *err) {
  SRC_DATA d = {.data_in = in, .data_out = out, .input_frames = (long)n_in, .output_frames = (long)cap,
                .src_ratio = (double)to_rate / from_rate};
  const int rc = src_simple(&d, RESAMPLE_CONVERTER, 1);
  *got = rc == 0 ? (size_t)d.output_frames_gen : 0;
  if (rc != 0)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "resample %d Hz -> %d Hz: %s", from_rate, to_rate,
                         src_strerror(rc));
  return CLS_OK;
}

cls_status cls_augment_through_rate(float *x, size_t n, int rate, int via, cls_rate_step step, void *user,
                                   cls_error *err) {
  if (n == 0) return CLS_OK;
  if (via == rate) return step ? step(x, n, rate, user, err) : CLS_OK;
  const size_t mid_cap = (size_t)ceil((double)n * via / rate) + 16, out_cap = n + 64;
  float *mid = malloc(mid_cap * sizeof *mid), *back = malloc(out_cap * sizeof *back);
  if (!mid || !back) {
    free(mid);
    free(back);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu samples at %d Hz", n, via);
  }
  size_t got = 0;
  cls_status st = cls_augment_convert(x, n, rate, via, mid, mid_cap, &got, err);
  const int empty = st == CLS_OK && got == 0; /* too short to leave a sample at `via`: x kept as it is */
  if (st == CLS_OK && !empty && step) st = step(mid, got, via, user, err);
  if (st == CLS_OK && !empty) st = cls_augment_convert(mid, got, via, rate, back, out_cap, &got, err);
  if (st == CLS_OK && !empty) {
    const size_t keep = got < n ? got : n;
    memcpy(x, back, keep * sizeof *x);
    memset(x + keep, 0, (n - keep) * sizeof *x);
  }
  free(mid);
  free(back);
  return st;
}

cls_status cls_augment_resample(float *x, size_t n, int rate, int to_rate, cls_error *err) {
  if (n == 0 || to_rate >= rate) return CLS_OK;
  const int lowest = (rate + 255) / 256;
  return cls_augment_through_rate(x, n, rate, to_rate < lowest ? lowest : to_rate, NULL, NULL, err);
}
