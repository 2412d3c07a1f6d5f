/* clspeech public API, model layer: DeepSpeech 0.9's network on one device (geometry, parameter
 * layout under DeepSpeech's variable names, forward, CTC loss, backward) and its checkpoints. */
#ifndef CLSPEECH_MODEL_H
#define CLSPEECH_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "features.h"
#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- model ---- */
/* The DeepSpeech 0.9 network on one device (one tower): the parameter layout of the flat parameter
 * buffer under DeepSpeech's variable names, and the forward pass, CTC loss and backward pass
 * assembled from the op plans (dense, LSTM, CTC). Owns the tower's activation buffers; it owns no
 * parameters (the caller's flat buffers are passed in) and does no optimisation (see the Adam op in ops.h). */



/* The tensors of the network without --layer_norm (cls_model_layout); with it, CLS_MODEL_N_LAYER_NORM more
 * follow them (cls_model_layout_all), up to CLS_MODEL_MAX_TENSORS. */
#define CLS_MODEL_N_TENSORS 12
#define CLS_MODEL_N_LAYER_NORM 8
#define CLS_MODEL_MAX_TENSORS (CLS_MODEL_N_TENSORS + CLS_MODEL_N_LAYER_NORM)
/* The widest n_hidden, n_classes or n_input a checkpoint may declare. */
#define CLS_MODEL_MAX_WIDTH 65536

typedef struct cls_model_config {
  int n_input;     /* MFCC coefficients per frame: 26 */
  int n_context;   /* frames of context on each side: 9 (window 2*9+1) */
  int n_hidden;    /* --n_hidden */
  int n_classes;   /* alphabet size + 1; the blank is the last class */
  float relu_clip; /* --relu_clip: 20 */
  int layer_norm;  /* --layer_norm: layer norm after the clipped ReLU of layers 1, 2, 3 and 5, before dropout */
} cls_model_config;

/* DeepSpeech's geometry: 26 MFCC inputs, 9 frames of context on each side, relu_clip 20, with n_hidden
 * units and n_classes outputs (alphabet + blank). */
cls_model_config cls_model_config_deepspeech(int n_hidden, int n_classes);

/* Width of the first layer's input: n_input * (2 * n_context + 1) = 494. */
int cls_model_input_width(const cls_model_config *cfg);

typedef struct cls_param_view {
  const char *name;  /* DeepSpeech's variable name, e.g. "layer_1/weights" */
  size_t offset;     /* in floats, into the flat parameter (and gradient) buffer */
  size_t count;
  int ndim;
  int64_t shape[2];
} cls_param_view;

/* Fills the views in DeepSpeech's order (layer_1 .. layer_3, the LSTM kernel and bias, layer_5,
 * layer_6; weights then bias) and returns the number of floats in the flat buffer (with --layer_norm,
 * the LayerNorm tensors after them included). */
size_t cls_model_layout(const cls_model_config *cfg, cls_param_view views[CLS_MODEL_N_TENSORS]);
/* Every tensor of the flat buffer: cls_model_layout's CLS_MODEL_N_TENSORS, then with --layer_norm
 * "layer_N/LayerNorm/beta" and "layer_N/LayerNorm/gamma" [n_hidden] of layers 1, 2, 3 and 5 in that
 * order; returns how many (CLS_MODEL_N_TENSORS or CLS_MODEL_MAX_TENSORS), the floats in *floats (may be
 * NULL). */
int cls_model_layout_all(const cls_model_config *cfg, cls_param_view views[CLS_MODEL_MAX_TENSORS], size_t *floats);

/* DeepSpeech's --drop_source_layers (transfer learning): the last n_drop (0 .. CLS_MODEL_MAX_DROP) of
 * the layers layer_2, layer_3, the LSTM, layer_5 and layer_6 are not taken from the source checkpoint
 * (1 drops layer_6, the output layer; 2 layer_5 and layer_6; ... 5 all but layer_1). They are the
 * last parameter tensors of cls_model_layout: this returns the first of them, CLS_MODEL_N_TENSORS -
 * 2 * n_drop (CLS_MODEL_N_TENSORS when n_drop is 0), or -1 for n_drop outside 0 .. CLS_MODEL_MAX_DROP. */
