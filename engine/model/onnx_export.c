/* The ONNX export (see clspeech/onnx.h): DeepSpeech 0.9's acoustic model as an ONNX graph built as
 * protobuf-c messages generated from engine/model/onnx.proto, and serialised. Owns the graph's
 * layout (the nodes, --layer_norm's norms in opset-13 operators, the LSTM's weights reordered into
 * ONNX's gate order, the metadata); the parameters come from the caller or a checkpoint folder. */
#include "clspeech/onnx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onnx.pb-c.h> /* generated from onnx.proto at build time */

#include "clspeech/base.h"
#include "clspeech/data.h"
#include "clspeech/ops.h" /* CLS_LAYER_NORM_EPSILON */

#ifndef CLSPEECH_VERSION
#define CLSPEECH_VERSION "unknown"
#endif

enum { P_W1, P_B1, P_W2, P_B2, P_W3, P_B3, P_WL, P_BL, P_W5, P_B5, P_W6, P_B6 };
/* with --layer_norm: norm k's beta at P_LN + 2k, its gamma after it (cls_model_layout_all) */
#define P_LN CLS_MODEL_N_TENSORS

/* the norm's nodes per dense layer (add_layer_norm: two ReduceMeans of two attributes each), and the
 * dense layers that have one (1, 2, 3, 5) */
#define NORM_NODES 9
#define NORM_ATTRS 4
#define N_NORMS 4
#define NORM_NAME 48

/* the capacities: the graph without norms uses 23 nodes, 18 initializers and 3 attributes; the
 * norms add their nodes and attributes, their 8 tensors and the epsilon */
#define MAX_NODES (24 + N_NORMS * NORM_NODES)
#define MAX_INPUTS 8
#define MAX_INITS (20 + CLS_MODEL_N_LAYER_NORM + 1)
#define MAX_ATTRS (4 + N_NORMS * NORM_ATTRS)
#define MAX_VALUES 8
#define MAX_DIMS 4
#define MAX_META 12
#define META_VALUE 32

/* Every message of the model, in fixed arrays: one allocation, nothing to free per message. */
typedef struct graph_builder {
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset;
  Onnx__OperatorSetIdProto *opset_ptr;
  Onnx__NodeProto nodes[MAX_NODES];
  Onnx__NodeProto *node_ptrs[MAX_NODES];
  char *node_in[MAX_NODES][MAX_INPUTS];
  char *node_out[MAX_NODES][3];
  Onnx__AttributeProto attrs[MAX_ATTRS];
  Onnx__AttributeProto *attr_ptrs[MAX_ATTRS];
  int64_t attr_ints[MAX_ATTRS][4];
  Onnx__TensorProto inits[MAX_INITS];
  Onnx__TensorProto *init_ptrs[MAX_INITS];
  int64_t init_dims[MAX_INITS][3];
  Onnx__ValueInfoProto values[MAX_VALUES];
  Onnx__ValueInfoProto *input_ptrs[MAX_VALUES], *output_ptrs[MAX_VALUES];
  Onnx__TypeProto types[MAX_VALUES];
  Onnx__TypeProto__Tensor tensor_types[MAX_VALUES];
  Onnx__TensorShapeProto shapes[MAX_VALUES];
  Onnx__TensorShapeProto__Dimension dims[MAX_VALUES][MAX_DIMS];
  Onnx__TensorShapeProto__Dimension *dim_ptrs[MAX_VALUES][MAX_DIMS];
  Onnx__StringStringEntryProto meta[MAX_META];
  Onnx__StringStringEntryProto *meta_ptrs[MAX_META];
  char meta_values[MAX_META][META_VALUE];
  int n_nodes, n_attrs, n_inits, n_values;
  /* constants the graph needs besides the weights */
  int64_t reshape_shape[3], axes0[1], axes1[1];
  float clip_lo, clip_hi, norm_eps;
  /* with --layer_norm: the norms' value names, NORM_NODES per layer */
  char norm_names[N_NORMS][NORM_NODES - 1][NORM_NAME];
} graph_builder;

