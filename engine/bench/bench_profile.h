/* The recorder behind the bench's step profile (see cls_bench_profile in clspeech/internal/bench.h): attached to
 * a queue (the tower's compute queue of training's step, bench_step.c) through the ops' profiling hook (ops/ops_util.h), it keeps every reported command's
 * event, then sums their device times by op into a cls_bench_profile. Internal to the bench library. */
#ifndef CLS_BENCH_PROFILE_H
#define CLS_BENCH_PROFILE_H

#include "clspeech/internal/bench.h"

typedef struct cls_bench_recorder cls_bench_recorder;

/* Attaches a new recorder to q (a profiling queue). */
cls_status cls_bench_recorder_open(cls_engine *engine, cl_command_queue q, cls_bench_recorder **out);
/* Detaches it and releases its events. */
void cls_bench_recorder_close(cls_bench_recorder *r);

/* Once the queue is finished: *end the latest CL_PROFILING_COMMAND_END of the recorded commands of `group`
 * (0 when none). */
cls_status cls_bench_recorder_group_end(cls_bench_recorder *r, cls_profile_group group, cl_ulong *end);

/* Once the queue is finished: out's rows from the recorded commands (the MFCC's kernels with them, and a
 * row for the rest of mfcc_ms, the span of the MFCC part), GEMMs named by `shapes`; the wait row is
 * wall_ms - the rest.
 * When no GEMM reported an event, out->gemm_estimates from gemm_ms (calls x ms per shape). out->wall_ms
 * and device_ms are the caller's. */
cls_status cls_bench_recorder_rows(cls_bench_recorder *r, double mfcc_ms, const cls_gemm_shape *shapes,
                                   const double *gemm_ms, int n_shapes, cls_bench_profile *out);

#endif
