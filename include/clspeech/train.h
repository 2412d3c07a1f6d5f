/* clspeech public API, train layer: training options with DeepSpeech 0.9's defaults, the trainer
 * (towers on every selected device, strategies, DeepSpeech's epoch rules, checkpoints, evaluation
 * passes) and its progress reports. */
#ifndef CLSPEECH_TRAIN_H
#define CLSPEECH_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "data.h"
#include "features.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- trainer ---- */
/* The training loop with DeepSpeech 0.9's rules: epochs over the
 * size-sorted training set, dev evaluation every epoch (step-weighted over dev sets), train and
 * best_dev checkpoints, --checkpoint_secs, reduce-on-plateau (reload best, then reduce) and early
 * stop; loading by --load_train auto|best|last|init; and evaluation passes that hand each batch's
 * logits to the caller for decoding. Training runs on one or more towers (a model replica each)
 * under the hybrid, sync or async strategy (engine/train/: trainer.c the loop, crew.c the towers,
 * hybrid.c, sync.c and async.c the strategies). Messages go through the engine's log callback;
 * progress through the caller's callback. */

/* The most towers one trainer drives. */
#define CLS_MAX_TOWERS 64

/* How the towers share the work of a step. */
typedef enum cls_strategy {
  CLS_STRATEGY_HYBRID, /* DeepSpeech's: the global batch split between the towers, one update of the averaged
                          gradient on every replica */
  CLS_STRATEGY_SYNC,   /* one tower at a time takes a whole batch */
  CLS_STRATEGY_ASYNC   /* each tower pulls, computes and pushes on its own; the host applies each gradient */
} cls_strategy;

/* Hybrid's split of the global batch between the towers. */
typedef enum cls_balance {
  CLS_BALANCE_AUTO, /* adjusted step by step until the towers finish together */
  CLS_BALANCE_EQUAL /* equal counts, as DeepSpeech */
} cls_balance;

/* cls_load_mode (--load_train, --load_evaluate) is the model layer's: see clspeech/model.h. */

/* Names ("hybrid", "sync", "async"; "auto", "equal") to values:
 * CLS_OK, or CLS_ERR_INVALID_ARGUMENT (and *out unchanged) for any other string or NULL. */
cls_status cls_strategy_parse(const char *name, cls_strategy *out);
cls_status cls_balance_parse(const char *name, cls_balance *out);
/* Values to names ("?" for a value out of range). */
const char *cls_strategy_name(cls_strategy strategy);
const char *cls_balance_name(cls_balance balance);

typedef struct cls_train_options {
  cls_model_config model;
  cls_mfcc_config features;
  int train_batch_size, dev_batch_size, test_batch_size;
  int epochs;
  float learning_rate, beta1, beta2, epsilon;
  float dropout[6];                 /* DeepSpeech's dropout[0..5] */
  uint32_t random_seed;
  const char *load_checkpoint_dir;  /* where to load from */
  const char *save_checkpoint_dir;  /* where to save to */
  int checkpoint_secs;              /* 0: no time-based train checkpoints */
  int max_to_keep;
  cls_load_mode load_train;         /* auto, best, last or init */
  cls_load_mode load_evaluate;      /* auto, best or last */
  bool force_initialize_learning_rate;
  bool load_cudnn;                  /* a TensorFlow CudnnLSTM checkpoint: its LSTM's missing Adam slots start at zero */
  /* DeepSpeech's --drop_source_layers (transfer learning), 0 .. CLS_MODEL_MAX_DROP: when training loads a
     checkpoint, the last N of layer_2, layer_3, the LSTM, layer_5, layer_6 are made afresh (a fresh
     model's values for random_seed, zero Adam slots) and the rest loaded; with the output layer dropped
     (N >= 1) the checkpoint may be of another alphabet (model.n_classes). See cls_trainer_load. */
  int drop_source_layers;
  bool reduce_lr_on_plateau;
  int plateau_epochs;
  float plateau_reduction;
  bool early_stop;
  int es_epochs;
  float es_min_delta;
  bool host_features;               /* features on the host (else on the device) */
  const char *feature_cache;        /* with host_features: each file's features cached here */
  /* --augment (DeepSpeech's, clspeech/features.h), in command-line order; training sets only, on the
     device feature path. n_augment 0: none. Kept by pointer: the array must outlive the trainer. With
     host_features too, the augmented training set is featurised on the device all the same (never
     through feature_cache) and host_features applies to the sets that are not augmented. */
  const cls_augmentation *augment;
  int n_augment;
  /* Towers (see tower.h): one per selected device, towers_per_device on each. */
  cls_strategy strategy;            /* hybrid (0, the default), sync or async */
  cls_balance balance;              /* auto (0, the default) or equal: hybrid's split of the global batch */
  int towers_per_device;            /* 1 .. 64 */
  int replica_check_steps;          /* compare the replicas every N steps (0: never) */
  bool overlap_reduction;           /* read each layer's gradient back as its backward pass ends (else after
                                       the whole pass) */
  bool log_placement;               /* log each tower's device, queues, programs, share and buffers */
  double max_train_seconds;         /* > 0: stop training after a step once this much wall time passed */
  /* TensorBoard summaries (engine/train/summaries.h): event files in summary_dir/train, /dev and
     /metrics; every step's losses and learning rate, and every summary_steps global steps each
     variable's mean, stddev, max, min and histograms of its values and of the applied gradient. */
  const char *summary_dir;          /* NULL or "": no summaries */
  int summary_steps;                /* the variables' statistics every N global steps (0: never) */
  /* Several processes (DeepSpeech's --horovod): every process of the MPI job (cls_world_start) trains
     its own towers; see "Several processes" below. false: this process alone. */
  bool horovod;
} cls_train_options;

