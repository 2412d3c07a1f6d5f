/* The DeepSpeech network on one device (see clspeech/model.h): parameter layout, and forward/backward
 * assembled from the dense, LSTM and CTC plans over the tower's activation buffers. */
#include "clspeech/model.h"

#include <stdlib.h>
#include <string.h>

#include "clspeech/ops.h"
#include "device/log.h"
#include "ops/ops_util.h"

#define LSTM_SCOPE "cudnn_lstm/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell"

enum { P_W1, P_B1, P_W2, P_B2, P_W3, P_B3, P_WL, P_BL, P_W5, P_B5, P_W6, P_B6 };
/* With --layer_norm: the beta and gamma of dense layer k (0..3: layers 1, 2, 3, 5) after them. */
#define P_LN_BETA(k) (CLS_MODEL_N_TENSORS + 2 * (k))
#define P_LN_GAMMA(k) (CLS_MODEL_N_TENSORS + 2 * (k) + 1)

cls_model_config cls_model_config_deepspeech(int n_hidden, int n_classes) {
  cls_model_config c = {26, 9, n_hidden, n_classes, 20.0f, 0};
  return c;
}

int cls_model_input_width(const cls_model_config *cfg) { return cfg->n_input * (2 * cfg->n_context + 1); }

/* The layout ends with the droppable layers, two tensors (weights, bias) each: layer_2, layer_3, the
 * LSTM, layer_5, layer_6. */
int cls_model_first_dropped(int n_drop) {
  return n_drop >= 0 && n_drop <= CLS_MODEL_MAX_DROP ? CLS_MODEL_N_TENSORS - 2 * n_drop : -1;
}

int cls_model_tensor_layer(int tensor) {
  static const int norm_layer_weights[CLS_MODEL_N_LAYER_NORM / 2] = {0, 2, 4, 8};
  if (tensor < 0 || tensor >= CLS_MODEL_MAX_TENSORS) return -1;
  return tensor < CLS_MODEL_N_TENSORS ? tensor - tensor % 2 : norm_layer_weights[(tensor - CLS_MODEL_N_TENSORS) / 2];
}

int cls_model_layout_all(const cls_model_config *cfg, cls_param_view v[CLS_MODEL_MAX_TENSORS], size_t *floats) {
  static const char *names[CLS_MODEL_MAX_TENSORS] = {
      "layer_1/weights", "layer_1/bias", "layer_2/weights", "layer_2/bias", "layer_3/weights", "layer_3/bias",
      LSTM_SCOPE "/kernel", LSTM_SCOPE "/bias", "layer_5/weights", "layer_5/bias", "layer_6/weights", "layer_6/bias",
      "layer_1/LayerNorm/beta", "layer_1/LayerNorm/gamma", "layer_2/LayerNorm/beta", "layer_2/LayerNorm/gamma",
      "layer_3/LayerNorm/beta", "layer_3/LayerNorm/gamma", "layer_5/LayerNorm/beta", "layer_5/LayerNorm/gamma"};
  const int64_t H = cfg->n_hidden, C = cfg->n_classes, I = cls_model_input_width(cfg);
  const int64_t shapes[CLS_MODEL_MAX_TENSORS][2] = {{I, H},         {H, 0},     {H, H}, {H, 0}, {H, H}, {H, 0},
                                                    {2 * H, 4 * H}, {4 * H, 0}, {H, H}, {H, 0}, {H, C}, {C, 0},
                                                    {H, 0},         {H, 0},     {H, 0}, {H, 0}, {H, 0}, {H, 0},
                                                    {H, 0},         {H, 0}};
  const int n = cfg->layer_norm ? CLS_MODEL_MAX_TENSORS : CLS_MODEL_N_TENSORS;
  size_t offset = 0;
  for (int i = 0; i < n; i++) {
    v[i].name = names[i];
    v[i].ndim = shapes[i][1] ? 2 : 1;
    v[i].shape[0] = shapes[i][0];
    v[i].shape[1] = shapes[i][1];
    v[i].count = (size_t)shapes[i][0] * (size_t)(shapes[i][1] ? shapes[i][1] : 1);
    v[i].offset = offset;
    offset += v[i].count;
  }
  if (floats) *floats = offset;
  return n;
}

