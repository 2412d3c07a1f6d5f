/* Adam on the host (see adam_host.h): the kernel's update, written so the compiler vectorises it. */
#include "ops/adam_host.h"

#include <math.h>

void cls_adam_host_update(size_t n, float *restrict param, float *restrict m, float *restrict v,
                          const float *restrict grad, float lr, float beta1, float beta2, float epsilon,
                          cls_adam_state *state) {
  const float alpha = cls_adam_alpha(state, lr), one_b1 = 1.0f - beta1, one_b2 = 1.0f - beta2;
  for (size_t i = 0; i < n; i++) {
    const float g = grad[i];
    float mi = m[i], vi = v[i];
    mi += (g - mi) * one_b1;
    vi += (g * g - vi) * one_b2;
    m[i] = mi;
    v[i] = vi;
    param[i] -= (mi * alpha) / (sqrtf(vi) + epsilon);
  }
  state->beta1_power *= beta1;
  state->beta2_power *= beta2;
  state->step++;
}
