/* The hybrid strategy (DeepSpeech's hybrid parallel optimization) and its step (see step.h), which
 * the sync strategy shares. A step splits the global batch between the live towers (equal counts,
 * or --balance auto: after each step one utterance moves from the tower that finished last to the
 * one that finished first, so that their finish times meet), runs each tower's forward and backward
 * pass on its own host thread, reduces g = sum_i (n_i/N) g_i into one host buffer layer by layer as
 * the towers' gradients arrive, and sends g back to every tower, which applies Adam to its own
 * replica. A tower whose device fails is dropped and the step redone on the others.
 *
 * Under --horovod (several ranks, world.h) each rank takes its own part of every global batch (the
 * epoch's sharding, run_sharded), weights its towers' gradients by their utterance counts, and one
 * in-place MPI_Allreduce of the host buffer (world_step) sums the ranks' gradients together with
 * their counts, loss sums, deadline flags and step times; every rank then scales by the global count
 * and applies the same mean gradient at the learning rate times the number of ranks.
 *
 * Why one host thread per tower: a step has blocking points (the batch upload, the loss read-back
 * that the CTC report needs, the waits on the gradient reads) and CLBlast enqueues from the calling
 * thread, so one thread driving every queue would serialise the towers at each of them. (The
 * towers' first CLBlast calls are made one after the other by the crew's warm-up, crew.h.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "device/log.h"
#include "train/grad_reduce.h"
#include "train/step.h"
#include "train/strategy.h"

enum { MAX_RANGES = 16 }; /* gradient ranges a tower hands over in one step (its layers) */
/* What a rank adds after its gradient in the host buffer, for the step's one reduction across ranks:
   its utterance count, its loss sum, its audio seconds, its deadline flag, then one step time per rank (its
   own slot set). */
enum { EXTRA_COUNT, EXTRA_LOSS, EXTRA_AUDIO, EXTRA_TIME_UP, EXTRA_MS };

struct cls_hybrid {
  cls_crew *c;
  float *g;                                   /* the reduced gradient of this step: gbuf[parity] */
  float *gbuf[2];                             /* two, so a step reduces while the last one uploads */
  int parity;
  cl_event uploads[2][CLS_MAX_TOWERS];        /* per buffer and tower: its last upload (or NULL) */
  float *losses;                              /* [global batch] the utterances' losses of this step */
  /* the reduction of the step in flight */
  pthread_mutex_t lock;
  int n_active;
  const float *reduce_src[CLS_MAX_TOWERS];
  float reduce_w[CLS_MAX_TOWERS];
  size_t arrive_off[MAX_RANGES];
  int arrive_count[MAX_RANGES], n_arrive_ranges;
  /* the towers that worked on the last step (its summary) */
  cls_crew_slot *workers[CLS_MAX_TOWERS];
  int n_workers;
  /* several ranks: per rank, the sum of its step times; the steps summed; the time in MPI_Allreduce */
  double *rank_ms, allreduce_ms;
  int64_t world_steps;
  double *last_rank_ms, last_allreduce_ms; /* the last step's, for its summary */
  double step_audio;                       /* the last step's audio seconds, over every rank */
};

cls_status cls_hybrid_create(cls_crew *c, cls_hybrid **out) {
  *out = NULL;
  cls_hybrid *h = calloc(1, sizeof *h);
  if (!h) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  h->c = c;
  pthread_mutex_init(&h->lock, NULL);
  const int per_step = c->o.train_batch_size * c->n_towers;
  const int n_losses = c->capacity > per_step ? c->capacity : per_step;
  const int ranks = cls_world_size(c->world);
  const size_t pb = (c->n_params + (ranks > 1 ? EXTRA_MS + (size_t)ranks : 0)) * sizeof(float);
  h->gbuf[0] = malloc(pb);
  h->gbuf[1] = malloc(pb);
  h->g = h->gbuf[0];
  h->losses = malloc((size_t)n_losses * sizeof(float));
  h->rank_ms = calloc((size_t)ranks, sizeof *h->rank_ms);
  h->last_rank_ms = calloc((size_t)ranks, sizeof *h->last_rank_ms);
  if (!h->gbuf[0] || !h->gbuf[1] || !h->losses || !h->rank_ms || !h->last_rank_ms) {
    cls_hybrid_destroy(h);
    return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu parameters", c->n_params);
  }
  *out = h;
  return CLS_OK;
}

