/* The hybrid strategy (DeepSpeech's hybrid parallel optimization) and the synchronous epoch that
 * the sync strategy shares (hybrid.h): the loop over the loader's batches, one step (step.h) per
 * batch, with the loop's policy only: progress, the non-finite warning, the checkpoint clock, the
 * time limit, and the epoch's closing logs (the ranks' step times, the towers' last shares). A step
 * splits the global batch between the live towers (equal counts, or --balance auto: after each step
 * one utterance moves from the tower that finished last to the one that finished first, so that
 * their finish times meet).
 *
 * Under --horovod (several ranks, world.h) each rank takes its own part of every global batch (the
 * epoch's sharding, cls_hybrid_sharded_epoch), and the step's plan says where that part lies in the
 * global batch (the dropout keys, the reduction's weights); the step sums the ranks' gradients and
 * then their counts, loss sums, deadline flags and step times; every rank then applies the same mean
 * gradient at the learning rate times the number of ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "device/log.h"
#include "train/hybrid.h"
#include "train/step.h"
#include "train/strategy.h"

/* Several ranks: the epoch's sums of every rank's step times and of the time in the reductions across
 * ranks, over `steps` steps. */
typedef struct rank_times {
  double *ms, allreduce_ms;
  int64_t steps;
  int n_sums; /* the doubles summed after the gradient */
} rank_times;

/* Several ranks, at an epoch's end (rank 0): each rank's mean step time (the straggler named when its
 * steps take 50% and 20 ms longer than the fastest rank's) and the mean time in MPI_Allreduce per step. */
static void log_ranks(cls_crew *c, const rank_times *rt, int epoch) {
  const int ranks = cls_world_size(c->world);
  const double *ms = rt->ms, steps = (double)rt->steps;
  char text[1024] = "";
  int slow = 0, fast = 0;
  for (int r = 0; r < ranks; r++) {
    if (strlen(text) < 900)
      snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d (%s) %.1f ms", r ? ", " : "", r,
               cls_world_host(c->world, r), ms[r] / steps);
    if (ms[r] > ms[slow]) slow = r;
    if (ms[r] < ms[fast]) fast = r;
  }
  cls_log(c->e, CLS_LOG_NOTICE,
          "Epoch %d: step time by rank: %s; MPI_Allreduce %.2f ms per step (%zu floats, then %d doubles)", epoch, text,
          rt->allreduce_ms / steps, c->n_params, rt->n_sums);
  if (slow != fast && ms[slow] > 1.5 * ms[fast] && (ms[slow] - ms[fast]) / steps > 20)
    cls_log(c->e, CLS_LOG_WARNING, "Epoch %d: rank %d on host %s is the straggler: its steps took %.0f%% longer than "
            "rank %d's (host %s), and every rank waits for it", epoch, slow, cls_world_host(c->world, slow),
            100.0 * (ms[slow] / ms[fast] - 1.0), fast, cls_world_host(c->world, fast));
}

/* With several towers, at an epoch's end: each live tower's share of the last step and its speed. */
static void log_shares(cls_crew *c, const cls_step_result *last, int epoch) {
  char shares[512] = "";
  for (int i = 0; i < c->n_towers; i++) {
    if (!c->towers[i].tower) continue;
    int share = 0;
    for (int k = 0; k < last->n_towers; k++)
      if (last->towers[k].tower == i) share = last->towers[k].share;
    snprintf(shares + strlen(shares), sizeof shares - strlen(shares), "%s%d:%d (%.0f frames/s)", *shares ? ", " : "",
             i, share, c->towers[i].speed);
  }
  cls_log(c->e, CLS_LOG_NOTICE, "Epoch %d: last step's shares by tower: %s", epoch, shares);
}

cls_status cls_hybrid_run_epoch(cls_crew *c, int epoch, const cls_utterance *u, int n, const cls_epoch_plan *ep,
                                cls_progress_fn progress, void *user) {
  cls_step *step = NULL;
  cls_loader *l = NULL;
  const int ranks = cls_world_size(c->world);
  rank_times rt = {calloc((size_t)ranks, sizeof *rt.ms), 0, 0, 0};
  cls_status st = rt.ms ? cls_step_create(c, &step) : cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  if (st == CLS_OK)
    st = cls_crew_start_train_loader(c, epoch, u, n, ep->batch, 3, ep->batch, ep->global_batch, ep->rank_first, &l);
  if (st != CLS_OK) {
    cls_step_destroy(step);
    free(rt.ms);
    return st;
  }
  double t0 = cls_now_ms(), loss_sum = 0, audio = 0;
  int64_t steps = 0, total = n / ep->batch, turn = 0;
  cls_step_result r;
  memset(&r, 0, sizeof r);
  for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
    if (b->error.status != CLS_OK) st = cls_fail(c->e, b->error.status, "%s", b->error.text);
    if (st == CLS_OK) {
      cls_step_plan plan = cls_step_plan_default(c, b);
      plan.turn = ep->one_at_a_time ? (int)(turn++) : -1;
      plan.rank_first = ep->rank_first;
      plan.global_count = ep->global_batch;
      st = cls_step_run(step, &plan, &r);
      if (r.rank_ms) { /* the reductions across ranks ran */
        for (int k = 0; k < ranks; k++) rt.ms[k] += r.rank_ms[k];
        rt.allreduce_ms += r.allreduce_ms;
        rt.steps++;
        rt.n_sums = r.n_sums;
      }
    }
    if (st == CLS_OK) {
      if (r.applied) {
        loss_sum += r.mean_loss;
        steps++;
      } else if (!isfinite(r.loss_sum)) {
        cls_crew_warn_nonfinite(c, b, r.losses, u);
      }
      audio += r.global_audio_s; /* every rank's: the progress line's audio-s/s is the whole run's */
      cls_crew_report(progress, user, "Training", "train", epoch, steps, total, loss_sum, t0, audio, 0);
    }
    cls_loader_done(l, b);
    if (st == CLS_OK && cls_crew_checkpoint_due(c)) st = cls_crew_save(c, "train");
    if (cls_crew_out_of_time(c)) break;
  }
  cls_loader_stop(l);
  cls_step_destroy(step);
  if (st == CLS_OK && rt.steps > 0 && cls_world_rank(c->world) == 0) log_ranks(c, &rt, epoch);
  free(rt.ms);
  if (st == CLS_OK && cls_crew_count(c) > 1) log_shares(c, &r, epoch);
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
  const cls_epoch_plan plan = {local, one_at_a_time, first, global};
  st = cls_hybrid_run_epoch(c, epoch, mine, n_local, &plan, progress, user);
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
  const cls_epoch_plan plan = {global, 0, 0, global};
  return cls_hybrid_run_epoch(c, epoch, u, usable, &plan, progress, user);
}
