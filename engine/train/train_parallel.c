/* The hybrid and sync strategies (DeepSpeech's hybrid parallel optimization and its
 * one-tower-at-a-time comparison). A step splits the global batch between the live towers (equal
 * counts, or --balance auto: after each step one utterance moves from the tower that finished last
 * to the one that finished first, so that their finish times meet), runs each tower's forward and backward pass on its
 * own host thread, reduces g = sum_i (n_i/N) g_i into one host buffer layer by layer as the towers'
 * gradients arrive, and sends g back to every tower, which applies Adam to its own replica. A tower
 * whose device fails is dropped and the step redone on the others.
 *
 * Why one host thread per tower: a step has blocking points (the batch upload, the loss read-back
 * that the CTC report needs, the waits on the gradient reads) and CLBlast enqueues from the calling
 * thread, so one thread driving every queue would serialise the towers at each of them. The first
 * CLBlast calls on a device compile and cache programs, and CLBlast 1.5.3 (Debian 12's) corrupts
 * its cache when two threads do that at once (CNugteren/CLBlast#486, fixed in 1.6.0): the towers
 * therefore take one tiny step each, one after the other, before any step runs in parallel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "train/grad_reduce.h"
#include "device/kernel_sources.h"
#include "device/log.h"
#include "train/train_internal.h"

typedef struct step_job {
  cls_trainer *t;
  tower_slot *s;
  const cls_host_batch *b;
  cls_model_dropout drop;
  int overlap;
} step_job;

/* A tower's gradient has reached the host for floats [off, off+count): the last tower to deliver
 * a range reduces it, in the fixed tower order, while the others may still be computing. */
static void arrive(void *user, size_t off, size_t count) {
  step_job *j = user;
  cls_trainer *t = j->t;
  pthread_mutex_lock(&t->lock);
  int k = 0;
  while (k < t->n_arrive_ranges && t->arrive_off[k] != off) k++;
  if (k == t->n_arrive_ranges && k < 16) {
    t->arrive_off[k] = off;
    t->arrive_count[k] = 0;
    t->n_arrive_ranges++;
  }
  int last = k < 16 && ++t->arrive_count[k] == t->n_active;
  pthread_mutex_unlock(&t->lock);
  if (last) cls_grad_reduce(t->g, t->reduce_src, t->reduce_w, t->n_active, off, count);
}

static void *run_job(void *arg) {
  step_job *j = arg;
  tower_slot *s = j->s;
  cls_error_redirect(s->err);
  s->err[0] = '\0';
  double t0 = cls_now_ms();
  pthread_mutex_lock(&j->t->lock);
  s->status = cls_train_injected_failure(j->t, s, j->t->state.global_step);
  pthread_mutex_unlock(&j->t->lock);
  if (s->status == CLS_OK)
    s->status = cls_tower_gradient(s->tower, j->b, s->first, s->share, &j->drop, j->overlap, s->grad,
                                   j->t->losses + s->first, arrive, j);
  s->ms = cls_now_ms() - t0;
  cls_error_redirect(NULL);
  return NULL;
}

/* Computes the reduced gradient of batch b into t->g and the utterances' losses into t->losses.
 * only >= 0: the sync strategy's turn (the only tower that works this step, among the live ones). */
/* Makes t->g the buffer not used by the last step, once every upload from its previous use is done. */
static void take_reduce_buffer(cls_trainer *t) {
  t->parity ^= 1;
  t->g = t->gbuf[t->parity];
  for (int i = 0; i < 64; i++)
    if (t->uploads[t->parity][i]) {
      clWaitForEvents(1, &t->uploads[t->parity][i]); /* a failed upload is reported by its tower's queue */
      clReleaseEvent(t->uploads[t->parity][i]);
      t->uploads[t->parity][i] = NULL;
    }
}

