/* The synchronous strategies' epoch (hybrid.c), which the sync strategy shares: the loop over the
 * loader's batches that runs the step (step.h) on each, and the epoch's sharding under --horovod.
 * Internal to engine/train. */
#ifndef CLS_HYBRID_H
#define CLS_HYBRID_H

#include "train/crew.h"

/* What an epoch's steps take: this rank's part of every global batch and where it lies in it. */
typedef struct cls_epoch_plan {
  int batch;         /* this rank's utterances per step */
  int one_at_a_time; /* 0: every live tower takes a share of each batch (hybrid); 1: they take whole batches in
                        turn (sync) */
  int rank_first;    /* the index of this rank's first utterance in each global batch */
  int global_batch;  /* the utterances of one global batch, every rank's together */
} cls_epoch_plan;

/* One epoch of synchronous steps over u[0 .. n) (n a multiple of plan->batch) in batches of
 * plan->batch utterances, each step planned from `plan` (cls_step_plan_default, the turn, the rank's
 * slice) with every hook. Saves --checkpoint_secs checkpoints, stops at the time limit, reports
 * progress, and logs the ranks' step times and the towers' last shares at its end. */
cls_status cls_hybrid_run_epoch(cls_crew *crew, int epoch, const cls_utterance *u, int n, const cls_epoch_plan *plan,
                                cls_progress_fn progress, void *user);

/* Several ranks (--horovod): an epoch of cls_hybrid_run_epoch over this rank's part of every global
 * batch, `local` utterances of each (the ranks' parts, gathered, make the global batch; the last
 * partial global batch is dropped, so that every rank takes the same number of steps). */
cls_status cls_hybrid_sharded_epoch(cls_crew *crew, int epoch, const cls_utterance *u, int n, int local,
                                    int one_at_a_time, cls_progress_fn progress, void *user);

#endif
