/* The training step (see step.h): the plan's split of the batch between the working towers, one host
 * thread per tower that waits for its gradient range by range and reduces each range once every
 * tower has delivered it (in the fixed tower order, so the result is the same bit for bit whoever
 * arrives last), the drop-and-redo of a tower whose device failed, the balance feedback, the sums
 * across ranks, Adam on every replica and the hooks (summaries, fault injection, replica checks).
 * With one tower and one rank there is nothing to reduce: its gradient stays on its device, where Adam
 * reads it (no read-back, host pass or upload; the same numbers, since one tower's weight is 1).
 *
 * Why one host thread per tower: a step has blocking points (the batch upload, the loss read-back
 * that the CTC report needs, the waits on the gradient reads) and CLBlast enqueues from the calling
 * thread, so one thread driving every queue would serialise the towers at each of them. (The
 * towers' first CLBlast calls are made one after the other by the crew's warm-up, crew.h.) */
#include "train/step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "device/log.h"
#include "train/grad_reduce.h"

enum { MAX_RANGES = 16 }; /* gradient ranges a tower hands over in one step (its layers) */
/* The step's numbers summed across ranks, as doubles: utterance count, loss sum, audio seconds, deadline
   flag, then one step time per rank (each rank sets its own). */
enum { SUM_COUNT, SUM_LOSS, SUM_AUDIO, SUM_TIME_UP, SUM_MS };

struct cls_step {
  cls_crew *c;
  float *g;                                   /* the reduced gradient of this step: gbuf[parity] */
  float *gbuf[2];                             /* two, so a step reduces while the last one uploads */
  int parity;
  int resident;                               /* this step: one tower, one rank, the gradient left on the device */
  cl_event uploads[2][CLS_MAX_TOWERS];        /* per buffer and tower: its last upload (or NULL) */
  float *losses;                              /* [batch] the utterances' losses of this step */
  double *sums;                               /* [SUM_MS + ranks] the numbers summed across ranks */
  double last_end;                            /* when the last step ended (a step's wall time, for its summary) */
  /* the reduction of the attempt in flight: its sources and weights in tower order, and per range how
     many towers have delivered it */
  pthread_mutex_t lock;
  int n_active;
  const float *reduce_src[CLS_MAX_TOWERS];
  float reduce_w[CLS_MAX_TOWERS];
  int arrived[MAX_RANGES];
};

cls_status cls_step_create(cls_crew *c, cls_step **out) {
  *out = NULL;
  cls_step *s = calloc(1, sizeof *s);
  if (!s) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  s->c = c;
  pthread_mutex_init(&s->lock, NULL);
  const int per_step = c->o.train_batch_size * c->n_towers;
  const int n_losses = c->capacity > per_step ? c->capacity : per_step;
  const size_t pb = c->n_params * sizeof(float);
  s->gbuf[0] = malloc(pb);
  s->gbuf[1] = malloc(pb);
  s->g = s->gbuf[0];
  s->losses = malloc((size_t)n_losses * sizeof(float));
  s->sums = calloc(SUM_MS + (size_t)cls_world_size(c->world), sizeof *s->sums);
  s->last_end = cls_now_ms();
  if (!s->gbuf[0] || !s->gbuf[1] || !s->losses || !s->sums) {
    cls_step_destroy(s);
    return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu parameters", c->n_params);
  }
  *out = s;
  return CLS_OK;
}

void cls_step_destroy(cls_step *s) {
  if (!s) return;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < CLS_MAX_TOWERS; i++)
      if (s->uploads[k][i]) {
        clWaitForEvents(1, &s->uploads[k][i]); /* the upload reads gbuf[k] */
        clReleaseEvent(s->uploads[k][i]);
      }
  free(s->gbuf[0]);
  free(s->gbuf[1]);
  free(s->losses);
  free(s->sums);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

cls_step_plan cls_step_plan_default(const cls_crew *c, const cls_host_batch *b) {
  cls_step_plan p;
  memset(&p, 0, sizeof p);
  p.batch = b;
  p.turn = -1;
  p.split = c->o.balance == CLS_BALANCE_AUTO ? CLS_SPLIT_PLANNED : CLS_SPLIT_EQUAL;
  memcpy(p.dropout, c->o.dropout, sizeof p.dropout);
  p.seed = c->state.random_seed;
  p.step = c->state.global_step;
  p.rank_first = 0;
  p.global_count = b->batch;
  p.overlap = c->o.overlap_reduction;
  p.hooks = CLS_STEP_HOOKS;
  return p;
}