static void add_node(graph_builder *g, const char *op, const char *name, const char *const *in, int n_in,
                     const char *const *out, int n_out) {
  const int k = g->n_nodes++;
  Onnx__NodeProto *n = &g->nodes[k];
  onnx__node_proto__init(n);
  for (int i = 0; i < n_in; i++) g->node_in[k][i] = (char *)in[i];
  for (int i = 0; i < n_out; i++) g->node_out[k][i] = (char *)out[i];
  n->n_input = (size_t)n_in;
  n->input = g->node_in[k];
  n->n_output = (size_t)n_out;
  n->output = g->node_out[k];
  n->op_type = (char *)op;
  n->name = (char *)name;
  g->node_ptrs[k] = n;
}

/* An attribute of the node added last. */
static Onnx__AttributeProto *add_attr(graph_builder *g, const char *name, Onnx__AttributeProto__AttributeType type) {
  Onnx__NodeProto *n = &g->nodes[g->n_nodes - 1];
  const int k = g->n_attrs++;
  Onnx__AttributeProto *a = &g->attrs[k];
  onnx__attribute_proto__init(a);
  a->name = (char *)name;
  a->has_type = 1;
  a->type = type;
  g->attr_ptrs[k] = a;
  if (!n->attribute) n->attribute = &g->attr_ptrs[k];
  n->n_attribute++;
  return a;
}

static void add_init(graph_builder *g, const char *name, int data_type, const void *data, size_t bytes, int ndim,
                     int64_t d0, int64_t d1, int64_t d2) {
  const int k = g->n_inits++;
  Onnx__TensorProto *t = &g->inits[k];
  onnx__tensor_proto__init(t);
  g->init_dims[k][0] = d0;
  g->init_dims[k][1] = d1;
  g->init_dims[k][2] = d2;
  t->n_dims = (size_t)ndim;
  t->dims = ndim ? g->init_dims[k] : NULL;
  t->has_data_type = 1;
  t->data_type = data_type;
  t->name = (char *)name;
  t->has_raw_data = 1;
  t->raw_data.len = bytes;
  t->raw_data.data = (uint8_t *)data;
  g->init_ptrs[k] = t;
}

/* A float tensor value (graph input or output); dims > 0 are sizes, a name is a symbolic size. */
static Onnx__ValueInfoProto *add_value(graph_builder *g, const char *name, int ndim, const char *const *sym,
                                       const int64_t *size) {
  const int k = g->n_values++;
  Onnx__ValueInfoProto *v = &g->values[k];
  onnx__value_info_proto__init(v);
  onnx__type_proto__init(&g->types[k]);
  onnx__type_proto__tensor__init(&g->tensor_types[k]);
  onnx__tensor_shape_proto__init(&g->shapes[k]);
  for (int d = 0; d < ndim; d++) {
    Onnx__TensorShapeProto__Dimension *dim = &g->dims[k][d];
    onnx__tensor_shape_proto__dimension__init(dim);
    if (sym[d]) {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      dim->dim_param = (char *)sym[d];
    } else {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dim->dim_value = size[d];
    }
    g->dim_ptrs[k][d] = dim;
  }
  g->shapes[k].n_dim = (size_t)ndim;
  g->shapes[k].dim = g->dim_ptrs[k];
  g->tensor_types[k].has_elem_type = 1;
  g->tensor_types[k].elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  g->tensor_types[k].shape = &g->shapes[k];
  g->types[k].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  g->types[k].tensor_type = &g->tensor_types[k];
  v->name = (char *)name;
  v->type = &g->types[k];
  return v;
}

