/* The training loop (see trainer.h). Owns the device buffers of one tower (flat parameters,
 * gradients, Adam slots, the batch), the feature plan, and DeepSpeech's epoch rules. */
#include "trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "engine.h"
#include "log.h"
#include "mfcc_device.h"
#include "philox.h"
#include "train_rules.h"

struct cls_trainer {
  cls_engine *e;
  int device;
  cl_context ctx;
  cl_command_queue q;
  cls_train_options o;
  cls_model *model;
  cls_adam_plan *adam;
  cls_mfcc_tables *tables;
  cls_mfcc_plan *mfcc;
  int max_batch, max_frames, max_label, width;
  size_t n_params;
  cl_mem params, grads, m, v;                      /* [n_params] */
  cl_mem features;                                 /* [max_frames*max_batch, width] */
  cl_mem seq_len, labels, label_len;               /* int32 [B], [B, max_label], [B] */
  float *host_a, *host_b, *host_c;                 /* [n_params] staging for checkpoints */
  int32_t *label_stage;                            /* [max_batch, max_label] */
  float *losses, *logits;                          /* [max_batch], [max_frames*max_batch, C] */
  cls_train_state state;
  double last_save_ms;
  int epoch;                                       /* epoch of this run, for progress */
};

static cls_status cl_ok(cls_trainer *t, cl_int err, const char *what) {
  if (err == CL_SUCCESS) return CLS_OK;
  const cls_device_info *d = cls_engine_device(t->e, t->device);
  return cls_fail(t->e, CLS_ERR_OPENCL, "device %d:%d (%s): %s failed: %s", d->platform_index, d->device_index, d->name,
                  what, cls_cl_error_name(err));
}

static cl_mem device_buffer(cls_trainer *t, size_t bytes, cls_status *st) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(t->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL, &err);
  if (*st == CLS_OK) *st = cl_ok(t, err, "allocating device memory");
  return m;
}

cls_status cls_trainer_create(cls_engine *e, int device, const cls_train_options *o, int max_batch, int max_frames,
                              int max_label, cls_trainer **out) {
  *out = NULL;
  cls_trainer *t = calloc(1, sizeof *t);
  if (!t) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  t->e = e;
  t->device = device;
  t->o = *o;
  t->max_batch = max_batch;
  t->max_frames = max_frames;
  t->max_label = max_label > 0 ? max_label : 1;
  t->width = cls_model_input_width(&o->model);
  cls_status st = cls_engine_device_cl(e, device, &t->ctx, NULL, &t->q);
  char err[1024];
  if (st == CLS_OK && cls_mfcc_tables_create(&o->features, &t->tables, err, sizeof err) != CLS_OK)
    st = cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "%s", err);
  if (st == CLS_OK) st = cls_model_create(e, device, &o->model, max_frames, max_batch, t->max_label, &t->model);
  if (st == CLS_OK) st = cls_adam_create(e, device, &t->adam);
  if (st == CLS_OK && !o->host_features) st = cls_mfcc_create(e, device, t->tables, &t->mfcc);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  t->n_params = cls_model_layout(&o->model, views);
  size_t pb = t->n_params * sizeof(float), rows = (size_t)max_frames * (size_t)max_batch;
  if (st == CLS_OK) {
    t->params = device_buffer(t, pb, &st);
    t->grads = device_buffer(t, pb, &st);
    t->m = device_buffer(t, pb, &st);
    t->v = device_buffer(t, pb, &st);
    t->features = device_buffer(t, rows * (size_t)t->width * sizeof(float), &st);
    t->seq_len = device_buffer(t, (size_t)max_batch * sizeof(int32_t), &st);
    t->labels = device_buffer(t, (size_t)max_batch * (size_t)t->max_label * sizeof(int32_t), &st);
    t->label_len = device_buffer(t, (size_t)max_batch * sizeof(int32_t), &st);
  }
  t->host_a = malloc(pb);
  t->host_b = malloc(pb);
  t->host_c = malloc(pb);
  t->label_stage = malloc((size_t)max_batch * (size_t)t->max_label * sizeof(int32_t));
  t->losses = malloc((size_t)max_batch * sizeof(float));
  t->logits = malloc(rows * (size_t)o->model.n_classes * sizeof(float));
  if (st == CLS_OK && (!t->host_a || !t->host_b || !t->host_c || !t->label_stage || !t->losses || !t->logits))
    st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu parameters", t->n_params);
  if (st != CLS_OK) {
    cls_trainer_destroy(t);
    return st;
  }
  *out = t;
  return CLS_OK;
}

