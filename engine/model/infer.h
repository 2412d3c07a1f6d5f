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

/* One chunk of a stream kept by the caller (the stt layer's streams, several per replica): n frames
 * (1 .. stream_frames; a replica made with stream_frames > 0) of context windows [n, input width]
 * through the model from the LSTM state h, c [n_hidden] (in/out: left holding the state after the last
 * frame), the logits [n, n_classes] into `logits`. Blocks; uses the replica's buffers, so one call at
 * a time per replica. The same chunks give the logits cls_infer_stream gives. */
cls_status cls_infer_windows(cls_infer *infer, const float *windows, int n, float *h, float *c, float *logits);

#endif