static cls_model_dropout dropout_of(const float *rates, uint32_t seed, int64_t step, int utterance_offset) {
  cls_model_dropout d;
  memset(&d, 0, sizeof d);
  memcpy(d.rate, rates, sizeof d.rate);
  d.seed = seed;
  d.step = (uint32_t)step;
  d.utterance_offset = utterance_offset; /* the same masks whatever the split and the ranks */
  return d;
}

/* ---- the towers' gradients ---- */

/* A working tower's part of one attempt, on its own thread. A failure's text is in the tower's own
   error (cls_tower_error), read after the join. */
typedef struct tower_job {
  cls_step *s;
  const cls_step_plan *p;
  cls_crew_slot *slot;
  int first, share;
  cls_status status;
  double ms;
} tower_job;

/* Range k of a tower's gradient is on the host: the last tower to deliver it reduces it, in the fixed
 * tower order, while the others may still be computing. */
static void arrived(cls_step *s, int k, const cls_tower_range *r) {
  pthread_mutex_lock(&s->lock);
  const int last = ++s->arrived[k] == s->n_active;
  pthread_mutex_unlock(&s->lock);
  if (last) cls_grad_reduce(s->g, s->reduce_src, s->reduce_w, s->n_active, r->offset, r->count);
}

cls_status cls_step_tower_gradient(cls_crew *c, cls_crew_slot *slot, const cls_host_batch *b, int first, int count,
                                   uint32_t seed, int64_t step, int utterance_offset, int faults, float *losses) {
  cls_status st = faults ? cls_crew_injected_failure(c, slot, step) : CLS_OK;
  if (st != CLS_OK) return st;
  const cls_model_dropout drop = dropout_of(c->o.dropout, seed, step, utterance_offset);
  return cls_tower_gradient(slot->tower, b, first, count, &drop, 0, slot->grad, losses);
}

/* A working tower's gradient of its share into slot->grad and the step's losses, range by range, each
 * range handed to the step's reduction as it reaches the host; with the fault option's "fail" first
 * when the plan asks for it. */
static void *run_job(void *arg) {
  tower_job *j = arg;
  cls_step *s = j->s;
  const cls_step_plan *p = j->p;
  cls_tower *t = j->slot->tower;
  const double t0 = cls_now_ms();
  const cls_model_dropout drop = dropout_of(p->dropout, p->seed, p->step, p->rank_first);
  cls_status st = (p->hooks & CLS_STEP_FAULTS) ? cls_crew_injected_failure(s->c, j->slot, p->step) : CLS_OK;
  if (st == CLS_OK) {
    int n = 0;
    st = cls_tower_gradient_begin(t, p->batch, j->first, j->share, &drop, p->overlap,
                                  s->resident ? NULL : j->slot->grad, s->losses + j->first, &n);
    if (st == CLS_OK && n > MAX_RANGES)
      st = cls_error_set(cls_tower_error(t), CLS_ERR_INVALID_ARGUMENT, "step: %d gradient ranges", n);
    for (int k = 0; st == CLS_OK && k < n; k++) {
      cls_tower_range r;
      st = cls_tower_gradient_wait(t, k, &r);
      if (st == CLS_OK) arrived(s, k, &r);
    }
    st = cls_tower_gradient_end(t, st);
  }
  j->status = st;
  j->ms = cls_now_ms() - t0;
  return NULL;
}

/* Makes s->g the buffer not used by the last step, once every upload from its previous use is done. */
static void take_reduce_buffer(cls_step *s) {
  s->parity ^= 1;
  s->g = s->gbuf[s->parity];
  for (int i = 0; i < CLS_MAX_TOWERS; i++)
    if (s->uploads[s->parity][i]) {
      clWaitForEvents(1, &s->uploads[s->parity][i]); /* a failed upload is reported by its tower's queue */
      clReleaseEvent(s->uploads[s->parity][i]);
      s->uploads[s->parity][i] = NULL;
    }
}