size_t cls_model_layout(const cls_model_config *cfg, cls_param_view v[CLS_MODEL_N_TENSORS]) {
  cls_param_view all[CLS_MODEL_MAX_TENSORS];
  size_t floats = 0;
  cls_model_layout_all(cfg, all, &floats);
  memcpy(v, all, CLS_MODEL_N_TENSORS * sizeof *v);
  return floats;
}

struct cls_model {
  cls_engine *engine;
  cls_error *err; /* where failures of a step go (cls_model_set_error; the engine's own by default) */
  cls_model_config cfg;
  int max_time, max_batch, max_label;
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  cls_dense_plan *dense[4];  /* layers 1, 2, 3, 5 */
  cls_layer_norm_plan *norm; /* with --layer_norm: the four layers' (NULL without) */
  cls_dense_plan *output;    /* layer 6 */
  cls_lstm_plan *lstm;
  cls_ctc_plan *ctc;
  cls_gemm_plan *gemm;       /* every GEMM of the tower's plans, sharing one packing scratch */
  /* Activations, all time-major [T*B, ...]. */
  cl_mem a1, a2, a3, lstm_out, a5; /* [T*B, H] */
  cl_mem logits;                   /* [T*B, C] */
  cl_mem dlogits;                  /* [T*B, C] */
  cl_mem d1, d2;                   /* [T*B, H] gradients in flight, ping-pong */
  cl_mem dense_ws;                 /* [T*B, H] dense backward workspace */
  cl_mem lstm_ws, ctc_ws, losses;  /* workspaces; losses float [B] */
  /* With --layer_norm, per dense layer 1, 2, 3, 5: the clipped ReLU's output before the norm [T*B, H]
   * and the norm's statistics [T*B, 2] (NULL without). */
  cl_mem pre[4], stats[4];
  size_t bytes;
};

static cls_status alloc(cls_model *m, cl_context ctx, size_t bytes, cl_mem *out) {
  cl_int err = CL_SUCCESS;
  *out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL, &err);
  if (!*out)
    return cls_error_set(m->err, CLS_ERR_OPENCL, "model: allocating %zu bytes of device memory failed: %s", bytes,
                         cls_cl_error_name(err));
  m->bytes += bytes;
  return CLS_OK;
}

cls_status cls_model_create(cls_engine *e, int device, const cls_model_config *cfg, int max_time, int max_batch,
                            int max_label_length, cls_model **out) {
  *out = NULL;
  if (cfg->n_hidden <= 0 || cfg->n_classes < 2 || cfg->n_input <= 0 || cfg->n_context < 0 || max_time <= 0 ||
      max_batch <= 0 || max_label_length <= 0)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "model: invalid configuration");
  cl_context ctx = NULL;
  cls_status st = cls_engine_device_cl(e, device, &ctx, NULL, NULL);
  if (st != CLS_OK) return st;
  cls_model *m = calloc(1, sizeof *m);
  if (!m) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  m->engine = e;
  m->err = cls_engine_errors(e);
  m->cfg = *cfg;
  m->max_time = max_time;
  m->max_batch = max_batch;
  m->max_label = max_label_length;
  cls_model_layout_all(cfg, m->views, NULL);
  const int H = cfg->n_hidden, C = cfg->n_classes, I = cls_model_input_width(cfg);
  const size_t rows = (size_t)max_time * (size_t)max_batch, fh = rows * H * sizeof(float), fc = rows * C * sizeof(float);
  const int dense_in[4] = {I, H, H, H};
  for (int i = 0; i < 4 && st == CLS_OK; i++) st = cls_dense_create(e, device, dense_in[i], H, &m->dense[i]);
  if (st == CLS_OK) st = cls_dense_create(e, device, H, C, &m->output);
  if (st == CLS_OK) st = cls_lstm_create(e, device, max_time, max_batch, H, H, &m->lstm);
  if (st == CLS_OK) st = cls_gemm_create(e, device, &m->gemm);
  for (int i = 0; i < 4 && st == CLS_OK; i++) st = cls_dense_set_gemm(m->dense[i], m->gemm);
  if (st == CLS_OK) st = cls_dense_set_gemm(m->output, m->gemm);
  if (st == CLS_OK) st = cls_lstm_set_gemm(m->lstm, m->gemm);
  if (st == CLS_OK) st = cls_ctc_create(e, device, max_time, max_batch, C, max_label_length, &m->ctc);
  if (st == CLS_OK && cfg->layer_norm) st = cls_layer_norm_create(e, device, H, &m->norm);
  for (int i = 0; i < 4 && st == CLS_OK && cfg->layer_norm; i++) {
    st = alloc(m, ctx, fh, &m->pre[i]);
    if (st == CLS_OK) st = alloc(m, ctx, cls_layer_norm_stats_floats((int)rows) * sizeof(float), &m->stats[i]);
  }
  cl_mem *bufs_h[] = {&m->a1, &m->a2, &m->a3, &m->lstm_out, &m->a5, &m->d1, &m->d2, &m->dense_ws};
  for (size_t i = 0; i < sizeof bufs_h / sizeof *bufs_h && st == CLS_OK; i++) st = alloc(m, ctx, fh, bufs_h[i]);
  if (st == CLS_OK) st = alloc(m, ctx, fc, &m->logits);
  if (st == CLS_OK) st = alloc(m, ctx, fc, &m->dlogits);
  if (st == CLS_OK) st = alloc(m, ctx, cls_lstm_workspace_bytes(m->lstm, max_time, max_batch), &m->lstm_ws);
  if (st == CLS_OK) st = alloc(m, ctx, cls_ctc_workspace_bytes(m->ctc, max_time, max_batch), &m->ctc_ws);
  if (st == CLS_OK) st = alloc(m, ctx, (size_t)max_batch * sizeof(float), &m->losses);
  if (st != CLS_OK) {
    cls_model_destroy(m);
    return st;
  }
  *out = m;
  return CLS_OK;
}

