/* The async strategy: the parameters and Adam slots live on the host; every tower, on its own
 * thread, takes the next batch, pulls the current parameters, computes its gradient without
 * waiting for the others, and pushes it; the host applies each gradient at once. A gradient's
 * staleness is the number of updates applied between its pull and its push; the epoch reports the
 * mean and the largest. A tower whose device fails is dropped and its batch goes to another. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/adam_host.h"
#include "clspeech/base.h"
#include "device/log.h"
#include "train/train_internal.h"

typedef struct async_run {
  cls_trainer *t;
  const cls_utterance *u;
  cls_loader *loader;
  cls_host_batch *retry;     /* a failed tower's batch, for the next tower that asks */
  int done;                  /* the loader is exhausted */
  cls_status status;         /* first error that stops the epoch */
  int64_t steps, total, stale_sum, stale_max;
  double loss_sum, audio, t0;
  int epoch;
  cls_progress_fn progress;
  void *user;
} async_run;

typedef struct async_job {
  async_run *r;
  tower_slot *s;
} async_job;

static void *async_worker(void *arg) {
  async_job *j = arg;
  async_run *r = j->r;
  cls_trainer *t = r->t;
  tower_slot *s = j->s;
  cls_error_redirect(s->err);
  for (;;) {
    pthread_mutex_lock(&t->lock);
    cls_host_batch *b = NULL;
    if (r->status == CLS_OK && r->retry) {
      b = r->retry;
      r->retry = NULL;
    } else if (r->status == CLS_OK && !r->done && cls_train_out_of_time(t)) {
      r->done = 1;
    } else if (r->status == CLS_OK && !r->done) {
      b = cls_loader_next(r->loader);
      if (!b) r->done = 1;
    }
    if (!b) {
      pthread_mutex_unlock(&t->lock);
      break;
    }
    /* Pull: the host's parameters as of now. */
    int64_t pulled = t->state.global_step;
    cls_status st = b->status != CLS_OK ? cls_fail(t->e, b->status, "%s", b->err)
                                        : cls_tower_write_state(s->tower, t->host_a, NULL, NULL);
    if (st == CLS_OK) st = cls_train_injected_failure(t, s, pulled);
    pthread_mutex_unlock(&t->lock);
    cls_model_dropout drop;
    memcpy(drop.rate, t->o.dropout, sizeof drop.rate);
    drop.seed = t->state.random_seed;
    drop.step = (uint32_t)pulled;
    drop.utterance_offset = s->index * cls_tower_capacity(s->tower);
    if (st == CLS_OK) st = cls_tower_gradient(s->tower, b, 0, b->batch, &drop, 0, s->grad, s->losses, NULL, NULL);
    /* Push. */
    pthread_mutex_lock(&t->lock);
    if (st != CLS_OK) {
      if (cls_train_is_device_fault(st) && b->status == CLS_OK) {
        snprintf(t->e->error, CLS_ERROR_CAP, "%s", s->err);
        cls_train_drop_tower(t, s, s->err);
        r->retry = b; /* another tower takes it */
        if (cls_trainer_tower_count(t) == 0) {
          r->status = cls_fail(t->e, CLS_ERR_NO_DEVICE, "every tower has failed; the last error was: %s", s->err);
          cls_loader_done(r->loader, b);
          r->retry = NULL;
        }
      } else {
        if (r->status == CLS_OK) {
          snprintf(t->e->error, CLS_ERROR_CAP, "%s", s->err);
          r->status = st;
        }
        cls_loader_done(r->loader, b);
      }
      pthread_mutex_unlock(&t->lock);
      break;
    }
    double mean = 0;
    for (int i = 0; i < b->batch; i++) mean += s->losses[i];
    mean /= b->batch;
    if (!isfinite(mean)) {
      cls_train_warn_nonfinite(t, b, s->losses, r->u);
    } else {
      int64_t stale = t->state.global_step - pulled;
      r->stale_sum += stale;
      if (stale > r->stale_max) r->stale_max = stale;
      cls_adam_host_update(t->n_params, t->host_a, t->host_b, t->host_c, s->grad, t->state.learning_rate, t->o.beta1,
                           t->o.beta2, t->o.epsilon, &t->state.adam);
      t->state.global_step++;
      r->loss_sum += mean;
      r->steps++;
    }
    r->audio += b->audio_seconds;
    cls_train_report(r->progress, r->user, "Training", "train", r->epoch, r->steps, r->total, r->loss_sum, r->t0,
                     r->audio, 0);
    cls_loader_done(r->loader, b);
    if (r->status == CLS_OK && t->o.checkpoint_secs > 0 && cls_now_ms() - t->last_save_ms > t->o.checkpoint_secs * 1e3) {
      cls_status sv = cls_train_save_host(t, "train");
      if (sv != CLS_OK) {
        snprintf(t->e->error, CLS_ERROR_CAP, "%s", s->err);
        r->status = sv;
      }
    }
    pthread_mutex_unlock(&t->lock);
  }
  cls_error_redirect(NULL);
  return NULL;
}

