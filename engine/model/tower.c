/* One model replica on one device (see tower.h): its device buffers and queues, the gradient with
 * per-layer read-back (begin, wait per range, end), and the Adam update. Putting a share of a host
 * batch on the device is batch_input.c's. */
#include "model/tower.h"

#include <stdlib.h>
#include <string.h>

#include "device/engine.h"
#include "device/log.h"
#include "model/batch_input.h"
#include "ops/ops_util.h"
#include "ops/stats.h"

#define MAX_LAYERS 8

struct cls_tower {
  cls_engine *e;
  cls_error *err;                     /* where failures go: the engine's error while the tower is made, then `error` */
  cls_error error;                    /* the tower's own: every failure of its work after create (cls_tower_error) */
  int device;
  cls_tower_config c;
  cl_context ctx;
  cl_command_queue q, xfer;           /* compute queue; gradient read-back queue */
  cls_model *model;
  cls_adam_plan *adam;
  cls_stats_plan *stats;              /* summary statistics, made on first use (NULL until then) */
  cls_batch_input *input;             /* the chunk's device batch */
  cls_param_view views[CLS_MODEL_MAX_TENSORS]; /* every tensor (cls_model_layout_all) */
  int n_views;                                  /* how many: cls_model_layout_all's count */
  size_t n_params, bytes;
  cl_mem params, grads, m, v;         /* [n_params] */
  /* per-layer read-back of the step in flight */
  float *host_grad;
  int n_reads, n_waited;              /* reads enqueued; reads waited for (the first n_waited) */
  cl_event reads[MAX_LAYERS];
  size_t read_off[MAX_LAYERS], read_count[MAX_LAYERS];
};

static cls_status cl_ok(cls_tower *t, cl_int err, const char *what) {
  return cls_ops_cl_check_to(t->e, t->err, t->device, err, what);
}

static cl_mem buffer(cls_tower *t, size_t bytes, cls_status *st) {
  return cls_ops_buffer_to(t->e, t->err, t->device, t->ctx, bytes, &t->bytes, st);
}

cls_status cls_tower_create(cls_engine *e, int device, const cls_tower_config *c, cls_tower **out) {
  *out = NULL;
  cls_tower *t = calloc(1, sizeof *t);
  if (!t) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  t->e = e;
  t->err = cls_engine_errors(e);
  t->device = device;
  t->c = *c;
  if (t->c.max_label < 1) t->c.max_label = 1;
  t->n_views = cls_model_layout_all(&c->model, t->views, &t->n_params);
  cl_device_id id = NULL;
  cls_status st = cls_engine_device_cl(e, device, &t->ctx, &id, NULL);
  cl_int err = CL_SUCCESS;
  /* Own queues, so that several towers can share a device. */
  if (st == CLS_OK) {
    t->q = clCreateCommandQueue(t->ctx, id, CL_QUEUE_PROFILING_ENABLE, &err);
    st = cl_ok(t, t->q ? CL_SUCCESS : err, "creating the compute queue");
  }
  if (st == CLS_OK) {
    t->xfer = clCreateCommandQueue(t->ctx, id, 0, &err);
    st = cl_ok(t, t->xfer ? CL_SUCCESS : err, "creating the transfer queue");
  }
  if (st == CLS_OK) st = cls_model_create(e, device, &c->model, c->max_frames, c->capacity, t->c.max_label, &t->model);
  if (st == CLS_OK) st = cls_adam_create(e, device, &t->adam);
  size_t pb = t->n_params * sizeof(float);
  t->params = buffer(t, pb, &st);
  t->grads = buffer(t, pb, &st);
  t->m = buffer(t, pb, &st);
  t->v = buffer(t, pb, &st);
  cls_batch_input_config ic = {c->model,      c->tables,   c->host_features, c->capacity, c->max_frames,
                               t->c.max_label, c->augs, c->n_augs,       c->seed};
  if (st == CLS_OK) st = cls_batch_input_create(e, device, t->ctx, &ic, &t->input);
  if (st == CLS_OK) t->bytes += cls_batch_input_device_bytes(t->input) + cls_model_activation_bytes(t->model);
  if (st != CLS_OK) {
    cls_tower_destroy(t);
    return st;
  }
  /* From here on the tower and everything it owns report into the tower's own error, so that towers
     working on several threads at once never write the same text. */
  t->err = &t->error;
  cls_model_set_error(t->model, t->err);
  cls_adam_set_error(t->adam, t->err);
  cls_batch_input_set_error(t->input, t->err);
  *out = t;
  return CLS_OK;
}