/* An idle tower is measured again once the time since it was idled is this many times what one
   utterance on it costs (so that measuring it takes at most 1/this of the training time), within
   REMEASURE_MIN_S .. REMEASURE_MAX_S: a device that was only busy gets its share back within minutes. */
#define REMEASURE_FACTOR 50.0
#define REMEASURE_MIN_S 30.0
#define REMEASURE_MAX_S 600.0

/* --balance auto: the towers (live[0 .. n) with shares[n] of `batch`) whose speed (speed[n], frames/s)
   earns them no utterance are given none (cls_balance_idle), each named in a notice with its speed
   against the fastest's, and measured again later. */
static void idle_slow(cls_crew *c, cls_crew_slot **live, int n, const double *speed, int batch, double below,
                      int *shares, const char *how) {
  int before[CLS_MAX_TOWERS], fast = -1;
  double total = 0; /* (the notice's figure; cls_balance_idle's rule sums the same) */
  for (int i = 0; i < n; i++) {
    before[i] = shares[i];
    total += speed[i] > 0 ? speed[i] : 0;
  }
  if (!cls_balance_idle(n, speed, batch, below, shares, &fast) || fast < 0) return;
  const cls_device_info *df = cls_engine_device(c->e, cls_tower_device(live[fast]->tower));
  for (int i = 0; i < n; i++) {
    if (before[i] == 0 || shares[i] != 0) continue;
    const cls_device_info *d = cls_engine_device(c->e, cls_tower_device(live[i]->tower));
    const double one_s = (double)c->max_frames / speed[i]; /* one utterance of the longest a tower holds */
    double wait_s = REMEASURE_FACTOR * one_s;
    wait_s = wait_s < REMEASURE_MIN_S ? REMEASURE_MIN_S : wait_s > REMEASURE_MAX_S ? REMEASURE_MAX_S : wait_s;
    if (c->remeasure_s > 0) wait_s = c->remeasure_s; /* cls_trainer_set_remeasure_seconds */
    live[i]->idle_until_ms = cls_now_ms() + 1e3 * wait_s;
    cls_log(c->e, CLS_LOG_NOTICE,
            "tower %d on device %d:%d (%s) takes no utterance of the batch: %s %.1f frames/s against %.1f on tower %d "
            "(device %d:%d %s), it would earn %.3f of %d utterances; measured again in %.0f s",
            live[i]->index, d->platform_index, d->device_index, d->name, how, speed[i], speed[fast], live[fast]->index,
            df->platform_index, df->device_index, df->name, (double)batch * speed[i] / total, batch, wait_s);
  }
}

/* The working towers of this attempt (live[0 .. *k)) and their shares, as the plan says. */
static cls_status plan_towers(cls_crew *c, const cls_step_plan *p, cls_crew_slot **live, int *k, int *shares) {
  int n = 0;
  for (int i = 0; i < c->n_towers; i++)
    if (c->towers[i].tower) live[n++] = &c->towers[i];
  if (n > 0 && p->turn >= 0) {
    live[0] = live[p->turn % n];
    n = 1;
  }
  *k = n;
  /* The planned shares while they fit the batch and the towers (an idle tower's share is 0); else equal
     counts, less the towers the warm-up's probe found far slower than the others (the first step). */
  int planned = p->split == CLS_SPLIT_PLANNED && n > 1;
  for (int i = 0, sum = 0; planned && i < n; i++) {
    shares[i] = live[i]->planned;
    sum += shares[i];
    planned &= shares[i] >= 0 && (i + 1 < n || sum == p->batch->batch);
  }
  if (!planned && n > 0) {
    cls_batch_split(p->batch->batch, n, shares);
    if (p->split == CLS_SPLIT_PLANNED && n > 1) {
      double probe[CLS_MAX_TOWERS];
      for (int i = 0; i < n; i++) probe[i] = live[i]->probe_speed;
      idle_slow(c, live, n, probe, p->batch->batch, CLS_BALANCE_PROBE_IDLE_BELOW, shares, "the warm-up's probe ran at");
    }
    return CLS_OK;
  }
  /* An idle tower whose time has come is measured again on one utterance of the largest share. */
  const double now = cls_now_ms();
  for (int i = 0; planned && i < n; i++) {
    if (shares[i] != 0 || live[i]->idle_until_ms <= 0 || now < live[i]->idle_until_ms) continue;
    int big = 0;
    for (int j = 1; j < n; j++)
      if (shares[j] > shares[big]) big = j;
    if (shares[big] < 2) continue;
    /* its replica skipped the updates while idle: the lead's first */
    cls_status st = cls_crew_refresh(c, live[i]);
    if (st != CLS_OK && !cls_crew_is_device_fault(st)) return st;
    if (st != CLS_OK) { /* its device failed: dropped, as at a step (live[i] stays, with no share) */
      cls_crew_drop(c, live[i], cls_engine_error(c->e));
      continue;
    }
    shares[big]--;
    shares[i] = 1;
    live[i]->idle_until_ms = 0;
    live[i]->remeasured = true;
  }
  return CLS_OK;
}

