/* The statistics op plan: a tensor's summary statistics (base/histogram.h: sum and sum of squares
 * about a shift, min, max, and counts in TensorFlow's default histogram buckets) reduced on the
 * device by kernels/summary.cl, so that a summary reads back a few thousand numbers per tensor (four
 * moments per work-group and 1551 bucket counts) instead of the tensor. One plan per device, with
 * room for `slots` tensors between two reads; one host thread at a time uses it. Internal to the
 * engine (the tower, model/tower.h, uses it for training summaries). */
#ifndef CLS_STATS_H
#define CLS_STATS_H

#include "base/histogram.h"
#include "clspeech/ops.h"

typedef struct cls_stats_plan cls_stats_plan;

/* A plan for device `device` with `slots` (>= 1) result slots. */
cls_status cls_stats_create(cls_engine *engine, int device, int slots, cls_stats_plan **out);
void cls_stats_destroy(cls_stats_plan *plan);
/* Where the failures of enqueue and read go (default: the engine's error; see cls_dense_set_error). */
void cls_stats_set_error(cls_stats_plan *plan, cls_error *err);

/* Enqueues the statistics of x[0 .. n) (1 <= n < 2^31) into `slot` (0 .. slots-1), replacing what the
 * slot held. The queue must belong to the plan's device. */
cls_status cls_stats_enqueue(cls_stats_plan *plan, cl_command_queue queue, int slot, cls_buf x, size_t n);

/* Waits for the queue and reads slots 0 .. n_slots-1 into out[n_slots] (one blocking read). */
cls_status cls_stats_read(cls_stats_plan *plan, cl_command_queue queue, int n_slots, cls_tensor_stats *out);

#endif
