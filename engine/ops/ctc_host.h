/* The CTC loss on the host, fed a chunk of frames at a time (ctc_host.c): evaluation of an utterance
 * streamed through the model (engine/train) computes its loss from each chunk's logits. */
#ifndef CLS_CTC_HOST_H
#define CLS_CTC_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/base.h"

/* The CTC loss of one utterance on the host, its logits fed a chunk of frames at a time (for
 * evaluating utterances streamed through a model): the forward recursion in log space, in double,
 * over the extended label sequence, its 2L+1 log-alphas carried between chunks, each frame's
 * log-softmax taken inside. Same definition as cls_ctc_loss and tf.compat.v1.nn.ctc_loss
 * (blank = C-1, merge repeated): -ln p(labels | logits); the result does not depend on the chunking.
 * Memory O(L + C), time O(T * (L + C)). An impossible alignment gives +INFINITY (not an error); an
 * empty label over zero frames gives 0.
 * begin: labels[0..L-1] in 0..C-2, else CLS_ERR_INVALID_ARGUMENT; CLS_ERR_OUT_OF_MEMORY.
 * feed: T frames, frame t's C logits at logits[t*stride]; CLS_ERR_INVALID_ARGUMENT for bad sizes, a
 * NaN or +inf logit, or a frame whose logits are all -inf (the state is then partly advanced: give up
 * the stream). finish: the loss of the frames fed so far (the stream may be fed on after). */
typedef struct cls_ctc_loss_stream cls_ctc_loss_stream;
cls_status cls_ctc_loss_stream_begin(const int32_t *labels, int L, int C, cls_ctc_loss_stream **out);
cls_status cls_ctc_loss_stream_feed(cls_ctc_loss_stream *s, const float *logits, int T, size_t stride);
cls_status cls_ctc_loss_stream_finish(const cls_ctc_loss_stream *s, double *loss);
void cls_ctc_loss_stream_free(cls_ctc_loss_stream *s);

#endif
