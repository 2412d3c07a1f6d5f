/* The async strategy: the parameters and Adam slots live on the host (the crew's staging buffers
 * hold the master copy during an epoch); every tower, on its own thread, takes the next batch,
 * pulls the current parameters, computes its gradient without waiting for the others, and pushes
 * it; the host applies each gradient at once. A gradient's staleness is the number of updates
 * applied between its pull and its push; the epoch reports the mean and the largest. A tower whose
 * device fails is dropped and its batch goes to another. Every live tower takes one batch of an epoch
 * before any takes a second (in tower order), so a slow device is never starved of work by the
 * scheduling of threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "device/log.h"
#include "ops/adam_host.h"
#include "train/strategy.h"

typedef struct async_run {
  cls_crew *c;
  pthread_mutex_t lock;      /* held by a worker while it takes a batch, pulls, and pushes */
  pthread_cond_t turn;       /* signalled when a tower has taken its first batch, or the epoch stops */
  int first_taken;           /* how many towers have taken their first batch of this round */
  int live;                  /* how many towers this round started with */
  const cls_utterance *u;
  cls_loader *loader;
  cls_host_batch *retry;     /* a failed tower's batch, for the next tower that asks */
  int done;                  /* the loader is exhausted */
  cls_status status;         /* first error that stops the epoch */
  int64_t steps, total, stale_sum, stale_max;
  double loss_sum, audio, t0;
  double last_push;          /* when the last gradient was applied (a step's wall time, for its summary) */
  int epoch;
  cls_progress_fn progress;
  void *user;
} async_run;

typedef struct async_job {
  async_run *r;
  cls_crew_slot *s;
  int order; /* this tower's place among the live towers: it takes its first batch after `order` others */
  int took;  /* it has taken a batch this round */
} async_job;

static void *async_worker(void *arg) {
  async_job *j = arg;
  async_run *r = j->r;
  cls_crew *c = r->c;
  cls_crew_slot *s = j->s;
  cls_error_redirect(s->err);
  for (;;) {
    pthread_mutex_lock(&r->lock);
    while (r->status == CLS_OK && !r->done && !r->retry && r->first_taken < (j->took ? r->live : j->order))
      pthread_cond_wait(&r->turn, &r->lock);
    cls_host_batch *b = NULL;
    if (r->status == CLS_OK && r->retry) {
      b = r->retry;
      r->retry = NULL;
    } else if (r->status == CLS_OK && !r->done && cls_crew_out_of_time(c)) {
      r->done = 1;
    } else if (r->status == CLS_OK && !r->done) {
      b = cls_loader_next(r->loader);
      if (!b) r->done = 1;
    }
    if (!j->took) {
      j->took = 1;
      r->first_taken++;
    }
    pthread_cond_broadcast(&r->turn); /* the next tower's turn, or: the epoch stops */
    if (!b) {
      pthread_mutex_unlock(&r->lock);
      break;
    }
    /* Pull: the host's parameters as of now. */
    int64_t pulled = c->state.global_step;
    double pull_ms = cls_now_ms();
    cls_status st = b->error.status != CLS_OK ? cls_fail(c->e, b->error.status, "%s", b->error.text)
                                        : cls_tower_write_state(s->tower, c->params, NULL, NULL);
    if (st == CLS_OK) st = cls_crew_injected_failure(c, s, pulled);
    pthread_mutex_unlock(&r->lock);
    cls_model_dropout drop;
    memcpy(drop.rate, c->o.dropout, sizeof drop.rate);
    drop.seed = c->state.random_seed;
    drop.step = (uint32_t)pulled;
    drop.utterance_offset = s->index * cls_tower_capacity(s->tower);
    if (st == CLS_OK) st = cls_tower_gradient(s->tower, b, 0, b->batch, &drop, 0, s->grad, s->losses, NULL, NULL);
    /* Push. */
    pthread_mutex_lock(&r->lock);
    if (st != CLS_OK) {
      if (cls_crew_is_device_fault(st) && b->error.status == CLS_OK) {
        snprintf(c->e->error, CLS_ERROR_CAP, "%s", s->err);
        cls_crew_drop(c, s, s->err);
        r->retry = b; /* another tower takes it */
        if (cls_crew_count(c) == 0) {
          r->status = cls_crew_all_failed(c, s->err);
          cls_loader_done(r->loader, b);
          r->retry = NULL;
        }
      } else {
        if (r->status == CLS_OK) {
          snprintf(c->e->error, CLS_ERROR_CAP, "%s", s->err);
          r->status = st;
        }
        cls_loader_done(r->loader, b);
      }
      pthread_mutex_unlock(&r->lock);
      break;
    }
    double mean = 0;
    for (int i = 0; i < b->batch; i++) mean += s->losses[i];
    mean /= b->batch;
    if (!isfinite(mean)) {
      cls_crew_warn_nonfinite(c, b, s->losses, r->u);
    } else {
      int64_t stale = c->state.global_step - pulled;
      r->stale_sum += stale;
      if (stale > r->stale_max) r->stale_max = stale;
      cls_adam_host_update(c->n_params, c->params, c->m, c->v, s->grad, c->state.learning_rate, c->o.beta1, c->o.beta2,
                           c->o.epsilon, &c->state.adam);
      c->state.global_step++;
      r->loss_sum += mean;
      r->steps++;
      if (c->summaries) {
        double now = cls_now_ms();
        cls_tower_summary part = {s->index, now - pull_ms, 1.0, stale};
        cls_status sv =
            cls_crew_summarize_step(c, mean, b->audio_seconds, (now - r->last_push) / 1e3, &part, 1, s->grad);
        if (sv != CLS_OK && r->status == CLS_OK) r->status = sv;
        r->last_push = now;
      }
    }
    r->audio += b->audio_seconds;
    cls_crew_report(r->progress, r->user, "Training", "train", r->epoch, r->steps, r->total, r->loss_sum, r->t0,
                     r->audio, 0);
    cls_loader_done(r->loader, b);
    if (r->status == CLS_OK && cls_crew_checkpoint_due(c)) {
      cls_status sv = cls_crew_save_staged(c, "train");
      if (sv != CLS_OK) {
        snprintf(c->e->error, CLS_ERROR_CAP, "%s", s->err);
        r->status = sv;
      }
    }
    pthread_mutex_unlock(&r->lock);
  }
  cls_error_redirect(NULL);
  return NULL;
}