void cls_model_destroy(cls_model *m) {
  if (!m) return;
  for (int i = 0; i < 4; i++) cls_dense_destroy(m->dense[i]);
  cls_dense_destroy(m->output);
  cls_lstm_destroy(m->lstm);
  cls_ctc_destroy(m->ctc);
  cls_layer_norm_destroy(m->norm);
  cls_gemm_destroy(m->gemm); /* after the plans that use it */
  for (int i = 0; i < 4; i++) {
    if (m->pre[i]) clReleaseMemObject(m->pre[i]);
    if (m->stats[i]) clReleaseMemObject(m->stats[i]);
  }
  cl_mem bufs[] = {m->a1, m->a2, m->a3, m->lstm_out, m->a5, m->logits, m->dlogits, m->d1, m->d2, m->dense_ws,
                   m->lstm_ws, m->ctc_ws, m->losses};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
    if (bufs[i]) clReleaseMemObject(bufs[i]);
  free(m);
}

void cls_model_set_error(cls_model *m, cls_error *err) {
  m->err = err;
  for (int i = 0; i < 4; i++) cls_dense_set_error(m->dense[i], err);
  cls_dense_set_error(m->output, err);
  cls_lstm_set_error(m->lstm, err);
  cls_ctc_set_error(m->ctc, err);
  if (m->norm) cls_layer_norm_set_error(m->norm, err);
  cls_gemm_set_error(m->gemm, err);
}

size_t cls_model_activation_bytes(const cls_model *m) { return m->bytes; }

size_t cls_model_frame_bytes(const cls_model_config *cfg, int max_label, size_t *lstm_bytes) {
  const size_t H = (size_t)cfg->n_hidden, C = (size_t)cfg->n_classes, L = max_label > 0 ? (size_t)max_label : 1;
  const size_t lstm = 11 * H; /* gates, cells, gate gradients, x and h side by side (lstm.c's layout; input H) */
  /* a1..a3, lstm_out, a5, d1, d2, dense workspace; logits; with --layer_norm 4 inputs of the norm and their
   * statistics */
  const size_t dense = 8 * H + 2 * C + (cfg->layer_norm ? 4 * H + 8 : 0);
  const size_t ctc = (2 * L + 1 + 16) + C + 1;           /* alpha row, probabilities, normaliser (ctc.c) */
  const size_t input = (size_t)cls_model_input_width(cfg) + (size_t)cfg->n_input; /* windows, features */
  if (lstm_bytes) *lstm_bytes = lstm * sizeof(float);
  return (lstm + dense + ctc + input) * sizeof(float);
}
cls_buf cls_model_logits(const cls_model *m) { return cls_buf_of(m->logits); }

static cls_buf view(cls_buf flat, const cls_model *m, int tensor) {
  return cls_buf_at(flat.mem, flat.offset + m->views[tensor].offset);
}

