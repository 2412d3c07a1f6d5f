/* The training loop (see clspeech/train.h): the trainer is the crew of towers (crew.h) plus the
 * loop over epochs, which hands each epoch to the strategy's function (strategy.h), evaluates the
 * dev sets, applies DeepSpeech's epoch rules (rules.h), saves checkpoints and reloads the best on a
 * plateau, evaluates the metrics sets, and opens and closes the run's summaries (summaries.h), which
 * the strategies fill through the crew; loading (whole, or a transfer's: drop_source_layers) and
 * initialising the parameters; and cls_trainer_evaluate, a pass of pass.c. Under --horovod (world.h)
 * rank 0 loads and broadcasts, the dev and metrics sets are split between the ranks and their losses
 * summed, and rank 0 alone writes. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/internal/train.h"
#include "device/log.h"
#include "philox.h"
#include "train/pass.h"
#include "train/rules.h"
#include "train/strategy.h"
#include "train/summaries.h"
#include "train/trainer.h"

/* Each strategy's epoch, by cls_strategy. */
static const cls_epoch_fn strategy_epochs[] = {
    [CLS_STRATEGY_HYBRID] = cls_hybrid_epoch,
    [CLS_STRATEGY_SYNC] = cls_sync_epoch,
    [CLS_STRATEGY_ASYNC] = cls_async_epoch,
};
enum { N_STRATEGIES = sizeof strategy_epochs / sizeof *strategy_epochs };

struct cls_trainer {
  cls_crew *crew;
  cls_pass *pass; /* the passes without dropout: the dev and metrics sets, cls_trainer_evaluate */
  int epoch;      /* epoch of this run, for progress */
};

cls_status cls_trainer_create(cls_engine *e, const int *devices, int n_devices, const cls_train_options *o,
                              int max_batch, int max_frames, int max_label, cls_trainer **out) {
  *out = NULL;
  cls_error bad; /* every member within its row of the option table (train_options.def) */
  if (cls_train_options_check(o, &bad) != CLS_OK) return cls_fail_wrap(e, bad.status, &bad, NULL);
  if ((int)o->strategy < 0 || (int)o->strategy >= N_STRATEGIES)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "--strategy must be hybrid, sync or async, not %d", (int)o->strategy);
  if (o->balance != CLS_BALANCE_AUTO && o->balance != CLS_BALANCE_EQUAL)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "--balance must be auto or equal, not %d", (int)o->balance);
  /* async keeps its master copy on one host: across processes it would need a parameter server. */
  if (o->horovod && o->strategy == CLS_STRATEGY_ASYNC)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "--horovod trains with --strategy hybrid or sync, not async");
  /* --augment: what this build runs. The augmented training set is featurised on the device whatever
     host_features says (which then applies to the sets that are not augmented). */
  for (int i = 0; i < o->n_augment; i++) {
    cls_error why;
    cls_status st = cls_augment_check_supported(&o->augment[i], &why);
    if (st != CLS_OK) return cls_fail_wrap(e, st, &why, "--augment %s: ", cls_augment_kind_name(o->augment[i].kind));
  }
  cls_trainer *t = calloc(1, sizeof *t);
  if (!t) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cls_status st = cls_crew_create(e, devices, n_devices, o, max_batch, max_frames, max_label, &t->crew);
  if (st == CLS_OK) st = cls_pass_create(t->crew, &t->pass);
  if (st != CLS_OK) {
    cls_trainer_destroy(t);
    return st;
  }
  *out = t;
  return CLS_OK;
}

void cls_trainer_destroy(cls_trainer *t) {
  if (!t) return;
  cls_pass_destroy(t->pass);
  cls_crew_destroy(t->crew);
  free(t);
}

cls_crew *cls_trainer_crew(cls_trainer *t) { return t->crew; }
cls_train_counters cls_trainer_counters(const cls_trainer *t) {
  const cls_train_state *s = &t->crew->state;
  cls_train_counters c = {s->global_step, s->epoch, s->learning_rate, s->rules.best_dev_loss,
                          s->rules.epochs_without_improvement};
  return c;
}

cls_status cls_trainer_set_remeasure_seconds(cls_trainer *t, double seconds) {
  if (!t) return CLS_ERR_INVALID_ARGUMENT;
  if (!(seconds >= 0) || !isfinite(seconds))
    return cls_fail(t->crew->e, CLS_ERR_INVALID_ARGUMENT, "the re-measure time must be 0 or more seconds, not %g",
                    seconds);
  t->crew->remeasure_s = seconds;
  return CLS_OK;
}

