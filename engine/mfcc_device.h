/* DeepSpeech's features on an OpenCL device: framing + window kernel, a clFFT real-to-complex FFT
 * batched over every frame of a batch of utterances, a filterbank + log + DCT kernel, and the
 * context windows written into the first layer's input [T*B, 494] with no host round trip. The
 * math is mfcc.h's (the host path is the reference). */
#ifndef CLS_MFCC_DEVICE_H
#define CLS_MFCC_DEVICE_H

#include "clspeech_ops.h"
#include "mfcc.h"

typedef struct cls_mfcc_plan cls_mfcc_plan;

/* A plan for `device` with the tables' configuration (the plan keeps a pointer to `tables`). */
cls_status cls_mfcc_create(cls_engine *engine, int device, const cls_mfcc_tables *tables, cls_mfcc_plan **out);
void cls_mfcc_destroy(cls_mfcc_plan *plan);

/* Features of `batch` utterances (host samples, mono at the tables' rate). frames[b] receives each
 * utterance's frame count (0 when shorter than one window). When `windows.mem` is set, writes the
 * context windows [T*B, (2*n_context+1)*n_coeff] with T = max frames (*time); when `features` is
 * not NULL, also reads the raw features back to the host, concatenated [sum frames, n_coeff]. */
cls_status cls_mfcc_compute(cls_mfcc_plan *plan, cl_command_queue queue, int batch, const float *const *samples,
                            const size_t *n_samples, int n_context, cls_buf windows, int *time, int *frames,
                            float *features);

#endif
