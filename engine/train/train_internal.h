/* The trainer's internal state, shared by the files that implement it: trainer.c (loading, saving,
 * evaluation, DeepSpeech's epoch rules), train_parallel.c (the hybrid and sync strategies, the
 * towers' threads, reduction, balance, faults, replica checks) and train_async.c (the async
 * strategy). Not part of the engine's interface. */
#ifndef CLS_TRAIN_INTERNAL_H
#define CLS_TRAIN_INTERNAL_H

#include <pthread.h>

#include "device/engine.h"
#include "model/tower.h"
#include "clspeech/train.h"

enum { STRATEGY_HYBRID, STRATEGY_SYNC, STRATEGY_ASYNC };

typedef struct tower_slot {
  cls_tower *tower;          /* NULL once dropped */
  int index;                 /* position in the trainer's tower list (stable) */
  float *grad;               /* host copy of the tower's gradient [n_params] */
  float *losses;             /* [capacity] async losses */
  double speed;              /* utterance-frames per second, recent average (0: not measured yet) */
  int share, first;          /* this step's utterances */
  int planned;               /* --balance auto: this tower's share of the next global batch */
  double ms;                 /* this step's time */
  cls_status status;
  char err[CLS_ERROR_CAP];
} tower_slot;

typedef struct fault_spec {
  int kind;                  /* 0 none, 1 fail, 2 perturb */
  int tower;
  int64_t step;
  int fired;
} fault_spec;

struct cls_trainer {
  cls_engine *e;
  cls_train_options o;
  int strategy, balance_auto;
  cls_mfcc_tables *tables;
  int max_batch, max_frames, max_label;
  size_t n_params;
  int n_towers;
  tower_slot *towers;
  float *g;                                        /* the reduced gradient of this step: gbuf[parity] */
  float *gbuf[2];                                  /* two, so a step reduces while the last one uploads */
  int parity;
  cl_event uploads[2][64];                         /* per buffer and tower: its last upload (or NULL) */
  float *host_a, *host_b, *host_c;                 /* [n_params] parameters, m, v staging */
  float *losses, *logits;                          /* [global batch], [max_frames*max_batch, C] */
  cls_train_state state;
  double last_save_ms;
  int epoch;                                       /* epoch of this run, for progress */
  fault_spec fault;
  double deadline_ms;                              /* max_train_seconds as a cls_now_ms() time (0: none) */
  int out_of_time;
  /* the reduction of the step in flight */
  pthread_mutex_t lock;
  int n_active;
  const float *reduce_src[64];
  float reduce_w[64];
  size_t arrive_off[16];
  int arrive_count[16], n_arrive_ranges;
};

/* 1 (and out_of_time set) once the training time limit has passed. */
int cls_train_out_of_time(cls_trainer *t);
/* The first tower still training, or NULL. */
tower_slot *cls_train_lead(cls_trainer *t);
/* Saves a "train" or "best_dev" checkpoint from the lead tower (no-op without a save directory). */
cls_status cls_train_save(cls_trainer *t, const char *kind);
/* Saves a checkpoint from host_a/host_b/host_c. */
cls_status cls_train_save_host(cls_trainer *t, const char *kind);
cls_status cls_train_start_loader(cls_trainer *t, const cls_utterance *u, int n, int batch, int depth, cls_loader **l);
void cls_train_report(cls_progress_fn fn, void *user, const char *phase, const char *set, int epoch, int64_t steps,
                      int64_t total, double loss_sum, double t0, double audio, int finished);
/* Logs a non-finite step's files. */
void cls_train_warn_nonfinite(cls_trainer *t, const cls_host_batch *b, const float *losses, const cls_utterance *u);
/* CLSPEECH_FAULT's "fail": the first time tower s works at or after the fault's step, returns the
 * injected device error (text in this thread's error buffer), else CLS_OK. The caller holds t->lock. */
cls_status cls_train_injected_failure(cls_trainer *t, tower_slot *s, int64_t step);
/* Drops a tower after a device fault, with a message naming it and the step. */
void cls_train_drop_tower(cls_trainer *t, tower_slot *s, const char *what);
/* 1 when a tower's status is a device fault (the tower is dropped), 0 for errors of the input. */
int cls_train_is_device_fault(cls_status st);

/* One epoch under the hybrid or sync strategy (train_parallel.c). */
cls_status cls_train_epoch_parallel(cls_trainer *t, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                                    void *user);
/* One hybrid step on a host batch: the towers' gradients, the reduction, Adam on every replica
 * (not applied when the loss is not finite). For benchmarks (train_parallel.c). */
cls_status cls_train_hybrid_step(cls_trainer *t, const cls_host_batch *b);
/* Compares every replica with the lead's (train_parallel.c). */
cls_status cls_train_check_replicas(cls_trainer *t);
/* Logs where each tower lives (train_parallel.c). */
void cls_train_log_placement(cls_trainer *t);
/* Runs one tiny step on each tower in turn, so that no two towers make CLBlast's first calls at once. */
cls_status cls_train_warm_up(cls_trainer *t);
/* One epoch under the async strategy (train_async.c). */
cls_status cls_train_epoch_async(cls_trainer *t, int epoch, const cls_utterance *u, int n, cls_progress_fn progress,
                                 void *user);

#endif