cls_status cls_train_epoch_async(cls_trainer *t, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                                 void *user) {
  tower_slot *lead = cls_train_lead(t);
  if (!lead) return cls_fail(t->e, CLS_ERR_NO_DEVICE, "no tower is left to train on");
  const int B = t->o.train_batch_size;
  const int usable = n / B * B;
  if (usable == 0)
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "fewer training samples (%d) than --train_batch_size (%d)", n, B);
  /* The host holds the authoritative state during the epoch. */
  cls_status st = cls_tower_read_state(lead->tower, t->host_a, t->host_b, t->host_c);
  async_run r;
  memset(&r, 0, sizeof r);
  r.t = t;
  r.u = u;
  r.total = usable / B;
  r.epoch = epoch;
  r.progress = progress;
  r.user = user;
  r.t0 = cls_now_ms();
  if (st == CLS_OK) st = cls_train_start_loader(t, u, usable, B, t->n_towers + 2, &r.loader);
  if (st != CLS_OK) return st;
  async_job jobs[64];
  pthread_t threads[64];
  /* Rounds: a batch left behind by a failed tower after the others finished gets another round. */
  do {
    int started[64] = {0};
    for (int i = 0; i < t->n_towers; i++) {
      if (!t->towers[i].tower) continue;
      jobs[i] = (async_job){&r, &t->towers[i]};
      started[i] = pthread_create(&threads[i], NULL, async_worker, &jobs[i]) == 0;
      if (!started[i]) {
        r.status = cls_fail(t->e, CLS_ERR_OUT_OF_MEMORY, "cannot start a thread for tower %d", i);
        break;
      }
    }
    for (int i = 0; i < t->n_towers; i++)
      if (started[i]) pthread_join(threads[i], NULL);
  } while (r.status == CLS_OK && r.retry && cls_trainer_tower_count(t) > 0);
  /* A batch left by a failed tower when no tower could take it any more. */
  if (r.retry) cls_loader_done(r.loader, r.retry);
  cls_loader_stop(r.loader);
  st = r.status;
  if (st == CLS_OK && !cls_trainer_tower_count(t))
    st = cls_fail(t->e, CLS_ERR_NO_DEVICE, "every tower has failed: %s", t->e->error);
  /* Every live replica gets the host's state, for evaluation and checkpoints. */
  for (int i = 0; st == CLS_OK && i < t->n_towers; i++)
    if (t->towers[i].tower) st = cls_tower_write_state(t->towers[i].tower, t->host_a, t->host_b, t->host_c);
  if (st == CLS_OK && r.steps)
    cls_log(t->e, CLS_LOG_NOTICE, "Epoch %d: async staleness: mean %.2f, max %lld updates over %lld gradients", epoch,
            (double)r.stale_sum / (double)r.steps, (long long)r.stale_max, (long long)r.steps);
  if (st == CLS_OK)
    cls_train_report(progress, user, "Training", "train", epoch, r.steps, r.total, r.loss_sum, r.t0, r.audio, 1);
  return st;
}
