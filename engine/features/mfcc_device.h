/* DeepSpeech's features on an OpenCL device: framing + window kernel, a clFFT real-to-complex FFT
 * over every frame of a batch of utterances (one batched transform per chunk of frames), a filterbank
 * + log + DCT kernel, and the context windows written into the first layer's input [T*B, 494] with no
 * host round trip. The math is the host path's (clspeech/features.h) (the host path is the reference). */
#ifndef CLS_MFCC_DEVICE_H
#define CLS_MFCC_DEVICE_H

#include "clspeech/features.h"
#include "clspeech/ops.h"
#include "features/augment/device_ops.h"

/* The plan's create, destroy and host-to-host compute are public (clspeech/features.h); this is the
 * engine's own entry, on a caller-given queue, that can also write the first layer's input.
 *
 * Features of `batch` utterances (host samples, mono at the tables' rate). frames[b] receives each
 * utterance's frame count (0 when shorter than one window). When `windows.mem` is set, writes the
 * context windows [T*B, (2*n_context+1)*n_coeff] with T = max frames (*time); when `features` is
 * not NULL, also reads the raw features back to the host, concatenated [sum frames, n_coeff]. */
cls_status cls_mfcc_compute(cls_mfcc_plan *plan, cl_command_queue queue, int batch, const float *const *samples,
                            const size_t *n_samples, int n_context, cls_buf windows, int *time, int *frames,
                            float *features);

/* The same with --augment's operations (NULL: none), `aug` describing the same `batch` utterances: the
 * spectrogram ones on the FFT's spectrum before the filterbank (kernels/augment.cl, or the power path of
 * features/augment/power.h when the batch has a resize or a spectrogram add or multiply), the features
 * ones on the features before the context windows. frames[b] and *time count the frames after the
 * resizes (a tempo changes them). The plan must have cls_mfcc_enable_augment'd. */
cls_status cls_mfcc_compute_augmented(cls_mfcc_plan *plan, cl_command_queue queue, int batch,
                                      const float *const *samples, const size_t *n_samples,
                                      const cls_augment_batch *aug, int n_context, cls_buf windows, int *time,
                                      int *frames, float *features);
/* Builds the plan's --augment kernels (kernels/augment.cl), once; training towers call it at creation. */
cls_status cls_mfcc_enable_augment(cls_mfcc_plan *plan);

/* Frames per FFT transform: the plan runs its clFFT plan once per chunk of the batch's frames (0: once
 * over the whole capacity, where the device's alignment allows no chunk). For tests. */
size_t cls_mfcc_fft_chunk(const cls_mfcc_plan *plan);

/* Sets the frames per FFT transform of a plan that has computed nothing yet (else nothing changes); 0 runs
 * one transform over the whole capacity, the path of devices whose alignment allows no chunk. For tests. */
void cls_mfcc_set_fft_chunk(cls_mfcc_plan *plan, size_t chunk);
/* Where the failures of a run go (default: the engine's error); an owner that runs the plan on a
 * thread of its own (a tower's batch input) points them at its own cls_error, which outlives the plan. */
void cls_mfcc_set_error(cls_mfcc_plan *plan, cls_error *err);

#endif