void cls_tower_destroy(cls_tower *t) {
  if (!t) return;
  if (t->q) clFinish(t->q);
  if (t->xfer) clFinish(t->xfer);
  for (int i = 0; i < t->n_reads; i++) clReleaseEvent(t->reads[i]);
  cls_model_destroy(t->model);
  cls_adam_destroy(t->adam);
  cls_stats_destroy(t->stats);
  cls_batch_input_destroy(t->input);
  cl_mem mems[] = {t->params, t->grads, t->m, t->v};
  for (size_t i = 0; i < sizeof mems / sizeof *mems; i++)
    if (mems[i]) clReleaseMemObject(mems[i]);
  if (t->q) clReleaseCommandQueue(t->q);
  if (t->xfer) clReleaseCommandQueue(t->xfer);
  free(t);
}

cls_error *cls_tower_error(cls_tower *t) { return &t->error; }
int cls_tower_device(const cls_tower *t) { return t->device; }
size_t cls_tower_param_count(const cls_tower *t) { return t->n_params; }
size_t cls_tower_device_bytes(const cls_tower *t) { return t->bytes; }
int cls_tower_capacity(const cls_tower *t) { return t->c.capacity; }

/* Layer callback: once the compute queue reaches this point, read the layer's gradient on the
 * transfer queue, so that the read overlaps the rest of the backward pass. */
static cls_status enqueue_read(void *user, cl_command_queue q, int first_tensor, int n_tensors) {
  cls_tower *t = user;
  if (t->n_reads >= MAX_LAYERS) return cls_error_set(t->err, CLS_ERR_INVALID_ARGUMENT, "tower: too many layers");
  size_t off = t->views[first_tensor].offset;
  const cls_param_view *last = &t->views[first_tensor + n_tensors - 1];
  size_t count = last->offset + last->count - off;
  cl_event marker = NULL, read = NULL;
  cls_status st = cl_ok(t, clEnqueueMarkerWithWaitList(q, 0, NULL, &marker), "enqueueing a marker");
  if (st == CLS_OK) st = cl_ok(t, clFlush(q), "flushing the compute queue");
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueReadBuffer(t->xfer, t->grads, CL_FALSE, off * sizeof(float), count * sizeof(float),
                                      t->host_grad + off, 1, &marker, &read),
               "reading a layer's gradient");
  if (marker) clReleaseEvent(marker);
  if (st == CLS_OK) st = cl_ok(t, clFlush(t->xfer), "flushing the transfer queue");
  if (st != CLS_OK) {
    if (read) clReleaseEvent(read);
    return st;
  }
  t->reads[t->n_reads] = read;
  t->read_off[t->n_reads] = off;
  t->read_count[t->n_reads] = count;
  t->n_reads++;
  return CLS_OK;
}