/* DeepSpeech 0.9's defaults (its flags.py) for a model of n_hidden units and n_classes outputs
 * (alphabet + blank): batch sizes 1, 75 epochs, Adam lr 0.001 / 0.9 / 0.999 / 1e-8, dropout 0.05 on
 * layers 1, 2, 3 and 5, relu_clip 20, seed 4568, checkpoints every 600 s keeping 5, load auto,
 * plateau 10 epochs x 0.1 and early stop 25 epochs / 0.05 (both off), 16 kHz features on the device;
 * towers: hybrid, auto balance, replica checks every 100 steps, overlapped read-back; the variables'
 * summaries every 100 steps once a summary folder is given. No folders. */
cls_train_options cls_train_options_default(int n_hidden, int n_classes);
/* Each member with bounds in the option table (clspeech/internal/train_options.def, its FIELD rows:
 * batch sizes, epochs, Adam's settings, relu_clip, the feature window and step, checkpoint and plateau
 * counts, towers, replica checks, summaries) within them: CLS_OK, else CLS_ERR_INVALID_ARGUMENT naming
 * the first member outside and its range in *err. */
cls_status cls_train_options_check(const cls_train_options *options, cls_error *err);

/* The longest utterance, in frames, that a tower of these options holds on `device` with batches of
 * max_batch utterances of up to max_label labels: the device's global memory (at most memory_cap bytes
 * when that is > 0; shared by options->towers_per_device towers) less the parameters, gradient and Adam
 * slots, over what a frame of each utterance adds (cls_model_frame_bytes, plus the audio when the
 * features are made on the device); also no LSTM workspace past the device's largest allocation or
 * 2^31 floats. An estimate (a tower also holds small buffers), for skipping utterances a device cannot
 * train on before building towers. `why` (may be NULL) receives a sentence naming the device and the
 * figures, with CLS_OK, or CLS_ERR_DEVICE_OUT_OF_MEMORY when not even one frame fits; it is cleared when
 * the device is unknown. 0 when not even one frame fits or the device is unknown; a device that reports
 * no memory size is limited only by its largest allocation and the indices. */
int64_t cls_train_frame_limit(const cls_engine *engine, int device, const cls_train_options *options, int max_batch,
                              int max_label, uint64_t memory_cap, cls_error *why);

typedef struct cls_eval_set {
  const char *name;                 /* e.g. the CSV path */
  const cls_utterance *utts;
  int n;
  const int *frames;                /* [n] each utterance's feature frames (cls_sample.frames), or NULL: an
                                       utterance of more frames than the trainer's max_frames is evaluated
                                       streamed (cls_trainer_evaluate); NULL: every one fits */
} cls_eval_set;

typedef struct cls_progress {
  const char *phase;                /* "Training", "Validation", "Metrics" or "Test" */
  const char *set;                  /* the data set's name */
  int epoch;                        /* counted from 0 in this run */
  int64_t steps, total_steps;       /* done / expected in this pass */
  double mean_loss;                 /* mean of the step losses so far */
  double elapsed_s, audio_s;        /* wall time and audio seconds of this pass */
  int finished;                     /* the pass is over */
} cls_progress;

typedef void (*cls_progress_fn)(void *user, const cls_progress *progress);

/* Per-batch results of an evaluation pass: logits [time*batch, n_classes] time-major on the host,
 * frames per utterance, per-utterance losses, for utterances first .. first+batch-1. */
typedef void (*cls_batch_fn)(void *user, int first, int batch, int time, const float *logits, const int *frames,
                             const float *losses);

typedef struct cls_trainer cls_trainer;

