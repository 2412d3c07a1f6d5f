/* A model replica's batch input on one device: the device buffers of one chunk of a host batch
 * (features, sequence lengths, labels, label lengths), their host staging, and putting a chunk of a
 * data/batch_loader.h batch there: the host's context windows repacked and uploaded, or the decoded
 * audio turned into context windows by the device MFCC. Shared by the training tower and the
 * forward-only replica (infer.h); it runs nothing of the model. */
#ifndef CLS_BATCH_INPUT_H
#define CLS_BATCH_INPUT_H

#include "clspeech/model.h"
#include "data/batch_loader.h"

typedef struct cls_batch_input_config {
  cls_model_config model;         /* its input width and n_context */
  const cls_mfcc_tables *tables;  /* the feature configuration (device-features path) */
  int host_features;              /* batches carry context windows only (no device MFCC plan); else
                                     either, as each batch says (host_windows) */
  int capacity;                   /* utterances per chunk */
  int max_frames, max_label;
  /* --augment (device-features path; n_augs 0: none): applied to the batches the loader marks as
     augmented (training's), drawn from (seed, the batch's epoch key, each utterance's index). */
  const cls_augmentation *augs;
  int n_augs;
  uint32_t seed;
} cls_batch_input_config;

typedef struct cls_batch_input cls_batch_input;

/* Buffers in `context` (a context of engine device `device`) for chunks up to capacity x
 * max_frames, and the device MFCC plan on the device-features path. */
cls_status cls_batch_input_create(cls_engine *engine, int device, cl_context context,
                                  const cls_batch_input_config *config, cls_batch_input **out);
void cls_batch_input_destroy(cls_batch_input *input);
/* Where the failures of cls_batch_input_put go: the engine's error unless set here (a tower sets its
 * own cls_error, which outlives the input). Failures of create always go to the engine's error. */
void cls_batch_input_set_error(cls_batch_input *input, cls_error *err);

/* Device memory of the batch buffers, in bytes (the MFCC plan's own buffers not counted). */
size_t cls_batch_input_device_bytes(const cls_batch_input *input);

/* Puts utterances b[first .. first+count) on the device through `queue`: features (computed on the
 * device from the decoded audio, or the host's windows repacked for the sub-batch), lengths and
 * labels, and describes them in *mb. Blocks until the host staging may be reused. */
cls_status cls_batch_input_put(cls_batch_input *input, cl_command_queue queue, const cls_host_batch *b, int first,
                               int count, cls_model_batch *mb);

#endif
