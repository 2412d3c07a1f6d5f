/* The forward-only replica (see clspeech/model.h and infer.h): parameters, the model's activations
 * and the batch buffers on one device, a checkpoint's parameters, and logits for audio files through
 * the batch loader. */
#include "model/infer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/engine.h"
#include "device/log.h"
#include "model/batch_input.h"
#include "ops/ops_util.h"

struct cls_infer {
  cls_engine *e;
  int device;
  cls_infer_config c;
  cls_mfcc_tables *tables;
  cl_context ctx;
  cl_command_queue q;
  cls_model *model;
  cls_batch_input *input;
  size_t n_params, bytes;
  cl_mem params;   /* [n_params] */
  float *host;     /* [n_params] checkpoint staging */
  float *logits;   /* [max_frames*max_batch, n_classes] */
};

static cls_status cl_ok(cls_infer *t, cl_int err, const char *what) {
  return cls_ops_cl_check(t->e, t->device, err, what);
}

static void log_placement(cls_infer *t) {
  const cls_device_info *d = cls_engine_device(t->e, t->device);
  const size_t pb = t->n_params * sizeof(float);
  cls_log(t->e, CLS_LOG_NOTICE,
          "placement: forward-only replica on device %d:%d (%s, %s): capacity %d utterances x %d frames; device "
          "memory %.1f MiB (parameters %.1f MiB; activations, batch and workspaces %.1f MiB; no gradient, Adam or "
          "reduction buffers)",
          d->platform_index, d->device_index, d->name, d->driver_version, t->c.max_batch, t->c.max_frames,
          (double)t->bytes / 1048576.0, (double)pb / 1048576.0, (double)(t->bytes - pb) / 1048576.0);
}

cls_status cls_infer_create(cls_engine *e, int device, const cls_infer_config *c, cls_infer **out) {
  *out = NULL;
  if (c->max_batch < 1 || c->max_frames < 1)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "forward-only replica: %d utterances x %d frames: both must be at least 1", c->max_batch,
                    c->max_frames);
  if (c->model.n_input != c->features.n_coeff)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "the model takes %d coefficients per frame, the features give %d",
                    c->model.n_input, c->features.n_coeff);
  cls_infer *t = calloc(1, sizeof *t);
  if (!t) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  t->e = e;
  t->device = device;
  t->c = *c;
  cls_param_view views[CLS_MODEL_N_TENSORS];
  t->n_params = cls_model_layout(&c->model, views);
  char err[1024];
  cls_status st = CLS_OK;
  if (cls_mfcc_tables_create(&c->features, &t->tables, err, sizeof err) != CLS_OK)
    st = cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "%s", err);
  cl_device_id id = NULL;
  if (st == CLS_OK) st = cls_engine_device_cl(e, device, &t->ctx, &id, NULL);
  cl_int cl_err = CL_SUCCESS;
  if (st == CLS_OK) {
    t->q = clCreateCommandQueue(t->ctx, id, CL_QUEUE_PROFILING_ENABLE, &cl_err);
    st = cl_ok(t, t->q ? CL_SUCCESS : cl_err, "creating the compute queue");
  }
  if (st == CLS_OK) st = cls_model_create(e, device, &c->model, c->max_frames, c->max_batch, 1, &t->model);
  const size_t pb = t->n_params * sizeof(float);
  if (st == CLS_OK) {
    t->params = clCreateBuffer(t->ctx, CL_MEM_READ_WRITE, pb, NULL, &cl_err);
    st = cl_ok(t, t->params ? CL_SUCCESS : cl_err, "allocating device memory");
    t->bytes += pb;
  }
  cls_batch_input_config ic = {c->model, t->tables, c->host_features, c->max_batch, c->max_frames, 1};
  if (st == CLS_OK) st = cls_batch_input_create(e, device, t->ctx, &ic, &t->input);
  if (st == CLS_OK) {
    t->bytes += cls_batch_input_device_bytes(t->input) + cls_model_activation_bytes(t->model);
    t->host = malloc(pb);
    const size_t rows = (size_t)c->max_frames * (size_t)c->max_batch, classes = (size_t)c->model.n_classes;
    const size_t logits = rows <= SIZE_MAX / sizeof(float) / classes ? rows * classes * sizeof(float) : SIZE_MAX;
    t->logits = logits < SIZE_MAX ? malloc(logits) : NULL;
    if (!t->host)
      st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu parameters", t->n_params);
    else if (!t->logits)
      st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY,
                    "out of host memory for the logits buffer (%d frames x %d utterances x %d classes)", c->max_frames,
                    c->max_batch, c->model.n_classes);
  }
  if (st != CLS_OK) {
    cls_infer_destroy(t);
    return st;
  }
  if (c->log_placement) log_placement(t);
  *out = t;
  return CLS_OK;
}

