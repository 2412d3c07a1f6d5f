/* The dense (fully connected) layer op of the DeepSpeech model: Y = X·W + b through CLBlast, then
 * one fused kernel for bias, clipped ReLU and inverted dropout; backward gives dX, dW and db.
 * Rows are time-major (row = t*B + b). */
#ifndef CLS_DENSE_H
#define CLS_DENSE_H

#include <stdint.h>

#include "clspeech_ops.h"

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

#endif