void cls_hybrid_destroy(cls_hybrid *h) {
  if (!h) return;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < CLS_MAX_TOWERS; i++)
      if (h->uploads[k][i]) {
        clWaitForEvents(1, &h->uploads[k][i]); /* the upload reads gbuf[k] */
        clReleaseEvent(h->uploads[k][i]);
      }
  free(h->gbuf[0]);
  free(h->gbuf[1]);
  free(h->losses);
  free(h->rank_ms);
  free(h->last_rank_ms);
  pthread_mutex_destroy(&h->lock);
  free(h);
}

typedef struct step_job {
  cls_hybrid *h;
  cls_crew_slot *s;
  const cls_host_batch *b;
  cls_model_dropout drop;
  int overlap;
} step_job;

/* A tower's gradient has reached the host for floats [off, off+count): the last tower to deliver
 * a range reduces it, in the fixed tower order, while the others may still be computing. */
static void arrive(void *user, size_t off, size_t count) {
  step_job *j = user;
  cls_hybrid *h = j->h;
  pthread_mutex_lock(&h->lock);
  int k = 0;
  while (k < h->n_arrive_ranges && h->arrive_off[k] != off) k++;
  if (k == h->n_arrive_ranges && k < MAX_RANGES) {
    h->arrive_off[k] = off;
    h->arrive_count[k] = 0;
    h->n_arrive_ranges++;
  }
  int last = k < MAX_RANGES && ++h->arrive_count[k] == h->n_active;
  pthread_mutex_unlock(&h->lock);
  if (last) cls_grad_reduce(h->g, h->reduce_src, h->reduce_w, h->n_active, off, count);
}

static void *run_job(void *arg) {
  step_job *j = arg;
  cls_crew_slot *s = j->s;
  cls_crew *c = j->h->c;
  cls_error_redirect(s->err);
  s->err[0] = '\0';
  double t0 = cls_now_ms();
  s->status = cls_crew_injected_failure(c, s, c->state.global_step);
  if (s->status == CLS_OK)
    s->status = cls_tower_gradient(s->tower, j->b, s->first, s->share, &j->drop, j->overlap, s->grad,
                                   j->h->losses + s->first, arrive, j);
  s->ms = cls_now_ms() - t0;
  cls_error_redirect(NULL);
  return NULL;
}

/* Makes h->g the buffer not used by the last step, once every upload from its previous use is done. */
static void take_reduce_buffer(cls_hybrid *h) {
  h->parity ^= 1;
  h->g = h->gbuf[h->parity];
  for (int i = 0; i < CLS_MAX_TOWERS; i++)
    if (h->uploads[h->parity][i]) {
      clWaitForEvents(1, &h->uploads[h->parity][i]); /* a failed upload is reported by its tower's queue */
      clReleaseEvent(h->uploads[h->parity][i]);
      h->uploads[h->parity][i] = NULL;
    }
}

/* Computes the reduced gradient of batch b into h->g and the utterances' losses into h->losses.
 * only >= 0: the sync strategy's turn (the only tower that works this step, among the live ones). */