/* One attempt: the working towers' gradients reduced into s->g (the towers that worked in out->towers).
 * A tower whose device failed is dropped: *dropped counts them (the attempt is to be redone). */
static cls_status attempt(cls_step *s, const cls_step_plan *p, cls_step_result *out, int *dropped) {
  cls_crew *c = s->c;
  cls_crew_slot *live[CLS_MAX_TOWERS];
  int k = 0, shares[CLS_MAX_TOWERS];
  *dropped = 0;
  cls_status planned = plan_towers(c, p, live, &k, shares);
  if (planned != CLS_OK) return planned;
  if (k == 0) return cls_crew_all_failed(c, NULL);
  tower_job jobs[CLS_MAX_TOWERS];
  s->n_active = 0;
  memset(s->arrived, 0, sizeof s->arrived);
  out->n_towers = 0;
  for (int i = 0, first = 0; i < k; first += shares[i], i++) {
    jobs[i] = (tower_job){s, p, live[i], first, shares[i], CLS_OK, 0};
    if (!shares[i]) continue;
    /* The mean, sum_i (n_i/N) g_i, N the global batch (every rank's): the ranks' sum is the mean. */
    const float w = (float)shares[i] / (float)p->global_count;
    s->reduce_src[s->n_active] = live[i]->grad;
    s->reduce_w[s->n_active++] = w;
    out->towers[out->n_towers++] = (cls_step_tower){live[i]->index, first, shares[i], w, 0};
  }
  /* (the weight is 1 then: the share is the whole global batch, and 1 x g is g to the bit) */
  s->resident =
      s->n_active == 1 && s->reduce_w[0] == 1.0f && cls_crew_count(c) == 1 && cls_world_size(c->world) == 1;
  /* One worker runs on this thread; the others get their own. */
  pthread_t threads[CLS_MAX_TOWERS];
  int started[CLS_MAX_TOWERS] = {0}, inline_job = -1;
  for (int i = 0; i < k; i++) {
    if (!shares[i]) continue;
    if (inline_job < 0) {
      inline_job = i;
      continue;
    }
    started[i] = pthread_create(&threads[i], NULL, run_job, &jobs[i]) == 0;
    if (!started[i]) run_job(&jobs[i]);
  }
  if (inline_job >= 0) run_job(&jobs[inline_job]);
  for (int i = 0; i < k; i++)
    if (started[i]) pthread_join(threads[i], NULL);
  for (int i = 0, w = 0; i < k; i++) {
    tower_job *j = &jobs[i];
    if (!j->share) continue;
    out->towers[w++].ms = j->ms;
    if (j->status == CLS_OK) continue;
    /* The one copy of the tower's text into the engine's error, where the trainer's caller reads. */
    cls_crew_tower_status(c, j->slot, j->status);
    if (!cls_crew_is_device_fault(j->status)) return j->status;
    cls_crew_drop(c, j->slot, cls_engine_error(c->e));
    (*dropped)++;
  }
  if (*dropped) return CLS_OK;
  /* Balance feedback: each tower's speed, and the shares of the next step. */
  double ms[CLS_MAX_TOWERS];
  int next[CLS_MAX_TOWERS];
  for (int i = 0; i < k; i++) {
    tower_job *j = &jobs[i];
    ms[i] = j->share ? j->ms : 0;
    next[i] = j->share;
    if (!j->share || j->ms <= 0) continue;
    int longest = 0; /* the tower's padded work: its utterances x frames of its longest */
    for (int u = j->first; u < j->first + j->share; u++)
      if (p->batch->frames[u] > longest) longest = p->batch->frames[u];
    double v = (double)j->share * (double)longest / (j->ms / 1e3);
    j->slot->speed = j->slot->speed > 0 ? 0.7 * j->slot->speed + 0.3 * v : v;
  }
  if (p->split == CLS_SPLIT_PLANNED && k > 1) {
    cls_balance_adjust(k, ms, next);
    double speed[CLS_MAX_TOWERS];
    for (int i = 0; i < k; i++) speed[i] = live[i]->speed > 0 ? live[i]->speed : live[i]->probe_speed;
    idle_slow(c, live, k, speed, p->batch->batch, CLS_BALANCE_IDLE_BELOW, next, "measured");
    for (int i = 0; i < k; i++) {
      if (!live[i]->remeasured || next[i] == 0) continue;
      const cls_device_info *d = cls_engine_device(c->e, cls_tower_device(live[i]->tower));
      cls_log(c->e, CLS_LOG_NOTICE, "tower %d on device %d:%d (%s), measured again at %.0f frames/s, takes a share again",
              live[i]->index, d->platform_index, d->device_index, d->name, live[i]->speed);
    }
  }
  for (int i = 0; i < k; i++) {
    live[i]->planned = next[i];
    live[i]->remeasured = false;
  }
  return CLS_OK;
}

