/* Adam with TensorFlow 1's AdamOptimizer semantics (what DeepSpeech trained with), over one flat
 * parameter buffer. The step's learning rate alpha = lr*sqrt(1-beta2^t)/(1-beta1^t) is computed on
 * the host; epsilon is added outside the bias correction:
 *   m += (g - m)*(1 - beta1);  v += (g*g - v)*(1 - beta2);  theta -= alpha*m / (sqrt(v) + epsilon)
 * (the update forms of TF's ApplyAdam CPU kernel, so that rounding matches it). */
#include "common.h"
#include "work_items.h"

#if CLS_ADAM_PER_ITEM != 8
#error "adam_update takes one float8 of parameters per work-item"
#endif

/* Eight consecutive parameters per work-item, as float8 (whole vector registers on CPU devices, which
 * cannot vectorise across work-items around the early exit; coalesced 32-byte accesses on GPUs); the
 * last work-item takes what is left of n one by one. Every lane computes what the scalar form would. */
#define ADAM_STEP(g, mi, vi, p)                  \
  mi += (g - mi) * (1.0f - beta1);               \
  vi += (g * g - vi) * (1.0f - beta2);           \
  p -= (mi * alpha) / (sqrt(vi) + epsilon);

__kernel void adam_update(const int n, __global float *param, const int param_off, __global float *m,
                          const int m_off, __global float *v, const int v_off, __global const float *grad,
                          const int grad_off, const float alpha, const float beta1, const float beta2,
                          const float epsilon) {
  const int i0 = (int)get_global_id(0) * CLS_ADAM_PER_ITEM;
  if (i0 >= n) return;
  __global float *pp = param + param_off + i0, *mp = m + m_off + i0, *vp = v + v_off + i0;
  __global const float *gp = grad + grad_off + i0;
  if (n - i0 >= CLS_ADAM_PER_ITEM) {
    const float8 g = vload8(0, gp);
    float8 mi = vload8(0, mp), vi = vload8(0, vp), p = vload8(0, pp);
    ADAM_STEP(g, mi, vi, p)
    vstore8(mi, 0, mp);
    vstore8(vi, 0, vp);
    vstore8(p, 0, pp);
    return;
  }
  for (int j = 0; j < n - i0; j++) {
    const float g = gp[j];
    float mi = mp[j], vi = vp[j], p = pp[j];
    ADAM_STEP(g, mi, vi, p)
    mp[j] = mi;
    vp[j] = vi;
    pp[j] = p;
  }
}
