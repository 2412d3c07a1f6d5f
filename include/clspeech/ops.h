/* clspeech public API, ops layer: the op plans (the GEMM entry point, dense + clipped ReLU + dropout,
 * layer normalisation, LSTM, softmax + CTC, Adam) that the model is built from, and their conventions
 * (buffer views, write modes). */
#ifndef CLSPEECH_OPS_H
#define CLSPEECH_OPS_H

#include <stdbool.h>
#include <stdint.h>
/* The OpenCL 1.2 API the engine is built against (CMakeLists.txt), unless the program chose one. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include "clspeech.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- conventions ---- */
/* Conventions shared by the op plans below: device buffer views, the
 * overwrite/accumulate switch of backward ops, and access to a device's OpenCL handles.
 *
 * Every op family is a small plan object: cls_<op>_create() picks kernels and sizes once for a
 * device and maximum shapes; cls_<op>_<step>() enqueues on a caller-given in-order cl_command_queue
 * and may return the event of its last command; cls_<op>_destroy() frees it. Workspace sizes are
 * queryable; the caller owns every buffer. Buffers are passed as cls_buf views (a cl_mem and an
 * offset in elements), so that one flat parameter buffer can hold every tensor. */



typedef struct cls_buf {
  cl_mem mem;
  size_t offset; /* in elements (floats or ints) from the start of mem */
} cls_buf;

static inline cls_buf cls_buf_of(cl_mem mem) {
  cls_buf b = {mem, 0};
  return b;
}
static inline cls_buf cls_buf_at(cl_mem mem, size_t offset) {
  cls_buf b = {mem, offset};
  return b;
}

/* How a backward op writes a gradient: replace what the output holds, or add to it. */
typedef enum cls_write_mode { CLS_OVERWRITE = 0, CLS_ACCUMULATE = 1 } cls_write_mode;

/* Opens the device (building its kernels if needed) and gives its OpenCL context and device id; every op
 * plan of the device uses this context. The program makes its own in-order queue on it for the plans'
 * calls (the device's own queue belongs to training). */
cls_status cls_engine_device_context(cls_engine *engine, int index, cl_context *context, cl_device_id *device);

/* ---- gemm ---- */
/* The one GEMM entry point of the step: row-major C [m, n] = alpha * op(A) [m, k] * op(B) [k, n] +
 * beta * C, op(X) = X or X^T, offsets in the cls_buf views and leading dimensions in elements (as
 * CLBlast's row-major SGEMM). Two backends behind it: our own kernels (kernels/gemm.cl: B packed into
 * panels, one register-blocked tile per work-item) on CPU devices, CLBlast on GPUs and every other
 * device. Everything is enqueued on the caller's in-order queue; nothing waits on the host.
 *
 * A plan belongs to one device and is used from one in-order queue by one host thread at a time: it
 * owns the packing scratch (a device buffer grown as calls need it, in chunks of at most a few MiB).
 * beta == 0 never reads C, so C's previous contents (NaN included) do not matter. */

typedef struct cls_gemm_plan cls_gemm_plan;

cls_status cls_gemm_create(cls_engine *engine, int device, cls_gemm_plan **out);
void cls_gemm_destroy(cls_gemm_plan *plan);

cls_status cls_gemm(cls_gemm_plan *plan, cl_command_queue queue, bool trans_a, bool trans_b, size_t m, size_t n,
                    size_t k, float alpha, cls_buf a, size_t lda, cls_buf b, size_t ldb, float beta, cls_buf c,
                    size_t ldc, cl_event *event);

/* A B operand packed once and used by many products (the LSTM's recurrent weight over the time steps):
 * cls_gemm_pack_b writes op(B) [k, n] (B stored as for cls_gemm) into `packed`, a caller buffer view of
 * cls_gemm_packed_b_floats(plan, k, n) floats (k x n on either backend); cls_gemm_packed then computes
 * C [m, n] = alpha * op(A) [m, k] * (the packed B) + beta * C. The own backend packs into the panels of
 * the tile that products of m rows take, so cls_gemm_pack_b gets the m of the cls_gemm_packed calls that
 * will read it and they must pass the same m; on the CLBlast backend the packed form is op(B) copied to
 * [k, n] row-major, so callers need no branches. */
size_t cls_gemm_packed_b_floats(const cls_gemm_plan *plan, size_t k, size_t n);
cls_status cls_gemm_pack_b(cls_gemm_plan *plan, cl_command_queue queue, bool trans_b, size_t m, size_t k, size_t n,
                           cls_buf b, size_t ldb, cls_buf packed);
