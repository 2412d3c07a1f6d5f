/* Training checkpoints as safetensors files: every parameter under DeepSpeech's variable name, the
 * Adam slots as "<name>/Adam" (m) and "<name>/Adam_1" (v), beta1_power, beta2_power, global_step
 * and learning_rate as DeepSpeech's checkpoints hold them, and the trainer's own state (epoch, best
 * dev loss, random seed) in the metadata. Written atomically; a checkpoint folder keeps DeepSpeech's
 * "train" series (max_to_keep, index file `checkpoint`) and "best_dev" (index `best_dev_checkpoint`). */
#ifndef CLS_CHECKPOINT_H
#define CLS_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "adam.h"
#include "model.h"

typedef struct cls_train_state {
  int64_t global_step;
  int epoch;                       /* epochs completed */
  float learning_rate;
  double best_dev_loss;            /* +inf when there is none yet */
  int epochs_without_improvement;
  uint32_t random_seed;
  cls_adam_state adam;
} cls_train_state;

/* params, m, v: [n] flat host buffers in cls_model_layout order. */
cls_status cls_checkpoint_save(const char *path, const cls_model_config *cfg, const float *params, const float *m,
                               const float *v, const cls_train_state *state, char *err, size_t err_cap);

/* Loads a checkpoint made for the same model shape (any mismatch is an error naming the tensor);
 * m and v may be NULL (evaluation). *state is filled from the file. */
cls_status cls_checkpoint_load(const char *path, const cls_model_config *cfg, float *params, float *m, float *v,
                               cls_train_state *state, char *err, size_t err_cap);

/* Reads n_hidden and n_classes from a checkpoint's metadata, to build the model before loading. */
cls_status cls_checkpoint_peek(const char *path, int *n_hidden, int *n_classes, char *err, size_t err_cap);

/* DeepSpeech's checkpoint folder. Kind "train" or "best_dev": saving writes
 * DIR/<kind>-<global_step>.safetensors, updates the index file (`checkpoint` or
 * `best_dev_checkpoint`) atomically, and for "train" removes the oldest beyond max_to_keep
 * (best_dev keeps one). */
cls_status cls_checkpoint_save_in(const char *dir, const char *kind, int max_to_keep, const cls_model_config *cfg,
                                  const float *params, const float *m, const float *v, const cls_train_state *state,
                                  char *saved_path, size_t path_cap, char *err, size_t err_cap);

/* The path the index of `kind` names, or CLS_ERR_IO when there is none. */
cls_status cls_checkpoint_find(const char *dir, const char *kind, char *path, size_t path_cap, char *err, size_t err_cap);

#endif