/* ReduceMean over the last axis, the axis kept (opset 13: axes is an attribute). */
static void add_mean(graph_builder *g, const char *x, const char *y) {
  add_node(g, "ReduceMean", y, &x, 1, &y, 1);
  Onnx__AttributeProto *axes = add_attr(g, "axes", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  int64_t *a = g->attr_ints[g->n_attrs - 1];
  a[0] = -1;
  axes->n_ints = 1;
  axes->ints = a;
  Onnx__AttributeProto *keep = add_attr(g, "keepdims", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  keep->has_i = 1;
  keep->i = 1;
}

/* Norm k (0..3: of layers 1, 2, 3, 5) from x into y, as the engine's layer_norm_fwd computes it: the
 * row's mean, the population variance of the differences from it, eps added to the variance, then
 * (x - mean) / sqrt(var + eps) * gamma + beta; gamma and beta are the initializers' names. */
static void add_layer_norm(graph_builder *g, int k, const char *x, const char *gamma, const char *beta,
                           const char *y) {
  static const char *const steps[NORM_NODES - 1] = {"mean",    "centered", "squared", "variance",
                                                    "var_eps", "std",      "normalized", "scaled"};
  static const int layer[N_NORMS] = {1, 2, 3, 5};
  const char *v[NORM_NODES - 1];
  for (int i = 0; i < NORM_NODES - 1; i++) {
    snprintf(g->norm_names[k][i], NORM_NAME, "layer_%d/LayerNorm/%s", layer[k], steps[i]);
    v[i] = g->norm_names[k][i];
  }
  const char *in_sub[] = {x, v[0]}, *in_sq[] = {v[1], v[1]}, *in_eps[] = {v[3], "layer_norm/epsilon"};
  const char *in_div[] = {v[1], v[5]}, *in_mul[] = {v[6], gamma}, *in_add[] = {v[7], beta};
  add_mean(g, x, v[0]);
  add_node(g, "Sub", v[1], in_sub, 2, &v[1], 1);
  add_node(g, "Mul", v[2], in_sq, 2, &v[2], 1);
  add_mean(g, v[2], v[3]);
  add_node(g, "Add", v[4], in_eps, 2, &v[4], 1);
  add_node(g, "Sqrt", v[5], &v[4], 1, &v[5], 1);
  add_node(g, "Div", v[6], in_div, 2, &v[6], 1);
  add_node(g, "Mul", v[7], in_mul, 2, &v[7], 1);
  add_node(g, "Add", y, in_add, 2, &y, 1);
}

/* MatMul + Add (+ Clip when clip): y = x * W + b. */
static void add_dense(graph_builder *g, const char *x, const char *w, const char *b, const char *mm, const char *sum,
                      const char *y, int clip) {
  const char *in_mm[] = {x, w}, *in_add[] = {mm, b}, *in_clip[] = {sum, "relu_clip/min", "relu_clip/max"};
  add_node(g, "MatMul", mm, in_mm, 2, &mm, 1);
  add_node(g, "Add", clip ? sum : y, in_add, 2, clip ? &sum : &y, 1);
  if (clip) add_node(g, "Clip", y, in_clip, 3, &y, 1);
}

/* Hidden dense layer k (0..3: layers 1, 2, 3, 5) from x into its output "layer_N": MatMul, Add, Clip,
 * and with --layer_norm the norm after the Clip (DeepSpeech's order; dropout is training's only). */
static void add_hidden(graph_builder *g, int k, const char *x, const cls_param_view *v, int norm) {
  static const char *const names[N_NORMS][4] = {{"layer_1/matmul", "layer_1/add", "layer_1/relu_clip", "layer_1"},
                                                {"layer_2/matmul", "layer_2/add", "layer_2/relu_clip", "layer_2"},
                                                {"layer_3/matmul", "layer_3/add", "layer_3/relu_clip", "layer_3"},
                                                {"layer_5/matmul", "layer_5/add", "layer_5/relu_clip", "layer_5"}};
  static const int weights[N_NORMS] = {P_W1, P_W2, P_W3, P_W5};
  const char *const *n = names[k];
  add_dense(g, x, v[weights[k]].name, v[weights[k] + 1].name, n[0], n[1], norm ? n[2] : n[3], 1);
  if (norm) add_layer_norm(g, k, n[2], v[P_LN + 2 * k + 1].name, v[P_LN + 2 * k].name, n[3]);
}

static void set_meta(graph_builder *g, int k, const char *key, const char *value) {
  onnx__string_string_entry_proto__init(&g->meta[k]);
  g->meta[k].key = (char *)key;
  g->meta[k].value = (char *)value;
  g->meta_ptrs[k] = &g->meta[k];
}

/* ONNX LSTM's W [1, 4H, n_in], R [1, 4H, H] and B [1, 8H] from TF's kernel [n_in + H, 4H] and bias [4H]:
 * ONNX's gate g (i, o, f, c) is TF's column block tf_gate[g] (i, j, f, o: j is the cell input c). */
static void lstm_weights(const float *kernel, const float *bias, int n_in, int H, float *W, float *R, float *B) {
  static const int tf_gate[4] = {0, 3, 2, 1};
  const size_t cols = 4 * (size_t)H;
  for (int g = 0; g < 4; g++)
    for (int u = 0; u < H; u++) {
      const size_t col = (size_t)tf_gate[g] * H + u, row = (size_t)g * H + u;
      for (int k = 0; k < n_in; k++) W[row * n_in + k] = kernel[(size_t)k * cols + col];
      for (int k = 0; k < H; k++) R[row * H + k] = kernel[((size_t)n_in + k) * cols + col];
      B[row] = bias[col]; /* DeepSpeech 0.9's forget_bias is 0: nothing to add to the f gate */
      B[cols + row] = 0.0f;
    }
}

static cls_status check_info(const cls_model_config *cfg, const cls_onnx_info *info, cls_error *err) {
  if (!cfg || !info || cfg->n_hidden < 1 || cfg->n_classes < 2 || cfg->n_input < 1 || cfg->n_context < 0)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "onnx export: no model or no model description");
  if (info->utf8_bytes) { /* the labels are the bytes 1..255: not written, so not looked at */
    if (cfg->n_classes != 256 || info->n_labels != 255)
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                           "onnx export: a --bytes_output_mode model has 255 labels and 256 classes, not %d and %d",
                           info->n_labels, cfg->n_classes);
  } else if (info->n_labels != cfg->n_classes - 1 || (info->n_labels && !info->labels))
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "onnx export: the alphabet has %d labels, the model %d classes (labels + blank)",
                         info->n_labels, cfg->n_classes);
  for (int i = 0; !info->utf8_bytes && i < info->n_labels; i++)
    if (!info->labels[i] || strchr(info->labels[i], '\n'))
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "onnx export: label %d is missing or holds a newline", i);
  if (info->sample_rate < 1 || info->feature_win_len < 1 || info->feature_win_step < 1)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "onnx export: sample rate %d Hz, window %d ms and step %d ms must be positive",
                         info->sample_rate, info->feature_win_len, info->feature_win_step);
  return CLS_OK;
}

