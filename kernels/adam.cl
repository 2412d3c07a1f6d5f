/* Adam with TensorFlow 1's AdamOptimizer semantics (what DeepSpeech trained with), over one flat
 * parameter buffer. The step's learning rate alpha = lr*sqrt(1-beta2^t)/(1-beta1^t) is computed on
 * the host; epsilon is added outside the bias correction:
 *   m += (g - m)*(1 - beta1);  v += (g*g - v)*(1 - beta2);  theta -= alpha*m / (sqrt(v) + epsilon)
 * (the update forms of TF's ApplyAdam CPU kernel, so that rounding matches it). */
#include "common.h"

__kernel void adam_update(const int n, __global float *param, const int param_off, __global float *m,
                          const int m_off, __global float *v, const int v_off, __global const float *grad,
                          const int grad_off, const float alpha, const float beta1, const float beta2,
                          const float epsilon) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  const float g = grad[grad_off + i];
  float mi = m[m_off + i];
  float vi = v[v_off + i];
  mi += (g - mi) * (1.0f - beta1);
  vi += (g * g - vi) * (1.0f - beta2);
  m[m_off + i] = mi;
  v[v_off + i] = vi;
  param[param_off + i] -= (mi * alpha) / (sqrt(vi) + epsilon);
}