void cls_trainer_destroy(cls_trainer *t) {
  if (!t) return;
  cls_model_destroy(t->model);
  cls_adam_destroy(t->adam);
  cls_mfcc_destroy(t->mfcc);
  cls_mfcc_tables_destroy(t->tables);
  cl_mem mems[] = {t->params, t->grads, t->m, t->v, t->features, t->seq_len, t->labels, t->label_len};
  for (size_t i = 0; i < sizeof mems / sizeof *mems; i++)
    if (mems[i]) clReleaseMemObject(mems[i]);
  free(t->host_a);
  free(t->host_b);
  free(t->host_c);
  free(t->label_stage);
  free(t->losses);
  free(t->logits);
  free(t);
}

const cls_train_state *cls_trainer_state(const cls_trainer *t) { return &t->state; }
size_t cls_trainer_param_count(const cls_trainer *t) { return t->n_params; }

cls_status cls_trainer_read_params(cls_trainer *t, float *params, size_t n) {
  if (n != t->n_params) return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "read_params: %zu != %zu", n, t->n_params);
  return cl_ok(t, clEnqueueReadBuffer(t->q, t->params, CL_TRUE, 0, n * sizeof(float), params, 0, NULL, NULL),
               "reading the parameters");
}

/* ---- parameters, checkpoints ---- */

/* Glorot-uniform weights (limit sqrt(6/(fan_in+fan_out)), as DeepSpeech's VarianceScaling fan_avg
   uniform and TF's default for the LSTM kernel), zero biases; draws from Philox keyed by the seed. */
static void init_params(cls_trainer *t, float *p) {
  cls_param_view v[CLS_MODEL_N_TENSORS];
  cls_model_layout(&t->o.model, v);
  for (int i = 0; i < CLS_MODEL_N_TENSORS; i++) {
    if (v[i].ndim == 1) {
      memset(p + v[i].offset, 0, v[i].count * sizeof(float));
      continue;
    }
    double limit = sqrt(6.0 / (double)(v[i].shape[0] + v[i].shape[1]));
    for (size_t k = 0; k < v[i].count; k += 4) {
      cls_philox4 ctr = {{(cls_u32)(k >> 2), (cls_u32)((uint64_t)k >> 34), (cls_u32)i, 0x1a17u}};
      cls_philox4 r = cls_philox4x32_10(ctr, t->o.random_seed, 0xC0FFEEu);
      for (size_t j = 0; j < 4 && k + j < v[i].count; j++) {
        double u = (double)(r.v[j] >> 8) / 16777216.0;
        p[v[i].offset + k + j] = (float)((2.0 * u - 1.0) * limit);
      }
    }
  }
}

static cls_status upload_state(cls_trainer *t, const float *p, const float *m, const float *v) {
  size_t b = t->n_params * sizeof(float);
  cls_status st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->params, CL_TRUE, 0, b, p, 0, NULL, NULL), "uploading parameters");
  if (st == CLS_OK) st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->m, CL_TRUE, 0, b, m, 0, NULL, NULL), "uploading Adam m");
  if (st == CLS_OK) st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->v, CL_TRUE, 0, b, v, 0, NULL, NULL), "uploading Adam v");
  return st;
}