#define CLS_MODEL_MAX_DROP 5
int cls_model_first_dropped(int n_drop);
/* The layer a tensor of cls_model_layout_all belongs to, as the index of that layer's weights in
 * cls_model_layout (a LayerNorm tensor goes with its layer: layers 1, 2, 3 and 5's weights are 0, 2, 4
 * and 8); a tensor is dropped by n_drop when this is at least cls_model_first_dropped(n_drop). -1 for
 * an index outside 0 .. CLS_MODEL_MAX_TENSORS-1. */
int cls_model_tensor_layer(int tensor);

typedef struct cls_model cls_model;

/* A tower on `device` for batches up to max_time x max_batch with labels up to max_label_length. */
cls_status cls_model_create(cls_engine *engine, int device, const cls_model_config *cfg, int max_time, int max_batch,
                            int max_label_length, cls_model **out);
void cls_model_destroy(cls_model *model);
/* Where the failures of the model's forward and training steps go: the engine's error
 * (cls_engine_error) unless set here. A program that runs models on several threads at once gives
 * each model its own cls_error (which must outlive the model), so that their texts never mix;
 * failures of cls_model_create always go to the engine's error. */
void cls_model_set_error(cls_model *model, cls_error *err);
/* Device memory the tower holds for activations, gradients in flight and workspaces, in bytes. */
size_t cls_model_activation_bytes(const cls_model *model);

/* What one frame of one utterance adds to a training tower's device memory, in bytes, before the tower
 * exists (to know which utterances a device can hold): the dense layers' activations and gradients,
 * the logits and their gradient, the LSTM's gates and cells with their gradients and its inputs side by
 * side, the CTC tables for labels up to max_label and the batch's context windows and features; *lstm_bytes (may be NULL) gets
 * the part in the LSTM's workspace, the largest single buffer. Audio on the device is not included. */
size_t cls_model_frame_bytes(const cls_model_config *cfg, int max_label, size_t *lstm_bytes);

typedef struct cls_model_batch {
  int time;           /* T: frames of the longest utterance (padded length) */
  int batch;          /* B: utterances in this tower's batch */
  cls_buf features;   /* [T*B, input width] time-major context windows, zero-padded */
  cls_buf seq_len;    /* int32 [B] frames per utterance */
  cls_buf labels;     /* int32 [B, max_label_length] */
  cls_buf label_len;  /* int32 [B] */
} cls_model_batch;

typedef struct cls_model_dropout {
  float rate[6];          /* DeepSpeech's dropout[0..5]: [0] layer 1, [1] layer 2, [2] layer 3, [5] layer 5;
                             [3] and [4] are unused by the model, as in DeepSpeech */
  uint32_t seed, step;
  int utterance_offset;   /* this tower's first utterance in the global batch */
} cls_model_dropout;

/* Forward pass and CTC loss; per-utterance losses are read back into losses[B] (+inf marks an
 * impossible alignment). dropout NULL: no dropout (evaluation). */
cls_status cls_model_forward(cls_model *model, cl_command_queue queue, const cls_model_batch *batch, cls_buf params,
                             const cls_model_dropout *dropout, float *losses);

/* Streaming inference over one chunk of utterances: the logits (cls_model_logits) of the batch's
 * frames, without dropout or CTC, the LSTM starting from h_state, c_state [B, n_hidden] (in/out, float)
 * and leaving there each utterance's state after its last frame (cls_lstm_infer). Chunks of an
 * utterance fed in order, each with the context windows of its own frames, give the logits of one
 * forward pass over the whole utterance. */
cls_status cls_model_infer_chunk(cls_model *model, cl_command_queue queue, const cls_model_batch *batch, cls_buf params,
                                 cls_buf h_state, cls_buf c_state);

/* One training pass: forward, CTC loss and backward. Writes (or adds, mode) the gradient of
 * grad_scale * (sum of the utterance losses) into the flat gradient buffer, laid out as the
 * parameters are; per-utterance losses go to losses[B]. An utterance with an impossible alignment
 * contributes no gradient. */
cls_status cls_model_train_step(cls_model *model, cl_command_queue queue, const cls_model_batch *batch, cls_buf params,
                                const cls_model_dropout *dropout, cls_buf grads, float grad_scale, cls_write_mode mode,
                                float *losses);

/* Called after the backward pass of one layer has been enqueued: its gradient (parameter
 * tensors first_tensor .. first_tensor+n_tensors-1, contiguous in the flat buffer) will be final
 * once the queue reaches this point. Layers are reported from the output (layer 6) back to layer 1;
 * with --layer_norm the LayerNorm tensors (CLS_MODEL_N_TENSORS .. CLS_MODEL_MAX_TENSORS-1 of
 * cls_model_layout_all) last, all at once. */