cls_status cls_gemm_packed(cls_gemm_plan *plan, cl_command_queue queue, bool trans_a, size_t m, size_t n, size_t k,
                           float alpha, cls_buf a, size_t lda, cls_buf packed, float beta, cls_buf c, size_t ldc,
                           cl_event *event);

/* ---- dense ---- */
/* The dense (fully connected) layer op of the DeepSpeech model: Y = X·W + b through cls_gemm, then
 * one fused kernel for bias, clipped ReLU and inverted dropout; backward gives dX, dW and db.
 * Rows are time-major (row = t*B + b). */



typedef struct cls_dense_plan cls_dense_plan;

typedef struct cls_dense_act {
  int relu;              /* 1: min(max(z, 0), relu_clip) (layers 1-3 and 5); 0: linear (the output layer) */
  float relu_clip;       /* DeepSpeech: 20 */
  float dropout_rate;    /* 0 disables dropout; kept values are scaled by 1/(1-rate) */
  uint32_t seed;         /* --random_seed */
  uint32_t step;         /* training step: a new mask every step */
  uint32_t layer;        /* layer number: a different mask per layer */
  int batch;             /* B, utterances per time step in these rows */
  int utterance_offset;  /* index of this tower's first utterance in the global batch */
} cls_dense_act;

cls_status cls_dense_create(cls_engine *engine, int device, int in, int out, cls_dense_plan **plan);
/* The plan makes a GEMM plan of its own; this makes it enqueue through `gemm` instead (same device and
 * queue; not taken over: it must outlive the plan), so that the plans of one queue share one. */
cls_status cls_dense_set_gemm(cls_dense_plan *plan, cls_gemm_plan *gemm);
/* Workspace of the backward pass for `rows` rows (the gradient before the activation). */
size_t cls_dense_workspace_bytes(const cls_dense_plan *plan, int rows);

/* y [rows, out] = act(x [rows, in] · w [in, out] + b [out]). */
cls_status cls_dense_forward(cls_dense_plan *plan, cl_command_queue queue, int rows, cls_buf x, cls_buf w, cls_buf b,
                             cls_buf y, const cls_dense_act *act, cl_event *event);

/* From dy [rows, out] and the forward's x and y: dw [in, out], db [out] and, unless dx.mem is
 * NULL, dx [rows, in]; each overwritten or accumulated (mode). The activation's derivative is
 * read from y (0 < y < clip·scale where kept), so the pre-activation need not be stored; it
 * differs from TF's only where z equals the clip exactly. */
cls_status cls_dense_backward(cls_dense_plan *plan, cl_command_queue queue, int rows, cls_buf x, cls_buf w, cls_buf y,
                              cls_buf dy, cls_buf dx, cls_buf dw, cls_buf db, const cls_dense_act *act,
                              cls_write_mode mode, cls_buf workspace, cl_event *event);

void cls_dense_destroy(cls_dense_plan *plan);

/* ---- layer_norm ---- */
/* Layer normalisation as DeepSpeech 0.9's --layer_norm applies it (tf.contrib.layers.layer_norm with its
 * defaults: begin_norm_axis 1, center and scale, variance_epsilon 1e-12): each row of x [rows, H] is
 * normalised over its H features and scaled and shifted per feature,
 *   y = (x - mean) * rsqrt(var + 1e-12) * gamma + beta,   var the population (biased) variance,
 * gamma [H] and beta [H] (TF's LayerNorm/gamma, initialised to ones, and LayerNorm/beta, zeros).
 * Forward saves each row's mean and rstd = rsqrt(var + 1e-12) in `stats` [rows, 2] (mean, rstd);
 * backward takes them with the forward's x. Optionally inverted dropout follows (DeepSpeech's order:
 * clipped ReLU, layer norm, dropout), `dropout` holding the dense layer's dropout fields (cls_dense_act's
 * dropout_rate, seed, step, layer, batch, utterance_offset; relu and relu_clip unused): the units the
 * dense layer would drop, drawn again in backward; NULL or rate 0: none. One kernel per row pass (a
 * work-item per row) and one for the column sums of gamma's and beta's gradients; the same additions on
 * every device. Declared after the dense op, whose cls_dense_act it takes. */

typedef struct cls_layer_norm_plan cls_layer_norm_plan;