cls_status cls_trainer_set_fault(cls_trainer *t, const cls_train_fault *f) {
  if (!t) return CLS_ERR_INVALID_ARGUMENT;
  cls_train_fault none = {CLS_FAULT_NONE, 0, 0, CLS_OK};
  if (!f) f = &none;
  if (f->kind != CLS_FAULT_NONE && f->kind != CLS_FAULT_FAIL && f->kind != CLS_FAULT_PERTURB)
    return cls_fail(t->crew->e, CLS_ERR_INVALID_ARGUMENT, "unknown fault kind %d", (int)f->kind);
  if (f->kind != CLS_FAULT_NONE && (f->tower < 0 || f->step < 0))
    return cls_fail(t->crew->e, CLS_ERR_INVALID_ARGUMENT, "a fault needs a tower and a step >= 0, not %d and %lld",
                    f->tower, (long long)f->step);
  t->crew->fault = *f;
  t->crew->fault_fired = 0;
  return CLS_OK;
}
size_t cls_trainer_param_count(const cls_trainer *t) { return t->crew->n_params; }
int cls_trainer_tower_count(const cls_trainer *t) { return cls_crew_count(t->crew); }

cls_status cls_trainer_read_params(cls_trainer *t, float *params, size_t n) {
  if (n != t->crew->n_params)
    return cls_fail(t->crew->e, CLS_ERR_INVALID_ARGUMENT, "read_params: %zu != %zu", n, t->crew->n_params);
  return cls_crew_read_state(t->crew, params, NULL, NULL);
}

/* ---- parameters, checkpoints ---- */

/* Glorot-uniform weights (limit sqrt(6/(fan_in+fan_out)), as DeepSpeech's VarianceScaling fan_avg
   uniform and TF's default for the LSTM kernel), zero biases; draws from Philox keyed by the seed. With
   --layer_norm the norms' gamma ones and beta zeros, as tf.contrib.layers.layer_norm makes them. */
static void init_params(const cls_train_options *o, float *p) {
  cls_param_view v[CLS_MODEL_MAX_TENSORS];
  const int n = cls_model_layout_all(&o->model, v, NULL);
  for (int i = 0; i < n; i++) {
    if (i >= CLS_MODEL_N_TENSORS && strstr(v[i].name, "/gamma")) {
      for (size_t k = 0; k < v[i].count; k++) p[v[i].offset + k] = 1.0f;
      continue;
    }
    if (v[i].ndim == 1) {
      memset(p + v[i].offset, 0, v[i].count * sizeof(float));
      continue;
    }
    double limit = sqrt(6.0 / (double)(v[i].shape[0] + v[i].shape[1]));
    for (size_t k = 0; k < v[i].count; k += 4) {
      cls_philox4 ctr = {{(cls_u32)(k >> 2), (cls_u32)((uint64_t)k >> 34), (cls_u32)i, 0x1a17u}};
      cls_philox4 r = cls_philox4x32_10(ctr, o->random_seed, 0xC0FFEEu);
      for (size_t j = 0; j < 4 && k + j < v[i].count; j++) {
        double u = (double)(r.v[j] >> 8) / 16777216.0;
        p[v[i].offset + k + j] = (float)((2.0 * u - 1.0) * limit);
      }
    }
  }
}

/* The checkpoint's geometry against the model's, before its tensors: the same n_hidden, and the same
 * n_classes unless the output layer is dropped; a mismatch named with both sizes (and, for training,
 * how to train another alphabet from it). */
static cls_status check_geometry(cls_crew *c, const char *path, int n_drop, int training) {
  cls_model_config have;
  cls_error err;
  cls_status st = cls_checkpoint_peek_model(path, &have, &err);
  if (st != CLS_OK) return cls_fail_wrap(c->e, st, &err, NULL);
  const cls_model_config *want = &c->o.model;
  if (have.n_hidden != want->n_hidden)
    return cls_fail(c->e, CLS_ERR_IO, "%s: a model of n_hidden %d; this one's n_hidden is %d", path, have.n_hidden,
                    want->n_hidden);
  if (n_drop == 0 && have.n_classes != want->n_classes)
    return cls_fail(c->e, CLS_ERR_IO,
                    "%s: an output layer of %d classes (an alphabet of %d labels); this model's has %d (%d labels)%s",
                    path, have.n_classes, have.n_classes - 1, want->n_classes, want->n_classes - 1,
                    training ? ": training another alphabet from it needs the output layer dropped "
                               "(drop_source_layers 1 or more)"
                             : "");
  return CLS_OK;
}

