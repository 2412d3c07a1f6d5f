/* clspeech internal API, train layer: fault injection for the tests of the towers' fault handling (a
 * tower's device failing, a replica drifting), set on a trainer after cls_trainer_create. Not
 * installed; the clspeech command reads it from CLSPEECH_FAULT for the tests. */
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

#ifdef __cplusplus
}
#endif
#endif