/* A trainer with a tower on each of devices[0 .. n_devices) (options->towers_per_device on each),
 * sized for batches of up to max_batch utterances per tower, max_frames frames and max_label
 * labels. Under "hybrid" the global batch is train_batch_size per tower, as in DeepSpeech.
 * Between 1 and CLS_MAX_TOWERS towers in all. Parameters are uninitialised until cls_trainer_load.
 * Options outside their ranges are CLS_ERR_INVALID_ARGUMENT (cls_train_options_check's text). */
cls_status cls_trainer_create(cls_engine *engine, const int *devices, int n_devices, const cls_train_options *options,
                              int max_batch, int max_frames, int max_label, cls_trainer **out);
/* Towers still training (a tower whose device fails is dropped). */
int cls_trainer_tower_count(const cls_trainer *trainer);
void cls_trainer_destroy(cls_trainer *trainer);

/* Initialises or loads the parameters: `mode` auto (best_dev, else last train, else fresh), best,
 * last, init (fresh: Glorot-uniform weights, zero biases, seeded by random_seed), or for evaluation
 * auto/best/last without falling back to fresh (`evaluation` 1; init is CLS_ERR_INVALID_ARGUMENT).
 * The checkpoint must be of the model's n_hidden and, unless training drops the output layer
 * (options->drop_source_layers >= 1), of its n_classes: a mismatch is CLS_ERR_IO naming the file and
 * both sizes. Training with drop_source_layers N >= 1 (a transfer, as DeepSpeech 0.9's
 * --drop_source_layers) loads all but the dropped layers, makes those afresh, and keeps the source's
 * global step, epoch count, learning rate (unless force_initialize_learning_rate) and Adam powers as
 * DeepSpeech does, while the dev-loss record (best_dev_loss, epochs without improvement) starts anew
 * and dropout takes options->random_seed: the source's dev losses were of another model. Evaluation
 * and the reload of the best checkpoint on a plateau never drop layers. */
cls_status cls_trainer_load(cls_trainer *trainer, cls_load_mode mode, int evaluation);
/* cls_trainer_load from the checkpoint folder `dir` (cls_trainer_load's is options->load_checkpoint_dir):
 * e.g. the test pass after training, of the checkpoints training saved in save_checkpoint_dir. */
cls_status cls_trainer_load_from(cls_trainer *trainer, const char *dir, cls_load_mode mode, int evaluation);

/* Trains for options->epochs epochs (dev sets may be empty), writing summaries when
 * options->summary_dir is set. */
cls_status cls_trainer_train(cls_trainer *trainer, const cls_utterance *train, int n_train, const cls_eval_set *dev,
                             int n_dev, cls_progress_fn progress, void *user);

/* cls_trainer_train with loss-only sets (DeepSpeech's --metrics_files) evaluated after the dev sets
 * every epoch (unless early stop ends training there), at dev_batch_size; they decide nothing and
 * appear in the progress reports ("Metrics") and the summaries (summary_dir/metrics) only. */
cls_status cls_trainer_train_with_metrics(cls_trainer *trainer, const cls_utterance *train, int n_train,
                                          const cls_eval_set *dev, int n_dev, const cls_eval_set *metrics,
                                          int n_metrics, cls_progress_fn progress, void *user);

/* A streamed utterance's logits during evaluation: utterance `index` of the set, frames first ..
 * first+n, [n, n_classes] row-major (before softmax), valid during the call only; then one last call
 * with n 0, logits NULL and loss pointing to its CTC loss. */
typedef void (*cls_chunk_eval_fn)(void *user, int index, int64_t first, int n, const float *logits, const float *loss);

/* One pass of cls_trainer_evaluate: the set, its batches and what the caller is told. */
typedef struct cls_trainer_eval_request {
  const cls_eval_set *set;
  int batch_size;                   /* utterances per batch on the lead tower: 1 .. the trainer's max_batch */
  const char *phase;                /* the progress reports' phase, e.g. "Validation" or "Test" */
  cls_batch_fn on_batch;            /* may be NULL: each batch's logits, frames and losses */
  cls_chunk_eval_fn on_chunk;       /* may be NULL: each streamed utterance's logits, chunk by chunk */
  void *batch_user;                 /* on_batch's and on_chunk's */
  cls_progress_fn progress;         /* may be NULL: a report per step, and one when the pass is finished */
  void *progress_user;
} cls_trainer_eval_request;

/* What a pass measured. */
typedef struct cls_trainer_eval_result {
  double mean_loss;                 /* the mean of the step losses (0 without a step) */
  int64_t steps;                    /* batches, and one per streamed utterance */
} cls_trainer_eval_result;