static cls_status gradient_step(cls_hybrid *h, const cls_host_batch *b, int only) {
  cls_crew *c = h->c;
  const int balance_auto = c->o.balance == CLS_BALANCE_AUTO, ranks = cls_world_size(c->world);
  take_reduce_buffer(h);
  for (;;) {
    cls_crew_slot *live[CLS_MAX_TOWERS];
    int k = 0;
    for (int i = 0; i < c->n_towers; i++)
      if (c->towers[i].tower) live[k++] = &c->towers[i];
    if (k == 0) return cls_crew_all_failed(c, NULL);
    if (only >= 0) {
      live[0] = live[only % k];
      k = 1;
    }
    /* Equal counts (DeepSpeech's split), or under --balance auto the shares the feedback of the
       last steps planned, while the batch and the towers are the same. */
    int shares[CLS_MAX_TOWERS], planned = balance_auto && k > 1;
    for (int i = 0, sum = 0; planned && i < k; i++) {
      shares[i] = live[i]->planned;
      sum += shares[i];
      planned &= shares[i] > 0 && (i + 1 < k || sum == b->batch);
    }
    if (!planned) cls_batch_split(b->batch, k, shares);
    step_job jobs[CLS_MAX_TOWERS];
    pthread_t threads[CLS_MAX_TOWERS];
    int started[CLS_MAX_TOWERS] = {0};
    h->n_active = 0;
    h->n_arrive_ranges = 0;
    for (int i = 0, first = 0; i < k; i++) {
      cls_crew_slot *s = live[i];
      s->share = shares[i];
      s->first = first;
      first += shares[i];
      s->status = CLS_OK;
      if (!s->share) continue;
      h->reduce_src[h->n_active] = s->grad;
      /* The mean, sum_i (n_i/N) g_i, N this step's utterances: with several ranks the global batch's,
         summed across ranks by world_step (which rescales only when a step's global count differs, or
         when N is not known: then the weights are the counts and it divides by the count) */
      const int N = ranks == 1 ? b->batch : c->global_batch;
      h->reduce_w[h->n_active] = N > 0 ? (float)s->share / (float)N : (float)s->share;
      h->n_active++;
      jobs[i] = (step_job){h, s, b, {{0}, 0, 0, 0}, !c->o.no_overlap};
      memcpy(jobs[i].drop.rate, c->o.dropout, sizeof jobs[i].drop.rate);
      jobs[i].drop.seed = c->state.random_seed;
      jobs[i].drop.step = (uint32_t)c->state.global_step;
      jobs[i].drop.utterance_offset = c->rank_first; /* the same dropout masks whatever the ranks */
    }
    /* One worker runs on this thread; the others get their own. */
    int inline_job = -1;
    for (int i = 0; i < k; i++) {
      if (!live[i]->share) continue;
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
    int dropped = 0;
    for (int i = 0; i < k; i++) {
      cls_crew_slot *s = live[i];
      if (!s->share || s->status == CLS_OK) continue;
      if (!cls_crew_is_device_fault(s->status)) return cls_fail(c->e, s->status, "%s", s->err);
      snprintf(c->e->error, CLS_ERROR_CAP, "%s", s->err);
      cls_crew_drop(c, s, s->err);
      dropped++;
    }
    if (dropped) {
      if (cls_crew_count(c) > 0)
        cls_log(c->e, CLS_LOG_WARNING, "redoing step %lld on the remaining towers", (long long)c->state.global_step);
      continue;
    }
    /* Balance feedback: each tower's speed, and the shares of the next step. */
    double ms[CLS_MAX_TOWERS];
    int next[CLS_MAX_TOWERS];
    for (int i = 0; i < k; i++) {
      cls_crew_slot *s = live[i];
      ms[i] = s->share ? s->ms : 0;
      next[i] = s->share;
      if (!s->share || s->ms <= 0) continue;
      int longest = 0; /* the tower's padded work: its utterances x frames of its longest */
      for (int u = s->first; u < s->first + s->share; u++)
        if (b->frames[u] > longest) longest = b->frames[u];
      double v = (double)s->share * (double)longest / (s->ms / 1e3);
      s->speed = s->speed > 0 ? 0.7 * s->speed + 0.3 * v : v;
    }
    if (balance_auto && k > 1) cls_balance_adjust(k, ms, next);
    for (int i = 0; i < k; i++) live[i]->planned = next[i];
    h->n_workers = 0;
    for (int i = 0; i < k; i++)
      if (live[i]->share) h->workers[h->n_workers++] = live[i];
    return CLS_OK;
  }
}

/* Applies h->g on every live tower (Adam on each replica); a tower that fails here is dropped. */
static cls_status apply_step(cls_hybrid *h) {
  cls_crew *c = h->c;
  cls_adam_state next = c->state.adam;
  int applied = 0;
  for (int i = 0; i < c->n_towers; i++) {
    cls_crew_slot *s = &c->towers[i];
    if (!s->tower) continue;
    cls_adam_state mine = c->state.adam;
    /* DeepSpeech's Horovod rule: the (checkpointed, base) learning rate times the number of ranks. */
    const float lr = c->state.learning_rate * (float)cls_world_size(c->world);
    cls_status st = cls_tower_apply(s->tower, h->g, lr, c->o.beta1, c->o.beta2, c->o.epsilon, &mine,
                                    &h->uploads[h->parity][i]);
    if (st == CLS_OK) {
      next = mine;
      applied++;
    } else if (cls_crew_is_device_fault(st)) {
      cls_crew_drop(c, s, c->e->error);
    } else {
      return st;
    }
  }
  if (!applied) return cls_crew_all_failed(c, NULL);
  c->state.adam = next;
  return CLS_OK;
}

/* After gradient_step: *mean, the step's mean loss; with several ranks the sum across ranks of the
 * gradients (each rank's already weighted by count / global batch, so the sum is the mean; no pass over
 * the parameters here unless a step's global count was not the epoch's global batch), of the counts,
 * loss sums, deadline flags (out_of_time set on every rank when one rank's deadline passed) and step
 * times, in one in-place MPI_Allreduce of h->g and its extras. */
static cls_status world_step(cls_hybrid *h, const cls_host_batch *b, double step_ms, double *mean) {
  cls_crew *c = h->c;
  double local = 0;
  for (int i = 0; i < b->batch; i++) local += h->losses[i];
  const int ranks = cls_world_size(c->world);
  h->step_audio = b->audio_seconds;
  if (ranks == 1) {
    *mean = local / b->batch;
    return CLS_OK;
  }
  float *x = h->g + c->n_params;
  memset(x, 0, (EXTRA_MS + (size_t)ranks) * sizeof(float));
  x[EXTRA_COUNT] = (float)b->batch;
  x[EXTRA_LOSS] = (float)local;
  x[EXTRA_AUDIO] = (float)b->audio_seconds;
  x[EXTRA_TIME_UP] = (float)cls_crew_deadline_passed(c);
  x[EXTRA_MS + cls_world_rank(c->world)] = (float)step_ms;
  double t0 = cls_now_ms();
  cls_status st = cls_world_sum(c->world, h->g, c->n_params + EXTRA_MS + (size_t)ranks);
  h->last_allreduce_ms = cls_now_ms() - t0;
  h->allreduce_ms += h->last_allreduce_ms;
  if (st != CLS_OK) return st;
  const float total = x[EXTRA_COUNT];
  if (c->global_batch <= 0 || total != (float)c->global_batch) { /* the weights were not count / total */
    const float scale = c->global_batch > 0 ? (float)c->global_batch / total : 1.0f / total;
    for (size_t i = 0; i < c->n_params; i++) h->g[i] *= scale;
  }
  *mean = (double)x[EXTRA_LOSS] / (double)total;
  h->step_audio = x[EXTRA_AUDIO];
  if (x[EXTRA_TIME_UP] > 0) c->out_of_time = 1;
  for (int r = 0; r < ranks; r++) {
    h->last_rank_ms[r] = x[EXTRA_MS + r];
    h->rank_ms[r] += x[EXTRA_MS + r];
  }
  h->world_steps++;
  return CLS_OK;
}

cls_status cls_hybrid_step(cls_hybrid *h, const cls_host_batch *b) {
  double t0 = cls_now_ms(), mean = 0;
  cls_status st = gradient_step(h, b, -1);
  if (st == CLS_OK) st = world_step(h, b, cls_now_ms() - t0, &mean);
  if (st == CLS_OK && isfinite(mean)) {
    st = apply_step(h);
    if (st == CLS_OK) h->c->state.global_step++;
  }
  return st;
}

/* Several ranks, at an epoch's end (rank 0): each rank's mean step time (the straggler named when its
 * steps take 50% and 20 ms longer than the fastest rank's) and the mean time in MPI_Allreduce per step. */
static void log_ranks(cls_crew *c, cls_hybrid *h, int epoch) {
  const int ranks = cls_world_size(c->world);
  char text[1024] = "";
  int slow = 0, fast = 0;
  for (int r = 0; r < ranks; r++) {
    if (strlen(text) < 900)
      snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d (%s) %.1f ms", r ? ", " : "", r,
               cls_world_host(c->world, r), h->rank_ms[r] / (double)h->world_steps);
    if (h->rank_ms[r] > h->rank_ms[slow]) slow = r;
    if (h->rank_ms[r] < h->rank_ms[fast]) fast = r;
  }
  cls_log(c->e, CLS_LOG_NOTICE, "Epoch %d: step time by rank: %s; MPI_Allreduce %.2f ms per step (%zu floats)", epoch,
          text, h->allreduce_ms / (double)h->world_steps, c->n_params + EXTRA_MS + (size_t)ranks);
  const double steps = (double)h->world_steps;
  if (slow != fast && h->rank_ms[slow] > 1.5 * h->rank_ms[fast] && (h->rank_ms[slow] - h->rank_ms[fast]) / steps > 20)
    cls_log(c->e, CLS_LOG_WARNING, "Epoch %d: rank %d on host %s is the straggler: its steps took %.0f%% longer than "
            "rank %d's (host %s), and every rank waits for it", epoch, slow, cls_world_host(c->world, slow),
            100.0 * (h->rank_ms[slow] / h->rank_ms[fast] - 1.0), fast, cls_world_host(c->world, fast));
}

