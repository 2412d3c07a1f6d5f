/* The Adam optimizer op (TF1 AdamOptimizer semantics) over a flat parameter buffer: one kernel
 * updates parameters and both moment slots. The beta powers live in cls_adam_state, on the host,
 * so that checkpoints can store them as DeepSpeech's beta1_power and beta2_power. */
#ifndef CLS_ADAM_H
#define CLS_ADAM_H

#include <stdint.h>

#include "clspeech_ops.h"

typedef struct cls_adam_plan cls_adam_plan;

typedef struct cls_adam_state {
  float beta1_power; /* beta1^t for the next step t (TF's variable: starts at beta1) */
  float beta2_power;
  int64_t step;      /* updates applied so far */
} cls_adam_state;

/* The state before the first update. */
cls_adam_state cls_adam_state_init(float beta1, float beta2);

/* TF1's step learning rate: lr*sqrt(1-beta2_power)/(1-beta1_power), in float32 as TF computes it. */
float cls_adam_alpha(const cls_adam_state *state, float lr);

cls_status cls_adam_create(cls_engine *engine, int device, cls_adam_plan **out);
/* param, m, v: [n] updated in place; grad: [n]. Advances `state` (powers and step) once the
 * update is enqueued. */
cls_status cls_adam_update(cls_adam_plan *plan, cl_command_queue queue, size_t n, cls_buf param, cls_buf m, cls_buf v,
                           cls_buf grad, float lr, float beta1, float beta2, float epsilon, cls_adam_state *state,
                           cl_event *event);
void cls_adam_destroy(cls_adam_plan *plan);

#endif