static cls_status gradient_step(cls_trainer *t, const cls_host_batch *b, int only) {
  take_reduce_buffer(t);
  for (;;) {
    tower_slot *live[64];
    int k = 0;
    for (int i = 0; i < t->n_towers; i++)
      if (t->towers[i].tower) live[k++] = &t->towers[i];
    if (k == 0) return cls_fail(t->e, CLS_ERR_NO_DEVICE, "every tower has failed; the last error was: %s", t->e->error);
    if (only >= 0) {
      live[0] = live[only % k];
      k = 1;
    }
    /* Equal counts (DeepSpeech's split), or under --balance auto the shares the feedback of the
       last steps planned, while the batch and the towers are the same. */
    int shares[64], planned = t->balance_auto && k > 1;
    for (int i = 0, sum = 0; planned && i < k; i++) {
      shares[i] = live[i]->planned;
      sum += shares[i];
      planned &= shares[i] > 0 && (i + 1 < k || sum == b->batch);
    }
    if (!planned) cls_batch_split(b->batch, k, shares);
    step_job jobs[64];
    pthread_t threads[64];
    int started[64] = {0};
    t->n_active = 0;
    t->n_arrive_ranges = 0;
    for (int i = 0, first = 0; i < k; i++) {
      tower_slot *s = live[i];
      s->share = shares[i];
      s->first = first;
      first += shares[i];
      s->status = CLS_OK;
      if (!s->share) continue;
      t->reduce_src[t->n_active] = s->grad;
      t->reduce_w[t->n_active] = (float)s->share / (float)b->batch;
      t->n_active++;
      jobs[i] = (step_job){t, s, b, {{0}, 0, 0, 0}, !t->o.no_overlap};
      memcpy(jobs[i].drop.rate, t->o.dropout, sizeof jobs[i].drop.rate);
      jobs[i].drop.seed = t->state.random_seed;
      jobs[i].drop.step = (uint32_t)t->state.global_step;
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
      tower_slot *s = live[i];
      if (!s->share || s->status == CLS_OK) continue;
      if (!cls_train_is_device_fault(s->status)) return cls_fail(t->e, s->status, "%s", s->err);
      snprintf(t->e->error, CLS_ERROR_CAP, "%s", s->err);
      cls_train_drop_tower(t, s, s->err);
      dropped++;
    }
    if (dropped) {
      if (cls_trainer_tower_count(t) > 0)
        cls_log(t->e, CLS_LOG_WARNING, "redoing step %lld on the remaining towers", (long long)t->state.global_step);
      continue;
    }
    double ms[64];
    int next[64];
    for (int i = 0; i < k; i++) {
      tower_slot *s = live[i];
      ms[i] = s->share ? s->ms : 0;
      next[i] = s->share;
      if (!s->share || s->ms <= 0) continue;
      int longest = 0; /* the tower's padded work: its utterances x frames of its longest */
      for (int u = s->first; u < s->first + s->share; u++)
        if (b->frames[u] > longest) longest = b->frames[u];
      double v = (double)s->share * (double)longest / (s->ms / 1e3);
      s->speed = s->speed > 0 ? 0.7 * s->speed + 0.3 * v : v;
    }
    if (t->balance_auto && k > 1) cls_balance_adjust(k, ms, next);
    for (int i = 0; i < k; i++) live[i]->planned = next[i];
    return CLS_OK;
  }
}

/* Applies t->g on every live tower (Adam on each replica); a tower that fails here is dropped. */
static cls_status apply_step(cls_trainer *t) {
  cls_adam_state next = t->state.adam;
  int applied = 0;
  for (int i = 0; i < t->n_towers; i++) {
    tower_slot *s = &t->towers[i];
    if (!s->tower) continue;
    cls_adam_state mine = t->state.adam;
    cls_status st = cls_tower_apply(s->tower, t->g, t->state.learning_rate, t->o.beta1, t->o.beta2, t->o.epsilon, &mine,
                                    &t->uploads[t->parity][i]);
    if (st == CLS_OK) {
      next = mine;
      applied++;
    } else if (cls_train_is_device_fault(st)) {
      cls_train_drop_tower(t, s, t->e->error);
    } else {
      return st;
    }
  }
  if (!applied) return cls_fail(t->e, CLS_ERR_NO_DEVICE, "every tower has failed: %s", t->e->error);
  t->state.adam = next;
  return CLS_OK;
}

cls_status cls_train_hybrid_step(cls_trainer *t, const cls_host_batch *b) {
  cls_status st = gradient_step(t, b, -1);
  double mean = 0;
  for (int i = 0; st == CLS_OK && i < b->batch; i++) mean += t->losses[i];
  if (st == CLS_OK && isfinite(mean)) {
    st = apply_step(t);
    if (st == CLS_OK) t->state.global_step++;
  }
  return st;
}

