/* The forward-only replica (public part in clspeech/model.h): the engine's own entries below the
 * audio-file level, for tests and for callers that hold host batches (data/batch_loader.h). */
#ifndef CLS_INFER_H
#define CLS_INFER_H

#include "clspeech/model.h"
#include "data/batch_loader.h"

/* Uploads parameters [n_params] in cls_model_layout order (blocking). */
cls_status cls_infer_write_params(cls_infer *infer, const float *params);

/* A forward pass without dropout over utterances b[0 .. b->batch) (b->batch <= max_batch): the
 * time-major logits [time*batch, n_classes] into `logits` and *time; losses[b->batch] (may be NULL)
 * receives the CTC losses against b's labels (an empty label sequence when it has none). */
cls_status cls_infer_batch(cls_infer *infer, const cls_host_batch *b, float *logits, int *time, float *losses);

#endif
