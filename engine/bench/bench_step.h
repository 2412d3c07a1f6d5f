/* Training's step as the benchmarks time it (bench_step.c): a trainer built as `clspeech train` builds
 * one (cls_trainer_create, cls_trainer_load init) on the bench's devices, a synthetic host batch of the
 * bench's shape, and the training step itself (train/step.h, cls_step_run, planned by
 * cls_step_plan_default) run, timed by the wall clock and, once, profiled by op on the first tower's
 * compute queue. Internal to engine/bench and its tests (tests/test_step.c compares the bench's step
 * with a training epoch). */
#ifndef CLS_BENCH_STEP_H
#define CLS_BENCH_STEP_H

#include "clspeech/internal/bench.h"
#include "clspeech/train.h"
#include "data/batch_loader.h"

/* `warm` untimed steps then `runs` timed ones (times[runs], ms, each until every tower's queues are
 * idle) of batch b on the trainer's towers; *last_loss (may be NULL) the last step's mean loss. Each
 * step is an update: the trainer's state moves on. */
cls_status cls_bench_towers_steps(cls_trainer *trainer, const cls_host_batch *b, int warm, int runs, double *times,
                                  double *last_loss);

/* A trainer and its synthetic batch (cls_bench_step_config's). */
typedef struct cls_bench_step cls_bench_step;

cls_status cls_bench_step_open(cls_engine *engine, const int *devices, int n, const cls_bench_step_config *config,
                               cls_bench_step **out);
void cls_bench_step_close(cls_bench_step *s);
/* config->warmups then config->runs steps: out->ms their median, frames, frame_ms and n_params. */
cls_status cls_bench_step_time(cls_bench_step *s, cls_bench_train *out);
/* One more step, every command the ops enqueue on the first tower's compute queue recorded through the
 * ops' profiling hook and summed by op (bench_profile.h): wall_ms from before the step to its towers'
 * queues idle (the host's gradient reduction and Adam's upload inside it, in the wait row); the MFCC
 * row, with device features, the span from a marker before the step to the end of the batch's last
 * MFCC kernel. */
cls_status cls_bench_step_profile(cls_bench_step *s, const cls_gemm_shape *shapes, const double *gemm_ms, int n_shapes,
                                  cls_bench_profile *out);

/* n samples of synthetic speech-band audio at 16 kHz: two tones and a little seeded noise. */
void cls_bench_audio(float *x, size_t n);

#endif