/* Loads a checkpoint file into every tower and the training state (for training, or evaluation);
 * n_drop > 0 (a transfer): all but the last n_drop droppable layers, which get a fresh model's values
 * and zero Adam slots. */
static cls_status load_file(cls_crew *c, const char *path, int training, int keep_flag_lr, int n_drop) {
  cls_error err;
  cls_train_state s;
  cls_status st = check_geometry(c, path, n_drop, training);
  if (st != CLS_OK) return st;
  if (n_drop > 0) {
    init_params(&c->o, c->params);
    memset(c->m, 0, c->n_params * sizeof(float));
    memset(c->v, 0, c->n_params * sizeof(float));
  }
  int zeroed = 0;
  st = cls_train_checkpoint_load_dropping(path, &c->o.model, n_drop, c->o.load_cudnn, c->params, c->m, c->v, &s,
                                          &zeroed, &err);
  if (st != CLS_OK) return cls_fail_wrap(c->e, st, &err, NULL);
  if (zeroed)
    cls_log(c->e, CLS_LOG_NOTICE, "%s: a CudnnLSTM checkpoint (--load_cudnn): the LSTM's %d missing Adam slots "
            "initialised to zero", path, zeroed);
  if (!cls_checkpoint_is_tf(path) && !cls_checkpoint_has_digest(path))
    cls_log(c->e, CLS_LOG_NOTICE, "%s: its index records no SHA-256 (saved before checkpoints had digests): loaded "
            "without a checksum", path);
  if (n_drop > 0) {
    static const char *const layers[CLS_MODEL_MAX_DROP] = {"layer_2", "layer_3", "the LSTM", "layer_5", "layer_6"};
    char list[128] = "";
    for (int i = CLS_MODEL_MAX_DROP - n_drop; i < CLS_MODEL_MAX_DROP; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", layers[i]);
    cls_log(c->e, CLS_LOG_NOTICE,
            "Transfer learning from %s: %s initialised afresh (random seed %u, zero Adam slots), the rest loaded; "
            "the global step (%lld) carried over, the dev-loss record started anew",
            path, list, (unsigned)c->o.random_seed, (long long)s.global_step);
    /* The source's dev losses were of another model: the record starts anew, as DeepSpeech's every run. */
    s.rules.best_dev_loss = INFINITY;
    s.rules.epochs_without_improvement = 0;
    s.random_seed = c->o.random_seed;
  }
  st = cls_crew_write_state(c, c->params, c->m, c->v);
  if (st != CLS_OK) return st;
  if (isnan(s.learning_rate) && !keep_flag_lr)
    cls_log(c->e, CLS_LOG_NOTICE, "%s holds no learning_rate (a checkpoint from before DeepSpeech saved it): "
            "starting from --learning_rate %g", path, (double)c->o.learning_rate);
  if (keep_flag_lr || isnan(s.learning_rate)) s.learning_rate = c->o.learning_rate;
  c->state = s;
  return CLS_OK;
}

static cls_status load_here(cls_trainer *t, const char *dir, cls_load_mode mode, int evaluation);

cls_status cls_trainer_load(cls_trainer *t, cls_load_mode mode, int evaluation) {
  return cls_trainer_load_from(t, t->crew->o.load_checkpoint_dir, mode, evaluation);
}

cls_status cls_trainer_load_from(cls_trainer *t, const char *dir, cls_load_mode mode, int evaluation) {
  cls_crew *c = t->crew;
  /* Several ranks training: rank 0 loads or initialises (its folders), then every rank takes its state. */
  if (cls_world_size(c->world) == 1 || evaluation) return load_here(t, dir, mode, evaluation);
  cls_status st = cls_world_rank(c->world) == 0 ? load_here(t, dir, mode, evaluation) : CLS_OK;
  return cls_crew_share_state(c, st, 1);
}

static cls_status load_here(cls_trainer *t, const char *dir, cls_load_mode mode, int evaluation) {
  cls_crew *c = t->crew;
  const cls_train_options *o = &c->o;
  char path[CLS_PATH_CAP];
  cls_error err;
  if (mode != CLS_LOAD_AUTO && mode != CLS_LOAD_BEST && mode != CLS_LOAD_LAST && mode != CLS_LOAD_INIT)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT, "--load_%s must be auto, best, last%s, not %d",
                    evaluation ? "evaluate" : "train", evaluation ? "" : " or init", (int)mode);
  if (evaluation && mode == CLS_LOAD_INIT)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT, "--load_evaluate must be auto, best or last");
  if (mode != CLS_LOAD_INIT) {
    /* The same choice transcription makes (cls_checkpoint_choose); training's auto falls back to fresh. */
    int is_best = 0;
    const cls_status chosen = cls_checkpoint_choose(dir, mode, path, sizeof path, &is_best, &err);
    if (chosen == CLS_OK) {
      cls_log(c->e, CLS_LOG_INFO, "Loading %s checkpoint from %s", is_best ? "best validating" : "most recent", path);
      return load_file(c, path, !evaluation, o->force_initialize_learning_rate && !evaluation,
                       evaluation ? 0 : o->drop_source_layers);
    }
    if (evaluation || mode != CLS_LOAD_AUTO) return cls_fail_wrap(c->e, chosen, &err, NULL);
  }
  cls_log(c->e, CLS_LOG_INFO, "Initializing all variables (random seed %u)", (unsigned)o->random_seed);
  init_params(o, c->params);
  memset(c->m, 0, c->n_params * sizeof(float));
  memset(c->v, 0, c->n_params * sizeof(float));
  memset(&c->state, 0, sizeof c->state);
  c->state.learning_rate = o->learning_rate;
  c->state.rules.best_dev_loss = INFINITY;
  c->state.random_seed = o->random_seed;
  c->state.adam = cls_adam_state_init(o->beta1, o->beta2);
  return cls_crew_write_state(c, c->params, c->m, c->v);
}

