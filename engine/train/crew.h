/* The crew of towers: the layer of engine/train below the strategies (hybrid.c, sync.c, async.c)
 * and the loop (trainer.c). It owns the towers (a model replica on a device each, model/tower.h) and
 * what they hold in common: the training state every replica shares, the host staging of a whole
 * state (checkpoints), the lead tower (the first one still training, which evaluation and
 * checkpoints read), dropping a tower whose device failed, the fault option's injection, the serial
 * warm-up step, the placement log, the replica check, and the helpers every strategy's epoch uses
 * (loader start, progress report, non-finite warning, checkpoint and time-limit clocks).
 *
 * It may call model/, data/, features/ and device/; it knows nothing of the strategies or the loop.
 * Strategies include this header (and their own step header), never trainer.c's internals. */
#ifndef CLS_CREW_H
#define CLS_CREW_H

#include <pthread.h>

#include "clspeech/internal/train.h"
#include "clspeech/train.h"
#include "device/engine.h"
#include "model/tower.h"
#include "train/augment_sources.h"
#include "train/summaries.h"
#include "train/train_state.h"
#include "train/world.h"

/* A tower's seat, with the per-tower scratch the strategies' threads work in and the balance
 * feedback's state, which the step (step.h) reads and updates across steps and epochs. */
typedef struct cls_crew_slot {
  cls_tower *tower;          /* NULL once dropped */
  int index;                 /* position in the crew (stable) */
  float *grad;               /* host copy of the tower's gradient [n_params] */
  float *losses;             /* [capacity] the losses of a batch of the tower's own (async) */
  double speed;              /* utterance-frames per second, recent average (0: not measured yet) */
  double probe_speed;        /* --balance auto: frames/s of the warm-up's timed probe (0: none), the
                                first step's figure, comparable between towers only */
  int planned;               /* --balance auto: this tower's share of the next global batch */
  double idle_until_ms;      /* --balance auto, a tower given no share: when it is measured again (0: not idle) */
  bool remeasured;           /* ... this step gives it one utterance to measure it again */
  bool stale;                /* ... its replica skipped the updates while idle: brought up to date from the
                                lead (cls_crew_refresh) before it works again; never the lead */
} cls_crew_slot;

typedef struct cls_crew {
  cls_engine *e;
  cls_train_options o;       /* the trainer's options (read only) */
  cls_mfcc_tables *tables;
  int max_batch, max_frames, max_label;
  int capacity;              /* utterances a tower takes in one chunk */
  size_t n_params;
  int n_towers;
  cls_crew_slot *towers;     /* [n_towers] */
  /* Host staging of a whole training state, [n_params] each: the parameters and Adam's m and v on
     their way between a checkpoint file and the towers. The async strategy keeps its master copy
     here during an epoch (its checkpoints save a copy of it, cls_crew_save_copy). */
  float *params, *m, *v;
  /* The replica check's own scratch [n_params] each: the lead's parameters and another tower's
     (NULL with one tower or --replica_check_steps 0). */
  float *check_lead, *check_other;
  cls_train_state state;     /* step, learning rate, Adam's powers, epochs, dev-loss record: one for every replica */
  double last_save_ms;       /* when the last checkpoint was saved (--checkpoint_secs) */
  double deadline_ms;        /* max_train_seconds as a cls_now_ms() time (0: none) */
  int out_of_time;
  int64_t steps_skipped;     /* this run's steps not applied for a non-finite loss (cls_crew_warn_nonfinite) */
  cls_world *world;          /* the processes training together (--horovod), or this one alone */
  double remeasure_s;        /* --balance auto: an idle tower's wait before it is measured again (0: the rule) */
  cls_train_fault fault;     /* the fault to inject (cls_trainer_set_fault; kind CLS_FAULT_NONE: none) */
  int fault_fired;           /* the fault has fired (once) */
  cls_summaries *summaries;  /* TensorBoard summaries of the training run (the loop opens them; NULL: none) */
  cls_augment_sources sources; /* --augment overlay's decoded source audio */
  pthread_mutex_t fault_lock;
} cls_crew;

/* Creates n_devices * options->towers_per_device towers (1 .. CLS_MAX_TOWERS) on devices[] for
 * chunks of up to `capacity` utterances (max_batch, or twice train_batch_size with several towers,
 * so that the balancer can shift work), max_frames frames and max_label labels; logs the placement
 * under options->log_placement, and with several towers runs one tiny step on each in turn (CLBlast
 * 1.5.3 corrupts its program cache when two threads make a device's first calls at once,
 * CNugteren/CLBlast#486). The parameters are uninitialised. */
cls_status cls_crew_create(cls_engine *engine, const int *devices, int n_devices, const cls_train_options *options,
                           int max_batch, int max_frames, int max_label, cls_crew **out);
void cls_crew_destroy(cls_crew *crew);

/* Towers still training. */
int cls_crew_count(const cls_crew *crew);
/* The first tower still training whose replica is up to date, or NULL. */
cls_crew_slot *cls_crew_lead(cls_crew *crew);
/* A stale tower's replica (parameters, Adam's m and v) made the lead's again, through the crew's host
   staging; a tower that is not stale is left as it is. */
cls_status cls_crew_refresh(cls_crew *crew, cls_crew_slot *slot);
/* CLS_ERR_NO_DEVICE: "no tower is left to train on". */
cls_status cls_crew_no_tower(cls_crew *crew);
/* CLS_ERR_NO_DEVICE: "every tower has failed", naming the last error: `last`, or when NULL the engine's error
   text (copied first, since cls_fail writes there). */
