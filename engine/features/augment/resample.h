/* --augment's rate conversions on the host: libsamplerate's medium sinc converter, the round trip
 * through another rate that resample and codec (codec.c) take, and the resample augmentation
 * (DeepSpeech 0.9.3's Resample; host_pass.c applies it in the sample domain). Calls no other file of
 * features/augment/. Host-only: base and libsamplerate. */
#ifndef CLS_FEATURES_AUGMENT_RESAMPLE_H
#define CLS_FEATURES_AUGMENT_RESAMPLE_H

#include <stddef.h>

#include "clspeech/base.h"

/* resample: x down to `to_rate` and back up to `rate` with libsamplerate's medium sinc converter, kept
 * at n samples (the round trip's end cut off or zero-filled). A `to_rate` at or above `rate` leaves x
 * as it is; one below rate / 256 (libsamplerate's limit) is taken as rate / 256. */
cls_status cls_augment_resample(float *x, size_t n, int rate, int to_rate, cls_error *err);

/* libsamplerate's medium sinc converter on in[n_in] from `from_rate` to `to_rate` Hz into out[cap]:
 * *got samples. The resample and codec augmentations' one wrapper. */
cls_status cls_augment_convert(const float *in, size_t n_in, int from_rate, int to_rate, float *out, size_t cap,
                               size_t *got, cls_error *err);

/* x[n] at `rate` converted to `via` Hz (cls_augment_convert), passed through `step` there in place (NULL:
 * nothing), converted back and kept at n samples (the end cut off or zero-filled); via == rate: `step`
 * on x itself. Audio so short that the conversion leaves no sample at `via` (1 sample halved) is kept as
 * it is, `step` not called. The resample and codec augmentations' round trip. */
typedef cls_status (*cls_rate_step)(float *y, size_t m, int rate, void *user, cls_error *err);
cls_status cls_augment_through_rate(float *x, size_t n, int rate, int via, cls_rate_step step, void *user,
                                   cls_error *err);

#endif
