/* Hybrid's synchronous step (hybrid.c), the seam between the hybrid and sync strategies and the
 * towers benchmark: the global batch split between the working towers, each tower's forward and
 * backward pass on its own host thread, the gradients reduced on the host as they arrive, and the
 * reduced gradient applied (Adam) on every replica. The sync strategy is this step with one tower
 * at a time. Internal to engine/train (and the benchmarks above it). */
#ifndef CLS_STEP_H
#define CLS_STEP_H

#include "train/crew.h"

/* The state of the steps of one run: the reduction buffers (two, so that a step reduces while the
 * last one's gradient still uploads), the uploads in flight, the utterances' losses. */
typedef struct cls_hybrid cls_hybrid;

/* Steps on the crew's towers, for global batches of up to crew->capacity or train_batch_size per
 * tower utterances. */
cls_status cls_hybrid_create(cls_crew *crew, cls_hybrid **out);
/* Waits for the uploads in flight and frees the buffers. */
void cls_hybrid_destroy(cls_hybrid *hybrid);

/* One step on a host batch: the towers' gradients, the reduction, Adam on every replica and the
 * global step counted (neither when the loss is not finite). */
cls_status cls_hybrid_step(cls_hybrid *hybrid, const cls_host_batch *b);

/* One epoch of synchronous steps over u[0 .. n) (n a multiple of `global`) in global batches of
 * `global` utterances: every live tower takes a share of each (one_at_a_time 0, hybrid) or the live
 * towers take whole batches in turn (1, sync). Checks the replicas every --replica_check_steps,
 * saves --checkpoint_secs checkpoints, stops at the time limit, and reports progress. */
cls_status cls_hybrid_run_epoch(cls_crew *crew, int epoch, const cls_utterance *u, int n, int global, int one_at_a_time,
                                cls_progress_fn progress, void *user);

/* Several ranks (--horovod): an epoch of cls_hybrid_run_epoch over this rank's part of every global
 * batch, `local` utterances of each (the ranks' parts, gathered, make the global batch; the last
 * partial global batch is dropped, so that every rank takes the same number of steps). */
cls_status cls_hybrid_sharded_epoch(cls_crew *crew, int epoch, const cls_utterance *u, int n, int local,
                                    int one_at_a_time, cls_progress_fn progress, void *user);

#endif
