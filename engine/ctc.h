/* The CTC loss op with TensorFlow's semantics (tf.compat.v1.nn.ctc_loss as DeepSpeech 0.9 called it:
 * time_major, preprocess_collapse_repeated=False, ctc_merge_repeated=True, blank = the last class),
 * forward and backward in one kernel launch, and greedy (best path) decoding. One work-group per
 * utterance; the forward-backward tables live in local memory when they fit, else in a workspace. */
#ifndef CLS_CTC_H
#define CLS_CTC_H

#include "clspeech_ops.h"

typedef struct cls_ctc_plan cls_ctc_plan;

/* Where the per-utterance forward-backward tables live: AUTO picks local memory when this call's
 * tables fit in the device's local memory, else the global workspace. LOCAL fails a call whose tables
 * do not fit; GLOBAL always uses the workspace. Both do the same arithmetic in the same order (the
 * tests expect identical bits). */
typedef enum cls_ctc_path { CLS_CTC_PATH_AUTO = 0, CLS_CTC_PATH_LOCAL = 1, CLS_CTC_PATH_GLOBAL = 2 } cls_ctc_path;

/* A plan for `device` (an engine index): at most max_time frames, max_batch utterances, num_classes
 * classes (>= 2; the blank is class num_classes-1) and labels of at most max_label_length. */
cls_status cls_ctc_create(cls_engine *engine, int device, int max_time, int max_batch, int num_classes,
                          int max_label_length, cls_ctc_plan **out);

/* Forces a path (for tests and benchmarks); the default is CLS_CTC_PATH_AUTO. */
cls_status cls_ctc_set_path(cls_ctc_plan *plan, cls_ctc_path path);

/* The path (LOCAL or GLOBAL) a call over `time` frames takes, with or without the gradient. */
cls_ctc_path cls_ctc_path_for(const cls_ctc_plan *plan, int time, int with_grad);

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

#endif