static cls_status load_file(cls_trainer *t, const char *path, int keep_flag_lr) {
  char err[1024];
  cls_train_state s;
  if (cls_checkpoint_load(path, &t->o.model, t->host_a, t->host_b, t->host_c, &s, err, sizeof err) != CLS_OK)
    return cls_fail(t->e, CLS_ERR_IO, "%s", err);
  cls_status st = upload_state(t, t->host_a, t->host_b, t->host_c);
  if (st != CLS_OK) return st;
  if (keep_flag_lr) s.learning_rate = t->o.learning_rate;
  t->state = s;
  return CLS_OK;
}

cls_status cls_trainer_load(cls_trainer *t, const char *mode, int evaluation) {
  const char *dir = t->o.load_checkpoint_dir;
  char path[4400], err[1024];
  int want_best = !strcmp(mode, "auto") || !strcmp(mode, "best");
  int want_last = !strcmp(mode, "auto") || !strcmp(mode, "last");
  if (!want_best && !want_last && strcmp(mode, "init"))
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "--load_%s must be auto, best, last%s, not \"%s\"",
                    evaluation ? "evaluate" : "train", evaluation ? "" : " or init", mode);
  if (evaluation && !strcmp(mode, "init"))
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "--load_evaluate must be auto, best or last");
  if (dir && *dir && want_best && cls_checkpoint_find(dir, "best_dev", path, sizeof path, err, sizeof err) == CLS_OK) {
    cls_log(t->e, CLS_LOG_INFO, "Loading best validating checkpoint from %s", path);
    return load_file(t, path, t->o.force_initialize_learning_rate && !evaluation);
  }
  if (want_best && !want_last)
    return cls_fail(t->e, CLS_ERR_IO, "no best validating checkpoint in %s", dir && *dir ? dir : "(no --checkpoint_dir)");
  if (dir && *dir && want_last && cls_checkpoint_find(dir, "train", path, sizeof path, err, sizeof err) == CLS_OK) {
    cls_log(t->e, CLS_LOG_INFO, "Loading most recent checkpoint from %s", path);
    return load_file(t, path, t->o.force_initialize_learning_rate && !evaluation);
  }
  if (evaluation || (want_last && !want_best))
    return cls_fail(t->e, CLS_ERR_IO, "no checkpoint to load in %s", dir && *dir ? dir : "(no --checkpoint_dir)");
  cls_log(t->e, CLS_LOG_INFO, "Initializing all variables (random seed %u)", (unsigned)t->o.random_seed);
  init_params(t, t->host_a);
  memset(t->host_b, 0, t->n_params * sizeof(float));
  memset(t->host_c, 0, t->n_params * sizeof(float));
  memset(&t->state, 0, sizeof t->state);
  t->state.learning_rate = t->o.learning_rate;
  t->state.best_dev_loss = INFINITY;
  t->state.random_seed = t->o.random_seed;
  t->state.adam = cls_adam_state_init(t->o.beta1, t->o.beta2);
  return upload_state(t, t->host_a, t->host_b, t->host_c);
}

static cls_status save(cls_trainer *t, const char *kind) {
  const char *dir = t->o.save_checkpoint_dir;
  if (!dir || !*dir) return CLS_OK;
  size_t b = t->n_params * sizeof(float);
  cls_status st = cl_ok(t, clEnqueueReadBuffer(t->q, t->params, CL_TRUE, 0, b, t->host_a, 0, NULL, NULL), "reading parameters");
  if (st == CLS_OK) st = cl_ok(t, clEnqueueReadBuffer(t->q, t->m, CL_TRUE, 0, b, t->host_b, 0, NULL, NULL), "reading Adam m");
  if (st == CLS_OK) st = cl_ok(t, clEnqueueReadBuffer(t->q, t->v, CL_TRUE, 0, b, t->host_c, 0, NULL, NULL), "reading Adam v");
  if (st != CLS_OK) return st;
  char path[4400], err[1024];
  if (cls_checkpoint_save_in(dir, kind, t->o.max_to_keep, &t->o.model, t->host_a, t->host_b, t->host_c, &t->state, path,
                             sizeof path, err, sizeof err) != CLS_OK)
    return cls_fail(t->e, CLS_ERR_IO, "%s", err);
  t->last_save_ms = cls_now_ms();
  cls_log(t->e, CLS_LOG_INFO, "Saved %s checkpoint %s", kind, path);
  return CLS_OK;
}

