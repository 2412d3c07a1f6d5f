/* A pass's utterance too long for the trainer's towers (pass_stream.c): streamed through a forward-only
 * replica (model/infer.h) that holds the lead tower's parameters, its CTC loss computed on the host a
 * chunk at a time (ops/ctc_host.h). Used by the trainer's passes without dropout (pass.c). */
#ifndef CLS_PASS_STREAM_H
#define CLS_PASS_STREAM_H

#include "train/crew.h"

typedef struct cls_pass_stream cls_pass_stream;

/* Before a pass that streams: makes *stream on the lead tower's device when it is NULL (the model and
 * features of crew->o, chunks of crew->max_frames frames), then copies the lead tower's parameters into
 * it (they change between passes). */
cls_status cls_pass_stream_prepare(cls_crew *crew, cls_pass_stream **stream);

/* Streams utterance u (index `index` of its set): on_chunk (may be NULL) gets each chunk's logits and
 * then the loss (clspeech/train.h, cls_chunk_eval_fn); *loss its CTC loss. */
cls_status cls_pass_stream_run(cls_pass_stream *stream, const cls_utterance *u, int index, cls_chunk_eval_fn on_chunk,
                               void *user, double *loss);

void cls_pass_stream_destroy(cls_pass_stream *stream);

#endif
