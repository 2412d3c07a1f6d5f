/* clspeech internal API, train layer: fault injection for the tests of the towers' fault handling (a
 * tower's device failing, a replica drifting), set on a trainer after cls_trainer_create (the clspeech
 * command reads it from CLSPEECH_FAULT for the tests); and the time estimate before training (`clspeech
 * train --estimate`, and its line at the start of every run). Not installed. */
#ifndef CLSPEECH_INTERNAL_TRAIN_H
#define CLSPEECH_INTERNAL_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fault injection, for tests of the towers' fault handling. */
typedef enum cls_fault_kind {
  CLS_FAULT_NONE,
  CLS_FAULT_FAIL,   /* tower `tower` fails (an injected device error) when it first works at or after global
                       step `step`, and is dropped */
  CLS_FAULT_PERTURB /* one parameter of tower `tower`'s replica changes after global step `step` */
} cls_fault_kind;

typedef struct cls_train_fault {
  cls_fault_kind kind;
  int tower;
  int64_t step;
  cls_status status; /* CLS_FAULT_FAIL's status: CLS_OK (what the parser leaves) is CLS_ERR_OPENCL, a device
                        error; another (CLS_ERR_DEVICE_OUT_OF_MEMORY, CLS_ERR_OUT_OF_MEMORY, ...) is injected
                        as it is, and drops the tower only when it is a device fault */
} cls_train_fault;

/* Parses "fail:tower=K,step=S" or "perturb:tower=K,step=S" (K, S >= 0); NULL or "" is no fault.
 * CLS_ERR_INVALID_ARGUMENT with the reason in err (quoting spec) otherwise. */
cls_status cls_train_fault_parse(const char *spec, cls_train_fault *out, cls_error *err);

/* Injects `fault` (NULL or kind CLS_FAULT_NONE: none) into the trainer's next training; set before
 * cls_trainer_train. CLS_ERR_INVALID_ARGUMENT for an unknown kind or a negative tower or step. */
cls_status cls_trainer_set_fault(cls_trainer *trainer, const cls_train_fault *fault);

/* --balance auto: an idle tower (one too slow to earn an utterance) is measured again after `seconds`
 * (tests and benchmarks; 0, the default: 50 times what one utterance costs it, within 30 s and 10 min).
 * CLS_ERR_INVALID_ARGUMENT for a negative or non-finite value. */
cls_status cls_trainer_set_remeasure_seconds(cls_trainer *trainer, double seconds);

/* ---- the time estimate before training (engine/train/estimate.c) ---- */

/* What cls_trainer_estimate measures: the training set and the passes of every epoch. */
typedef struct cls_train_estimate_request {
  const cls_utterance *train;      /* the training set, in the order training takes it */
  const int *train_frames;         /* [n_train] each one's feature frames (cls_sample.frames) */
  int n_train;
  const cls_eval_set *evals;       /* the passes after every epoch: the dev sets, then the metrics sets */
  int n_evals;
} cls_train_estimate_request;

/* A tower's part of an epoch. */
typedef struct cls_train_estimate_tower {
  int tower;                       /* its index in the crew */
  int device;                      /* its engine device index (cls_engine_device) */
  double utterances;               /* the utterances it takes in an epoch */
  double epoch_s;                  /* its gradients' time in an epoch */
} cls_train_estimate_tower;

typedef struct cls_train_estimate {
  int64_t steps;                   /* training steps of an epoch */
  int64_t eval_batches;            /* batches of an epoch's dev and metrics passes */
  int timed, eval_timed;           /* of them timed (each after an untimed run of the same batch) */
  double epoch_s;                  /* the crew's time for an epoch's training steps */
  double eval_s;                   /* the dev and metrics passes of an epoch, on the lead tower */
  int epochs;                      /* the options' epochs */
  double run_s;                    /* epochs x (epoch_s + eval_s): early stop can only shorten it */
  int n_towers;
  cls_train_estimate_tower towers[CLS_MAX_TOWERS];
} cls_train_estimate;

/* Times a few steps of the real batches on the trainer's towers and extrapolates an epoch, after
 * cls_trainer_load: the epoch's steps (as the strategy forms them: hybrid's global batch of
 * train_batch_size per tower, sync's and async's of train_batch_size) and the passes' batches (of
 * dev_batch_size) are each weighted by their padded frames (utterances x the longest one's frames);
 * three of each kind, from the smallest to the largest weight, are loaded by the training loader
 * (features, augmentation; each one's loading timed) and run twice, the second run timed: the strategy's
 * own step (every hook off: no summaries, fault injection or replica checks) or async's tower gradient on
 * each tower; a pass's batch (cls_trainer_evaluate, on the lead tower) is timed as a pass of its own and
 * of it twice over, the difference its time and the rest the pass's start. A line time = a + b x weight
 * fitted to each tower's, the crew's, the loading's and the passes' times is summed over the epoch (a
 * step waits for a batch that loads slower than it trains; the epoch for its first). Async's epoch is the steps over the devices'
 * summed rates (the towers of one device share its rate; async's host update is not timed). The towers' parameters, Adam slots, training state and balance feedback are put back as
 * they were, bit for bit, so that training after it computes what it would have without it; nothing is
 * written (a feature cache excepted, which the loader fills as training would). A single process only:
 * CLS_ERR_INVALID_ARGUMENT under --horovod with several ranks, for an empty training set or one smaller
 * than a global batch, or frames missing. */
cls_status cls_trainer_estimate(cls_trainer *trainer, const cls_train_estimate_request *request,
                                cls_train_estimate *out);

#ifdef __cplusplus
}
#endif
#endif