cls_status cls_tower_gradient_begin(cls_tower *t, const cls_host_batch *b, int first, int count,
                                    const cls_model_dropout *dropout, int overlap, float *host_grad, float *losses,
                                    int *n_ranges) {
  cls_status st = CLS_OK;
  *n_ranges = 0;
  t->host_grad = host_grad;
  t->n_reads = t->n_waited = 0;
  for (int done = 0; st == CLS_OK && done < count;) {
    int chunk = count - done < t->c.capacity ? count - done : t->c.capacity;
    int last = done + chunk == count;
    cls_model_batch mb;
    st = cls_batch_input_put(t->input, t->q, b, first + done, chunk, &mb);
    cls_model_dropout drop = *dropout;
    drop.utterance_offset = dropout->utterance_offset + first + done;
    if (st == CLS_OK)
      st = cls_model_train_step_layers(t->model, t->q, &mb, cls_buf_of(t->params), &drop, cls_buf_of(t->grads),
                                       1.0f / (float)count, done == 0 ? CLS_OVERWRITE : CLS_ACCUMULATE, losses + done,
                                       last && overlap && host_grad ? enqueue_read : NULL, t);
    done += chunk;
  }
  if (st == CLS_OK && !overlap && host_grad) {
    cl_event read = NULL;
    st = cl_ok(t, clEnqueueReadBuffer(t->q, t->grads, CL_FALSE, 0, t->n_params * sizeof(float), host_grad, 0, NULL, &read),
               "reading the gradient");
    if (st == CLS_OK) st = cl_ok(t, clFlush(t->q), "flushing the compute queue");
    if (read) {
      t->reads[0] = read;
      t->read_off[0] = 0;
      t->read_count[0] = t->n_params;
      t->n_reads = 1;
    }
  }
  if (st == CLS_OK) *n_ranges = t->n_reads;
  return st;
}

cls_status cls_tower_gradient_wait(cls_tower *t, int k, cls_tower_range *range) {
  if (k < 0 || k >= t->n_reads) return cls_error_set(t->err, CLS_ERR_INVALID_ARGUMENT, "tower: no gradient read %d", k);
  cls_status st = cl_ok(t, clWaitForEvents(1, &t->reads[k]), "reading a layer's gradient");
  if (st == CLS_OK) {
    *range = (cls_tower_range){t->read_off[k], t->read_count[k]};
    if (k + 1 > t->n_waited) t->n_waited = k + 1;
  }
  return st;
}

cls_status cls_tower_gradient_end(cls_tower *t, cls_status st) {
  if (st != CLS_OK || t->n_waited < t->n_reads) {
    clFinish(t->xfer);
    clFinish(t->q);
  }
  for (int i = 0; i < t->n_reads; i++) clReleaseEvent(t->reads[i]);
  t->n_reads = t->n_waited = 0;
  t->host_grad = NULL;
  return st;
}

cls_status cls_tower_gradient(cls_tower *t, const cls_host_batch *b, int first, int count,
                              const cls_model_dropout *dropout, int overlap, float *host_grad, float *losses) {
  int n = 0;
  cls_status st = cls_tower_gradient_begin(t, b, first, count, dropout, overlap, host_grad, losses, &n);
  cls_tower_range r;
  for (int k = 0; st == CLS_OK && k < n; k++) st = cls_tower_gradient_wait(t, k, &r);
  return cls_tower_gradient_end(t, st);
}

cls_status cls_tower_apply(cls_tower *t, const float *g, float lr, float beta1, float beta2, float epsilon,
                           cls_adam_state *state, cl_event *uploaded) {
  cls_status st = CLS_OK;
  if (g)
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->grads, CL_FALSE, 0, t->n_params * sizeof(float), g, 0, NULL, uploaded),
               "uploading the reduced gradient");
  else if (uploaded)
    *uploaded = NULL;
  if (st == CLS_OK)
    st = cls_adam_update(t->adam, t->q, t->n_params, cls_buf_of(t->params), cls_buf_of(t->m), cls_buf_of(t->v),
                         cls_buf_of(t->grads), lr, beta1, beta2, epsilon, state, NULL);
  if (st == CLS_OK) st = cl_ok(t, clFlush(t->q), "flushing the compute queue");
  return st;
}