/* ---- batches ---- */

/* Puts a host batch on the device: features (computed on the device, or uploaded), lengths, labels. */
static cls_status upload_batch(cls_trainer *t, cls_host_batch *b, cls_model_batch *mb) {
  if (b->status != CLS_OK) return cls_fail(t->e, b->status, "%s", b->err);
  if (b->batch > t->max_batch || b->time > t->max_frames || b->max_label > t->max_label)
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "batch of %d x %d frames exceeds the trainer's %d x %d", b->batch,
                    b->time, t->max_batch, t->max_frames);
  for (int i = 0; i < b->batch; i++)
    if (b->frames[i] <= 0)
      return cls_fail(t->e, CLS_ERR_IO, "utterance %d of the batch is shorter than one feature window", b->first + i);
  cls_status st = CLS_OK;
  int time = b->time;
  if (t->o.host_features) {
    size_t bytes = (size_t)b->time * (size_t)b->batch * (size_t)t->width * sizeof(float);
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->features, CL_FALSE, 0, bytes, b->windows, 0, NULL, NULL),
               "uploading features");
  } else {
    st = cls_mfcc_compute(t->mfcc, t->q, b->batch, (const float *const *)b->audio, b->n_audio, t->o.model.n_context,
                          cls_buf_of(t->features), &time, NULL, NULL);
  }
  for (int i = 0; i < b->batch; i++) {
    memset(t->label_stage + (size_t)i * t->max_label, 0, (size_t)t->max_label * sizeof(int32_t));
    if (b->label_len[i] > 0)
      memcpy(t->label_stage + (size_t)i * t->max_label, b->labels + (size_t)i * b->max_label,
             (size_t)b->label_len[i] * sizeof(int32_t));
  }
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->seq_len, CL_FALSE, 0, (size_t)b->batch * sizeof(int32_t), b->frames, 0,
                                       NULL, NULL),
               "uploading lengths");
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->labels, CL_FALSE, 0, (size_t)b->batch * t->max_label * sizeof(int32_t),
                                       t->label_stage, 0, NULL, NULL),
               "uploading labels");
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->label_len, CL_FALSE, 0, (size_t)b->batch * sizeof(int32_t), b->label_len,
                                       0, NULL, NULL),
               "uploading label lengths");
  /* The staging buffers are reused by the next batch: wait for the writes. */
  if (st == CLS_OK) st = cl_ok(t, clFinish(t->q), "clFinish");
  mb->time = time;
  mb->batch = b->batch;
  mb->features = cls_buf_of(t->features);
  mb->seq_len = cls_buf_of(t->seq_len);
  mb->labels = cls_buf_of(t->labels);
  mb->label_len = cls_buf_of(t->label_len);
  return st;
}

static cls_status start_loader(cls_trainer *t, const cls_utterance *u, int n, int batch, cls_loader **l) {
  cls_loader_options lo = {t->tables, t->o.model.n_context, t->o.host_features, t->o.feature_cache, 3};
  char err[1024];
  if (cls_loader_start(u, n, batch, &lo, l, err, sizeof err) != CLS_OK)
    return cls_fail(t->e, CLS_ERR_OUT_OF_MEMORY, "%s", err);
  return CLS_OK;
}

static void report(cls_progress_fn fn, void *user, const char *phase, const char *set, int epoch, int64_t steps,
                   int64_t total, double loss_sum, double t0, double audio, int finished) {
  if (!fn) return;
  cls_progress p = {phase, set, epoch, steps, total, steps ? loss_sum / (double)steps : 0.0, (cls_now_ms() - t0) / 1e3,
                    audio, finished};
  fn(user, &p);
}

