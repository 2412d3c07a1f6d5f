/* A tower: one replica of the DeepSpeech model on one device (or on one queue of a device that
 * holds several towers), with its own parameters, Adam slots, gradient buffer, activations, batch
 * buffers, and two in-order queues (compute, and transfer for overlapped gradient read-back).
 * The tower computes the gradient of the mean loss of its share of a host batch (in chunks when the
 * share exceeds its capacity), hands each layer's gradient to the host as soon as that layer's
 * backward pass is done, and applies a reduced gradient with Adam. It holds no training policy. */
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
} cls_tower_config;

typedef struct cls_tower cls_tower;

cls_status cls_tower_create(cls_engine *engine, int device, const cls_tower_config *config, cls_tower **out);
void cls_tower_destroy(cls_tower *tower);

int cls_tower_device(const cls_tower *tower);
size_t cls_tower_param_count(const cls_tower *tower);
/* Device memory the tower holds, in bytes. */
size_t cls_tower_device_bytes(const cls_tower *tower);
int cls_tower_capacity(const cls_tower *tower);

/* Called (on the tower's calling thread) when floats [offset, offset+count) of host_grad are final. */
typedef void (*cls_tower_arrive_fn)(void *user, size_t offset, size_t count);

/* The gradient of the mean loss over utterances b[first .. first+count) into host_grad[n_params]
 * (a host buffer that must stay valid until the call returns), and their losses into losses[count].
 * overlap: each layer's gradient is read on the transfer queue as soon as its backward pass is
 * enqueued, and `arrive` is called per layer as the reads complete; else one read at the end and
 * one `arrive` for the whole buffer. dropout->utterance_offset is the global index of b's first
 * utterance in the step (the tower adds `first`). Blocks until the gradient is on the host. */
cls_status cls_tower_gradient(cls_tower *tower, const cls_host_batch *b, int first, int count,
                              const cls_model_dropout *dropout, int overlap, float *host_grad, float *losses,
                              cls_tower_arrive_fn arrive, void *user);

/* Uploads the reduced gradient g[n_params] and enqueues Adam on the tower's replica (non-blocking:
 * g must not change until *uploaded, when not NULL, completes, or the tower's queue has passed this
 * point; state is advanced). */
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

#endif