cls_status cls_train_check_replicas(cls_trainer *t) {
  tower_slot *lead = cls_train_lead(t);
  if (!lead) return CLS_OK;
  cls_status st = cls_tower_read_state(lead->tower, t->host_a, NULL, NULL);
  for (int i = lead->index + 1; st == CLS_OK && i < t->n_towers; i++) {
    tower_slot *s = &t->towers[i];
    if (!s->tower) continue;
    st = cls_tower_read_state(s->tower, t->host_b, NULL, NULL);
    if (st != CLS_OK || !memcmp(t->host_a, t->host_b, t->n_params * sizeof(float))) continue;
    size_t first = 0, differ = 0;
    for (size_t p = t->n_params; p-- > 0;)
      if (memcmp(&t->host_a[p], &t->host_b[p], sizeof(float))) {
        first = p;
        differ++;
      }
    cls_param_view v[CLS_MODEL_N_TENSORS];
    cls_model_layout(&t->o.model, v);
    int tensor = 0;
    while (tensor + 1 < CLS_MODEL_N_TENSORS && v[tensor + 1].offset <= first) tensor++;
    const cls_device_info *dl = cls_engine_device(t->e, cls_tower_device(lead->tower));
    const cls_device_info *ds = cls_engine_device(t->e, cls_tower_device(s->tower));
    return cls_fail(t->e, CLS_ERR_DIVERGED,
                    "replica check at step %lld: tower %d on device %d:%d (%s) no longer holds tower %d's parameters "
                    "(device %d:%d %s): %zu of %zu differ, the first %s[%zu] = %.9g against %.9g",
                    (long long)t->state.global_step, s->index, ds->platform_index, ds->device_index, ds->name,
                    lead->index, dl->platform_index, dl->device_index, dl->name, differ, t->n_params, v[tensor].name,
                    first - v[tensor].offset, (double)t->host_b[first], (double)t->host_a[first]);
  }
  return st;
}

static cls_status maybe_perturb(cls_trainer *t) {
  fault_spec *f = &t->fault;
  if (f->kind != 2 || f->fired || t->state.global_step < f->step || f->tower >= t->n_towers || !t->towers[f->tower].tower)
    return CLS_OK;
  f->fired = 1;
  cls_log(t->e, CLS_LOG_WARNING, "fault injection: perturbing tower %d's replica after step %lld", f->tower,
          (long long)t->state.global_step);
  return cls_tower_perturb(t->towers[f->tower].tower, t->n_params / 2, 1e-3f);
}

cls_status cls_train_epoch_parallel(cls_trainer *t, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                                    void *user) {
  const int B = t->o.train_batch_size;
  int towers = cls_trainer_tower_count(t);
  /* Hybrid: --train_batch_size per tower, as DeepSpeech; sync: one tower takes a whole batch. A
     training set smaller than a global batch keeps the extra towers idle rather than failing. */
  if (t->strategy == STRATEGY_HYBRID && towers > 1 && n / B < towers) {
    int use = n / B > 0 ? n / B : 1;
    if (epoch == 0)
      cls_log(t->e, CLS_LOG_WARNING, "%d training sample%s of --train_batch_size %d keep%s only %d of %d towers busy", n,
              n == 1 ? "" : "s", B, n == 1 ? "s" : "", use, towers);
    towers = use;
  }
  const int global = t->strategy == STRATEGY_HYBRID ? B * towers : B;
  /* DeepSpeech drops the last partial training batch (drop_remainder). */
  const int usable = n / global * global;
  if (usable == 0)
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT,
                    "fewer training samples (%d) than one global batch (%d: --train_batch_size %d x %d towers)", n,
                    global, B, t->strategy == STRATEGY_HYBRID ? towers : 1);
  cls_loader *l = NULL;
  cls_status st = cls_train_start_loader(t, u, usable, global, 3, &l);
  double t0 = cls_now_ms(), loss_sum = 0, audio = 0;
  int64_t steps = 0, total = usable / global, turn = 0;
  for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
    if (b->status != CLS_OK) st = cls_fail(t->e, b->status, "%s", b->err);
    if (st == CLS_OK) st = gradient_step(t, b, t->strategy == STRATEGY_SYNC ? (int)(turn++) : -1);
    if (st == CLS_OK) {
      double mean = 0;
      for (int i = 0; i < b->batch; i++) mean += t->losses[i];
      mean /= b->batch;
      if (!isfinite(mean)) {
        cls_train_warn_nonfinite(t, b, t->losses, u);
      } else {
        st = apply_step(t);
        if (st == CLS_OK) {
          t->state.global_step++;
          loss_sum += mean;
          steps++;
          st = maybe_perturb(t);
        }
        if (st == CLS_OK && t->o.replica_check_steps > 0 && t->state.global_step % t->o.replica_check_steps == 0)
          st = cls_train_check_replicas(t);
      }
      audio += b->audio_seconds;
      cls_train_report(progress, user, "Training", "train", epoch, steps, total, loss_sum, t0, audio, 0);
    }
    cls_loader_done(l, b);
    if (st == CLS_OK && t->o.checkpoint_secs > 0 && cls_now_ms() - t->last_save_ms > t->o.checkpoint_secs * 1e3)
      st = cls_train_save(t, "train");
    if (cls_train_out_of_time(t)) break;
  }
  cls_loader_stop(l);
  if (st == CLS_OK && cls_trainer_tower_count(t) > 1) {
    char shares[512] = "";
    for (int i = 0; i < t->n_towers; i++)
      if (t->towers[i].tower)
        snprintf(shares + strlen(shares), sizeof shares - strlen(shares), "%s%d:%d (%.0f frames/s)", *shares ? ", " : "",
                 i, t->towers[i].share, t->towers[i].speed);
    cls_log(t->e, CLS_LOG_NOTICE, "Epoch %d: last step's shares by tower: %s", epoch, shares);
  }
  if (st == CLS_OK) cls_train_report(progress, user, "Training", "train", epoch, steps, total, loss_sum, t0, audio, 1);
  return st;
}

