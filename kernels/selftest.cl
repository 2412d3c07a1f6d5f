/* Device self-test kernel (`clspeech devices`): exercises global loads and stores, arithmetic,
 * local memory and barriers, so that a device that computes wrong results is caught before it
 * becomes a tower. The host checks every output. */
#include "common.h"

/* y[i] = a*x[i] + y[i] for i < n; partial[g] = sum of the new y over work-group g (tree reduction
 * in local memory). Launch with a global size that is a multiple of CLS_WG_1D. */
__kernel __attribute__((reqd_work_group_size(CLS_WG_1D, 1, 1)))
void selftest_axpy_sum(const int n, const float a, __global const float *x, __global float *y,
                       __global float *partial) {
  __local float scratch[CLS_WG_1D];
  const int gid = (int)get_global_id(0);
  const int lid = (int)get_local_id(0);
  float v = 0.0f;
  if (gid < n) {
    v = a * x[gid] + y[gid];
    y[gid] = v;
  }
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = CLS_WG_1D / 2; stride > 0; stride >>= 1) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = scratch[0];
}