typedef cls_status (*cls_layer_done_fn)(void *user, cl_command_queue queue, int first_tensor, int n_tensors);

/* cls_model_train_step, calling layer_done (may be NULL) after each layer's backward pass. */
cls_status cls_model_train_step_layers(cls_model *model, cl_command_queue queue, const cls_model_batch *batch,
                                       cls_buf params, const cls_model_dropout *dropout, cls_buf grads, float grad_scale,
                                       cls_write_mode mode, float *losses, cls_layer_done_fn layer_done, void *user);

/* The logits [T*B, n_classes] of the last forward pass (time-major, before softmax). */
cls_buf cls_model_logits(const cls_model *model);

/* ---- checkpoint ---- */
/* Training checkpoints as safetensors files: every parameter under DeepSpeech's variable name, the
 * Adam slots as "<name>/Adam" (m) and "<name>/Adam_1" (v), beta1_power, beta2_power, global_step
 * and learning_rate as DeepSpeech's checkpoints hold them, and in the metadata the model's geometry
 * (n_hidden, n_classes, n_input, n_context, relu_clip, and layer_norm = 1 with --layer_norm, whose
 * LayerNorm tensors and their slots the file then holds too), Adam's update count (adam_step) and any
 * caller's own entries, stored as given and never interpreted here (the trainer keeps its epoch and
 * dev-loss counters there: engine/train/train_state.h). Written atomically; a checkpoint folder keeps
 * DeepSpeech's "train" series (max_to_keep, index file `checkpoint`) and "best_dev" (index
 * `best_dev_checkpoint`). */

/* DeepSpeech's checkpoint variables besides the weights and the Adam slots. */
typedef struct cls_checkpoint_vars {
  int64_t global_step;
  float learning_rate;
  cls_adam_state adam;
  /* 1 when the file held no learning_rate (a TensorFlow checkpoint from before DeepSpeech saved it):
   * learning_rate is then 0, and a trainer starts from its own, as DeepSpeech does. Saving ignores it. */
  int no_learning_rate;
} cls_checkpoint_vars;

/* One caller's metadata entry. Saving stores `value` under `key`; loading fills `value` with the
 * text the file holds under `key` and sets `found` (value "" and found 0 when it holds none). A key
 * may not be one of the checkpoint's own (format, n_hidden, n_classes, n_input, n_context,
 * relu_clip, adam_step, layer_norm); a value is shorter than CLS_CHECKPOINT_META_VALUE, and a longer one in a
 * file is refused naming the file and the key. At most CLS_CHECKPOINT_MAX_META entries a call. */
#define CLS_CHECKPOINT_META_VALUE 64
#define CLS_CHECKPOINT_MAX_META 16
typedef struct cls_checkpoint_meta {
  const char *key;
  char value[CLS_CHECKPOINT_META_VALUE];
  int found;
} cls_checkpoint_meta;

/* params, m, v: [n] flat host buffers in cls_model_layout order; meta: n_meta caller's entries
 * (NULL when n_meta is 0). */
cls_status cls_checkpoint_save(const char *path, const cls_model_config *cfg, const float *params, const float *m,
                               const float *v, const cls_checkpoint_vars *vars, const cls_checkpoint_meta *meta,
                               int n_meta, cls_error *err);

/* Loads a checkpoint made for the same model shape, validating what it holds: every tensor of the
 * model's dtype and exact shape (a transposed matrix is refused), every weight and Adam moment
 * finite, beta1_power and beta2_power in [0, 1), a finite learning_rate not below 0, global_step and
 * adam_step whole numbers not below 0; any problem is an error naming the file and the tensor or
 * key. m and v may be NULL (evaluation). *vars is filled from the file, and the n_meta caller's
 * entries as cls_checkpoint_meta says (their values are the caller's to check). */
cls_status cls_checkpoint_load(const char *path, const cls_model_config *cfg, float *params, float *m, float *v,
                               cls_checkpoint_vars *vars, cls_checkpoint_meta *meta, int n_meta, cls_error *err);