/* ---- passes (pass.c) ---- */

cls_status cls_trainer_evaluate(cls_trainer *t, const cls_trainer_eval_request *request,
                                cls_trainer_eval_result *result) {
  return cls_pass_run(t->pass, request, t->epoch, CLS_SUMMARY_SETS, result);
}

/* ---- the loop ---- */

/* The dev sets' pass after an epoch and DeepSpeech's rules on its loss: best_dev checkpoint, early
 * stop (*stop set), reduce-on-plateau. */
static cls_status validate(cls_trainer *t, const cls_eval_set *dev, int n_dev, cls_progress_fn progress, void *user,
                           int *stop) {
  cls_crew *c = t->crew;
  const cls_train_options *o = &c->o;
  cls_train_state *state = &c->state;
  cls_status st = CLS_OK;
  double weighted = 0;
  int64_t total_steps = 0;
  for (int d = 0; st == CLS_OK && d < n_dev; d++) {
    double loss = 0;
    int64_t steps = 0;
    st = cls_pass_shared(t->pass, &dev[d], "Validation", t->epoch, CLS_SUMMARY_DEV, progress, user, &loss, &steps);
    weighted += loss * (double)steps;
    total_steps += steps;
  }
  if (st != CLS_OK) return st;
  cls_summaries_epoch(c->summaries, CLS_SUMMARY_DEV, state->global_step);
  double dev_loss = total_steps ? weighted / (double)total_steps : INFINITY;
  cls_rule_options ro = {o->early_stop, o->es_epochs, o->es_min_delta, o->reduce_lr_on_plateau, o->plateau_epochs};
  cls_rule_decision dec = cls_dev_rules(&state->rules, dev_loss, &ro);
  cls_log(c->e, CLS_LOG_INFO, "Epoch %d: dev loss %f (best %f, %d epochs without improvement)", state->epoch - 1,
          dev_loss, state->rules.best_dev_loss, state->rules.epochs_without_improvement);
  if (dec.new_best) {
    st = cls_crew_save(c, "best_dev");
    if (st == CLS_OK) cls_log(c->e, CLS_LOG_INFO, "Saved new best validating model with loss %f", dev_loss);
  }
  if (st == CLS_OK && dec.early_stop) {
    cls_log(c->e, CLS_LOG_INFO, "Early stop triggered as the loss did not improve the last %d epochs", o->es_epochs);
    *stop = 1;
    return st;
  }
  if (st == CLS_OK && dec.reduce_lr) {
    /* Reload the best weights (and Adam state, step, learning rate), keep the counters, reduce. */
    int streak = state->rules.epochs_without_improvement, ep = state->epoch;
    char path[CLS_PATH_CAP];
    cls_error err;
    int reloaded = 0;
    if (cls_world_rank(c->world) == 0 &&
        cls_checkpoint_find(o->save_checkpoint_dir, "best_dev", path, sizeof path, &err) == CLS_OK) {
      st = load_file(c, path, 1, 0, 0);
      reloaded = st == CLS_OK;
    }
    if (cls_world_size(c->world) > 1) {
      /* Rank 0's reload (its staging buffers hold what it loaded) onto every rank; without one every rank
         already holds the same state, and only a failure is shared. */
      cls_status w = cls_world_broadcast(c->world, &reloaded, sizeof reloaded);
      if (w != CLS_OK) st = w;
      else st = cls_crew_share_state(c, st, reloaded);
    }
    state->rules.epochs_without_improvement = streak;
    state->epoch = ep;
    state->learning_rate *= o->plateau_reduction;
    cls_log(c->e, CLS_LOG_INFO, "Encountered a plateau, reducing learning rate to %g", (double)state->learning_rate);
    if (st == CLS_OK) st = cls_crew_save(c, "best_dev");
  }
  return st;
}