void cls_infer_destroy(cls_infer *t) {
  if (!t) return;
  if (t->q) clFinish(t->q);
  cls_model_destroy(t->model);
  cls_batch_input_destroy(t->input);
  if (t->params) clReleaseMemObject(t->params);
  if (t->q) clReleaseCommandQueue(t->q);
  cls_mfcc_tables_destroy(t->tables);
  free(t->host);
  free(t->logits);
  free(t);
}

size_t cls_infer_device_bytes(const cls_infer *t) { return t->bytes; }

cls_status cls_infer_write_params(cls_infer *t, const float *params) {
  return cl_ok(t, clEnqueueWriteBuffer(t->q, t->params, CL_TRUE, 0, t->n_params * sizeof(float), params, 0, NULL, NULL),
               "uploading parameters");
}

cls_status cls_infer_load(cls_infer *t, const char *path) {
  char err[1024];
  cls_train_state s;
  if (cls_checkpoint_load(path, &t->c.model, t->host, NULL, NULL, &s, err, sizeof err) != CLS_OK)
    return cls_fail(t->e, CLS_ERR_IO, "%s", err);
  cls_log(t->e, CLS_LOG_INFO, "Loaded checkpoint %s (global step %lld)", path, (long long)s.global_step);
  return cls_infer_write_params(t, t->host);
}

cls_status cls_infer_batch(cls_infer *t, const cls_host_batch *b, float *logits, int *time, float *losses) {
  cls_model_batch mb;
  cls_status st = cls_batch_input_put(t->input, t->q, b, 0, b->batch, &mb);
  if (st == CLS_OK) st = cls_model_forward(t->model, t->q, &mb, cls_buf_of(t->params), NULL, losses);
  if (st == CLS_OK) {
    size_t bytes = (size_t)mb.time * (size_t)mb.batch * (size_t)t->c.model.n_classes * sizeof(float);
    st = cl_ok(t, clEnqueueReadBuffer(t->q, cls_model_logits(t->model).mem, CL_TRUE, 0, bytes, logits, 0, NULL, NULL),
               "reading logits");
  }
  if (time) *time = mb.time;
  return st;
}

cls_status cls_infer_run(cls_infer *t, const char *const *paths, int n, int batch_size, cls_infer_fn on_batch,
                         void *user) {
  if (batch_size < 1 || batch_size > t->c.max_batch)
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "a batch of %d utterances: the replica takes 1 to %d", batch_size,
                    t->c.max_batch);
  if (n <= 0) return CLS_OK;
  cls_utterance *utts = calloc((size_t)n, sizeof *utts);
  if (!utts) return cls_fail(t->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int i = 0; i < n; i++) utts[i] = (cls_utterance){paths[i], NULL, 0};
  cls_loader_options lo = {t->tables, t->c.model.n_context, t->c.host_features, t->c.feature_cache, 3};
  cls_loader *l = NULL;
  char err[1024];
  cls_status st = CLS_OK;
  if (cls_loader_start(utts, n, batch_size, &lo, &l, err, sizeof err) != CLS_OK)
    st = cls_fail(t->e, CLS_ERR_OUT_OF_MEMORY, "%s", err);
  for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
    int time = 0;
    st = cls_infer_batch(t, b, t->logits, &time, NULL);
    if (st == CLS_OK && on_batch) on_batch(user, b->first, b->batch, time, t->logits, b->frames);
    cls_loader_done(l, b);
  }
  cls_loader_stop(l);
  free(utts);
  return st;
}
