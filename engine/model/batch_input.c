/* A replica's batch on the device (see batch_input.h): its buffers, host staging, and the upload or
 * device MFCC of one chunk of a host batch. */
#include "model/batch_input.h"

#include <stdlib.h>
#include <string.h>

#include "clspeech/data.h"
#include "device/engine.h"
#include "device/log.h"
#include "features/mfcc_device.h"
#include "ops/ops_util.h"

struct cls_batch_input {
  cls_engine *e;
  cls_error *err;                     /* where failures of a put go (cls_batch_input_set_error) */
  int device;
  cls_batch_input_config c;
  cl_context ctx;
  cls_mfcc_plan *mfcc;
  int width;
  size_t bytes;
  cl_mem features;                    /* [max_frames*capacity, width] */
  cl_mem seq_len, labels, label_len;  /* int32 [capacity], [capacity, max_label], [capacity] */
  float *windows;                     /* host staging of a chunk's windows */
  int32_t *label_stage;               /* [capacity, max_label] */
  cls_augment_op *aug_ops;            /* [capacity * max ops per utterance] a chunk's --augment operations */
  int *aug_first;                     /* [capacity + 1] */
};

static cls_status cl_ok(cls_batch_input *t, cl_int err, const char *what) {
  return cls_ops_cl_check_to(t->e, t->err, t->device, err, what);
}

static cl_mem buffer(cls_batch_input *t, size_t bytes, cls_status *st) {
  return cls_ops_buffer_to(t->e, t->err, t->device, t->ctx, bytes, &t->bytes, st);
}

cls_status cls_batch_input_create(cls_engine *e, int device, cl_context ctx, const cls_batch_input_config *c,
                                  cls_batch_input **out) {
  *out = NULL;
  cls_batch_input *t = calloc(1, sizeof *t);
  if (!t) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  t->e = e;
  t->err = cls_engine_errors(e);
  t->device = device;
  t->c = *c;
  t->ctx = ctx;
  if (t->c.max_label < 1) t->c.max_label = 1;
  t->width = cls_model_input_width(&c->model);
  cls_status st = CLS_OK;
  if (!c->host_features) st = cls_mfcc_create(e, device, c->tables, &t->mfcc);
  if (st == CLS_OK && c->n_augs > 0) {
    if (c->host_features)
      st = cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "--augment runs in the device feature path, not with host features");
    if (st == CLS_OK) st = cls_mfcc_enable_augment(t->mfcc);
    const size_t per = (size_t)cls_augment_max_ops(c->augs, c->n_augs);
    t->aug_ops = st == CLS_OK ? malloc((size_t)c->capacity * per * sizeof *t->aug_ops + 1) : NULL;
    t->aug_first = st == CLS_OK ? malloc((size_t)(c->capacity + 1) * sizeof *t->aug_first) : NULL;
    if (st == CLS_OK && (!t->aug_ops || !t->aug_first))
      st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for --augment's operations");
  }
  const size_t rows = (size_t)c->max_frames * (size_t)c->capacity;
  t->features = buffer(t, rows * (size_t)t->width * sizeof(float), &st);
  t->seq_len = buffer(t, (size_t)c->capacity * sizeof(int32_t), &st);
  t->labels = buffer(t, (size_t)c->capacity * (size_t)t->c.max_label * sizeof(int32_t), &st);
  t->label_len = buffer(t, (size_t)c->capacity * sizeof(int32_t), &st);
  if (st == CLS_OK) {
    /* Windows staging for host-featurised batches: a device-features input that also takes them
       (an augmented training set beside cached dev sets) allocates it at its first such batch. */
    t->windows = c->host_features ? malloc(rows * (size_t)t->width * sizeof(float)) : NULL;
    t->label_stage = malloc((size_t)c->capacity * (size_t)t->c.max_label * sizeof(int32_t));
    if ((c->host_features && !t->windows) || !t->label_stage)
      st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for a tower's staging buffers");
  }
  if (st != CLS_OK) {
    cls_batch_input_destroy(t);
    return st;
  }
  *out = t;
  return CLS_OK;
}

void cls_batch_input_destroy(cls_batch_input *t) {
  if (!t) return;
  cls_mfcc_destroy(t->mfcc);
  cl_mem mems[] = {t->features, t->seq_len, t->labels, t->label_len};
  for (size_t i = 0; i < sizeof mems / sizeof *mems; i++)
    if (mems[i]) clReleaseMemObject(mems[i]);
  free(t->windows);
  free(t->label_stage);
  free(t->aug_ops);
  free(t->aug_first);
  free(t);
}

void cls_batch_input_set_error(cls_batch_input *t, cls_error *err) {
  t->err = err;
  if (t->mfcc) cls_mfcc_set_error(t->mfcc, err);
}

size_t cls_batch_input_device_bytes(const cls_batch_input *t) { return t->bytes; }

