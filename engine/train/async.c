/* The async strategy: the parameters and Adam slots live on the host (the crew's staging buffers
 * hold the master copy during an epoch); every tower, on its own thread, takes the next batch,
 * pulls the current parameters, computes its gradient without waiting for the others, and pushes
 * it; the host applies each gradient at once. A gradient's staleness is the number of updates
 * applied between its pull and its push; the epoch reports the mean and the largest. A tower whose
 * device fails is dropped and its batch goes to another. Every live tower takes one batch of an epoch
 * before any takes a second (in tower order), so a slow device is never starved of work by the
 * scheduling of threads.
 *
 * Three locks, each around what it guards and nothing else: the schedule (taking batches, dropping
 * towers, the epoch's status), the master copy (a pull's copy of the parameters, a push's host Adam,
 * a checkpoint's copy), and the reports (counts, progress, summaries, in the order of the updates: a
 * push takes it before it leaves the master). A tower's upload, its gradient and a checkpoint's file
 * I/O run under none.
 *
 * Why async does not run the step (step.h): that step is one collective update, every working tower
 * on one split batch, their gradients reduced into one buffer and the result applied by Adam on every
 * replica at once, one step at a time; async's updates are per tower, several in flight together on
 * their own threads, on the host's master copy, with the dropout keys of the step each tower pulled.
 * What both share is the tower's gradient with the fault option's injection
 * (cls_step_tower_gradient), which async calls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "device/log.h"
#include "ops/adam_host.h"
#include "train/step.h"
#include "train/strategy.h"

typedef struct async_run {
  cls_crew *c;
  /* The schedule: taking batches (first_taken, retry, done, the loader), dropping towers, the epoch's
     status. Held for no device work and no file. */
  pthread_mutex_t lock;
  pthread_cond_t turn;       /* signalled when a tower has taken its first batch, or the epoch stops */
  int first_taken;           /* how many towers have taken their first batch of this round */
  int live;                  /* how many towers this round started with */
  const cls_utterance *u;
  cls_loader *loader;
  cls_host_batch *retry;     /* a failed tower's batch, for the next tower that asks */
  int done;                  /* the loader is exhausted */
  cls_status status;         /* first error that stops the epoch */
  /* The master copy: crew->params, m, v and crew->state (Adam's powers, the global step), read by a pull
     and by a checkpoint's copy, written by a push. Held only for those host copies and the update. */
  pthread_mutex_t master;
  int saving;                /* a worker is saving a checkpoint (of the copy in save_p, save_m, save_v) */
  float *save_p, *save_m, *save_v;
  cls_train_state save_state;
  cls_tensor_stats *stats;   /* [n_towers][2 * CLS_MODEL_MAX_TENSORS] the towers' statistics of a step (summaries) */
  cls_param_view layout[CLS_MODEL_MAX_TENSORS]; /* the model's tensors in the flat parameters (the statistics') */
  int n_layout;                                 /* how many */
  /* The epoch's counts and what reports them: progress, summaries' writes. */
  pthread_mutex_t report;
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
  int order;                 /* this tower's place among the live towers: it takes its first batch after `order` others */
  int took;                  /* it has taken a batch this round */
  cls_tensor_stats *stats;   /* [2 * CLS_MODEL_MAX_TENSORS] a step's variables' statistics (summaries), or NULL */
} async_job;

/* Makes st the epoch's status (the first one wins) and `text` its text in the engine's error, the one
   place the caller of the trainer reads; the workers write it only here and in failed(), under r->lock.
   A worker's failure text comes from where it happened: the batch's, the tower's own, the save's. */
static void stop_with(async_job *j, cls_status st, const char *text) {
  async_run *r = j->r;
  if (r->status != CLS_OK) return;
  r->status = cls_fail(r->c->e, st, "%s", text);
}

