/* --augment's power-spectrogram path on the device (kernels/augment_resize.cl): for a batch whose
 * operations resize the spectrogram (pitch, tempo, warp) or add to or multiply the power, the device
 * MFCC (mfcc_device.c) hands the FFT's half spectrum here and takes back a float power spectrogram of
 * each utterance's final frames, which its filterbank's power variant turns into features. Batches
 * without such operations keep the complex path (augment.cl). */
#ifndef CLS_FEATURES_AUGMENT_POWER_H
#define CLS_FEATURES_AUGMENT_POWER_H

#include "device/engine.h"
#include "features/augment/device_ops.h"

typedef struct cls_augment_power cls_augment_power;

/* The kernels (f64: the spectrum is double2, as the plan's FFT gives it) and the warp's bicubic table. */
cls_status cls_augment_power_create(cls_engine *engine, cls_device *device, int f64, cls_augment_power **out);
void cls_augment_power_destroy(cls_augment_power *w);

/* Whether utterances 0 .. batch-1 have an operation only this path runs. */
int cls_augment_power_needed(const cls_augment_batch *aug, int batch);

/* Each utterance's frames after its operations, from nf[b] before them (0 stays 0): out[b]. */
void cls_augment_power_frames(const cls_augment_batch *aug, int batch, const int *nf, int *out);

/* One batch: utterance b's spectrum rows spectrum_base[b] .. + nf0[b] of `spectrum` ([.., n_bins]
 * complex); its operations in the uploaded tables op_first (rebased to the batch), ops and utt (as
 * kernels/augment.cl takes them). Leaves in *power (the path's buffer) [sum out_nf, n_bins] floats,
 * utterance b's final out_nf[b] rows from out_base[b]. The host arrays must stay as they are until the
 * queue finishes. */
typedef struct cls_augment_power_batch {
  int batch, n_bins;
  cl_mem spectrum;
  const int *spectrum_base, *nf0, *out_base, *out_nf;
  size_t out_frames;
  cl_mem op_first, ops, utt;
} cls_augment_power_batch;

cls_status cls_augment_power_run(cls_augment_power *w, cls_error *err, cl_command_queue q,
                                 const cls_augment_batch *aug, const cls_augment_power_batch *pb, cl_mem *power);

#endif