cls_status cls_trainer_train(cls_trainer *t, const cls_utterance *train, int n_train, const cls_eval_set *dev,
                             int n_dev, cls_progress_fn progress, void *user) {
  return cls_trainer_train_with_metrics(t, train, n_train, dev, n_dev, NULL, 0, progress, user);
}

cls_status cls_trainer_train_with_metrics(cls_trainer *t, const cls_utterance *train, int n_train,
                                          const cls_eval_set *dev, int n_dev, const cls_eval_set *metrics,
                                          int n_metrics, cls_progress_fn progress, void *user) {
  cls_crew *c = t->crew;
  const cls_train_options *o = &c->o;
  cls_train_state *state = &c->state;
  const cls_epoch_fn run_epoch = strategy_epochs[o->strategy];
  c->last_save_ms = cls_now_ms();
  c->deadline_ms = o->max_train_seconds > 0 ? cls_now_ms() + o->max_train_seconds * 1e3 : 0;
  c->out_of_time = 0;
  c->steps_skipped = 0;
  const int64_t first_step = state->global_step;
  cls_status st = CLS_OK;
  if (o->summary_dir && *o->summary_dir && cls_world_rank(c->world) == 0)
    st = cls_summaries_open(c->e, o->summary_dir, o->summary_steps, n_dev > 0, n_metrics > 0, &c->summaries);
  for (int epoch = 0; st == CLS_OK && epoch < o->epochs && !c->out_of_time; epoch++) {
    t->epoch = epoch;
    st = run_epoch(c, epoch, train, n_train, progress, user);
    if (st != CLS_OK) break;
    cls_summaries_epoch(c->summaries, CLS_SUMMARY_TRAIN, state->global_step);
    if (c->out_of_time) {
      cls_log(c->e, CLS_LOG_NOTICE, "Training time limit of %g s reached in epoch %d at step %lld",
              o->max_train_seconds, epoch, (long long)state->global_step);
      st = cls_crew_save(c, "train");
      break;
    }
    state->epoch++;
    st = cls_crew_save(c, "train");
    int stop = 0;
    if (st == CLS_OK && n_dev > 0) st = validate(t, dev, n_dev, progress, user, &stop);
    /* DeepSpeech's --metrics_files: loss only, after the dev sets and their rules. */
    for (int m = 0; st == CLS_OK && !stop && m < n_metrics; m++)
      st = cls_pass_shared(t->pass, &metrics[m], "Metrics", t->epoch, CLS_SUMMARY_METRICS, progress, user, NULL, NULL);
    if (st == CLS_OK && !stop && n_metrics > 0)
      cls_summaries_epoch(c->summaries, CLS_SUMMARY_METRICS, state->global_step);
    if (stop) break;
  }
  cls_summaries_close(c->summaries);
  c->summaries = NULL;
  /* A run whose every step was skipped trained nothing: that is not a success. */
  if (st == CLS_OK && state->global_step == first_step && c->steps_skipped > 0)
    st = cls_fail(c->e, CLS_ERR_NO_STEP,
                  "no training step was applied: all %lld steps had an infinite or NaN loss (a transcript too long "
                  "for its frames, such as after --augment tempo, or diverged weights); the model is still at global "
                  "step %lld",
                  (long long)c->steps_skipped, (long long)first_step);
  return st;
}
