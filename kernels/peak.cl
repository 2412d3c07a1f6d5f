/* Device peak measurements for `clspeech bench` (engine/bench_device.c): fused multiply-add
 * throughput and device memory copy bandwidth. Nothing here is used by training.
 *
 * peak_fma4 / peak_fma8 / peak_fma16: every work-item runs `iters` rounds of 8 independent FMA chains
 * on float4 (GPUs: one lane per work-item, the chains hide the latency) or float8 / float16 (CPUs:
 * PoCL and other CPU drivers turn them into whole SIMD registers, since they cannot vectorise across
 * work-items around an inner loop; float8 for AVX2, whose 16 registers cannot hold 8 float16 chains
 * and the two constants without spilling, float16 for AVX-512). Per round: 8 chains x width lanes x
 * 2 flops. The result is written so that the compiler cannot drop the loop; x = fma(x, a, b) with
 * |a| < 1 stays finite and normal. */
#include "common.h"

#define PEAK_ROUND(x, a, b) \
  x##0 = fma(x##0, a, b);   \
  x##1 = fma(x##1, a, b);   \
  x##2 = fma(x##2, a, b);   \
  x##3 = fma(x##3, a, b);   \
  x##4 = fma(x##4, a, b);   \
  x##5 = fma(x##5, a, b);   \
  x##6 = fma(x##6, a, b);   \
  x##7 = fma(x##7, a, b);

__kernel void peak_fma4(__global float *out, const int iters, const float a, const float b) {
  const float s = (float)get_global_id(0) * 1e-9f;
  float4 x0 = (float4)(s, s + 0.1f, s + 0.2f, s + 0.3f), x1 = x0 + 0.01f, x2 = x0 + 0.02f, x3 = x0 + 0.03f;
  float4 x4 = x0 + 0.04f, x5 = x0 + 0.05f, x6 = x0 + 0.06f, x7 = x0 + 0.07f;
  const float4 va = (float4)(a), vb = (float4)(b);
  for (int i = 0; i < iters; i++) {
    PEAK_ROUND(x, va, vb)
  }
  float4 sum = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
  out[get_global_id(0)] = sum.x + sum.y + sum.z + sum.w;
}

__kernel void peak_fma8(__global float *out, const int iters, const float a, const float b) {
  const float s = (float)get_global_id(0) * 1e-9f;
  float8 x0 = (float8)(s) + (float8)(0.0f, 0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f, 0.07f);
  float8 x1 = x0 + 0.001f, x2 = x0 + 0.002f, x3 = x0 + 0.003f, x4 = x0 + 0.004f, x5 = x0 + 0.005f;
  float8 x6 = x0 + 0.006f, x7 = x0 + 0.007f;
  const float8 va = (float8)(a), vb = (float8)(b);
  for (int i = 0; i < iters; i++) {
    PEAK_ROUND(x, va, vb)
  }
  float8 s8 = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
  float4 s4 = s8.lo + s8.hi;
  out[get_global_id(0)] = (s4.x + s4.y) + (s4.z + s4.w);
}

__kernel void peak_fma16(__global float *out, const int iters, const float a, const float b) {
  const float s = (float)get_global_id(0) * 1e-9f;
  float16 x0 = (float16)(s) + (float16)(0.0f, 0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f, 0.07f, 0.08f, 0.09f, 0.10f,
                                         0.11f, 0.12f, 0.13f, 0.14f, 0.15f);
  float16 x1 = x0 + 0.001f, x2 = x0 + 0.002f, x3 = x0 + 0.003f, x4 = x0 + 0.004f, x5 = x0 + 0.005f;
  float16 x6 = x0 + 0.006f, x7 = x0 + 0.007f;
  const float16 va = (float16)(a), vb = (float16)(b);
  for (int i = 0; i < iters; i++) {
    PEAK_ROUND(x, va, vb)
  }
  float16 s16 = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
  float8 s8 = s16.lo + s16.hi;
  float4 s4 = s8.lo + s8.hi;
  out[get_global_id(0)] = (s4.x + s4.y) + (s4.z + s4.w);
}

/* dst[i] = src[i] for i < n (float4 elements): n*16 bytes read and n*16 written. */
__kernel void peak_copy(__global const float4 *src, __global float4 *dst, const int n) {
  const int i = (int)get_global_id(0);
  if (i < n) dst[i] = src[i];
}
