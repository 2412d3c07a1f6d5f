/* The trainer's state, one for every replica (crew->state): DeepSpeech's checkpoint variables
 * (global step, learning rate, Adam's powers: model.h's cls_checkpoint_vars) and the loop's own
 * counters (epochs completed, the dev-loss rules' record, the random seed); and how those counters
 * travel in a checkpoint. The checkpoint layer stores them as caller's metadata entries it never
 * reads; this file encodes them under the keys checkpoints have always had ("epoch",
 * "best_dev_loss", "epochs_without_improvement", "random_seed") and validates them on load. */
#ifndef CLS_TRAIN_STATE_H
#define CLS_TRAIN_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/model.h"
#include "train/rules.h"

typedef struct cls_train_state {
  int64_t global_step;
  float learning_rate;
  cls_adam_state adam;
  int epoch;                 /* epochs completed */
  cls_rule_state rules;      /* best dev loss (+inf when none yet), epochs without improvement */
  uint32_t random_seed;      /* dropout's (and the initialisation's, when training started fresh) */
} cls_train_state;

/* cls_checkpoint_save / _save_in with the loop's counters in the metadata. */
cls_status cls_train_checkpoint_save(const char *path, const cls_model_config *cfg, const float *params,
                                     const float *m, const float *v, const cls_train_state *state, cls_error *err);
cls_status cls_train_checkpoint_save_in(const char *dir, const char *kind, int max_to_keep,
                                        const cls_model_config *cfg, const float *params, const float *m,
                                        const float *v, const cls_train_state *state, char *saved_path,
                                        size_t path_cap, cls_error *err);

/* cls_checkpoint_load, then the loop's counters from the metadata: epoch and
 * epochs_without_improvement whole numbers in 0..INT_MAX, best_dev_loss a number (not NaN; "inf"
 * before any dev pass), random_seed a whole number in 0..2^32-1; any other text is an error naming
 * the file and the key. An absent entry reads as a fresh start's: epoch 0, best_dev_loss +inf,
 * 0 epochs without improvement, random seed 4568 (DeepSpeech's default). */
cls_status cls_train_checkpoint_load(const char *path, const cls_model_config *cfg, float *params, float *m, float *v,
                                     cls_train_state *state, cls_error *err);
/* The same without the n_drop dropped layers (cls_checkpoint_load_dropping): their parameters and Adam
 * slots keep what the caller put there. A TensorFlow checkpoint (cls_checkpoint_is_tf) is read by
 * cls_checkpoint_tf_load with load_cudnn (*zeroed, may be NULL: the Adam slots it started at zero), its
 * counters a fresh start's; one that holds no learning_rate gives learning_rate NaN, for the caller to
 * start from its own. */
cls_status cls_train_checkpoint_load_dropping(const char *path, const cls_model_config *cfg, int n_drop, int load_cudnn,
                                              float *params, float *m, float *v, cls_train_state *state, int *zeroed,
                                              cls_error *err);

#endif