/* The towers' reduced gradient in s->g, redone on the others while towers fail (each redo drops at
 * least one, so there are at most n_towers of them). */
static cls_status gradients(cls_step *s, const cls_step_plan *p, cls_step_result *out) {
  cls_crew *c = s->c;
  take_reduce_buffer(s);
  cls_status st = CLS_OK;
  for (int redo = 0; redo <= c->n_towers; redo++) {
    int dropped = 0;
    st = attempt(s, p, out, &dropped);
    if (st != CLS_OK || !dropped) return st;
    if (cls_crew_count(c) > 0)
      cls_log(c->e, CLS_LOG_WARNING, "redoing step %lld on the remaining towers", (long long)p->step);
  }
  return cls_crew_all_failed(c, NULL);
}

/* ---- across ranks, the update, the hooks ---- */

/* This rank's counts and loss sum into *out; with several ranks the sum across ranks of the gradients
 * (each rank's already weighted by count / global count, so the sum is the mean: no pass over the
 * parameters here unless the step's global count was not the plan's), then of the counts, loss sums,
 * audio, deadline flags (crew->out_of_time set on every rank when one rank's deadline passed) and step
 * times, as doubles. */
static cls_status across_ranks(cls_step *s, const cls_step_plan *p, cls_step_result *out) {
  cls_crew *c = s->c;
  const cls_host_batch *b = p->batch;
  double local = 0;
  for (int i = 0; i < b->batch; i++) local += s->losses[i];
  out->count = out->global_count = b->batch;
  out->loss_sum = out->global_loss_sum = local;
  out->audio_s = out->global_audio_s = b->audio_seconds;
  out->mean_loss = local / b->batch;
  const int ranks = cls_world_size(c->world);
  if (ranks == 1) return CLS_OK;
  double *x = s->sums;
  memset(x, 0, (SUM_MS + (size_t)ranks) * sizeof *x);
  x[SUM_COUNT] = b->batch;
  x[SUM_LOSS] = local;
  x[SUM_AUDIO] = b->audio_seconds;
  x[SUM_TIME_UP] = cls_crew_deadline_passed(c);
  x[SUM_MS + cls_world_rank(c->world)] = out->ms;
  const double t0 = cls_now_ms();
  cls_status st = cls_world_sum(c->world, s->g, c->n_params);
  if (st == CLS_OK) st = cls_world_sum_double(c->world, x, SUM_MS + (size_t)ranks);
  out->allreduce_ms = cls_now_ms() - t0;
  if (st != CLS_OK) return st;
  const float total = (float)x[SUM_COUNT];
  if (total != (float)p->global_count) { /* the weights were not count / total */
    const float scale = (float)p->global_count / total;
    for (size_t i = 0; i < c->n_params; i++) s->g[i] *= scale;
  }
  out->global_count = (int64_t)x[SUM_COUNT];
  out->global_loss_sum = x[SUM_LOSS];
  out->mean_loss = x[SUM_LOSS] / x[SUM_COUNT];
  out->global_audio_s = x[SUM_AUDIO];
  if (x[SUM_TIME_UP] > 0) c->out_of_time = 1; /* a rank's training time limit has passed */
  out->rank_ms = x + SUM_MS;
  out->n_sums = SUM_MS + ranks;
  return CLS_OK;
}

