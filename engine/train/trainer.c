/* The training loop (see trainer.h): creating the towers, loading and initialising the
 * parameters, checkpoints, evaluation passes on the lead tower, and DeepSpeech's epoch rules. The
 * strategies' steps live in train_parallel.c and train_async.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "device/log.h"
#include "philox.h"
#include "train/train_internal.h"
#include "train/train_rules.h"

cls_train_options cls_train_options_default(int n_hidden, int n_classes) {
  cls_train_options o;
  memset(&o, 0, sizeof o);
  o.model = (cls_model_config){26, 9, n_hidden, n_classes, 20.0f};
  o.features = cls_mfcc_default(16000);
  o.train_batch_size = o.dev_batch_size = o.test_batch_size = 1;
  o.epochs = 75;
  o.learning_rate = 0.001f;
  o.beta1 = 0.9f;
  o.beta2 = 0.999f;
  o.epsilon = 1e-8f;
  for (int i = 0; i < 6; i++) o.dropout[i] = i == 3 || i == 4 ? 0.0f : 0.05f;
  o.random_seed = 4568;
  o.checkpoint_secs = 600;
  o.max_to_keep = 5;
  o.load_train = o.load_evaluate = "auto";
  o.plateau_epochs = 10;
  o.plateau_reduction = 0.1f;
  o.es_epochs = 25;
  o.es_min_delta = 0.05f;
  o.strategy = "hybrid";
  o.balance = "auto";
  o.towers_per_device = 1;
  o.replica_check_steps = 100;
  return o;
}

static cls_status parse_fault(cls_trainer *t) {
  const char *env = getenv("CLSPEECH_FAULT");
  if (!env || !*env) return CLS_OK;
  char kind[16] = "";
  int tower = -1;
  long long step = -1;
  if (sscanf(env, "%15[a-z]:tower=%d,step=%lld", kind, &tower, &step) != 3 || tower < 0 || step < 0 ||
      (strcmp(kind, "fail") && strcmp(kind, "perturb")))
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT,
                    "CLSPEECH_FAULT=\"%s\": expected fail:tower=K,step=S or perturb:tower=K,step=S", env);
  t->fault.kind = strcmp(kind, "fail") ? 2 : 1;
  t->fault.tower = tower;
  t->fault.step = step;
  cls_log(t->e, CLS_LOG_WARNING, "fault injection: %s tower %d at step %lld (CLSPEECH_FAULT)", kind, tower, step);
  return CLS_OK;
}

cls_status cls_trainer_create(cls_engine *e, const int *devices, int n_devices, const cls_train_options *o,
                              int max_batch, int max_frames, int max_label, cls_trainer **out) {
  *out = NULL;
  const int per_device = o->towers_per_device > 1 ? o->towers_per_device : 1;
  if (n_devices <= 0 || n_devices * per_device > 64)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "between 1 and 64 towers are supported (asked for %d)",
                    n_devices * per_device);
  const char *strategy = o->strategy && *o->strategy ? o->strategy : "hybrid";
  const char *balance = o->balance && *o->balance ? o->balance : "auto";
  int which = !strcmp(strategy, "hybrid") ? STRATEGY_HYBRID
              : !strcmp(strategy, "sync") ? STRATEGY_SYNC
              : !strcmp(strategy, "async") ? STRATEGY_ASYNC
                                           : -1;
  if (which < 0) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "--strategy must be hybrid, sync or async, not \"%s\"", strategy);
  if (strcmp(balance, "auto") && strcmp(balance, "equal"))
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "--balance must be auto or equal, not \"%s\"", balance);
  for (int i = 0; per_device > 1 && i < n_devices; i++) {
    const cls_device_info *d = cls_engine_device(e, devices[i]);
    /* PoCL's basic device runs kernels on the thread that waits for them, and two such threads on
       one device trip an assertion in its kernel-handle cache (pocl_release_dlhandle_cache). */
    if (d && !strncmp(d->name, "basic", 5) && strstr(d->platform_name, "Portable Computing Language"))
      return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                      "device %d:%d (%s) cannot hold %d towers: PoCL's basic device is not safe for several threads "
                      "at once; use --towers_per_device 1 or PoCL's pthread device",
                      d->platform_index, d->device_index, d->name, per_device);
  }
  cls_trainer *t = calloc(1, sizeof *t);
  if (!t) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  t->e = e;
  t->o = *o;
  t->strategy = which;
  t->balance_auto = !strcmp(balance, "auto");
  t->max_batch = max_batch;
  t->max_frames = max_frames;
  t->max_label = max_label > 0 ? max_label : 1;
  pthread_mutex_init(&t->lock, NULL);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  t->n_params = cls_model_layout(&o->model, views);
  char err[1024];
  cls_status st = parse_fault(t);
  if (st == CLS_OK && cls_mfcc_tables_create(&o->features, &t->tables, err, sizeof err) != CLS_OK)
    st = cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "%s", err);
  t->n_towers = n_devices * per_device;
  t->towers = calloc((size_t)t->n_towers, sizeof *t->towers);
  /* A tower takes its share of the global batch in chunks of at most `capacity` utterances; room
     for twice the per-tower batch lets the balancer shift work without chunking. */
  int capacity = max_batch;
  if (t->n_towers > 1 && 2 * o->train_batch_size > capacity) capacity = 2 * o->train_batch_size;
  const int n_losses = capacity > o->train_batch_size * t->n_towers ? capacity : o->train_batch_size * t->n_towers;
  size_t pb = t->n_params * sizeof(float), rows = (size_t)max_frames * (size_t)max_batch;
  t->gbuf[0] = malloc(pb);
  t->gbuf[1] = malloc(pb);
  t->g = t->gbuf[0];
  t->host_a = malloc(pb);
  t->host_b = malloc(pb);
  t->host_c = malloc(pb);
  t->losses = malloc((size_t)n_losses * sizeof(float));
  t->logits = malloc(rows * (size_t)o->model.n_classes * sizeof(float));
  if (st == CLS_OK && (!t->towers || !t->gbuf[0] || !t->gbuf[1] || !t->host_a || !t->host_b || !t->host_c || !t->losses || !t->logits))
    st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu parameters", t->n_params);
  cls_tower_config tc = {o->model, t->tables, o->host_features, capacity, max_frames, t->max_label};
  for (int i = 0; st == CLS_OK && i < t->n_towers; i++) {
    tower_slot *s = &t->towers[i];
    s->index = i;
    s->grad = malloc(pb);
    s->losses = malloc((size_t)capacity * sizeof(float));
    if (!s->grad || !s->losses) st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for tower %d", i);
    if (st == CLS_OK) st = cls_tower_create(e, devices[i / per_device], &tc, &s->tower);
    if (st != CLS_OK) {
      const cls_device_info *d = cls_engine_device(e, devices[i / per_device]);
      cls_error_append(e, " (creating tower %d on device %d:%d %s)", i, d ? d->platform_index : -1,
                       d ? d->device_index : -1, d ? d->name : "?");
    }
  }
  if (st == CLS_OK && o->log_placement) cls_train_log_placement(t);
  if (st == CLS_OK && t->n_towers > 1) st = cls_train_warm_up(t);
  if (st != CLS_OK) {
    cls_trainer_destroy(t);
    return st;
  }
  *out = t;
  return CLS_OK;
}

