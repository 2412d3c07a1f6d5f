/* The towers benchmark's steps (bench_towers.c): the training step (train/step.h) that training runs,
 * planned as training plans it (cls_step_plan_default), timed by the wall clock. Internal to
 * engine/bench and its tests (tests/test_step.c compares it with a training epoch). */
#ifndef CLS_BENCH_TOWERS_H
#define CLS_BENCH_TOWERS_H

#include "clspeech/train.h"
#include "data/batch_loader.h"

/* `warm` untimed steps then `runs` timed ones (times[runs], ms, each until every tower's queues are
 * idle) of batch b on the trainer's towers; *last_loss (may be NULL) the last step's mean loss. Each
 * step is an update: the trainer's state moves on. */
cls_status cls_bench_towers_steps(cls_trainer *trainer, const cls_host_batch *b, int warm, int runs, double *times,
                                  double *last_loss);

#endif