/* cls_checkpoint_load for transfer learning: the parameter tensors of the n_drop dropped layers
 * (cls_model_first_dropped(n_drop) to the end) and their Adam slots are neither read nor checked, so
 * that the file may hold them in another shape (an output layer for another alphabet); params, m and
 * v keep there what the caller put in them. Every other tensor, the scalars and the metadata are
 * loaded and validated as cls_checkpoint_load does. CLS_ERR_INVALID_ARGUMENT for n_drop outside
 * 0 .. CLS_MODEL_MAX_DROP; n_drop 0 is cls_checkpoint_load. A dropped layer's LayerNorm tensors
 * (--layer_norm) are dropped with it. A file with the norms loads only into a model with them, and one
 * without only into one without (CLS_ERR_IO naming the flag otherwise). */
cls_status cls_checkpoint_load_dropping(const char *path, const cls_model_config *cfg, int n_drop, float *params,
                                        float *m, float *v, cls_checkpoint_vars *vars, cls_checkpoint_meta *meta,
                                        int n_meta, cls_error *err);

/* DeepSpeech's checkpoint folder. Kind "train" or "best_dev": saving writes
 * DIR/<kind>-<global_step>.safetensors, updates the index file (`checkpoint` or
 * `best_dev_checkpoint`) atomically, and for "train" removes the oldest beyond max_to_keep
 * (best_dev keeps one). The index lists the file names, newest first, then a line
 * "sha256 NAME HEX" for each: the SHA-256 of the file's bytes as saved. Every load
 * (cls_checkpoint_load, _dropping) of a file its folder's index has a digest for checks it: a
 * mismatch is CLS_ERR_IO naming the file, both digests and the index. A file without one (saved
 * before digests, or not through an index) loads unchecked. */
cls_status cls_checkpoint_save_in(const char *dir, const char *kind, int max_to_keep, const cls_model_config *cfg,
                                  const float *params, const float *m, const float *v, const cls_checkpoint_vars *vars,
                                  const cls_checkpoint_meta *meta, int n_meta, char *saved_path, size_t path_cap,
                                  cls_error *err);

/* Removes the checkpoints of `dir`'s series (train-N.safetensors, best_dev-N.safetensors) that their
 * index does not list (a process killed between writing one and updating the index, or before it
 * removed an old one). `lock` is the folder's lock held by the caller (cls_checkpoint_lock): then no
 * other trainer writes there and every such file is removed. Without it (-1) a file is removed only
 * once unchanged for as long as a dead process's temporary file (10 s), so that a file another
 * process is about to list is kept. A folder without an index has none listed; an index that cannot
 * be read removes nothing. Returns how many were removed, their names joined by spaces into
 * removed[cap] (may be NULL), or -1 when the folder cannot be read. */
int cls_checkpoint_remove_orphans(const char *dir, int lock, char *removed, size_t cap);

/* The folder's lock, so that two trainers never write one folder (their checkpoints would interleave
 * and one's series sweep the other's files): an exclusive flock(2) on DIR/clspeech.lock, which then
 * names the holder ("pid=P host=H"). Held until cls_checkpoint_unlock or the end of the process,
 * whatever ends it: a killed trainer's lock never blocks. *lock receives the handle (-1 on failure).
 * CLS_ERR_INVALID_ARGUMENT when another process holds it (or another handle of this one), the text
 * naming the folder and the holder's PID and host; CLS_ERR_IO when the file cannot be made. The lock
 * is advisory and only as good as the file system's flock (local file systems; NFS emulates it). */
#define CLS_CHECKPOINT_LOCK "clspeech.lock"
cls_status cls_checkpoint_lock(const char *dir, int *lock, cls_error *err);
/* Releases a lock cls_checkpoint_lock took (-1: nothing). */
void cls_checkpoint_unlock(int lock);

/* Whether the index beside the checkpoint `path` (DIR/NAME) records its SHA-256, which loading checks. */
int cls_checkpoint_has_digest(const char *path);

/* The path the index of `kind` names, or CLS_ERR_IO when there is none. */
cls_status cls_checkpoint_find(const char *dir, const char *kind, char *path, size_t path_cap, cls_error *err);

/* ---- TensorFlow checkpoints ---- */
/* DeepSpeech's own checkpoints, TensorFlow tensor bundles (PREFIX.index, PREFIX.data-00000-of-00001)
 * as tf.compat.v1.train.Saver writes them, under the same variable names as the safetensors files:
 * the parameters, their Adam slots NAME/Adam and NAME/Adam_1, beta1_power, beta2_power, global_step
 * (int64) and learning_rate. A folder whose index file `checkpoint` (or `best_dev_checkpoint`) is
 * TensorFlow's (model_checkpoint_path: "NAME") names the bundle DIR/NAME: cls_checkpoint_find and
 * _choose give that prefix, and cls_checkpoint_peek_model, _load and _load_dropping read it as the
 * functions below do (without --load_cudnn; the caller's metadata entries are not found). Such a
 * folder carries no alphabet: the caller's alphabet must have n_classes - 1 labels. */