void cls_trainer_destroy(cls_trainer *t) {
  if (!t) return;
  for (int i = 0; t->towers && i < t->n_towers; i++) {
    cls_tower_destroy(t->towers[i].tower);
    free(t->towers[i].grad);
    free(t->towers[i].losses);
  }
  free(t->towers);
  cls_mfcc_tables_destroy(t->tables);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 64; i++)
      if (t->uploads[k][i]) clReleaseEvent(t->uploads[k][i]);
  free(t->gbuf[0]);
  free(t->gbuf[1]);
  free(t->host_a);
  free(t->host_b);
  free(t->host_c);
  free(t->losses);
  free(t->logits);
  pthread_mutex_destroy(&t->lock);
  free(t);
}

const cls_train_state *cls_trainer_state(const cls_trainer *t) { return &t->state; }
size_t cls_trainer_param_count(const cls_trainer *t) { return t->n_params; }

int cls_trainer_tower_count(const cls_trainer *t) {
  int n = 0;
  for (int i = 0; i < t->n_towers; i++) n += t->towers[i].tower != NULL;
  return n;
}

int cls_train_out_of_time(cls_trainer *t) {
  if (!t->out_of_time && t->deadline_ms > 0 && cls_now_ms() > t->deadline_ms) t->out_of_time = 1;
  return t->out_of_time;
}