cls_status cls_crew_all_failed(cls_crew *crew, const char *last);
/* 1 when a tower's status is a device fault, which drops the tower: an OpenCL or CLBlast call failed, the
   device's memory is exhausted, a kernel failed to build, the self-test failed. 0 for everything else
   (the input's errors, host memory, files), which stops the run with the tower kept. */
int cls_crew_is_device_fault(cls_status status);
/* Drops a tower after a device fault, with a warning naming it, its device, the step and `what` (which
   may be the tower's own error text: it is told before the tower is destroyed). */
void cls_crew_drop(cls_crew *crew, cls_crew_slot *slot, const char *what);
/* Returns `status` of a tower's call; when it failed, the tower's error text (cls_tower_error) is copied
   into the engine's error, the one place the caller of cls_trainer_* reads. For calls on the caller's
   thread; a tower working on a thread of its own is read after the join. */
cls_status cls_crew_tower_status(cls_crew *crew, cls_crew_slot *slot, cls_status status);

/* The fault option's "fail": the first time tower `slot` works at or after the fault's step,
 * returns the injected error of the fault's status, CLS_ERR_OPENCL unless it names another (text in the
 * tower's own error, cls_tower_error), else CLS_OK.
 * Thread-safe. */
cls_status cls_crew_injected_failure(cls_crew *crew, cls_crew_slot *slot, int64_t step);
/* The fault option's "perturb": once the global step has reached the fault's, changes one
 * parameter of the tower's replica (once). */
cls_status cls_crew_perturb_if_due(cls_crew *crew);
/* Compares every live replica's parameters with the lead's, bit for bit: CLS_ERR_DIVERGED naming
 * the tower, its device and the first difference. */
cls_status cls_crew_check_replicas(cls_crew *crew);

/* The replica check across ranks: every rank's checksum of its lead tower's parameters; CLS_ERR_DIVERGED
 * naming the ranks and hosts that differ from rank 0. Collective. */
cls_status cls_crew_check_ranks(cls_crew *crew);
/* Rank 0's state (parameters, Adam slots and crew->state) onto every rank's towers; `status` is rank 0's
 * outcome of making it (a load), shared first so that the other ranks fail too; with_state 0 (the same on
 * every rank) shares only that. Collective. */
cls_status cls_crew_share_state(cls_crew *crew, cls_status status, int with_state);

/* The lead tower's state into host buffers (any may be NULL). */
cls_status cls_crew_read_state(cls_crew *crew, float *params, float *m, float *v);
/* A state onto every live tower (m, v may be NULL: kept). */
cls_status cls_crew_write_state(cls_crew *crew, const float *params, const float *m, const float *v);
/* Saves a "train" or "best_dev" checkpoint of the lead tower's state with crew->state, through the
 * staging buffers, and restarts the --checkpoint_secs clock (no-op without a save directory, or on
 * ranks other than 0). */
cls_status cls_crew_save(cls_crew *crew, const char *kind);
/* Saves a checkpoint of params, m, v and state (a copy of a state; the clock is the caller's); a failure's
 * text goes to `err` (the engine's error on the caller's thread; a worker's own elsewhere). */
cls_status cls_crew_save_copy(cls_crew *crew, const char *kind, const float *params, const float *m, const float *v,
                              const cls_train_state *state, cls_error *err);
/* 1 when --checkpoint_secs asks for a train checkpoint now. */
int cls_crew_checkpoint_due(const cls_crew *crew);
/* 1 (and out_of_time set) once the training time limit has passed (several ranks: once a step's
 * reduction said that one rank's had). */
/* Whether this rank's clock has passed max_train_seconds. */
int cls_crew_deadline_passed(const cls_crew *crew);
int cls_crew_out_of_time(cls_crew *crew);

/* Starts a batch loader over u[0 .. n) in batches of `batch` with the crew's feature settings. */
cls_status cls_crew_start_loader(cls_crew *crew, const cls_utterance *u, int n, int batch, int depth, cls_loader **l);
/* The same for a training epoch (run epoch `epoch` of --epochs): its batches carry what --augment draws
 * from (batch_loader.h), u[i] being utterance i / local * global + first + i % local of the epoch. */
cls_status cls_crew_start_train_loader(cls_crew *crew, int epoch, const cls_utterance *u, int n, int batch, int depth,
                                       int local, int global, int first, cls_loader **l);
/* Calls the progress callback (if any) with a pass's counts so far. */
void cls_crew_report(cls_progress_fn fn, void *user, const char *phase, const char *set, int epoch, int64_t steps,
                     int64_t total, double loss_sum, double t0, double audio, int finished);
/* After a step's update (crew->state.global_step counted): its summaries, when the crew has them
 * (crew->summaries): the step's scalars (loss, learning rate, audio_s over wall_s, the towers' parts)
 * and, when due, the variables' statistics: with host_grad NULL from the lead tower, which holds the
 * updated parameters and the gradient it applied (hybrid, sync); else on the host from the staging
 * parameters and host_grad (async's master copy and the gradient it applied). */
cls_status cls_crew_summarize_step(cls_crew *crew, double loss, double audio_s, double wall_s,
                                   const cls_tower_summary *towers, int n_towers, const float *host_grad);
/* Logs the files of a batch whose loss is not finite (the step is not applied) and counts the step
 * in steps_skipped. */
void cls_crew_warn_nonfinite(cls_crew *crew, const cls_host_batch *b, const float *losses, const cls_utterance *u);

#endif