/* The next batch for this tower in its turn (a failed tower's first), or NULL when the epoch is over. */
static cls_host_batch *take(async_job *j) {
  async_run *r = j->r;
  pthread_mutex_lock(&r->lock);
  while (r->status == CLS_OK && !r->done && !r->retry && r->first_taken < (j->took ? r->live : j->order))
    pthread_cond_wait(&r->turn, &r->lock);
  cls_host_batch *b = NULL;
  if (r->status == CLS_OK && r->retry) {
    b = r->retry;
    r->retry = NULL;
  } else if (r->status == CLS_OK && !r->done && cls_crew_out_of_time(r->c)) {
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
  pthread_mutex_unlock(&r->lock);
  return b;
}

/* A tower's work on batch b failed (st, text): a device fault drops the tower and leaves its batch to
 * another; any other error stops the epoch. `text` may be the tower's own error: it is used before the
 * tower is dropped. */
static void failed(async_job *j, cls_host_batch *b, cls_status st, const char *text) {
  async_run *r = j->r;
  cls_crew *c = r->c;
  pthread_mutex_lock(&r->lock);
  if (cls_crew_is_device_fault(st) && b->error.status == CLS_OK) {
    const int last = cls_crew_count(c) == 1;
    if (last) r->status = cls_crew_all_failed(c, text);
    cls_crew_drop(c, j->s, text);
    r->retry = b; /* another tower takes it */
    if (last) {
      cls_loader_done(r->loader, b);
      r->retry = NULL;
    }
  } else {
    stop_with(j, st, text);
    cls_loader_done(r->loader, b);
  }
  pthread_cond_broadcast(&r->turn);
  pthread_mutex_unlock(&r->lock);
}

/* Writes the checkpoint of the master state's copy that this worker took (under no lock), then restarts
 * the --checkpoint_secs clock and lets the next copy be taken. */
static void save_copy(async_job *j) {
  async_run *r = j->r;
  cls_crew *c = r->c;
  cls_error err; /* this worker's: the engine's error is written only under r->lock */
  cls_status st = cls_crew_save_copy(c, "train", r->save_p, r->save_m, r->save_v, &r->save_state, &err);
  pthread_mutex_lock(&r->master);
  if (st == CLS_OK) c->last_save_ms = cls_now_ms();
  r->saving = 0;
  pthread_mutex_unlock(&r->master);
  if (st != CLS_OK) {
    pthread_mutex_lock(&r->lock);
    stop_with(j, st, err.text);
    pthread_mutex_unlock(&r->lock);
  }
}

/* Push: applies the gradient in s->grad to the master copy, with its summaries, progress and, when due,
 * a checkpoint of the master copy (copied under the lock, written after). */
static void push(async_job *j, const cls_host_batch *b, int64_t pulled, double pull_ms) {
  async_run *r = j->r;
  cls_crew *c = r->c;
  cls_crew_slot *s = j->s;
  const cls_param_view *v = r->layout;
  double mean = 0;
  for (int i = 0; i < b->batch; i++) mean += s->losses[i];
  mean /= b->batch;
  const int finite = isfinite(mean);
  int64_t stale = 0, step = 0;
  int variables = 0, save = 0;
  double lr = 0;
  if (finite) {
    pthread_mutex_lock(&r->master);
    stale = c->state.global_step - pulled;
    cls_adam_host_update(c->n_params, c->params, c->m, c->v, s->grad, c->state.learning_rate, c->o.beta1, c->o.beta2,
                         c->o.epsilon, &c->state.adam);
    step = ++c->state.global_step;
    lr = c->state.learning_rate;
    variables = j->stats && cls_summaries_variables_due(c->summaries, step);
    if (variables)
      for (int i = 0; i < r->n_layout; i++) cls_tensor_stats_host(c->params + v[i].offset, v[i].count, &j->stats[i]);
    save = !r->saving && r->save_p && cls_crew_checkpoint_due(c);
    if (save) {
      r->saving = 1;
      const size_t pb = c->n_params * sizeof(float);
      memcpy(r->save_p, c->params, pb);
      memcpy(r->save_m, c->m, pb);
      memcpy(r->save_v, c->v, pb);
      r->save_state = c->state;
    }
    /* The reports go in the order of the updates: the report lock is taken before the master is left. */
    pthread_mutex_lock(&r->report);
    pthread_mutex_unlock(&r->master);
  } else {
    pthread_mutex_lock(&r->report);
  }
  if (variables) /* the gradient applied is this tower's own */
    for (int i = 0; i < r->n_layout; i++)
      cls_tensor_stats_host(s->grad + v[i].offset, v[i].count, &j->stats[r->n_layout + i]);
  if (!finite) {
    cls_crew_warn_nonfinite(c, b, s->losses, r->u);
  } else {
    r->stale_sum += stale;
    if (stale > r->stale_max) r->stale_max = stale;
    r->loss_sum += mean;
    r->steps++;
    if (c->summaries) {
      double now = cls_now_ms();
      cls_tower_summary part = {s->index, now - pull_ms, 1.0, stale};
      cls_summaries_train_step(c->summaries, step, mean, lr, b->audio_seconds, (now - r->last_push) / 1e3, &part, 1);
      if (variables) {
        memcpy(cls_summaries_scratch(c->summaries), j->stats, 2 * (size_t)r->n_layout * sizeof *j->stats);
        cls_summaries_variables(c->summaries, step, &c->o.model);
      }
      r->last_push = now;
    }
  }
  r->audio += b->audio_seconds;
  cls_crew_report(r->progress, r->user, "Training", "train", r->epoch, r->steps, r->total, r->loss_sum, r->t0,
                  r->audio, 0);
  pthread_mutex_unlock(&r->report);
  if (save) save_copy(j);
}

static void *async_worker(void *arg) {
  async_job *j = arg;
  async_run *r = j->r;
  cls_crew *c = r->c;
  cls_crew_slot *s = j->s;
  for (cls_host_batch *b; (b = take(j));) {
    /* Pull: the host's parameters as of now, copied under the lock (into the tower's gradient buffer, free
       until the gradient), uploaded after. */
    cls_status st = b->error.status;
    pthread_mutex_lock(&r->master);
    const int64_t pulled = c->state.global_step;
    if (st == CLS_OK) memcpy(s->grad, c->params, c->n_params * sizeof(float));
    pthread_mutex_unlock(&r->master);
    const double pull_ms = cls_now_ms();
    if (st == CLS_OK) st = cls_tower_write_state(s->tower, s->grad, NULL, NULL);
    if (st == CLS_OK)
      st = cls_step_tower_gradient(c, s, b, 0, b->batch, c->state.random_seed, pulled,
                                   s->index * cls_tower_capacity(s->tower), 1, s->losses);
    if (st != CLS_OK) {
      failed(j, b, st, b->error.status != CLS_OK ? b->error.text : cls_tower_error(s->tower)->text);
      break;
    }
    push(j, b, pulled, pull_ms);
    pthread_mutex_lock(&r->lock);
    cls_loader_done(r->loader, b);
    pthread_mutex_unlock(&r->lock);
  }
  return NULL;
}

/* A checkpoint's copy of the master state (when this rank saves --checkpoint_secs checkpoints), and each
 * tower's statistics of a step's variables (with summaries). */
static cls_status open_copies(async_run *r) {
  cls_crew *c = r->c;
  const int saves = c->o.checkpoint_secs > 0 && c->o.save_checkpoint_dir && *c->o.save_checkpoint_dir &&
                    cls_world_rank(c->world) == 0;
  const size_t pb = c->n_params * sizeof(float);
  if (c->summaries) r->stats = malloc((size_t)c->n_towers * 2 * CLS_MODEL_MAX_TENSORS * sizeof *r->stats);
  if (saves) {
    r->save_p = malloc(pb);
    r->save_m = malloc(pb);
    r->save_v = malloc(pb);
  }
  if ((c->summaries && !r->stats) || (saves && (!r->save_p || !r->save_m || !r->save_v)))
    return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for the async epoch's copies");
  return CLS_OK;
}

static void close_copies(async_run *r) {
  free(r->stats);
  free(r->save_p);
  free(r->save_m);
  free(r->save_v);
}

/* The workers, one thread per live tower, in rounds: a batch left behind by a failed tower after the
 * others finished gets another round. */
static void run_rounds(async_run *r) {
  cls_crew *c = r->c;
  async_job jobs[CLS_MAX_TOWERS];
  pthread_t threads[CLS_MAX_TOWERS];
  do {
    int started[CLS_MAX_TOWERS] = {0}, live = 0;
    r->first_taken = 0;
    r->live = cls_crew_count(c);
    for (int i = 0; i < c->n_towers; i++) {
      if (!c->towers[i].tower) continue;
      cls_tensor_stats *stats = r->stats ? r->stats + (size_t)i * 2 * CLS_MODEL_MAX_TENSORS : NULL;
      jobs[i] = (async_job){r, &c->towers[i], live++, 0, stats};
      started[i] = pthread_create(&threads[i], NULL, async_worker, &jobs[i]) == 0;
      if (!started[i]) {
        pthread_mutex_lock(&r->lock);
        r->status = cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "cannot start a thread for tower %d", i);
        pthread_cond_broadcast(&r->turn);
        pthread_mutex_unlock(&r->lock);
        break;
      }
    }
    for (int i = 0; i < c->n_towers; i++)
      if (started[i]) pthread_join(threads[i], NULL);
  } while (r->status == CLS_OK && r->retry && cls_crew_count(c) > 0);
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
  cls_status st = cls_crew_tower_status(c, lead, cls_tower_read_state(lead->tower, c->params, c->m, c->v));
  async_run r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.u = u;
  r.total = usable / B;
  r.epoch = epoch;
  r.progress = progress;
  r.user = user;
  r.t0 = r.last_push = cls_now_ms();
  r.n_layout = cls_model_layout_all(&c->o.model, r.layout, NULL);
  if (st == CLS_OK) st = open_copies(&r);
  if (st == CLS_OK) st = cls_crew_start_train_loader(c, epoch, u, usable, B, c->n_towers + 2, B, B, 0, &r.loader);
  if (st != CLS_OK) {
    close_copies(&r);
    return st;
  }
  pthread_mutex_init(&r.lock, NULL);
  pthread_cond_init(&r.turn, NULL);
  pthread_mutex_init(&r.master, NULL);
  pthread_mutex_init(&r.report, NULL);
  run_rounds(&r);
  pthread_cond_destroy(&r.turn);
  pthread_mutex_destroy(&r.lock);
  pthread_mutex_destroy(&r.master);
  pthread_mutex_destroy(&r.report);
  close_copies(&r);
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