cls_status cls_batch_input_put(cls_batch_input *t, cl_command_queue q, const cls_host_batch *b, int first, int count,
                               cls_model_batch *mb) {
  if (b->error.status != CLS_OK) return cls_error_set(t->err, b->error.status, "%s", b->error.text);
  if (count <= 0 || count > t->c.capacity || first < 0 || first + count > b->batch || b->time > t->c.max_frames ||
      b->max_label > t->c.max_label)
    return cls_error_set(t->err, CLS_ERR_INVALID_ARGUMENT,
                         "a share of %d utterances x %d frames exceeds the tower's %d x %d (or the batch)", count,
                         b->time, t->c.capacity, t->c.max_frames);
  int time = 0;
  for (int i = first; i < first + count; i++) {
    if (b->frames[i] <= 0)
      return cls_error_set(t->err, CLS_ERR_IO, "utterance %d of the batch is shorter than one feature window",
                           b->first + i);
    if (b->frames[i] > time) time = b->frames[i];
  }
  cls_status st = CLS_OK;
  if (!b->host_windows && !t->mfcc)
    return cls_error_set(t->err, CLS_ERR_INVALID_ARGUMENT, "a batch of decoded audio on a host-features input");
  if (b->host_windows && !t->windows) {
    t->windows = malloc((size_t)t->c.max_frames * (size_t)t->c.capacity * (size_t)t->width * sizeof(float));
    if (!t->windows) return cls_error_set(t->err, CLS_ERR_OUT_OF_MEMORY, "out of host memory for a batch's windows");
  }
  if (b->host_windows) {
    const size_t row = (size_t)t->width;
    if (first == 0 && count == b->batch) {
      time = b->time;
      st = cl_ok(t, clEnqueueWriteBuffer(q, t->features, CL_FALSE, 0, (size_t)time * count * row * sizeof(float),
                                         b->windows, 0, NULL, NULL),
                 "uploading features");
    } else {
      for (int s = 0; s < time; s++)
        memcpy(t->windows + (size_t)s * count * row, b->windows + ((size_t)s * b->batch + first) * row,
               (size_t)count * row * sizeof(float));
      st = cl_ok(t, clEnqueueWriteBuffer(q, t->features, CL_FALSE, 0, (size_t)time * count * row * sizeof(float),
                                         t->windows, 0, NULL, NULL),
                 "uploading features");
    }
  } else {
    cls_augment_batch aug, *augp = NULL;
    if (b->augmented && t->c.n_augs > 0) {
      /* Each utterance's draws, from its own index in the epoch: the same whatever the chunk. */
      const cls_augment_context ac = {t->c.augs, t->c.n_augs, t->c.seed, b->aug_epoch, t->c.tables->n_bins,
                                      t->c.tables->cfg.win_step_ms, t->c.max_frames};
      t->aug_first[0] = 0;
      for (int i = 0; i < count && st == CLS_OK; i++) {
        /* The loader counted the frames after tempo (features/augment/tempo.h) from the same draws. */
        const int j = first + i, heard = (int)cls_mfcc_frames(t->c.tables, b->n_audio[j]);
        const int need = cls_ctc_min_frames(b->labels + (size_t)j * b->max_label, b->label_len[j]);
        int after = 0;
        t->aug_first[i + 1] = t->aug_first[i] + cls_augment_utterance(&ac, b->aug_index[j], b->aug_clock[j], heard,
                                                                      need, t->aug_ops + t->aug_first[i], &after);
        if (after != b->frames[j])
          st = cls_error_set(t->err, CLS_ERR_INVALID_ARGUMENT,
                             "utterance %d: --augment gives %d frames, the batch loader counted %d", b->first + j,
                             after, b->frames[j]);
      }
      aug = (cls_augment_batch){t->aug_ops, t->aug_first, b->aug_index + first, t->c.seed, b->aug_epoch};
      augp = &aug;
    }
    if (st == CLS_OK)
      st = cls_mfcc_compute_augmented(t->mfcc, q, count, (const float *const *)(b->audio + first), b->n_audio + first,
                                    augp, t->c.model.n_context, cls_buf_of(t->features), &time, NULL, NULL);
  }
  const int L = t->c.max_label;
  for (int i = 0; i < count; i++) {
    int32_t *dst = t->label_stage + (size_t)i * L;
    memset(dst, 0, (size_t)L * sizeof(int32_t));
    if (b->label_len[first + i] > 0)
      memcpy(dst, b->labels + (size_t)(first + i) * b->max_label, (size_t)b->label_len[first + i] * sizeof(int32_t));
  }
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueWriteBuffer(q, t->seq_len, CL_FALSE, 0, (size_t)count * sizeof(int32_t), b->frames + first,
                                       0, NULL, NULL),
               "uploading lengths");
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueWriteBuffer(q, t->labels, CL_FALSE, 0, (size_t)count * L * sizeof(int32_t), t->label_stage,
                                       0, NULL, NULL),
               "uploading labels");
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueWriteBuffer(q, t->label_len, CL_FALSE, 0, (size_t)count * sizeof(int32_t),
                                       b->label_len + first, 0, NULL, NULL),
               "uploading label lengths");
  if (st == CLS_OK) st = cl_ok(t, clFinish(q), "waiting for the batch upload");
  mb->time = time;
  mb->batch = count;
  mb->features = cls_buf_of(t->features);
  mb->seq_len = cls_buf_of(t->seq_len);
  mb->labels = cls_buf_of(t->labels);
  mb->label_len = cls_buf_of(t->label_len);
  return st;
}
