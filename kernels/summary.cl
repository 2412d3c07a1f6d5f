/* Summary statistics of one tensor (a view of a flat buffer) for TensorBoard: the sum and sum of
 * squares about a shift (the tensor's first value, so that the variance does not cancel away), the
 * min and max, and the count of values in each of TensorFlow's 1551 default histogram buckets.
 *
 * Each work-group strides over the tensor, counting buckets in local memory (one uint per bucket,
 * atomic increments) and reducing its moments in a local tree; it then adds its counts to the
 * tensor's histogram (global atomics, only the buckets it hit) and writes its four partial moments,
 * which the host adds up in double (partial[partial_off] holds the shift, then 4 floats per group).
 * The bucket of a value is TF's upper_bound over the limits, found
 * by binary search over `limits`: each double limit rounded up to a float, which for a float value
 * decides exactly as TF's double comparison does (engine/base/histogram.h). NaN and +inf land in the
 * last bucket, -inf in the first.
 *
 * Launch with a global size that is a multiple of CLS_WG_1D, at most `groups` groups. */
#include "common.h"
#include "histogram_buckets.h"

__kernel __attribute__((reqd_work_group_size(CLS_WG_1D, 1, 1)))
void summary_stats(const int n, __global const float *x, const int x_off, __constant float *limits,
                   __global float *partial, const int partial_off, __global uint *hist, const int hist_off) {
  __local uint counts[CLS_HISTO_BUCKETS];
  __local float r_s1[CLS_WG_1D], r_s2[CLS_WG_1D], r_min[CLS_WG_1D], r_max[CLS_WG_1D];
  const int lid = (int)get_local_id(0);
  for (int b = lid; b < CLS_HISTO_BUCKETS; b += CLS_WG_1D) counts[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const float c = x[x_off];
  float s1 = 0.0f, s2 = 0.0f, lo = INFINITY, hi = -INFINITY;
  const int stride = (int)get_global_size(0);
  for (int i = (int)get_global_id(0); i < n; i += stride) {
    const float v = x[x_off + i];
    const float d = v - c;
    s1 += d;
    s2 += d * d;
    lo = fmin(lo, v);
    hi = fmax(hi, v);
    int a = 0, z = CLS_HISTO_BUCKETS;
    while (a < z) {
      const int mid = (a + z) >> 1;
      if (limits[mid] > v)
        z = mid;
      else
        a = mid + 1;
    }
    atomic_inc(&counts[min(a, CLS_HISTO_BUCKETS - 1)]);
  }
  r_s1[lid] = s1;
  r_s2[lid] = s2;
  r_min[lid] = lo;
  r_max[lid] = hi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int width = CLS_WG_1D / 2; width > 0; width >>= 1) {
    if (lid < width) {
      r_s1[lid] += r_s1[lid + width];
      r_s2[lid] += r_s2[lid + width];
      r_min[lid] = fmin(r_min[lid], r_min[lid + width]);
      r_max[lid] = fmax(r_max[lid], r_max[lid + width]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int b = lid; b < CLS_HISTO_BUCKETS; b += CLS_WG_1D)
    if (counts[b]) atomic_add(&hist[hist_off + b], counts[b]);
  if (get_global_id(0) == 0) partial[partial_off] = c;
  if (lid == 0) {
    const int g = partial_off + 1 + 4 * (int)get_group_id(0);
    partial[g] = r_s1[0];
    partial[g + 1] = r_s2[0];
    partial[g + 2] = r_min[0];
    partial[g + 3] = r_max[0];
  }
}