#define CLS_LAYER_NORM_EPSILON 1e-12f /* tf.contrib.layers.layer_norm's variance_epsilon for float32 */

/* A plan for one device and a feature count H (`hidden` >= 1). */
cls_status cls_layer_norm_create(cls_engine *engine, int device, int hidden, cls_layer_norm_plan **plan);
/* Floats of `stats` for `rows` rows: 2 per row. */
size_t cls_layer_norm_stats_floats(int rows);

/* y [rows, H] = dropout(layer_norm(x [rows, H])) with gamma [H], beta [H]; stats [rows, 2] written. y
 * may be x (in place: then backward needs x kept elsewhere). rows 0 does nothing. */
cls_status cls_layer_norm_forward(cls_layer_norm_plan *plan, cl_command_queue queue, int rows, cls_buf x,
                                  cls_buf gamma, cls_buf beta, cls_buf y, cls_buf stats, const cls_dense_act *dropout,
                                  cl_event *event);

/* From dy [rows, H] (the gradient of the loss w.r.t. y) and the forward's x, stats and dropout: dgamma [H] and
 * dbeta [H] summed over the rows, overwritten or accumulated (mode), and, unless dx.mem is NULL, dx
 * [rows, H], always overwritten. dx may be dy (in place: the parameter gradients are taken first);
 * it must not be x. */
cls_status cls_layer_norm_backward(cls_layer_norm_plan *plan, cl_command_queue queue, int rows, cls_buf x,
                                   cls_buf gamma, cls_buf stats, cls_buf dy, cls_buf dx, cls_buf dgamma,
                                   cls_buf dbeta, cls_write_mode mode, const cls_dense_act *dropout, cl_event *event);

void cls_layer_norm_destroy(cls_layer_norm_plan *plan);

/* ---- lstm ---- */
/* The LSTM op as DeepSpeech 0.9 trains it (tf.contrib.rnn.LSTMBlockFusedCell: forget_bias 0, no
 * peepholes, no cell clip, zero initial state, time-major): forward with the activations saved for
 * backward, backward through time (gradients of x, the kernel and the bias), and a streaming
 * inference step that carries the state between calls. */

/* Semantics. One kernel matrix W [I+H, 4H] multiplies [x_t, h_{t-1}] (rows 0..I-1 multiply x, rows
 * I..I+H-1 multiply h); bias b [4H]; the 4H columns are the gates i, j, f, o in that order:
 *   z = x_t*W_x + h_{t-1}*W_h + b,  i = sigmoid(z_i), j = tanh(z_j), f = sigmoid(z_f), o = sigmoid(z_o)
 *   c_t = i*j + f*c_{t-1},  h_t = o*tanh(c_t)
 * Sequences are time-major: row t*B + b of x [T*B, I] and h [T*B, H] is frame t of utterance b.
 * seq_len [B] (int32) holds each utterance's length: outputs at t >= seq_len[b] are exactly 0 and the
 * utterance's state stops there (as TF, which runs to the longest sequence and masks the outputs;
 * a length above T counts as T, a negative one as 0).
 *
 * Work per call: one GEMM for the input projection of every step, then the recurrence on one of two
 * paths. On CPU devices (while W_h fits the device's cache): one kernel for all steps, each work-item
 * running a group of the batch's rows through every step (its recurrent product and the gates); else,
 * per step, one recurrent GEMM and one fused gate kernel. Backward runs the recurrence in reverse the
 * same way, then a kernel that lays x_t and h_{t-1} side by side, two GEMMs (dW of W_x and W_h in one
 * product, dx) and a column-sum kernel (db). W_h (forward, inference) or its transpose (backward) is
 * packed into the workspace once per call for the recurrent products of every step. Nothing waits on
 * the host inside the time loop.
 *
 * Every call takes the sizes T (1..max_time) and B (1..max_batch) of this batch; backward must get
 * the T, B, inputs and workspace that forward had. A plan sets its kernels' arguments when it enqueues:
 * one host thread at a time uses it. */



typedef struct cls_lstm_plan cls_lstm_plan;

/* A plan for one device and maximum shapes: input_size I, hidden size H. */
cls_status cls_lstm_create(cls_engine *engine, int device, int max_time, int max_batch, int input_size, int hidden,
                           cls_lstm_plan **out);
void cls_lstm_destroy(cls_lstm_plan *plan);
/* As cls_dense_set_gemm: enqueue through `gemm` (same device and queue; it must outlive the plan)
 * instead of the plan's own. The workspace sizes follow the GEMM plan's backend: ask for them after. */
