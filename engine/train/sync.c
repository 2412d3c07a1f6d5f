/* The sync strategy, DeepSpeech's one-tower-at-a-time comparison: every step is one whole
 * --train_batch_size batch on one tower, the live towers taking the steps in turn, and the update
 * is applied on every replica so that they stay identical. It is hybrid's epoch (hybrid.h) whose
 * step (step.h) has one working tower, the plan's turn (under --horovod one per rank, each rank
 * taking its batch of the global one). */
#include "device/log.h"
#include "train/hybrid.h"
#include "train/strategy.h"

cls_status cls_sync_epoch(cls_crew *c, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                          void *user) {
  const int B = c->o.train_batch_size;
  /* Several ranks: each rank's turn tower takes a whole batch of every global batch. */
  if (cls_world_size(c->world) > 1) return cls_hybrid_sharded_epoch(c, epoch, u, n, B, 1, progress, user);
  /* DeepSpeech drops the last partial training batch (drop_remainder). */
  const int usable = n / B * B;
  if (usable == 0)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT,
                    "fewer training samples (%d) than one global batch (%d: --train_batch_size %d x %d towers)", n, B,
                    B, 1);
  const cls_epoch_plan plan = {B, 1, 0, B};
  return cls_hybrid_run_epoch(c, epoch, u, usable, &plan, progress, user);
}
