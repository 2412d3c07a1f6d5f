/* The number of TensorFlow's default histogram buckets (tensorflow/core/lib/histogram/histogram.cc,
 * InitDefaultBucketsInner): limits growing by 10% from 1e-12 to 1e20 on each side of 0, plus +-DBL_MAX,
 * 774 + 1 + 1 + 1 + 774 = 1551. Shared by the host (engine/base/histogram.h) and the statistics
 * kernel (summary.cl), which keeps one count per bucket in local memory. */
#ifndef CLS_HISTOGRAM_BUCKETS_H
#define CLS_HISTOGRAM_BUCKETS_H

#define CLS_HISTO_BUCKETS 1551

#endif
