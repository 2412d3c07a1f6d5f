/* Adam (TF1 AdamOptimizer semantics, the same update forms as kernels/adam.cl) on host buffers:
 * the asynchronous strategy keeps the parameters and Adam slots on the host and applies each
 * tower's gradient there as it arrives. */
#ifndef CLS_ADAM_HOST_H
#define CLS_ADAM_HOST_H

#include <stddef.h>

#include "clspeech/ops.h"

/* param, m, v: [n] updated in place; grad [n]; advances state (powers and step). */
void cls_adam_host_update(size_t n, float *param, float *m, float *v, const float *grad, float lr, float beta1,
                          float beta2, float epsilon, cls_adam_state *state);

#endif
