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
 * Work per call: one GEMM for the input projection of every step, then per step one recurrent GEMM
 * and one fused gate kernel; backward runs one gate-gradient kernel and one GEMM per step in reverse,
 * then three GEMMs (dW_x, dW_h, dx) and a column-sum kernel (db) over all steps at once; W_h (forward,
 * inference) or its transpose (backward) is staged into the workspace once per call. Nothing waits on
 * the host inside the time loop.
 *
 * Every call takes the sizes T (1..max_time) and B (1..max_batch) of this batch; backward must get
 * the T, B, inputs and workspace that forward had. A plan sets its kernels' arguments when it enqueues:
 * one host thread at a time uses it. */
#ifndef CLS_LSTM_H
#define CLS_LSTM_H

#include <stddef.h>

#include "clspeech_ops.h"

typedef struct cls_lstm_plan cls_lstm_plan;

/* A plan for one device and maximum shapes: input_size I, hidden size H. */
cls_status cls_lstm_create(cls_engine *engine, int device, int max_time, int max_batch, int input_size, int hidden,
                           cls_lstm_plan **out);
void cls_lstm_destroy(cls_lstm_plan *plan);

/* Workspace of forward + backward for T steps of B utterances, in bytes:
 *   W_h staged [H, 4H], gates [T*B, 4H] (input projection, then the activations i, j, f, o),
 *   cells [T*B, H] (c_t), dz [T*B, 4H] (pre-activation gradients), and [B, H] twice (recurrent and
 *   cell gradients).
 * Backward reads the saved activations without changing them, so it may run more than once. Give the
 * workspace at offset 0 of its buffer where you can: the staged W_h then reaches CLBlast's large-matrix
 * GEMM in place, where at another offset CLBlast copies it on every step. */
size_t cls_lstm_workspace_bytes(const cls_lstm_plan *plan, int time, int batch);
/* Workspace of cls_lstm_infer, in bytes: W_h staged [H, 4H] and gates [T*B, 4H] (the training
 * workspace also serves). */
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

#endif