cls_status cls_async_epoch(cls_crew *c, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                           void *user) {
  cls_crew_slot *lead = cls_crew_lead(c);
  if (!lead) return cls_crew_no_tower(c);
  const int B = c->o.train_batch_size;
  const int usable = n / B * B;
  if (usable == 0)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT, "fewer training samples (%d) than --train_batch_size (%d)", n, B);
  /* The host holds the authoritative state during the epoch. */
  cls_status st = cls_tower_read_state(lead->tower, c->params, c->m, c->v);
  async_run r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.u = u;
  r.total = usable / B;
  r.epoch = epoch;
  r.progress = progress;
  r.user = user;
  r.t0 = r.last_push = cls_now_ms();
  if (st == CLS_OK) st = cls_crew_start_loader(c, u, usable, B, c->n_towers + 2, &r.loader);
  if (st != CLS_OK) return st;
  pthread_mutex_init(&r.lock, NULL);
  pthread_cond_init(&r.turn, NULL);
  async_job jobs[CLS_MAX_TOWERS];
  pthread_t threads[CLS_MAX_TOWERS];
  /* Rounds: a batch left behind by a failed tower after the others finished gets another round. */
  do {
    int started[CLS_MAX_TOWERS] = {0}, live = 0;
    r.first_taken = 0;
    r.live = cls_crew_count(c);
    for (int i = 0; i < c->n_towers; i++) {
      if (!c->towers[i].tower) continue;
      jobs[i] = (async_job){&r, &c->towers[i], live++, 0};
      started[i] = pthread_create(&threads[i], NULL, async_worker, &jobs[i]) == 0;
      if (!started[i]) {
        pthread_mutex_lock(&r.lock);
        r.status = cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "cannot start a thread for tower %d", i);
        pthread_cond_broadcast(&r.turn);
        pthread_mutex_unlock(&r.lock);
        break;
      }
    }
    for (int i = 0; i < c->n_towers; i++)
      if (started[i]) pthread_join(threads[i], NULL);
  } while (r.status == CLS_OK && r.retry && cls_crew_count(c) > 0);
  pthread_cond_destroy(&r.turn);
  pthread_mutex_destroy(&r.lock);
  /* A batch left by a failed tower when no tower could take it any more. */
  if (r.retry) cls_loader_done(r.loader, r.retry);
  cls_loader_stop(r.loader);
  st = r.status;
  if (st == CLS_OK && !cls_crew_count(c))
    st = cls_crew_all_failed(c, NULL);
  /* Every live replica gets the host's state, for evaluation and checkpoints. */
  if (st == CLS_OK) st = cls_crew_write_state(c, c->params, c->m, c->v);
  if (st == CLS_OK && r.steps)
    cls_log(c->e, CLS_LOG_NOTICE, "Epoch %d: async staleness: mean %.2f, max %lld updates over %lld gradients", epoch,
            (double)r.stale_sum / (double)r.steps, (long long)r.stale_max, (long long)r.steps);
  if (st == CLS_OK)
    cls_crew_report(progress, user, "Training", "train", epoch, r.steps, r.total, r.loss_sum, r.t0, r.audio, 1);
  return st;
}