/* Whether `path` is a bundle's prefix: PATH.index is a file. */
int cls_checkpoint_is_tf(const char *path);

/* The geometry from the shapes: layer_1/weights [494, n_hidden] (DeepSpeech's 26 inputs and 9 frames
 * of context), layer_6/weights [n_hidden, n_classes], relu_clip 20. */
cls_status cls_checkpoint_tf_peek_model(const char *path, cls_model_config *cfg, cls_error *err);

/* cls_checkpoint_load_dropping's loading and checks on a bundle (every value finite, second moments
 * not negative, the powers in [0, 1), learning_rate finite and not negative, global_step not
 * negative; Adam's update count is global_step). load_cudnn (DeepSpeech's --load_cudnn) accepts a
 * CudnnLSTM checkpoint: the LSTM's Adam slots it lacks start at zero (*zeroed, may be NULL, counts
 * them), and when it holds only CudnnLSTM's opaque buffer `cudnn_lstm/opaque_kernel` the LSTM's
 * kernel and bias are converted from it (cuDNN's canonical layout, engine/model/checkpoint_tf.c).
 * Without it a missing variable is an error naming it (and --load_cudnn where that would help). */
cls_status cls_checkpoint_tf_load(const char *path, const cls_model_config *cfg, int n_drop, int load_cudnn,
                                  float *params, float *m, float *v, cls_checkpoint_vars *vars, int *zeroed,
                                  cls_error *err);

/* Writes DIR/model.ckpt-<global_step>.index and .data-00000-of-00001 (every variable above) and
 * DIR/checkpoint naming it, for TensorFlow's Saver to restore; the prefix into saved_path (may be
 * NULL). */
cls_status cls_checkpoint_tf_save(const char *dir, const cls_model_config *cfg, const float *params, const float *m,
                                  const float *v, const cls_checkpoint_vars *vars, char *saved_path, size_t path_cap,
                                  cls_error *err);

/* ---- checkpoint choice and the folder's description for inference ---- */
/* Which parameters training and evaluation start from (DeepSpeech's --load_train and
 * --load_evaluate): auto (the best_dev checkpoint, else the latest train checkpoint, else — training
 * only — fresh parameters), best (best_dev only), last (the latest train checkpoint only) or init
 * (fresh parameters; training only). */
typedef enum cls_load_mode {
  CLS_LOAD_AUTO,
  CLS_LOAD_BEST,
  CLS_LOAD_LAST,
  CLS_LOAD_INIT
} cls_load_mode;

/* "auto", "best", "last", "init" to values: CLS_OK, or CLS_ERR_INVALID_ARGUMENT (and *out
 * unchanged) for any other string or NULL; and back ("?" for a value out of range). */
cls_status cls_load_mode_parse(const char *name, cls_load_mode *out);
const char *cls_load_mode_name(cls_load_mode mode);

/* The path of the checkpoint `mode` (auto, best or last) chooses in `dir` (NULL or "" is no
 * folder); *is_best (may be NULL) says whether it is the best_dev one. CLS_ERR_IO when there is
 * none: err reads "no best validating checkpoint in DIR" (best) or "no checkpoint to load in DIR"
 * (auto, last), DIR being "(no --checkpoint_dir)" without a folder. CLS_ERR_INVALID_ARGUMENT for
 * init, which chooses no checkpoint. */
cls_status cls_checkpoint_choose(const char *dir, cls_load_mode mode, char *path, size_t path_cap, int *is_best,
                                 cls_error *err);

/* The whole model geometry of a checkpoint from its metadata (n_input, n_context and relu_clip
 * default to DeepSpeech's 26, 9 and 20 in files that lack them, layer_norm to 0), to build the model
 * before loading.
 * Each value is a whole number in range (n_hidden 1..CLS_MODEL_MAX_WIDTH, ...), else an error
 * naming the file and the key. */
cls_status cls_checkpoint_peek_model(const char *path, cls_model_config *cfg, cls_error *err);

