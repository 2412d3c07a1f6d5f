/* A tower: one replica of the DeepSpeech model on one device (or on one queue of a device that
 * holds several towers), with its own parameters, Adam slots, gradient buffer, activations, batch
 * buffers, and two in-order queues (compute, and transfer for overlapped gradient read-back).
 * The tower computes the gradient of the mean loss of its share of a host batch (in chunks when the
 * share exceeds its capacity), reads each layer's gradient to the host as soon as that layer's
 * backward pass is done (the caller waits for them range by range: it never calls back into the
 * caller), and applies a reduced gradient with Adam. It holds no training policy. */
#ifndef CLS_TOWER_H
#define CLS_TOWER_H

#include "base/histogram.h"
#include "clspeech/model.h"
#include "clspeech/ops.h"
#include "data/batch_loader.h"

typedef struct cls_tower_config {
  cls_model_config model;
  const cls_mfcc_tables *tables;  /* the feature configuration (device-features path) */
  int host_features;              /* the batch carries context windows (else decoded audio) */
  int capacity;                   /* utterances per chunk */
  int max_frames, max_label;
  const cls_augmentation *augs;   /* --augment (n_augs 0: none), seeded by seed */
  int n_augs;
  uint32_t seed;
} cls_tower_config;

typedef struct cls_tower cls_tower;

/* A failure of create goes to the engine's error (cls_engine_error); every failure after it, of any
 * function below and of everything the tower owns (its model, op plans, batch input), goes to the
 * tower's own error (cls_tower_error), so that towers working on several threads at once never
 * write the same text. The caller copies it where its own caller reads (the crew: the engine's). */
cls_status cls_tower_create(cls_engine *engine, int device, const cls_tower_config *config, cls_tower **out);
void cls_tower_destroy(cls_tower *tower);
/* The tower's own error: the status and text of its last failure (valid until the tower is destroyed). */
cls_error *cls_tower_error(cls_tower *tower);

int cls_tower_device(const cls_tower *tower);
size_t cls_tower_param_count(const cls_tower *tower);
/* Device memory the tower holds, in bytes. */
size_t cls_tower_device_bytes(const cls_tower *tower);
int cls_tower_capacity(const cls_tower *tower);

/* A gradient in flight: floats [offset, offset+count) of the host buffer. */
typedef struct cls_tower_range {
  size_t offset, count;
} cls_tower_range;

/* Starts the gradient of the mean loss over utterances b[first .. first+count) into host_grad[n_params]
 * (a host buffer that must stay valid until cls_tower_gradient_end) and their losses into
 * losses[count] (final when this returns). Shares larger than the tower's capacity go in chunks.
 * overlap: each layer's gradient is read on the transfer queue as soon as its backward pass is
 * enqueued (the last layer first); else one read of the whole buffer after the backward pass.
 * *n_ranges: the reads in flight, which cls_tower_gradient_wait hands over in order; they are the
 * same for every tower of one model and overlap setting. dropout->utterance_offset is the global
 * index of b's first utterance in the step (the tower adds `first`). The caller then waits for the
 * ranges it needs and calls cls_tower_gradient_end once, whatever this returned. host_grad NULL: the
 * gradient stays in the tower's own buffer (no reads, *n_ranges 0), for cls_tower_apply with g NULL. */
cls_status cls_tower_gradient_begin(cls_tower *tower, const cls_host_batch *b, int first, int count,
                                    const cls_model_dropout *dropout, int overlap, float *host_grad, float *losses,
                                    int *n_ranges);
/* Blocks until read k (0 .. n_ranges, in order) has reached the host: *range, its floats. */
cls_status cls_tower_gradient_wait(cls_tower *tower, int k, cls_tower_range *range);
/* Ends the gradient started by cls_tower_gradient_begin: releases the reads; after a failure (st not
 * CLS_OK, or a read that was not waited for) waits for the tower's queues, so that nothing writes
 * host_grad afterwards. Returns st. */
cls_status cls_tower_gradient_end(cls_tower *tower, cls_status st);

/* cls_tower_gradient_begin, every range waited for, and cls_tower_gradient_end: the whole gradient
 * on the host when it returns. */
cls_status cls_tower_gradient(cls_tower *tower, const cls_host_batch *b, int first, int count,
                              const cls_model_dropout *dropout, int overlap, float *host_grad, float *losses);

/* Uploads the reduced gradient g[n_params] and enqueues Adam on the tower's replica (non-blocking:
 * g must not change until *uploaded, when not NULL, completes, or the tower's queue has passed this
 * point; state is advanced). g NULL: Adam on the gradient the tower's last cls_tower_gradient_begin left
 * in its buffer (host_grad NULL there), nothing uploaded, *uploaded (when not NULL) set to NULL. */
cls_status cls_tower_apply(cls_tower *tower, const float *g, float lr, float beta1, float beta2, float epsilon,
                           cls_adam_state *state, cl_event *uploaded);

/* A forward pass without dropout over utterances b[0 .. b->batch): losses[b->batch]; when logits is
 * not NULL, the time-major logits [time*batch, n_classes] are read into it and *time set. */
cls_status cls_tower_evaluate(cls_tower *tower, const cls_host_batch *b, float *losses, float *logits, int *time);

/* Parameter and Adam-slot transfers (blocking); m and v may be NULL. */
cls_status cls_tower_write_state(cls_tower *tower, const float *params, const float *m, const float *v);
cls_status cls_tower_read_state(cls_tower *tower, float *params, float *m, float *v);
/* Summary statistics (ops/stats.h: reduced on the device, a few thousand numbers read back per
 * tensor) of each parameter tensor of the replica into stats[0 .. CLS_MODEL_N_TENSORS) and of each
 * tensor of the gradient buffer into stats[CLS_MODEL_N_TENSORS .. 2*CLS_MODEL_N_TENSORS). After
 * cls_tower_apply the gradient buffer holds the gradient that update applied and the parameters are
 * the updated ones. Enqueued behind everything on the compute queue; blocks for one read. The
 * statistics plan is made on the first call. */
cls_status cls_tower_stats(cls_tower *tower, cls_tensor_stats *stats);
/* Adds delta to parameter `index` of this replica (fault injection: a perturbed replica). */
cls_status cls_tower_perturb(cls_tower *tower, size_t index, float delta);
/* Waits for everything enqueued on the tower's queues. */
cls_status cls_tower_finish(cls_tower *tower);

/* The tower's compute queue (a profiling queue): the benchmarks attach the ops' profiling hook
 * (ops/ops_util.h) to it to record the commands of training's step. */
cl_command_queue cls_tower_queue(const cls_tower *tower);

#endif
