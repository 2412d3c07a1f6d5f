/* Training summaries for TensorBoard: what the loop and the strategies write, and when, into
 * DeepSpeech's layout of event files (base/event_file.h) under --summary_dir: DIR/train, DIR/dev and
 * DIR/metrics.
 *
 * train, every step (at the global step after its update): `step_loss` (the step's mean loss, the
 *   number the progress line averages; with several towers the mean over the global batch, as
 *   DeepSpeech's mean over towers), `learning_rate`, `audio_seconds_per_second` (the step's audio
 *   over the wall time since the previous step), and per tower that worked on it
 *   `towers/step_ms/<i>`, `towers/batch_share/<i>` (its share of the batch) and, under async,
 *   `towers/staleness/<i>` (updates applied between its pull and its push). Every --summary_steps
 *   steps, for each variable under DeepSpeech's name (layer_1/weights, ..., the LSTM kernel's long
 *   name) `<name>/mean`, `<name>/stddev`, `<name>/max`, `<name>/min`, the histogram `<name>` and the
 *   histogram `<name>/gradients` of the gradient that the update applied (hybrid and sync: the
 *   averaged gradient, what Adam applies on every replica; async: the one tower's gradient that made
 *   this step). At each epoch's end `epoch_loss`, the mean of the epoch's step losses.
 * dev and metrics: each evaluation step's `step_loss` at the unchanged global step, as DeepSpeech,
 *   and `epoch_loss`, the mean over the pass's steps (over every dev set: the dev loss the epoch
 *   rules use).
 *
 * A write that fails (a full disk) is a warning in the log, once; that file then stays silent and
 * training goes on. Calls may come from any thread (the async workers); they are serialised. */
#ifndef CLS_SUMMARIES_H
#define CLS_SUMMARIES_H

#include "base/histogram.h"
#include "clspeech/model.h"

/* The event files, DIR/train, DIR/dev and DIR/metrics (CLS_SUMMARY_SETS: their number, or none). */
typedef enum cls_summary_set {
  CLS_SUMMARY_TRAIN,
  CLS_SUMMARY_DEV,
  CLS_SUMMARY_METRICS,
  CLS_SUMMARY_SETS
} cls_summary_set;

typedef struct cls_summaries cls_summaries;

/* A tower's part in a training step. */
typedef struct cls_tower_summary {
  int tower;          /* its index in the crew */
  double ms;          /* its time in the step */
  double share;       /* its share of the step's batch, 0 .. 1 */
  int64_t staleness;  /* async: updates between its pull and its push; < 0: none */
} cls_tower_summary;

/* Opens the event files DIR/train, DIR/dev when `dev` (a run with validation sets) and DIR/metrics when
 * `metrics`; the variables' statistics every `variable_steps` global steps (0: never). CLS_ERR_IO naming
 * the folder. */
cls_status cls_summaries_open(cls_engine *engine, const char *dir, int variable_steps, int dev, int metrics,
                              cls_summaries **out);
/* Writes what is buffered and closes the files (a failure is a warning). NULL is fine. */
void cls_summaries_close(cls_summaries *summaries);

/* A training step's scalars at `step` (the global step after its update). */
void cls_summaries_train_step(cls_summaries *summaries, int64_t step, double loss, double learning_rate,
                              double audio_s, double wall_s, const cls_tower_summary *towers, int n_towers);
/* Several ranks (--horovod): a training step's time on each rank (ranks/step_ms/R, the straggler's
 * trace) and its time in MPI_Allreduce (ranks/allreduce_ms), at `step`. */
void cls_summaries_ranks(cls_summaries *summaries, int64_t step, const double *rank_ms, int n_ranks,
                         double allreduce_ms);
/* 1 when the variables' statistics are due at `step`. */
int cls_summaries_variables_due(const cls_summaries *summaries, int64_t step);
/* Room for the statistics of a step: [2 * CLS_MODEL_MAX_TENSORS] records, the parameters' n tensors
 * (cls_model_layout_all's) then the gradient's n (as cls_tower_stats fills them). */
cls_tensor_stats *cls_summaries_scratch(cls_summaries *summaries);
/* Writes the scratch's statistics at `step` under the variable names of `model`. */
void cls_summaries_variables(cls_summaries *summaries, int64_t step, const cls_model_config *model);
/* An evaluation step's loss in `set` (dev or metrics) at the unchanged global step. */
void cls_summaries_eval_step(cls_summaries *summaries, cls_summary_set set, int64_t step, double loss);
/* `epoch_loss` of `set` at `step`: the mean of the step losses written to it since the last call
 * (nothing when there were none). */
void cls_summaries_epoch(cls_summaries *summaries, cls_summary_set set, int64_t step);

#endif