void cls_train_log_placement(cls_trainer *t) {
  static const char *names[] = {"hybrid", "sync", "async"};
  int live = cls_trainer_tower_count(t);
  cls_log(t->e, CLS_LOG_NOTICE, "placement: %d tower%s, strategy %s, balance %s, gradient read-back %s, global batch %d",
          live, live == 1 ? "" : "s", names[t->strategy], t->balance_auto ? "auto" : "equal",
          t->o.no_overlap ? "after the backward pass" : "overlapped per layer",
          t->strategy == STRATEGY_HYBRID ? t->o.train_batch_size * live : t->o.train_batch_size);
  char programs[512] = "";
  for (int i = 0; i < cls_kernel_source_count; i++)
    snprintf(programs + strlen(programs), sizeof programs - strlen(programs), "%s%s", i ? " " : "",
             cls_kernel_sources[i].family);
  const size_t pb = t->n_params * sizeof(float);
  for (int i = 0; i < t->n_towers; i++) {
    tower_slot *s = &t->towers[i];
    if (!s->tower) continue;
    const cls_device_info *d = cls_engine_device(t->e, cls_tower_device(s->tower));
    size_t bytes = cls_tower_device_bytes(s->tower);
    cls_log(t->e, CLS_LOG_NOTICE,
            "placement: tower %d on device %d:%d (%s, %s): own compute and transfer queues (in-order); programs: %s "
            "+ CLBlast; batch share %s%d; capacity %d utterances x %d frames; device memory %.1f MiB (parameters, "
            "gradient, Adam m and v %.1f MiB; activations, batch and workspaces %.1f MiB)",
            i, d->platform_index, d->device_index, d->name, d->driver_version, programs,
            t->strategy == STRATEGY_HYBRID && t->balance_auto && live > 1 ? "measured each step, starting at " : "",
            t->o.train_batch_size, cls_tower_capacity(s->tower), t->max_frames, (double)bytes / 1048576.0,
            4.0 * (double)pb / 1048576.0, (double)(bytes - 4 * pb) / 1048576.0);
  }
}

cls_status cls_train_warm_up(cls_trainer *t) {
  /* One utterance of silence, 2 frames (or 1), label 0. */
  const cls_mfcc_tables *tab = t->tables;
  int frames = t->max_frames >= 2 ? 2 : 1;
  size_t n_audio = (size_t)tab->window + (size_t)(frames - 1) * (size_t)tab->step;
  const int width = cls_model_input_width(&t->o.model);
  float *audio = calloc(n_audio, sizeof(float));
  float *windows = calloc((size_t)frames * (size_t)width, sizeof(float));
  int frame_count = frames;
  int32_t label = 0, label_len = 1;
  cls_host_batch b;
  memset(&b, 0, sizeof b);
  b.batch = 1;
  b.time = frames;
  b.max_label = 1;
  b.frames = &frame_count;
  b.audio = &audio;
  b.n_audio = &n_audio;
  b.windows = windows;
  b.labels = &label;
  b.label_len = &label_len;
  cls_status st = audio && windows ? CLS_OK : cls_fail(t->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cls_model_dropout drop;
  memset(&drop, 0, sizeof drop);
  float loss = 0;
  for (int i = 0; st == CLS_OK && i < t->n_towers; i++)
    st = cls_tower_gradient(t->towers[i].tower, &b, 0, 1, &drop, 0, t->towers[i].grad, &loss, NULL, NULL);
  free(audio);
  free(windows);
  return st;
}