cls_status cls_lstm_set_gemm(cls_lstm_plan *plan, cls_gemm_plan *gemm);

/* Workspace of forward + backward for T steps of B utterances, in bytes:
 *   the packed recurrent weight (W_h [H, 4H] or W_h^T [4H, H], as cls_gemm_packed_b_floats sizes
 *   them), gates [T*B, 4H] (input projection, then the activations i, j, f, o), cells [T*B, H] (c_t),
 *   dz [T*B, 4H] (pre-activation gradients), [B, H] twice (recurrent and cell gradients), and [T*B, I+H]
 *   (x_t and h_{t-1} side by side, for the weight gradient in one product), and [B, 4H] (sums of dz per
 *   group of rows, for the bias gradient, on the one-kernel path).
 * Backward reads the saved activations without changing them, so it may run more than once. */
size_t cls_lstm_workspace_bytes(const cls_lstm_plan *plan, int time, int batch);
/* Workspace of cls_lstm_infer, in bytes: the packed W_h and gates [T*B, 4H] (the training workspace
 * also serves). */
size_t cls_lstm_infer_workspace_bytes(const cls_lstm_plan *plan, int time, int batch);

/* Forward from a zero state, saving what backward needs in the workspace.
 *   x [T*B, I], weights [I+H, 4H], bias [4H], seq_len int32 [B] -> h_out [T*B, H]
 * workspace: cls_lstm_workspace_bytes(plan, T, B) bytes; its previous contents do not matter. */
cls_status cls_lstm_forward(cls_lstm_plan *plan, cl_command_queue queue, int time, int batch, cls_buf x,
                            cls_buf weights, cls_buf bias, cls_buf seq_len, cls_buf h_out, cls_buf workspace,
                            cl_event *event);

/* Backward through time from dh [T*B, H] (the gradient of the loss w.r.t. h_out; rows past an
 * utterance's length are ignored), with x, weights, seq_len, h_out and workspace as forward left them.
 * Writes dx [T*B, I] (dx.mem NULL: not computed), dweights [I+H, 4H] and dbias [4H], replacing their
 * contents (CLS_OVERWRITE) or adding to them (CLS_ACCUMULATE). */
cls_status cls_lstm_backward(cls_lstm_plan *plan, cl_command_queue queue, int time, int batch, cls_buf x,
                             cls_buf weights, cls_buf seq_len, cls_buf h_out, cls_buf dh, cls_buf workspace, cls_buf dx,
                             cls_buf dweights, cls_buf dbias, cls_write_mode mode, cl_event *event);

/* Streaming inference: like forward, but starting from the state h_state [B, H], c_state [B, H]
 * (in/out) instead of zeros, and leaving in them each utterance's state after its last valid frame of
 * this call (an utterance with seq_len 0 keeps its state). Chunks of an utterance fed one after the
 * other give the outputs of one forward over the whole utterance.
 *   x [T*B, I], weights [I+H, 4H], bias [4H], seq_len int32 [B] -> h_out [T*B, H]
 * workspace: cls_lstm_infer_workspace_bytes(plan, T, B) bytes. */
cls_status cls_lstm_infer(cls_lstm_plan *plan, cl_command_queue queue, int time, int batch, cls_buf x, cls_buf weights,
                          cls_buf bias, cls_buf seq_len, cls_buf h_state, cls_buf c_state, cls_buf h_out,
                          cls_buf workspace, cl_event *event);

/* ---- ctc ---- */
/* The CTC loss op with TensorFlow's semantics (tf.compat.v1.nn.ctc_loss as DeepSpeech 0.9 called it:
 * time_major, preprocess_collapse_repeated=False, ctc_merge_repeated=True, blank = the last class),
 * forward and backward in one kernel launch, and greedy (best path) decoding. On CPU devices one
 * work-item per utterance with its tables in a workspace; on others one work-group per utterance, the
 * forward-backward tables in local memory when they fit, else in a workspace. */


typedef struct cls_ctc_plan cls_ctc_plan;

/* A plan for `device` (an engine index): at most max_time frames, max_batch utterances, num_classes
 * classes (>= 2; the blank is class num_classes-1) and labels of at most max_label_length. */
cls_status cls_ctc_create(cls_engine *engine, int device, int max_time, int max_batch, int num_classes,
                          int max_label_length, cls_ctc_plan **out);

