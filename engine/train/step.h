/* One synchronous training step (step.c), the one function that the hybrid and sync strategies (under
 * --horovod too) and the towers benchmark run. A typed plan goes in: the batch, which towers work
 * (every live one, or one in turn), the rule that splits the batch between them, the dropout keys,
 * this rank's slice of the global batch and the hooks to run. The step splits the batch, runs each
 * working tower's forward and backward pass on its own host thread, waits for each tower's gradient
 * range by range and reduces g = sum_i (n_i/N) g_i in the fixed tower order as the ranges arrive (a
 * tower whose device fails is dropped and the gradients redone on the others), sums g and then the
 * step's counts and loss sums across ranks (two reductions: the gradient's floats, then a few
 * doubles), applies g with Adam on every live replica and counts the global step (not when the
 * loss is not finite), then runs the hooks asked for. A typed result comes out: loss sums and
 * utterance counts (this rank's and every rank's), per-tower shares and times, audio seconds, the
 * time in the reductions across ranks; the status is returned, its text in the engine's error
 * buffer. Internal to engine/train (and the benchmarks above it). */
#ifndef CLS_STEP_H
#define CLS_STEP_H

#include "train/crew.h"

/* The state of the steps of one run: the reduction buffers (two, so that a step reduces while the
 * last one's gradient still uploads), the uploads in flight, the utterances' losses. */
typedef struct cls_step cls_step;

/* How the plan's batch is split between the working towers. */
typedef enum cls_step_split {
  CLS_SPLIT_EQUAL,   /* equal counts (DeepSpeech's split; cls_batch_split) */
  CLS_SPLIT_PLANNED  /* --balance auto: the shares the balance feedback of the last steps planned (slot->planned),
                        or equal counts while they do not fit this batch and these towers */
} cls_step_split;

/* What the step runs besides the gradient, the reduction and the update (bits of cls_step_plan.hooks). */
enum {
  CLS_STEP_FAULTS = 1,    /* the --fault option: "fail" in a tower's gradient, "perturb" after the update */
  CLS_STEP_SUMMARIES = 2, /* the step's summaries (when crew->summaries is open) */
  CLS_STEP_CHECKS = 4,    /* the replica check across towers and ranks when --replica_check_steps says so */
  CLS_STEP_HOOKS = 7      /* every hook */
};

typedef struct cls_step_plan {
  const cls_host_batch *batch; /* this rank's utterances of the global batch */
  int turn;                    /* -1: every live tower works; >= 0: only live tower turn % live (sync) */
  cls_step_split split;
  float dropout[6];            /* rates (cls_train_options.dropout) */
  uint32_t seed;               /* dropout's Philox keys: seed, step, utterance index in the global batch */
  int64_t step;
  int rank_first;              /* index of batch's first utterance in the global batch */
  int global_count;            /* utterances of the global batch (every rank's); the reduction's N */
  int overlap;                 /* read each layer's gradient as its backward pass ends (else after the pass) */
  unsigned hooks;              /* CLS_STEP_* */
} cls_step_plan;

/* A tower's part in a step. */
typedef struct cls_step_tower {
  int tower;                   /* its index in the crew */
  int first, share;            /* its utterances: batch[first .. first+share) */
  float weight;                /* its gradient's weight in the reduction, share / global_count */
  double ms;                   /* its gradient's time, the threads' start to its last range on the host */
} cls_step_tower;

typedef struct cls_step_result {
  int applied;                 /* the update was applied and the global step counted (the loss was finite) */
  int64_t count, global_count; /* utterances: this rank's, every rank's */
  double loss_sum, global_loss_sum;
  double mean_loss;            /* global_loss_sum / global_count */
  double audio_s, global_audio_s;
  const float *losses;         /* [count] this rank's utterances' losses (valid until the next step) */
  int n_towers;                /* the towers that worked, in crew order */
  cls_step_tower towers[CLS_MAX_TOWERS];
  double ms;                   /* this rank's time to its reduced gradient */
  double allreduce_ms;         /* the time in the reductions across ranks (0: one rank) */
  int n_sums;                  /* the doubles of the second reduction across ranks (0: one rank) */
  const double *rank_ms;       /* [ranks] every rank's ms (several ranks; NULL with one) */
} cls_step_result;

/* Steps on the crew's towers, for batches of up to max(crew->capacity, train_batch_size x towers). */
cls_status cls_step_create(cls_crew *crew, cls_step **out);
/* Waits for the uploads in flight and frees the buffers. */
void cls_step_destroy(cls_step *step);

/* The plan of a step of batch b on every live tower of the crew, as one process trains: the split
 * --balance asks for, the crew's dropout rates and keys (random_seed, global_step), rank_first 0,
 * global_count b->batch, the read-back --overlap_reduction asks for, and every hook. A caller changes what
 * differs (turn, the rank's slice, hooks). */
cls_step_plan cls_step_plan_default(const cls_crew *crew, const cls_host_batch *b);

/* One step as planned (see the top of this file); *out filled also when it fails part way. */
cls_status cls_step_run(cls_step *step, const cls_step_plan *plan, cls_step_result *out);

/* A tower's gradient of b[first .. first+count) into slot->grad and losses[count], whole on the host
 * when it returns (async's pull-compute-push: one tower, one batch, no reduction), with the fault
 * option's "fail" when `faults`. The dropout keys: seed, step, utterance_offset + first. A failure's
 * text is in the tower's own error (cls_tower_error), whatever thread this runs on. */
cls_status cls_step_tower_gradient(cls_crew *crew, cls_crew_slot *slot, const cls_host_batch *b, int first, int count,
                                   uint32_t seed, int64_t step, int utterance_offset, int faults, float *losses);

#endif