cls_status cls_onnx_serialize(const cls_model_config *cfg, const float *params, const cls_onnx_info *info,
                              uint8_t **out, size_t *out_len, cls_error *err) {
  if (!out || !out_len || !params) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "onnx export: no output");
  *out = NULL;
  *out_len = 0;
  cls_status st = check_info(cfg, info, err);
  if (st != CLS_OK) return st;
  cls_param_view v[CLS_MODEL_MAX_TENSORS];
  const int n_tensors = cls_model_layout_all(cfg, v, NULL), norm = cfg->layer_norm != 0;
  const int H = cfg->n_hidden, C = cfg->n_classes, win = 2 * cfg->n_context + 1;
  const int64_t I = cls_model_input_width(cfg);
  graph_builder *g = calloc(1, sizeof *g);
  const size_t lstm_floats = 4 * (size_t)H * (size_t)H * 2 + 8 * (size_t)H;
  float *lstm = malloc(lstm_floats * sizeof(float));
  size_t alpha_len = 1;
  for (int i = 0; !info->utf8_bytes && i < info->n_labels; i++) alpha_len += strlen(info->labels[i]) + 1;
  char *alphabet = malloc(alpha_len);
  if (!g || !lstm || !alphabet) {
    st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "onnx export: out of host memory for a model of n_hidden %d", H);
    goto done;
  }
  float *W = lstm, *R = lstm + 4 * (size_t)H * H, *B = R + 4 * (size_t)H * H;
  lstm_weights(params + v[P_WL].offset, params + v[P_BL].offset, H, H, W, R, B);

  /* initializers: the weights under DeepSpeech's names, then the graph's constants */
  const int F = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, I64 = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
  static const int dense_w[] = {P_W1, P_W2, P_W3, P_W5, P_W6};
  for (size_t i = 0; i < sizeof dense_w / sizeof *dense_w; i++) {
    const cls_param_view *w = &v[dense_w[i]], *b = &v[dense_w[i] + 1];
    add_init(g, w->name, F, params + w->offset, w->count * sizeof(float), 2, w->shape[0], w->shape[1], 0);
    add_init(g, b->name, F, params + b->offset, b->count * sizeof(float), 1, b->shape[0], 0, 0);
  }
  add_init(g, "lstm/W", F, W, 4 * (size_t)H * H * sizeof(float), 3, 1, 4 * (int64_t)H, H);
  add_init(g, "lstm/R", F, R, 4 * (size_t)H * H * sizeof(float), 3, 1, 4 * (int64_t)H, H);
  add_init(g, "lstm/B", F, B, 8 * (size_t)H * sizeof(float), 2, 1, 8 * (int64_t)H, 0);
  for (int i = CLS_MODEL_N_TENSORS; i < n_tensors; i++) /* --layer_norm's beta and gamma of each norm */
    add_init(g, v[i].name, F, params + v[i].offset, v[i].count * sizeof(float), 1, v[i].shape[0], 0, 0);
  g->reshape_shape[0] = 0; /* Reshape's 0: keep n_steps and batch */
  g->reshape_shape[1] = 0;
  g->reshape_shape[2] = I;
  g->axes0[0] = 0;
  g->axes1[0] = 1;
  g->clip_lo = 0.0f;
  g->clip_hi = cfg->relu_clip;
  add_init(g, "windows/shape", I64, g->reshape_shape, sizeof g->reshape_shape, 1, 3, 0, 0);
  add_init(g, "axes/0", I64, g->axes0, sizeof g->axes0, 1, 1, 0, 0);
  add_init(g, "axes/1", I64, g->axes1, sizeof g->axes1, 1, 1, 0, 0);
  add_init(g, "relu_clip/min", F, &g->clip_lo, sizeof g->clip_lo, 0, 0, 0, 0);
  add_init(g, "relu_clip/max", F, &g->clip_hi, sizeof g->clip_hi, 0, 0, 0, 0);
  if (norm) {
    g->norm_eps = CLS_LAYER_NORM_EPSILON;
    add_init(g, "layer_norm/epsilon", F, &g->norm_eps, sizeof g->norm_eps, 0, 0, 0, 0);
  }

  /* nodes */
  {
    const char *x = "input_node", *xt = "input_time_major", *xw = "windows";
    const char *in_reshape[] = {xt, "windows/shape"};
    add_node(g, "Transpose", xt, &x, 1, &xt, 1);
    Onnx__AttributeProto *perm = add_attr(g, "perm", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    int64_t *p = g->attr_ints[g->n_attrs - 1];
    p[0] = 1, p[1] = 0, p[2] = 2, p[3] = 3;
    perm->n_ints = 4;
    perm->ints = p;
    add_node(g, "Reshape", xw, in_reshape, 2, &xw, 1);
    add_hidden(g, 0, xw, v, norm);
    add_hidden(g, 1, "layer_1", v, norm);
    add_hidden(g, 2, "layer_2", v, norm);
    const char *in_c[] = {"previous_state_c", "axes/0"}, *in_h[] = {"previous_state_h", "axes/0"};
    const char *c0 = "lstm/initial_c", *h0 = "lstm/initial_h";
    add_node(g, "Unsqueeze", c0, in_c, 2, &c0, 1);
    add_node(g, "Unsqueeze", h0, in_h, 2, &h0, 1);
    const char *in_lstm[] = {"layer_3", "lstm/W", "lstm/R", "lstm/B", "", h0, c0};
    const char *out_lstm[] = {"lstm/Y", "lstm/Y_h", "lstm/Y_c"};
    add_node(g, "LSTM", "lstm", in_lstm, 7, out_lstm, 3);
    Onnx__AttributeProto *hs = add_attr(g, "hidden_size", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    hs->has_i = 1;
    hs->i = H;
    const char *in_y[] = {"lstm/Y", "axes/1"}, *in_yh[] = {"lstm/Y_h", "axes/0"}, *in_yc[] = {"lstm/Y_c", "axes/0"};
    const char *y = "lstm_output", *nh = "new_state_h", *nc = "new_state_c";
    add_node(g, "Squeeze", y, in_y, 2, &y, 1);
    add_node(g, "Squeeze", nh, in_yh, 2, &nh, 1);
    add_node(g, "Squeeze", nc, in_yc, 2, &nc, 1);
    add_hidden(g, 3, y, v, norm);
    add_dense(g, "layer_5", "layer_6/weights", "layer_6/bias", "layer_6/matmul", NULL, "logits", 0);
    const char *logits = "logits", *probs = "probs";
    add_node(g, "Softmax", probs, &logits, 1, &probs, 1);
    Onnx__AttributeProto *axis = add_attr(g, "axis", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    axis->has_i = 1;
    axis->i = 2;
  }

  /* inputs and outputs */
  {
    const char *bt[] = {"batch", "n_steps", NULL, NULL}, *tb[] = {"n_steps", "batch", NULL}, *b[] = {"batch", NULL};
    const int64_t in_size[] = {0, 0, win, cfg->n_input}, out_size[] = {0, 0, C}, state_size[] = {0, H};
    g->input_ptrs[0] = add_value(g, "input_node", 4, bt, in_size);
    g->input_ptrs[1] = add_value(g, "previous_state_c", 2, b, state_size);
    g->input_ptrs[2] = add_value(g, "previous_state_h", 2, b, state_size);
    g->output_ptrs[0] = add_value(g, "probs", 3, tb, out_size);
    g->output_ptrs[1] = add_value(g, "logits", 3, tb, out_size);
    g->output_ptrs[2] = add_value(g, "new_state_c", 2, b, state_size);
    g->output_ptrs[3] = add_value(g, "new_state_h", 2, b, state_size);
  }

  /* metadata: the alphabet (a bytes model: the mode instead), the settings, the version */
  int n_meta = 0;
  if (info->utf8_bytes) {
    set_meta(g, n_meta++, "alphabet_mode", "bytes");
  } else {
    char *a = alphabet;
    for (int i = 0; i < info->n_labels; i++) {
      const size_t n = strlen(info->labels[i]);
      memcpy(a, info->labels[i], n);
      a += n;
      if (i + 1 < info->n_labels) *a++ = '\n';
    }
    *a = '\0';
    set_meta(g, n_meta++, "alphabet", alphabet);
  }
  {
    static const char *keys[] = {"sample_rate", "feature_win_len", "feature_win_step", "n_input", "n_context",
                                 "n_hidden", "n_classes"};
    const int values[] = {info->sample_rate, info->feature_win_len, info->feature_win_step, cfg->n_input,
                          cfg->n_context, H, C};
    for (int i = 0; i < 7; i++, n_meta++) {
      snprintf(g->meta_values[n_meta], META_VALUE, "%d", values[i]);
      set_meta(g, n_meta, keys[i], g->meta_values[n_meta]);
    }
    snprintf(g->meta_values[n_meta], META_VALUE, "%.9g", (double)cfg->relu_clip);
    set_meta(g, n_meta, "relu_clip", g->meta_values[n_meta]);
    n_meta++;
    if (norm) set_meta(g, n_meta++, "layer_norm", "1");
    set_meta(g, n_meta++, "clspeech_version", CLSPEECH_VERSION);
  }

  onnx__graph_proto__init(&g->graph);
  g->graph.name = "deepspeech";
  g->graph.n_node = (size_t)g->n_nodes;
  g->graph.node = g->node_ptrs;
  g->graph.n_initializer = (size_t)g->n_inits;
  g->graph.initializer = g->init_ptrs;
  g->graph.n_input = 3;
  g->graph.input = g->input_ptrs;
  g->graph.n_output = 4;
  g->graph.output = g->output_ptrs;
  onnx__operator_set_id_proto__init(&g->opset);
  g->opset.domain = "";
  g->opset.has_version = 1;
  g->opset.version = CLS_ONNX_OPSET;
  g->opset_ptr = &g->opset;
  onnx__model_proto__init(&g->model);
  g->model.has_ir_version = 1;
  g->model.ir_version = CLS_ONNX_IR_VERSION;
  g->model.n_opset_import = 1;
  g->model.opset_import = &g->opset_ptr;
  g->model.producer_name = "clspeech";
  g->model.producer_version = CLSPEECH_VERSION;
  g->model.doc_string = "DeepSpeech 0.9 acoustic model exported by clspeech (include/clspeech/onnx.h)";
  g->model.graph = &g->graph;
  g->model.n_metadata_props = (size_t)n_meta;
  g->model.metadata_props = g->meta_ptrs;

  const size_t n = onnx__model_proto__get_packed_size(&g->model);
  *out = malloc(n ? n : 1);
  if (!*out) {
    st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "onnx export: out of host memory for %zu bytes", n);
    goto done;
  }
  *out_len = onnx__model_proto__pack(&g->model, *out);
  if (*out_len != n) {
    free(*out);
    *out = NULL;
    *out_len = 0;
    st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "onnx export: packing wrote %zu of %zu bytes", *out_len, n);
  }
done:
  free(alphabet);
  free(lstm);
  free(g);
  return st;
}