cls_status cls_trainer_evaluate(cls_trainer *t, const cls_eval_set *set, int batch_size, const char *phase,
                                cls_batch_fn on_batch, void *batch_user, cls_progress_fn progress, void *user,
                                double *mean_loss, int64_t *steps_out) {
  cls_loader *l = NULL;
  cls_status st = start_loader(t, set->utts, set->n, batch_size, &l);
  double t0 = cls_now_ms(), loss_sum = 0, audio = 0;
  int64_t steps = 0, total = (set->n + batch_size - 1) / batch_size;
  const int C = t->o.model.n_classes;
  for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
    cls_model_batch mb;
    st = upload_batch(t, b, &mb);
    if (st == CLS_OK) st = cls_model_forward(t->model, t->q, &mb, cls_buf_of(t->params), NULL, t->losses);
    if (st == CLS_OK && on_batch) {
      size_t bytes = (size_t)mb.time * (size_t)mb.batch * (size_t)C * sizeof(float);
      st = cl_ok(t, clEnqueueReadBuffer(t->q, cls_model_logits(t->model).mem, CL_TRUE, 0, bytes, t->logits, 0, NULL, NULL),
                 "reading logits");
      if (st == CLS_OK) on_batch(batch_user, b->first, b->batch, mb.time, t->logits, b->frames, t->losses);
    }
    if (st == CLS_OK) {
      double mean = 0;
      for (int i = 0; i < b->batch; i++) mean += t->losses[i];
      loss_sum += mean / b->batch;
      audio += b->audio_seconds;
      steps++;
      report(progress, user, phase, set->name, t->epoch, steps, total, loss_sum, t0, audio, 0);
    }
    cls_loader_done(l, b);
  }
  cls_loader_stop(l);
  if (mean_loss) *mean_loss = steps ? loss_sum / (double)steps : 0.0;
  if (steps_out) *steps_out = steps;
  if (st == CLS_OK) report(progress, user, phase, set->name, t->epoch, steps, total, loss_sum, t0, audio, 1);
  return st;
}

static cls_status train_epoch(cls_trainer *t, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                              void *user) {
  cls_loader *l = NULL;
  const int B = t->o.train_batch_size;
  /* DeepSpeech drops the last partial training batch (drop_remainder). */
  int usable = n / B * B;
  if (usable == 0) return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "fewer training samples (%d) than --train_batch_size (%d)", n, B);
  cls_status st = start_loader(t, u, usable, B, &l);
  double t0 = cls_now_ms(), loss_sum = 0, audio = 0;
  int64_t steps = 0, total = usable / B;
  for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
    cls_model_batch mb;
    st = upload_batch(t, b, &mb);
    cls_model_dropout drop;
    memcpy(drop.rate, t->o.dropout, sizeof drop.rate);
    drop.seed = t->state.random_seed;
    drop.step = (uint32_t)t->state.global_step;
    drop.utterance_offset = 0;
    if (st == CLS_OK)
      st = cls_model_train_step(t->model, t->q, &mb, cls_buf_of(t->params), &drop, cls_buf_of(t->grads),
                                1.0f / (float)b->batch, CLS_OVERWRITE, t->losses);
    if (st == CLS_OK) {
      double mean = 0;
      for (int i = 0; i < b->batch; i++) mean += t->losses[i];
      mean /= b->batch;
      if (!isfinite(mean)) {
        char names[1024] = "";
        for (int i = 0; i < b->batch; i++)
          if (!isfinite(t->losses[i]) && strlen(names) < 700)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", *names ? ", " : "", u[b->first + i].path);
        cls_log(t->e, CLS_LOG_WARNING,
                "the following files caused an infinite (or NaN) loss; the step was not applied: %s", names);
      } else {
        st = cls_adam_update(t->adam, t->q, t->n_params, cls_buf_of(t->params), cls_buf_of(t->m), cls_buf_of(t->v),
                             cls_buf_of(t->grads), t->state.learning_rate, t->o.beta1, t->o.beta2, t->o.epsilon,
                             &t->state.adam, NULL);
        t->state.global_step++;
        loss_sum += mean;
        steps++;
      }
      audio += b->audio_seconds;
      report(progress, user, "Training", "train", epoch, steps, total, loss_sum, t0, audio, 0);
    }
    cls_loader_done(l, b);
    if (st == CLS_OK && t->o.checkpoint_secs > 0 && cls_now_ms() - t->last_save_ms > t->o.checkpoint_secs * 1e3)
      st = save(t, "train");
  }
  cls_loader_stop(l);
  if (st == CLS_OK) report(progress, user, "Training", "train", epoch, steps, total, loss_sum, t0, audio, 1);
  return st;
}