/* Bytes of workspace a cls_ctc_loss call over (time, batch) needs under the plan's current path
 * (enough with or without the gradient); 0 when its tables fit in local memory (then workspace.mem
 * may be NULL). It grows with time and batch: a workspace sized for (max_time, max_batch) serves
 * every call. */
size_t cls_ctc_workspace_bytes(const cls_ctc_plan *plan, int time, int batch);

/* Per-utterance CTC loss and, when grad.mem is not NULL, its gradient with respect to the logits.
 *   logits         float [time*batch, C] time-major: row t*batch + b is frame t of utterance b
 *   labels         int32 [batch, max_label_length] (the plan's), row b padded past label_lengths[b];
 *                  values 0..C-2
 *   label_lengths  int32 [batch], 0..max_label_length
 *   input_lengths  int32 [batch], 0..time: frames t >= input_lengths[b] are padding
 *   loss           float [batch]: -log p(labels_b | logits_b), log-softmax taken inside
 *   grad           float [time*batch, C]: scale*(softmax - posterior occupancy of each class), 0 on
 *                  padding frames; written (CLS_OVERWRITE) or added (CLS_ACCUMULATE). With
 *                  `scale` = 1/N it is the gradient of the mean over N utterances.
 *   workspace      cls_ctc_workspace_bytes(plan, time, batch) bytes (unused when that is 0)
 * An impossible alignment (input_lengths[b] < label_lengths[b] + the number of adjacent repeated
 * labels, each of which needs a blank between) is not an error: loss[b] = +INFINITY and utterance
 * b's gradient is exactly 0 (never NaN); the other utterances are unaffected. The caller detects it
 * from the loss vector (isinf). TF raises an error there instead; an empty label over at least one
 * frame is allowed here (the probability of all blanks), and over zero frames has loss 0.
 * Device-side values the host cannot check (a length outside its range, a label value outside
 * 0..C-2) give loss[b] = NaN and a zero gradient for that utterance. */
cls_status cls_ctc_loss(cls_ctc_plan *plan, cl_command_queue queue, int time, int batch, cls_buf logits,
                        cls_buf labels, cls_buf label_lengths, cls_buf input_lengths, cls_buf loss, cls_buf grad,
                        float scale, cls_write_mode mode, cls_buf workspace, cl_event *event);

/* Greedy decoding (TF's ctc_greedy_decoder with merge_repeated): the argmax class of each frame
 * t < input_lengths[b] (the lowest index on ties), repeats merged, then blanks dropped.
 *   logits         float [time*batch, C] time-major
 *   input_lengths  int32 [batch] (clamped to 0..time)
 *   out_labels     int32 [batch, time]: the decoded labels, padded with -1
 *   out_lengths    int32 [batch] */
cls_status cls_ctc_greedy_decode(cls_ctc_plan *plan, cl_command_queue queue, int time, int batch, cls_buf logits,
                                 cls_buf input_lengths, cls_buf out_labels, cls_buf out_lengths, cl_event *event);

void cls_ctc_destroy(cls_ctc_plan *plan);

/* ---- adam ---- */
/* The Adam optimizer op (TF1 AdamOptimizer semantics) over a flat parameter buffer: one kernel
 * updates parameters and both moment slots. The beta powers live in cls_adam_state, on the host,
 * so that checkpoints can store them as DeepSpeech's beta1_power and beta2_power. */



typedef struct cls_adam_plan cls_adam_plan;

typedef struct cls_adam_state {
  float beta1_power; /* beta1^t for the next step t (TF's variable: starts at beta1) */
  float beta2_power;
  int64_t step;      /* updates applied so far */
} cls_adam_state;

/* The state before the first update. */
cls_adam_state cls_adam_state_init(float beta1, float beta2);

/* TF1's step learning rate: lr*sqrt(1-beta2_power)/(1-beta1_power), in float32 as TF computes it. */
float cls_adam_alpha(const cls_adam_state *state, float lr);

cls_status cls_adam_create(cls_engine *engine, int device, cls_adam_plan **out);
/* param, m, v: [n] updated in place; grad: [n]. Advances `state` (powers and step) once the
 * update is enqueued. */
cls_status cls_adam_update(cls_adam_plan *plan, cl_command_queue queue, size_t n, cls_buf param, cls_buf m, cls_buf v,
                           cls_buf grad, float lr, float beta1, float beta2, float epsilon, cls_adam_state *state,
                           cl_event *event);
void cls_adam_destroy(cls_adam_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