cls_status cls_tower_evaluate(cls_tower *t, const cls_host_batch *b, float *losses, float *logits, int *time) {
  cls_model_batch mb;
  cls_status st = cls_batch_input_put(t->input, t->q, b, 0, b->batch, &mb);
  if (st == CLS_OK) st = cls_model_forward(t->model, t->q, &mb, cls_buf_of(t->params), NULL, losses);
  if (st == CLS_OK && logits) {
    size_t bytes = (size_t)mb.time * (size_t)mb.batch * (size_t)t->c.model.n_classes * sizeof(float);
    st = cl_ok(t, clEnqueueReadBuffer(t->q, cls_model_logits(t->model).mem, CL_TRUE, 0, bytes, logits, 0, NULL, NULL),
               "reading logits");
  }
  if (time) *time = mb.time;
  return st;
}

cls_status cls_tower_write_state(cls_tower *t, const float *p, const float *m, const float *v) {
  size_t b = t->n_params * sizeof(float);
  cls_status st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->params, CL_TRUE, 0, b, p, 0, NULL, NULL), "uploading parameters");
  if (st == CLS_OK && m)
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->m, CL_TRUE, 0, b, m, 0, NULL, NULL), "uploading Adam m");
  if (st == CLS_OK && v)
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->v, CL_TRUE, 0, b, v, 0, NULL, NULL), "uploading Adam v");
  return st;
}

cls_status cls_tower_read_state(cls_tower *t, float *p, float *m, float *v) {
  size_t b = t->n_params * sizeof(float);
  cls_status st = cl_ok(t, clEnqueueReadBuffer(t->q, t->params, CL_TRUE, 0, b, p, 0, NULL, NULL), "reading parameters");
  if (st == CLS_OK && m) st = cl_ok(t, clEnqueueReadBuffer(t->q, t->m, CL_TRUE, 0, b, m, 0, NULL, NULL), "reading Adam m");
  if (st == CLS_OK && v) st = cl_ok(t, clEnqueueReadBuffer(t->q, t->v, CL_TRUE, 0, b, v, 0, NULL, NULL), "reading Adam v");
  return st;
}

cls_status cls_tower_stats(cls_tower *t, cls_tensor_stats *stats) {
  cls_status st = CLS_OK;
  if (!t->stats) { /* made on the caller's thread: a failure's text, in the engine's error, is moved to the tower's */
    st = cls_stats_create(t->e, t->device, 2 * CLS_MODEL_MAX_TENSORS, &t->stats);
    if (st == CLS_OK)
      cls_stats_set_error(t->stats, t->err);
    else
      cls_error_set(t->err, st, "%s", cls_engine_error(t->e));
  }
  const int n = t->n_views;
  for (int i = 0; st == CLS_OK && i < 2 * n; i++) {
    const cls_param_view *v = &t->views[i % n];
    st = cls_stats_enqueue(t->stats, t->q, i, cls_buf_at(i < n ? t->params : t->grads, v->offset), v->count);
  }
  return st == CLS_OK ? cls_stats_read(t->stats, t->q, 2 * n, stats) : st;
}

cls_status cls_tower_perturb(cls_tower *t, size_t index, float delta) {
  if (index >= t->n_params) return cls_error_set(t->err, CLS_ERR_INVALID_ARGUMENT, "perturb: index out of range");
  float x = 0;
  cls_status st = cl_ok(t, clEnqueueReadBuffer(t->q, t->params, CL_TRUE, index * sizeof x, sizeof x, &x, 0, NULL, NULL),
                        "reading a parameter");
  x += delta;
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->params, CL_TRUE, index * sizeof x, sizeof x, &x, 0, NULL, NULL),
               "writing a parameter");
  return st;
}

cls_status cls_tower_finish(cls_tower *t) {
  cls_status st = cl_ok(t, clFinish(t->q), "clFinish");
  if (st == CLS_OK) st = cl_ok(t, clFinish(t->xfer), "clFinish");
  return st;
}

cl_command_queue cls_tower_queue(const cls_tower *t) { return t->q; }