/* One pass without dropout over request->set; *result (may be NULL) its mean step loss and steps.
 * Whole utterances in batches of up to batch_size on the lead tower, whose device buffers
 * cls_trainer_create sized for max_frames x max_batch, with host logits [max_frames * max_batch,
 * n_classes] and the loader's batches ahead; memory is bounded by the longest utterance that runs in
 * a batch, which the caller keeps within the devices (cls_train_frame_limit). An utterance of more
 * frames than the trainer holds (set->frames[i] > max_frames) is instead streamed alone, in chunks of
 * max_frames frames, through a forward-only replica (cls_infer, model.h) on the lead tower's device
 * holding the lead tower's parameters, the LSTM state carried across chunks, its CTC loss computed on
 * the host from each chunk's logits (engine/ops/ctc_host.c: the same loss as the device op, whatever
 * the chunking), its logits handed to on_chunk, counted as a step of one utterance. on_batch's `first`
 * indexes the set; a batch never spans a streamed utterance. CLS_ERR_INVALID_ARGUMENT for no set or a
 * batch size outside 1 .. max_batch. */
cls_status cls_trainer_evaluate(cls_trainer *trainer, const cls_trainer_eval_request *request,
                                cls_trainer_eval_result *result);

/* Where training stands: DeepSpeech's global_step and learning rate (after any reduce-on-plateau),
 * the epochs completed (across resumed runs: a checkpoint carries them), and the dev-loss rules'
 * record (early stop and reduce-on-plateau). A copy, taken when called; after cls_trainer_load it
 * holds what the checkpoint held (or a fresh start's: step 0, epoch 0, best_dev_loss +inf). */
typedef struct cls_train_counters {
  int64_t global_step;             /* updates applied */
  int epoch;                       /* epochs completed */
  float learning_rate;
  double best_dev_loss;            /* the lowest mean dev loss so far; +inf before the first */
  int epochs_without_improvement;  /* consecutive dev passes not es_min_delta below the best */
} cls_train_counters;

cls_train_counters cls_trainer_counters(const cls_trainer *trainer);
/* The parameters, read back from the device into host memory [n] (cls_model_layout order). */
cls_status cls_trainer_read_params(cls_trainer *trainer, float *params, size_t n);
size_t cls_trainer_param_count(const cls_trainer *trainer);

/* ---- several processes (--horovod; engine/train/world.c) ----
 * Under mpirun each process (rank) trains its own towers and the ranks act as one trainer: each step
 * every rank reduces its towers' gradients into its host buffer weighted by utterance counts, one
 * MPI_Allreduce sums the buffers and the counts, and every replica applies the global mean; the
 * learning rate applied is the checkpoint's (base) rate times the number of ranks; rank 0's state is
 * broadcast at the start and after a plateau reload; each global batch is split between the ranks
 * (every rank takes the same number of steps); the dev loss is reduced, so that every rank takes the
 * same decisions; only rank 0 writes checkpoints and summaries. Strategies hybrid and sync (async is
 * refused). The frontend starts and stops MPI: */

/* Starts MPI in this process (MPI_THREAD_FUNNELED; MPI errors are returned, not fatal): its rank,
 * the number of ranks and its host name. Without MPI in the build: CLS_ERR_INVALID_ARGUMENT with
 * the packages to install in *err. */
cls_status cls_world_start(int *rank, int *size, char *host, size_t host_cap, cls_error *err);
/* Stops MPI (MPI_Finalize) when it was started. */
void cls_world_stop(void);
/* For the frontend after a fatal error on this rank: tells the other ranks (cls_world_leave), then
 * ends every process of the job with exit status `code` (MPI_Abort; does not return) when MPI is
 * running, else returns at once. The engine never calls it. */
void cls_world_abort(int code);
/* This rank leaves the run with exit status `status`: a notice to every other rank, so that none waits
 * for it in a collective (a rank waiting for one that left before joining that collective gets
 * CLS_ERR_WORLD naming it, within a poll of 0.1 ms). Once per process; cls_world_stop sends status 0
 * when it was not sent. */
void cls_world_leave(int status);
/* 1 when this rank's last CLS_ERR_WORLD or disagreement was seen by every rank at once (the settings'
 * agreement, or ranks at different collectives): each rank then reports it and stops normally. */
int cls_world_failed_together(void);

/* One setting that every rank of a --horovod run must share: its name as the user knows it
 * ("--epochs", "the training set") and its value as text (any length; compared whole, by SHA-256). */
typedef struct cls_world_setting {
  const char *name;
  const char *value;
} cls_world_setting;
#define CLS_WORLD_MAX_SETTINGS 128
/* Collective, before any work: the ranks compare their settings[0 .. n) in one exchange. CLS_OK when
 * every rank's are the same (and at once without MPI, or with one rank); else, on every rank,
 * CLS_ERR_INVALID_ARGUMENT naming the first setting that differs and every rank's value of it (the
 * first 110 bytes), and how many more differ. */
cls_status cls_world_agree(const cls_world_setting *settings, int n, cls_error *err);

#ifdef __cplusplus
}
#endif
#endif
