/* clspeech public API, model layer: the acoustic model of a checkpoint written as an ONNX model
 * (engine/model/onnx_export.c), for ONNX Runtime and every other ONNX reader. */
#ifndef CLSPEECH_ONNX_H
#define CLSPEECH_ONNX_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The graph (ONNX opset CLS_ONNX_OPSET, IR version CLS_ONNX_IR_VERSION), DeepSpeech 0.9's exported
 * graph in ONNX operators:
 *   inputs   input_node        float [batch, n_steps, 2*n_context+1, n_input]: each frame's context
 *                              window of MFCC features (DeepSpeech's input_node: frame t's window is
 *                              frames t-9 .. t+9, zero frames past either end of the utterance)
 *            previous_state_c  float [batch, n_hidden]  the LSTM's cell state (zeros to start)
 *            previous_state_h  float [batch, n_hidden]  the LSTM's output state (zeros to start)
 *   outputs  probs             float [n_steps, batch, n_classes]  per-frame softmax (blank last)
 *            logits            float [n_steps, batch, n_classes]  the same before the softmax
 *            new_state_c       float [batch, n_hidden]  the states after the last step: feed them as
 *            new_state_h       float [batch, n_hidden]  the next chunk's previous_state_* to stream
 * Layers as the engine computes them: three dense layers MatMul + Add + Clip(0, relu_clip), the LSTM
 * (ONNX LSTM: TF's gate columns i, j, f, o become ONNX's i, o, f, c; DeepSpeech 0.9's forget_bias is
 * 0, so the bias goes into Wb unchanged and Rb is zero), a fourth clipped dense layer, the linear
 * output layer and Softmax over the classes. Weights are the checkpoint's float32 values unchanged.
 * With --layer_norm, after the Clip of layers 1, 2, 3 and 5, the engine's layer norm
 * (kernels/layer_norm.cl) in opset-13 operators, over the last axis of each row:
 *   mean = ReduceMean(x), d = x - mean, var = ReduceMean(d * d) (the population variance),
 *   y = d / Sqrt(var + CLS_LAYER_NORM_EPSILON) * layer_N/LayerNorm/gamma + layer_N/LayerNorm/beta
 * (opset 17's LayerNormalization is not used, so that opset-13 readers run it).
 * Metadata properties (metadata_props): alphabet (the labels in class order, one per line, "\n"
 * between them; the blank, class n_classes-1, is not listed), sample_rate, feature_win_len and
 * feature_win_step (milliseconds), n_input, n_context, n_hidden, n_classes, relu_clip and
 * clspeech_version; with --layer_norm also layer_norm = "1". A --bytes_output_mode model
 * (cls_onnx_info.utf8_bytes) has alphabet_mode = "bytes" in place of alphabet: its 255 labels are
 * UTF-8 bytes, class k the byte k+1 (n_classes 256, the blank 255), which a reader assembles into
 * text keeping whole characters; a model without alphabet_mode has the alphabet of characters. */
#define CLS_ONNX_OPSET 13
#define CLS_ONNX_IR_VERSION 7

typedef struct cls_onnx_info {
  const char *const *labels;  /* the alphabet's labels in class order: n_labels = n_classes - 1 */
  int n_labels;
  int sample_rate;            /* Hz */
  int feature_win_len;        /* ms */
  int feature_win_step;       /* ms */
  int utf8_bytes;             /* --bytes_output_mode: n_classes 256, labels (may be NULL) not written */
} cls_onnx_info;

/* Serialises the model with parameters `params` (cls_model_layout_all's order: with --layer_norm
 * the LayerNorm tensors after the others; host floats) into *out (malloc'ed; the caller frees it),
 * *out_len bytes. The same inputs give the same bytes.
 * CLS_ERR_INVALID_ARGUMENT for labels that do not match n_classes (a bytes model: n_classes other
 * than 256), a label holding a newline, or non-positive feature settings; CLS_ERR_OUT_OF_MEMORY. */
cls_status cls_onnx_serialize(const cls_model_config *cfg, const float *params, const cls_onnx_info *info,
                              uint8_t **out, size_t *out_len, cls_error *err);

/* cls_onnx_serialize written to `path` atomically. */
cls_status cls_onnx_write(const char *path, const cls_model_config *cfg, const float *params,
                          const cls_onnx_info *info, cls_error *err);

/* A checkpoint folder's model written to `path`: the checkpoint `mode` chooses (auto, best or last:
 * cls_checkpoint_choose), its alphabet (DIR/alphabet.txt) and feature settings (DIR/features.txt;
 * DeepSpeech's 16000 Hz, 32 ms and 20 ms in a folder made before it was written; the bytes alphabet
 * of a --bytes_output_mode folder gives a utf8_bytes model). *chosen (may be
 * NULL; chosen_cap bytes) receives the checkpoint's path. */
cls_status cls_onnx_export_checkpoint(const char *dir, cls_load_mode mode, const char *path, char *chosen,
                                      size_t chosen_cap, cls_error *err);

#ifdef __cplusplus
}
#endif
#endif