tower_slot *cls_train_lead(cls_trainer *t) {
  for (int i = 0; i < t->n_towers; i++)
    if (t->towers[i].tower) return &t->towers[i];
  return NULL;
}

static cls_status no_tower(cls_trainer *t) { return cls_fail(t->e, CLS_ERR_NO_DEVICE, "no tower is left to train on"); }

cls_status cls_trainer_read_params(cls_trainer *t, float *params, size_t n) {
  if (n != t->n_params) return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "read_params: %zu != %zu", n, t->n_params);
  tower_slot *lead = cls_train_lead(t);
  return lead ? cls_tower_read_state(lead->tower, params, NULL, NULL) : no_tower(t);
}

cls_status cls_train_injected_failure(cls_trainer *t, tower_slot *s, int64_t step) {
  fault_spec *f = &t->fault;
  if (f->kind != 1 || f->fired || s->index != f->tower || step < f->step) return CLS_OK;
  f->fired = 1;
  const cls_device_info *d = cls_engine_device(t->e, cls_tower_device(s->tower));
  return cls_fail(t->e, CLS_ERR_OPENCL,
                  "device %d:%d (%s): clFinish failed: CL_OUT_OF_RESOURCES (injected by CLSPEECH_FAULT)",
                  d->platform_index, d->device_index, d->name);
}

int cls_train_is_device_fault(cls_status st) {
  return st == CLS_ERR_OPENCL || st == CLS_ERR_OUT_OF_MEMORY || st == CLS_ERR_BLAS;
}