/* Beside a checkpoint folder's safetensors files (which carry the network geometry in their
 * metadata) the folder keeps what inference needs and the weights do not say: the alphabet, a byte
 * copy of the file training used, and the feature geometry (sample rate, window and step) in a
 * small text file of "name=value" lines (audio_sample_rate, feature_win_len, feature_win_step). */
#define CLS_CHECKPOINT_ALPHABET "alphabet.txt"
#define CLS_CHECKPOINT_FEATURES "features.txt"

/* Writes DIR/alphabet.txt (a byte copy of alphabet_path) and DIR/features.txt, each atomically. */
cls_status cls_checkpoint_describe(const char *dir, const char *alphabet_path, int audio_sample_rate,
                                   int feature_win_len, int feature_win_step, cls_error *err);

/* Reads DIR/features.txt: *found 0 (and CLS_OK) when the folder has none (made before it was written);
 * CLS_ERR_IO naming the file and line when it is unreadable or malformed. */
cls_status cls_checkpoint_read_features(const char *dir, int *audio_sample_rate, int *feature_win_len,
                                        int *feature_win_step, int *found, cls_error *err);

/* ---- forward-only replica ---- */
/* The model on one device for inference: parameters, activations and the batch buffers only (no
 * gradient, no Adam slots, no reduction buffers), a checkpoint's parameters, and logits for audio
 * files decoded and featurised as training does (the same batch loader and feature path). */
typedef struct cls_infer_config {
  cls_model_config model;
  cls_mfcc_config features;    /* its sample rate is the model's; its n_coeff must be model.n_input */
  int host_features;           /* features on the host (else the device MFCC) */
  const char *feature_cache;   /* host-features path: a feature cache folder, or NULL/"" */
  int max_batch, max_frames;   /* the largest batch and utterance (in frames) it will run */
  int log_placement;           /* log its device and device memory (a notice) */
  int stream_frames;           /* > 0: each utterance streamed through the model in chunks of this many
                                  frames, decoded and featurised (on the host) a chunk at a time with the
                                  LSTM state carried over, so that memory is bounded by the chunk and
                                  max_frames does not apply; 0: whole utterances in batches */
} cls_infer_config;

typedef struct cls_infer cls_infer;

cls_status cls_infer_create(cls_engine *engine, int device, const cls_infer_config *config, cls_infer **out);
void cls_infer_destroy(cls_infer *infer);

/* Device memory the replica holds, in bytes (parameters, activations and workspaces, batch). */
size_t cls_infer_device_bytes(const cls_infer *infer);

/* Loads a checkpoint's parameters (its Adam slots are not read); the checkpoint must be made for the
 * replica's model (a mismatch is an error naming the tensor). */
cls_status cls_infer_load(cls_infer *infer, const char *checkpoint_path);

/* Called per batch, in order: utterances first .. first+batch-1; logits [time*batch, n_classes]
 * time-major (before softmax; utterance b's frame t at row t*batch + b), frames[batch] each one's
 * frames. The pointers are valid during the call only. */
typedef void (*cls_infer_fn)(void *user, int first, int batch, int time, const float *logits, const int *frames);

/* Runs the audio files paths[0 .. n) through the model, batch_size (<= max_batch) at a time; streamed
 * (stream_frames > 0): one file at a time, on_batch called once per file with all its logits (host
 * memory for the logits: frames x n_classes floats; cls_infer_stream holds none). */
cls_status cls_infer_run(cls_infer *infer, const char *const *paths, int n, int batch_size, cls_infer_fn on_batch,
                         void *user);

/* A chunk of a streamed file's logits: frames first .. first+n, [n, n_classes] row-major, valid during
 * the call only. A status other than CLS_OK stops the stream, and cls_infer_stream returns it as is
 * (the callback has said why). */
typedef cls_status (*cls_infer_chunk_fn)(void *user, int64_t first, int n, const float *logits);

/* One audio file streamed through a replica made with stream_frames > 0, each chunk's logits handed to
 * on_chunk (may be NULL) in order and then dropped: host and device memory are those of one chunk,
 * whatever the file's length (decode with cls_ctc_decoder, clspeech/decode.h). *frames (may be NULL)
 * receives the file's frames. CLS_ERR_INVALID_ARGUMENT for a replica made without stream_frames. */
cls_status cls_infer_stream(cls_infer *infer, const char *path, cls_infer_chunk_fn on_chunk, void *user,
                            int64_t *frames);

#ifdef __cplusplus
}
#endif
#endif
