/* Prepares batches ahead of the training step on background threads, so that the device never
 * waits for the disk or the host's augmentations: it decodes each utterance's audio (and, on the host-features path, computes
 * its features through the feature cache and builds the context windows), applies --augment's
 * sample- and signal-domain augmentations to a training batch's audio, pads labels, and hands complete
 * batches over in order through a small ring of slots. A batch's utterances are prepared on several
 * worker threads at once; the batches are the same, bit for bit, whatever their number. */
#ifndef CLS_BATCH_LOADER_H
#define CLS_BATCH_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/data.h"
#include "clspeech/features.h"
#include "features/augment/overlay.h"


typedef struct cls_loader_options {
  const cls_mfcc_tables *tables;  /* the feature configuration (its sample rate is the model's) */
  int n_context;                  /* 9 */
  int host_features;              /* 1: features and windows on the host; 0: decoded audio for the device */
  const char *feature_cache;      /* folder, or NULL/"" (used on the host-features path) */
  int depth;                      /* batches prepared ahead (>= 1) */
  int workers;                    /* threads preparing a batch's utterances: 0 automatic (cls_loader_workers) */
  /* --augment: a training epoch's batches carry each utterance's index in the epoch and its clock
     (augment 0: evaluation sets, never augmented). utts[i] is utterance g(i) = i / index_local *
     index_global + index_first + i % index_local of the epoch's epoch_size (a rank's shard of the
     global batches, or with local = global and first 0 the whole set); its clock is DeepSpeech's,
     (run_epoch + g / epoch_size) / epochs, and the epoch keys the draws. */
  int augment;
  int run_epoch, epochs, epoch_size;
  int index_local, index_global, index_first;
  uint32_t epoch_key;
  /* The augmentations (command-line order) and the run's seed: an augmented batch's decoded audio
     gets the sample- and signal-domain ones here (features/augment/host_pass.h); the rest are the tower's. */
  const cls_augmentation *augs;
  int n_augs;
  uint32_t seed;
  const cls_audio_pool *const *sources; /* [n_augs]: an overlay's decoded source, else NULL (or all NULL) */
  int max_frames; /* a tower's frames per utterance: tempo's cap (features/augment/tempo.h; 0: none) */
} cls_loader_options;

typedef struct cls_host_batch {
  int batch;          /* B */
  int first;          /* index of its first utterance */
  int time;           /* T, frames of the longest utterance */
  int max_label;      /* columns of labels */
  int *frames;        /* [B] */
  float **audio;      /* [B] decoded samples (device-features path) */
  size_t *n_audio;    /* [B] */
  float *windows;     /* [T*B, (2*n_context+1)*n_coeff] time-major (host-features path) */
  int host_windows;   /* 1: the batch carries windows (the host-features path), 0: decoded audio */
  int32_t *labels;    /* [B, max_label], zero padded */
  int32_t *label_len; /* [B] */
  double audio_seconds;
  int augmented;      /* an augmented training batch: the next three are set */
  uint32_t *aug_index; /* [B] each utterance's index in the epoch */
  double *aug_clock;  /* [B] its clock, 0 .. 1 */
  uint32_t aug_epoch; /* the epoch key of the draws */
  cls_error error;    /* status CLS_OK, or the first failing utterance's failure, its text naming the file
                         (entries of the utterances after it are then unspecified, their audio NULL) */
} cls_host_batch;

typedef struct cls_loader cls_loader;

/* The worker threads a loader of batches of batch_size uses for `workers`: that many (at most
 * batch_size), or for 0 the online CPUs, at most 8 and at most batch_size. */
int cls_loader_workers(int workers, int batch_size);
/* Starts loading utts[0..n) in order, batch_size at a time (the last batch may be smaller). */
cls_status cls_loader_start(const cls_utterance *utts, int n, int batch_size, const cls_loader_options *options,
                            cls_loader **out, cls_error *err);
/* The next batch in order (blocks until it is ready), or NULL after the last. */
cls_host_batch *cls_loader_next(cls_loader *loader);
/* Gives a batch's slot back for reuse. */
void cls_loader_done(cls_loader *loader, cls_host_batch *batch);
/* Stops the threads (also when batches are left: a batch being prepared is abandoned after the
 * utterances under way) and frees everything. */
void cls_loader_stop(cls_loader *loader);

#endif