/* The activation of dense layer `layer` (1, 2, 3 or 5) under `dropout` (NULL: none). */
static cls_dense_act activation(const cls_model *m, int layer, const cls_model_dropout *dropout, int batch) {
  cls_dense_act a;
  memset(&a, 0, sizeof a);
  a.relu = 1;
  a.relu_clip = m->cfg.relu_clip;
  a.batch = batch;
  a.layer = (uint32_t)layer;
  if (dropout) {
    a.dropout_rate = dropout->rate[layer == 5 ? 5 : layer - 1];
    a.seed = dropout->seed;
    a.step = dropout->step;
    a.utterance_offset = dropout->utterance_offset;
  }
  return a;
}

static const int dense_weights[4] = {P_W1, P_W2, P_W3, P_W5}; /* dense layer k's weights; its bias follows */

/* Dense layer k (0..3: layers 1, 2, 3, 5) from `in` into `out`: without --layer_norm the fused clipped
 * ReLU and dropout; with it the clipped ReLU into pre[k], then the norm and the dropout into `out`. */
static cls_status dense_layer(cls_model *m, cl_command_queue q, int k, int rows, cls_buf in, cls_buf p, cl_mem out,
                              const cls_dense_act *act) {
  cls_buf w = view(p, m, dense_weights[k]), b = view(p, m, dense_weights[k] + 1);
  if (!m->norm) return cls_dense_forward(m->dense[k], q, rows, in, w, b, cls_buf_of(out), act, NULL);
  cls_dense_act clip = *act;
  clip.dropout_rate = 0.0f;
  cls_status st = cls_dense_forward(m->dense[k], q, rows, in, w, b, cls_buf_of(m->pre[k]), &clip, NULL);
  if (st == CLS_OK)
    st = cls_layer_norm_forward(m->norm, q, rows, cls_buf_of(m->pre[k]), view(p, m, P_LN_GAMMA(k)),
                                view(p, m, P_LN_BETA(k)), cls_buf_of(out), cls_buf_of(m->stats[k]), act, NULL);
  return st;
}

/* dense_layer's backward from dy (the gradient at `out`; with --layer_norm overwritten by the gradient
 * at the norm's input) to dx (dx.mem NULL: none) and the layer's parameter gradients in g. */
static cls_status dense_layer_backward(cls_model *m, cl_command_queue q, int k, int rows, cls_buf x, cls_buf p,
                                       cls_buf g, cl_mem out, cl_mem dy, cls_buf dx, const cls_dense_act *act,
                                       cls_write_mode mode) {
  int w = dense_weights[k];
  cls_buf ws = cls_buf_of(m->dense_ws);
  if (!m->norm)
    return cls_dense_backward(m->dense[k], q, rows, x, view(p, m, w), cls_buf_of(out), cls_buf_of(dy), dx,
                              view(g, m, w), view(g, m, w + 1), act, mode, ws, NULL);
  cls_status st = cls_layer_norm_backward(m->norm, q, rows, cls_buf_of(m->pre[k]), view(p, m, P_LN_GAMMA(k)),
                                          cls_buf_of(m->stats[k]), cls_buf_of(dy), cls_buf_of(dy),
                                          view(g, m, P_LN_GAMMA(k)), view(g, m, P_LN_BETA(k)), mode, act, NULL);
  cls_dense_act clip = *act;
  clip.dropout_rate = 0.0f;
  if (st == CLS_OK)
    st = cls_dense_backward(m->dense[k], q, rows, x, view(p, m, w), cls_buf_of(m->pre[k]), cls_buf_of(dy), dx,
                            view(g, m, w), view(g, m, w + 1), &clip, mode, ws, NULL);
  return st;
}

static cls_status check_batch(cls_model *m, const cls_model_batch *b) {
  if (b->time <= 0 || b->time > m->max_time || b->batch <= 0 || b->batch > m->max_batch)
    return cls_error_set(m->err, CLS_ERR_INVALID_ARGUMENT, "model: batch of %d x %d frames exceeds the tower's %d x %d",
                         b->batch, b->time, m->max_batch, m->max_time);
  return CLS_OK;
}

/* The layers up to the logits; state NULL: the LSTM from zeros, saving what backward needs (training);
 * else from and to state[0] (h) and state[1] (c), nothing saved (streaming inference). */