/* Applies s->g on every live tower (Adam on each replica; a resident step's one tower applies its own
   gradient); a tower that fails here is dropped. */
static cls_status apply(cls_step *s) {
  cls_crew *c = s->c;
  cls_adam_state next = c->state.adam;
  int applied = 0;
  for (int i = 0; i < c->n_towers; i++) {
    cls_crew_slot *slot = &c->towers[i];
    if (!slot->tower) continue;
    /* --balance auto: an idle tower's replica waits (a simulator's Adam over every parameter would cost the
       step more than the work it was spared); cls_crew_refresh brings it up to date before it works again */
    if (slot->planned == 0 && slot->idle_until_ms > 0) {
      slot->stale = true;
      continue;
    }
    cls_adam_state mine = c->state.adam;
    /* DeepSpeech's Horovod rule: the (checkpointed, base) learning rate times the number of ranks. */
    const float lr = c->state.learning_rate * (float)cls_world_size(c->world);
    cls_status st = cls_tower_apply(slot->tower, s->resident ? NULL : s->g, lr, c->o.beta1, c->o.beta2, c->o.epsilon, &mine,
                                    &s->uploads[s->parity][i]);
    st = cls_crew_tower_status(c, slot, st);
    if (st == CLS_OK) {
      next = mine;
      applied++;
    } else if (cls_crew_is_device_fault(st)) {
      cls_crew_drop(c, slot, cls_engine_error(c->e));
    } else {
      return st;
    }
  }
  if (!applied) return cls_crew_all_failed(c, NULL);
  c->state.adam = next;
  return CLS_OK;
}

/* After the update: the hooks the plan asks for, in this order: summaries (of the updated parameters
 * and the gradient applied), the fault option's perturbation, the replica checks that are due. */
static cls_status hooks(cls_step *s, const cls_step_plan *p, const cls_step_result *r) {
  cls_crew *c = s->c;
  cls_status st = CLS_OK;
  if ((p->hooks & CLS_STEP_SUMMARIES) && c->summaries) {
    cls_tower_summary parts[CLS_MAX_TOWERS];
    for (int i = 0; i < r->n_towers; i++)
      parts[i] = (cls_tower_summary){r->towers[i].tower, r->towers[i].ms,
                                     (double)r->towers[i].share / (double)p->batch->batch, -1};
    st = cls_crew_summarize_step(c, r->mean_loss, r->global_audio_s, (cls_now_ms() - s->last_end) / 1e3, parts,
                                 r->n_towers, NULL);
    if (r->rank_ms)
      cls_summaries_ranks(c->summaries, c->state.global_step, r->rank_ms, cls_world_size(c->world), r->allreduce_ms);
  }
  if (st == CLS_OK && (p->hooks & CLS_STEP_FAULTS)) st = cls_crew_perturb_if_due(c);
  if (st == CLS_OK && (p->hooks & CLS_STEP_CHECKS) && c->o.replica_check_steps > 0 &&
      c->state.global_step % c->o.replica_check_steps == 0) {
    st = cls_crew_check_replicas(c);
    if (st == CLS_OK) st = cls_crew_check_ranks(c);
  }
  return st;
}

cls_status cls_step_run(cls_step *s, const cls_step_plan *p, cls_step_result *out) {
  memset(out, 0, sizeof *out);
  out->losses = s->losses;
  if (p->global_count <= 0 || p->batch->batch <= 0)
    return cls_fail(s->c->e, CLS_ERR_INVALID_ARGUMENT, "step: a batch of %d of a global %d", p->batch->batch,
                    p->global_count);
  const double t0 = cls_now_ms();
  cls_status st = gradients(s, p, out);
  out->ms = cls_now_ms() - t0;
  if (st == CLS_OK) st = across_ranks(s, p, out);
  if (st == CLS_OK && isfinite(out->mean_loss)) {
    st = apply(s);
    if (st == CLS_OK) {
      s->c->state.global_step++;
      out->applied = 1;
      st = hooks(s, p, out);
    }
  }
  s->last_end = cls_now_ms();
  return st;
}
