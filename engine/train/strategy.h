/* The training strategies' common face: each strategy's file (hybrid.c, sync.c, async.c) exports
 * one epoch function of this signature, and the loop (trainer.c) picks it from cls_strategy in one
 * table. A strategy works on the crew (crew.h) and never on the trainer's internals. A new strategy
 * is a new file, its value in cls_strategy and its name (clspeech/train.h, options.c), its
 * declaration here and its line in trainer.c's table. */
#ifndef CLS_STRATEGY_H
#define CLS_STRATEGY_H

#include "train/crew.h"

/* One epoch (counted from 0 in this run, for progress) over the training set u[0 .. n): steps that
 * advance crew->state, progress through progress(user, ...), and the replicas left holding the
 * trained state (for evaluation and checkpoints). Stops early, with CLS_OK, once
 * cls_crew_out_of_time says so. */
typedef cls_status (*cls_epoch_fn)(cls_crew *crew, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                                   void *user);

cls_status cls_hybrid_epoch(cls_crew *crew, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                            void *user);
cls_status cls_sync_epoch(cls_crew *crew, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                          void *user);
cls_status cls_async_epoch(cls_crew *crew, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                           void *user);

#endif