static cls_status layers(cls_model *m, cl_command_queue q, const cls_model_batch *b, cls_buf p,
                         const cls_model_dropout *dropout, const cls_buf *state) {
  cls_status st = check_batch(m, b);
  if (st != CLS_OK) return st;
  const int rows = b->time * b->batch;
  const cl_mem outs[3] = {m->a1, m->a2, m->a3};
  cls_buf in = b->features;
  for (int l = 0; l < 3 && st == CLS_OK; l++) {
    cls_dense_act act = activation(m, l + 1, dropout, b->batch);
    st = dense_layer(m, q, l, rows, in, p, outs[l], &act);
    in = cls_buf_of(outs[l]);
  }
  if (st == CLS_OK && !state)
    st = cls_lstm_forward(m->lstm, q, b->time, b->batch, cls_buf_of(m->a3), view(p, m, P_WL), view(p, m, P_BL), b->seq_len,
                          cls_buf_of(m->lstm_out), cls_buf_of(m->lstm_ws), NULL);
  else if (st == CLS_OK)
    st = cls_lstm_infer(m->lstm, q, b->time, b->batch, cls_buf_of(m->a3), view(p, m, P_WL), view(p, m, P_BL), b->seq_len,
                        state[0], state[1], cls_buf_of(m->lstm_out), cls_buf_of(m->lstm_ws), NULL);
  cls_dense_act act5 = activation(m, 5, dropout, b->batch);
  if (st == CLS_OK) st = dense_layer(m, q, 3, rows, cls_buf_of(m->lstm_out), p, m->a5, &act5);
  cls_dense_act linear;
  memset(&linear, 0, sizeof linear);
  if (st == CLS_OK)
    st = cls_dense_forward(m->output, q, rows, cls_buf_of(m->a5), view(p, m, P_W6), view(p, m, P_B6),
                           cls_buf_of(m->logits), &linear, NULL);
  return st;
}

cls_status cls_model_infer_chunk(cls_model *m, cl_command_queue q, const cls_model_batch *b, cls_buf p, cls_buf h_state,
                                 cls_buf c_state) {
  const cls_buf state[2] = {h_state, c_state};
  return layers(m, q, b, p, NULL, state);
}

/* losses_read NULL: the losses are read before returning; else the read is left in flight and
 * *losses_read is its event (the caller waits for it and releases it). */
static cls_status forward(cls_model *m, cl_command_queue q, const cls_model_batch *b, cls_buf p,
                          const cls_model_dropout *dropout, cls_buf dlogits, float grad_scale, float *losses,
                          cl_event *losses_read) {
  cls_status st = layers(m, q, b, p, dropout, NULL);
  if (st == CLS_OK)
    st = cls_ctc_loss(m->ctc, q, b->time, b->batch, cls_buf_of(m->logits), b->labels, b->label_len, b->seq_len,
                      cls_buf_of(m->losses), dlogits, grad_scale, CLS_OVERWRITE, cls_buf_of(m->ctc_ws), NULL);
  if (st == CLS_OK && losses) {
    cl_int err = clEnqueueReadBuffer(q, m->losses, losses_read ? CL_FALSE : CL_TRUE, 0, (size_t)b->batch * sizeof(float),
                                     losses, 0, NULL, losses_read);
    if (err != CL_SUCCESS)
      st = cls_error_set(m->err, CLS_ERR_OPENCL, "model: reading the losses failed: %s", cls_cl_error_name(err));
  }
  return st;
}

cls_status cls_model_forward(cls_model *m, cl_command_queue q, const cls_model_batch *b, cls_buf params,
                             const cls_model_dropout *dropout, float *losses) {
  cls_buf none = {NULL, 0};
  return forward(m, q, b, params, dropout, none, 1.0f, losses, NULL);
}

cls_status cls_model_train_step(cls_model *m, cl_command_queue q, const cls_model_batch *b, cls_buf p,
                                const cls_model_dropout *dropout, cls_buf g, float grad_scale, cls_write_mode mode,
                                float *losses) {
  return cls_model_train_step_layers(m, q, b, p, dropout, g, grad_scale, mode, losses, NULL, NULL);
}

/* Under CLS_ACCUMULATE the ops add their dx to what the buffer holds; the gradients between layers are
 * this pass's alone (the mode is for the parameters' gradients), so they start from zeros. */