cls_status cls_hybrid_run_epoch(cls_crew *c, int epoch, const cls_utterance *u, int n, int global, int one_at_a_time,
                                cls_progress_fn progress, void *user) {
  cls_hybrid *h = NULL;
  cls_loader *l = NULL;
  cls_status st = cls_hybrid_create(c, &h);
  if (st == CLS_OK) st = cls_crew_start_loader(c, u, n, global, 3, &l);
  if (st != CLS_OK) {
    cls_hybrid_destroy(h);
    return st;
  }
  double t0 = cls_now_ms(), loss_sum = 0, audio = 0, last_end = t0;
  int64_t steps = 0, total = n / global, turn = 0;
  for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
    if (b->error.status != CLS_OK) st = cls_fail(c->e, b->error.status, "%s", b->error.text);
    double step_t0 = cls_now_ms(), mean = 0;
    if (st == CLS_OK) st = gradient_step(h, b, one_at_a_time ? (int)(turn++) : -1);
    if (st == CLS_OK) st = world_step(h, b, cls_now_ms() - step_t0, &mean);
    if (st == CLS_OK) {
      if (!isfinite(mean)) {
        double local = 0;
        for (int i = 0; i < b->batch; i++) local += h->losses[i];
        if (!isfinite(local)) cls_crew_warn_nonfinite(c, b, h->losses, u);
      } else {
        st = apply_step(h);
        if (st == CLS_OK) {
          c->state.global_step++;
          loss_sum += mean;
          steps++;
          if (c->summaries) {
            cls_tower_summary parts[CLS_MAX_TOWERS];
            for (int i = 0; i < h->n_workers; i++)
              parts[i] = (cls_tower_summary){h->workers[i]->index, h->workers[i]->ms,
                                             (double)h->workers[i]->share / (double)b->batch, -1};
            st = cls_crew_summarize_step(c, mean, h->step_audio, (cls_now_ms() - last_end) / 1e3, parts,
                                         h->n_workers, NULL);
            if (h->world_steps > 0)
              cls_summaries_ranks(c->summaries, c->state.global_step, h->last_rank_ms, cls_world_size(c->world),
                                  h->last_allreduce_ms);
          }
        }
        if (st == CLS_OK) st = cls_crew_perturb_if_due(c);
        if (st == CLS_OK && c->o.replica_check_steps > 0 && c->state.global_step % c->o.replica_check_steps == 0) {
          st = cls_crew_check_replicas(c);
          if (st == CLS_OK) st = cls_crew_check_ranks(c);
        }
      }
      audio += h->step_audio; /* every rank's: the progress line's audio-s/s is the whole run's */
      cls_crew_report(progress, user, "Training", "train", epoch, steps, total, loss_sum, t0, audio, 0);
      last_end = cls_now_ms();
    }
    cls_loader_done(l, b);
    if (st == CLS_OK && cls_crew_checkpoint_due(c)) st = cls_crew_save(c, "train");
    if (cls_crew_out_of_time(c)) break;
  }
  cls_loader_stop(l);
  if (st == CLS_OK && h->world_steps > 0 && cls_world_rank(c->world) == 0) log_ranks(c, h, epoch);
  cls_hybrid_destroy(h);
  if (st == CLS_OK && cls_crew_count(c) > 1) {
    char shares[512] = "";
    for (int i = 0; i < c->n_towers; i++)
      if (c->towers[i].tower)
        snprintf(shares + strlen(shares), sizeof shares - strlen(shares), "%s%d:%d (%.0f frames/s)",
                 *shares ? ", " : "", i, c->towers[i].share, c->towers[i].speed);
    cls_log(c->e, CLS_LOG_NOTICE, "Epoch %d: last step's shares by tower: %s", epoch, shares);
  }
  if (st == CLS_OK) cls_crew_report(progress, user, "Training", "train", epoch, steps, total, loss_sum, t0, audio, 1);
  return st;
}