cls_status cls_onnx_write(const char *path, const cls_model_config *cfg, const float *params,
                          const cls_onnx_info *info, cls_error *err) {
  uint8_t *bytes = NULL;
  size_t len = 0;
  cls_status st = cls_onnx_serialize(cfg, params, info, &bytes, &len, err);
  if (st == CLS_OK) {
    const void *chunks[] = {bytes};
    st = cls_write_atomic(path, chunks, &len, 1, err);
  }
  free(bytes);
  return st;
}

cls_status cls_onnx_export_checkpoint(const char *dir, cls_load_mode mode, const char *path, char *chosen,
                                      size_t chosen_cap, cls_error *err) {
  char ckpt[CLS_PATH_CAP], alpha_path[CLS_PATH_CAP];
  cls_status st = cls_checkpoint_choose(dir, mode, ckpt, sizeof ckpt, NULL, err);
  if (st != CLS_OK) return st;
  if (chosen && chosen_cap) snprintf(chosen, chosen_cap, "%s", ckpt);
  cls_model_config cfg;
  st = cls_checkpoint_peek_model(ckpt, &cfg, err);
  if (st != CLS_OK) return st;
  cls_onnx_info info = {NULL, 0, 16000, 32, 20, 0};
  int found = 0;
  st = cls_checkpoint_read_features(dir, &info.sample_rate, &info.feature_win_len, &info.feature_win_step, &found, err);
  if (st != CLS_OK) return st;
  if (!found) info.sample_rate = 16000, info.feature_win_len = 32, info.feature_win_step = 20;
  snprintf(alpha_path, sizeof alpha_path, "%s/%s", dir, CLS_CHECKPOINT_ALPHABET);
  cls_alphabet *alphabet = NULL;
  st = cls_alphabet_load(alpha_path, &alphabet, err);
  if (st != CLS_OK) return st;
  info.utf8_bytes = cls_alphabet_is_bytes(alphabet); /* alphabet_mode "bytes", the labels not written */
  cls_param_view views[CLS_MODEL_N_TENSORS];
  const size_t n_params = cls_model_layout(&cfg, views);
  float *params = malloc(n_params * sizeof *params);
  info.n_labels = cls_alphabet_size(alphabet);
  const char **labels = malloc(((size_t)info.n_labels + 1) * sizeof *labels);
  if (!params || !labels) {
    st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "onnx export: out of host memory for %zu parameters", n_params);
  } else {
    for (int i = 0; i < info.n_labels; i++) labels[i] = cls_alphabet_label(alphabet, i);
    info.labels = labels;
    cls_checkpoint_vars vars;
    st = cls_checkpoint_load(ckpt, &cfg, params, NULL, NULL, &vars, NULL, 0, err);
    if (st == CLS_OK) st = cls_onnx_write(path, &cfg, params, &info, err);
  }
  free(labels);
  free(params);
  cls_alphabet_destroy(alphabet);
  return st;
}