static cls_status clear_dx(cls_model *m, cl_command_queue q, cls_write_mode mode, cl_mem dx, int rows) {
  if (mode != CLS_ACCUMULATE) return CLS_OK;
  return cls_ops_fill_to(m->err, q, cls_buf_of(dx), (size_t)rows * (size_t)m->cfg.n_hidden, 0.0f);
}

cls_status cls_model_train_step_layers(cls_model *m, cl_command_queue q, const cls_model_batch *b, cls_buf p,
                                       const cls_model_dropout *dropout, cls_buf g, float grad_scale,
                                       cls_write_mode mode, float *losses, cls_layer_done_fn done, void *user) {
  /* The losses come back while the backward pass is enqueued: no host round-trip mid-step. */
  cl_event losses_read = NULL;
  cls_status st = forward(m, q, b, p, dropout, cls_buf_of(m->dlogits), grad_scale, losses, losses ? &losses_read : NULL);
  if (st != CLS_OK) {
    if (losses_read) clReleaseEvent(losses_read);
    return st;
  }
  const int rows = b->time * b->batch;
  cls_buf ws = cls_buf_of(m->dense_ws), none = {NULL, 0};
  cls_dense_act linear;
  memset(&linear, 0, sizeof linear);
  /* layer 6 (linear): dlogits -> d1 */
  st = clear_dx(m, q, mode, m->d1, rows);
  if (st == CLS_OK)
    st = cls_dense_backward(m->output, q, rows, cls_buf_of(m->a5), view(p, m, P_W6), cls_buf_of(m->logits),
                            cls_buf_of(m->dlogits), cls_buf_of(m->d1), view(g, m, P_W6), view(g, m, P_B6), &linear, mode,
                            ws, NULL);
  if (st == CLS_OK && done) st = done(user, q, P_W6, 2);
  /* layer 5: d1 -> d2 */
  cls_dense_act act5 = activation(m, 5, dropout, b->batch);
  if (st == CLS_OK) st = clear_dx(m, q, mode, m->d2, rows);
  if (st == CLS_OK)
    st = dense_layer_backward(m, q, 3, rows, cls_buf_of(m->lstm_out), p, g, m->a5, m->d1, cls_buf_of(m->d2), &act5,
                              mode);
  if (st == CLS_OK && done) st = done(user, q, P_W5, 2);
  /* LSTM: d2 -> d1 */
  if (st == CLS_OK) st = clear_dx(m, q, mode, m->d1, rows);
  if (st == CLS_OK)
    st = cls_lstm_backward(m->lstm, q, b->time, b->batch, cls_buf_of(m->a3), view(p, m, P_WL), b->seq_len,
                           cls_buf_of(m->lstm_out), cls_buf_of(m->d2), cls_buf_of(m->lstm_ws), cls_buf_of(m->d1),
                           view(g, m, P_WL), view(g, m, P_BL), mode, NULL);
  if (st == CLS_OK && done) st = done(user, q, P_WL, 2);
  /* layers 3, 2, 1: d1 -> d2 -> d1 -> (none) */
  const cl_mem inputs[3] = {NULL, m->a1, m->a2}, outs[3] = {m->a1, m->a2, m->a3};
  cl_mem dy = m->d1, dx = m->d2;
  for (int l = 2; l >= 0 && st == CLS_OK; l--) {
    cls_dense_act act = activation(m, l + 1, dropout, b->batch);
    cls_buf x = l == 0 ? b->features : cls_buf_of(inputs[l]);
    if (l > 0) st = clear_dx(m, q, mode, dx, rows);
    if (st == CLS_OK)
      st = dense_layer_backward(m, q, l, rows, x, p, g, outs[l], dy, l == 0 ? none : cls_buf_of(dx), &act, mode);
    if (st == CLS_OK && done) st = done(user, q, P_W1 + 2 * l, 2);
    cl_mem t = dy;
    dy = dx;
    dx = t;
  }
  /* the norms' gradients, each final once its layer's backward ran */
  if (st == CLS_OK && done && m->norm) st = done(user, q, CLS_MODEL_N_TENSORS, CLS_MODEL_N_LAYER_NORM);
  if (losses_read) {
    cl_int err = clWaitForEvents(1, &losses_read);
    clReleaseEvent(losses_read);
    if (st == CLS_OK && err != CL_SUCCESS)
      st = cls_error_set(m->err, CLS_ERR_OPENCL, "model: reading the losses failed: %s", cls_cl_error_name(err));
  }
  return st;
}