cls_status cls_hybrid_sharded_epoch(cls_crew *c, int epoch, const cls_utterance *u, int n, int local,
                                    int one_at_a_time, cls_progress_fn progress, void *user) {
  const int ranks = cls_world_size(c->world), rank = cls_world_rank(c->world);
  /* Every rank's part of a global batch, and its training set's size (which must agree, or the ranks
     would take different numbers of steps and wait for each other for ever). */
  int mine2[2] = {local, n}, *parts = calloc((size_t)ranks * 2, sizeof *parts);
  if (!parts) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cls_status st = cls_world_gather(c->world, mine2, sizeof mine2, parts);
  int global = 0, first = 0, other = -1;
  for (int r = 0; r < ranks; r++) {
    if (r == rank) first = global;
    global += parts[2 * r];
    if (parts[2 * r + 1] != n && other < 0) other = r;
  }
  const int other_n = other >= 0 ? parts[2 * other + 1] : 0;
  free(parts);
  if (st != CLS_OK) return st;
  if (other >= 0)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT,
                    "rank %d (host %s) has %d training samples and rank %d (host %s) %d: every rank must read the "
                    "same training set (the same files at the same paths)",
                    rank, cls_world_host(c->world, -1), n, other, cls_world_host(c->world, other), other_n);
  /* DeepSpeech drops the last partial global batch (drop_remainder): every rank takes as many steps. */
  const int steps = n / global, n_local = steps * local;
  if (steps == 0)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT,
                    "fewer training samples (%d) than one global batch of %d ranks (%d; this rank's part %d)", n,
                    ranks, global, local);
  cls_utterance *mine = malloc((size_t)n_local * sizeof *mine);
  if (!mine) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %d utterances", n_local);
  for (int k = 0; k < steps; k++) memcpy(mine + (size_t)k * local, u + (size_t)k * global + first, local * sizeof *u);
  c->rank_first = first;
  c->global_batch = global;
  st = cls_hybrid_run_epoch(c, epoch, mine, n_local, local, one_at_a_time, progress, user);
  c->rank_first = 0;
  c->global_batch = 0;
  free(mine);
  return st;
}

cls_status cls_hybrid_epoch(cls_crew *c, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                            void *user) {
  const int B = c->o.train_batch_size, ranks = cls_world_size(c->world);
  int towers = cls_crew_count(c);
  /* --train_batch_size per tower, as DeepSpeech. A training set smaller than a global batch keeps
     the extra towers idle rather than failing. */
  if (towers > 1 && n / ranks / B < towers) {
    int use = n / ranks / B > 0 ? n / ranks / B : 1;
    if (epoch == 0)
      cls_log(c->e, CLS_LOG_WARNING, "%d training sample%s of --train_batch_size %d keep%s only %d of %d towers busy",
              n, n == 1 ? "" : "s", B, n == 1 ? "s" : "", use, towers);
    towers = use;
  }
  if (ranks > 1) return cls_hybrid_sharded_epoch(c, epoch, u, n, B * towers, 0, progress, user);
  const int global = B * towers;
  /* DeepSpeech drops the last partial training batch (drop_remainder). */
  const int usable = n / global * global;
  if (usable == 0)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT,
                    "fewer training samples (%d) than one global batch (%d: --train_batch_size %d x %d towers)", n,
                    global, B, towers);
  return cls_hybrid_run_epoch(c, epoch, u, usable, global, 0, progress, user);
}