cls_status cls_trainer_train(cls_trainer *t, const cls_utterance *train, int n_train, const cls_eval_set *dev, int n_dev,
                             cls_progress_fn progress, void *user) {
  t->last_save_ms = cls_now_ms();
  cls_status st = CLS_OK;
  for (int epoch = 0; st == CLS_OK && epoch < t->o.epochs; epoch++) {
    t->epoch = epoch;
    st = train_epoch(t, epoch, train, n_train, progress, user);
    if (st != CLS_OK) break;
    t->state.epoch++;
    st = save(t, "train");
    if (st != CLS_OK || n_dev == 0) continue;
    double weighted = 0;
    int64_t total_steps = 0;
    for (int d = 0; st == CLS_OK && d < n_dev; d++) {
      double loss = 0;
      int64_t steps = 0;
      st = cls_trainer_evaluate(t, &dev[d], t->o.dev_batch_size, "Validation", NULL, NULL, progress, user, &loss,
                                &steps);
      weighted += loss * (double)steps;
      total_steps += steps;
    }
    if (st != CLS_OK) break;
    double dev_loss = total_steps ? weighted / (double)total_steps : INFINITY;
    cls_rule_options ro = {t->o.early_stop, t->o.es_epochs, t->o.es_min_delta, t->o.reduce_lr_on_plateau,
                           t->o.plateau_epochs};
    cls_rule_state rs = {t->state.best_dev_loss, t->state.epochs_without_improvement};
    cls_rule_decision dec = cls_dev_rules(&rs, dev_loss, &ro);
    t->state.best_dev_loss = rs.best_dev_loss;
    t->state.epochs_without_improvement = rs.epochs_without_improvement;
    cls_log(t->e, CLS_LOG_INFO, "Epoch %d: dev loss %f (best %f, %d epochs without improvement)", t->state.epoch - 1,
            dev_loss, t->state.best_dev_loss, t->state.epochs_without_improvement);
    if (dec.new_best) {
      st = save(t, "best_dev");
      if (st == CLS_OK) cls_log(t->e, CLS_LOG_INFO, "Saved new best validating model with loss %f", dev_loss);
    }
    if (st == CLS_OK && dec.early_stop) {
      cls_log(t->e, CLS_LOG_INFO, "Early stop triggered as the loss did not improve the last %d epochs", t->o.es_epochs);
      break;
    }
    if (st == CLS_OK && dec.reduce_lr) {
      /* Reload the best weights (and Adam state, step, learning rate), keep the counters, reduce. */
      int streak = t->state.epochs_without_improvement, ep = t->state.epoch;
      char path[4400], err[1024];
      if (cls_checkpoint_find(t->o.save_checkpoint_dir, "best_dev", path, sizeof path, err, sizeof err) == CLS_OK)
        st = load_file(t, path, 0);
      t->state.epochs_without_improvement = streak;
      t->state.epoch = ep;
      t->state.learning_rate *= t->o.plateau_reduction;
      cls_log(t->e, CLS_LOG_INFO, "Encountered a plateau, reducing learning rate to %g", (double)t->state.learning_rate);
      if (st == CLS_OK) st = save(t, "best_dev");
    }
  }
  return st;
}