void cls_train_drop_tower(cls_trainer *t, tower_slot *s, const char *what) {
  const cls_device_info *d = cls_engine_device(t->e, cls_tower_device(s->tower));
  cls_tower_destroy(s->tower);
  s->tower = NULL;
  cls_log(t->e, CLS_LOG_WARNING, "tower %d on device %d:%d (%s) failed at step %lld and is dropped; %d tower%s left: %s",
          s->index, d->platform_index, d->device_index, d->name, (long long)t->state.global_step,
          cls_trainer_tower_count(t), cls_trainer_tower_count(t) == 1 ? "" : "s", what);
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


/* Uploads parameters and Adam slots to every tower. */
static cls_status upload_state(cls_trainer *t, const float *p, const float *m, const float *v) {
  cls_status st = CLS_OK;
  for (int i = 0; st == CLS_OK && i < t->n_towers; i++)
    if (t->towers[i].tower) st = cls_tower_write_state(t->towers[i].tower, p, m, v);
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

cls_status cls_train_save_host(cls_trainer *t, const char *kind) {
  const char *dir = t->o.save_checkpoint_dir;
  if (!dir || !*dir) return CLS_OK;
  char path[4400], err[1024];
  if (cls_checkpoint_save_in(dir, kind, t->o.max_to_keep, &t->o.model, t->host_a, t->host_b, t->host_c, &t->state, path,
                             sizeof path, err, sizeof err) != CLS_OK)
    return cls_fail(t->e, CLS_ERR_IO, "%s", err);
  t->last_save_ms = cls_now_ms();
  cls_log(t->e, CLS_LOG_INFO, "Saved %s checkpoint %s", kind, path);
  return CLS_OK;
}

cls_status cls_train_save(cls_trainer *t, const char *kind) {
  const char *dir = t->o.save_checkpoint_dir;
  if (!dir || !*dir) return CLS_OK;
  tower_slot *lead = cls_train_lead(t);
  if (!lead) return no_tower(t);
  cls_status st = cls_tower_read_state(lead->tower, t->host_a, t->host_b, t->host_c);
  return st == CLS_OK ? cls_train_save_host(t, kind) : st;
}

/* ---- passes ---- */

cls_status cls_train_start_loader(cls_trainer *t, const cls_utterance *u, int n, int batch, int depth, cls_loader **l) {
  cls_loader_options lo = {t->tables, t->o.model.n_context, t->o.host_features, t->o.feature_cache, depth};
  char err[1024];
  if (cls_loader_start(u, n, batch, &lo, l, err, sizeof err) != CLS_OK)
    return cls_fail(t->e, CLS_ERR_OUT_OF_MEMORY, "%s", err);
  return CLS_OK;
}

void cls_train_report(cls_progress_fn fn, void *user, const char *phase, const char *set, int epoch, int64_t steps,
                      int64_t total, double loss_sum, double t0, double audio, int finished) {
  if (!fn) return;
  cls_progress p = {phase, set, epoch, steps, total, steps ? loss_sum / (double)steps : 0.0, (cls_now_ms() - t0) / 1e3,
                    audio, finished};
  fn(user, &p);
}

void cls_train_warn_nonfinite(cls_trainer *t, const cls_host_batch *b, const float *losses, const cls_utterance *u) {
  char names[1024] = "";
  for (int i = 0; i < b->batch; i++)
    if (!isfinite(losses[i]) && strlen(names) < 700)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", *names ? ", " : "", u[b->first + i].path);
  cls_log(t->e, CLS_LOG_WARNING, "the following files caused an infinite (or NaN) loss; the step was not applied: %s",
          names);
}

cls_status cls_trainer_evaluate(cls_trainer *t, const cls_eval_set *set, int batch_size, const char *phase,
                                cls_batch_fn on_batch, void *batch_user, cls_progress_fn progress, void *user,
                                double *mean_loss, int64_t *steps_out) {
  tower_slot *lead = cls_train_lead(t);
  if (!lead) return no_tower(t);
  if (batch_size > t->max_batch)
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "evaluation batch of %d exceeds the trainer's %d", batch_size,
                    t->max_batch);
  cls_loader *l = NULL;
  cls_status st = cls_train_start_loader(t, set->utts, set->n, batch_size, 3, &l);
  double t0 = cls_now_ms(), loss_sum = 0, audio = 0;
  int64_t steps = 0, total = (set->n + batch_size - 1) / batch_size;
  for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
    int time = 0;
    st = cls_tower_evaluate(lead->tower, b, t->losses, on_batch ? t->logits : NULL, &time);
    if (st == CLS_OK && on_batch) on_batch(batch_user, b->first, b->batch, time, t->logits, b->frames, t->losses);
    if (st == CLS_OK) {
      double mean = 0;
      for (int i = 0; i < b->batch; i++) mean += t->losses[i];
      loss_sum += mean / b->batch;
      audio += b->audio_seconds;
      steps++;
      cls_train_report(progress, user, phase, set->name, t->epoch, steps, total, loss_sum, t0, audio, 0);
    }
    cls_loader_done(l, b);
  }
  cls_loader_stop(l);
  if (mean_loss) *mean_loss = steps ? loss_sum / (double)steps : 0.0;
  if (steps_out) *steps_out = steps;
  if (st == CLS_OK) cls_train_report(progress, user, phase, set->name, t->epoch, steps, total, loss_sum, t0, audio, 1);
  return st;
}

cls_status cls_trainer_train(cls_trainer *t, const cls_utterance *train, int n_train, const cls_eval_set *dev, int n_dev,
                             cls_progress_fn progress, void *user) {
  t->last_save_ms = cls_now_ms();
  t->deadline_ms = t->o.max_train_seconds > 0 ? cls_now_ms() + t->o.max_train_seconds * 1e3 : 0;
  t->out_of_time = 0;
  cls_status st = CLS_OK;
  for (int epoch = 0; st == CLS_OK && epoch < t->o.epochs && !t->out_of_time; epoch++) {
    t->epoch = epoch;
    st = t->strategy == STRATEGY_ASYNC ? cls_train_epoch_async(t, epoch, train, n_train, progress, user)
                                        : cls_train_epoch_parallel(t, epoch, train, n_train, progress, user);
    if (st != CLS_OK) break;
    if (t->out_of_time) {
      cls_log(t->e, CLS_LOG_NOTICE, "Training time limit of %g s reached in epoch %d at step %lld",
              t->o.max_train_seconds, epoch, (long long)t->state.global_step);
      st = cls_train_save(t, "train");
      break;
    }
    t->state.epoch++;
    st = cls_train_save(t, "train");
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
      st = cls_train_save(t, "best_dev");
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
      if (st == CLS_OK) st = cls_train_save(t, "best_dev");
    }
  }
  return st;
}
