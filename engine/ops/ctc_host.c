/* The CTC loss on the host, fed a chunk of frames at a time: the forward (alpha) recursion in log
 * space over the extended label sequence (blank, l1, blank, ..., lL, blank), in double, its state (the
 * 2L+1 log-alphas of the last frame) carried from one chunk to the next, each frame's log-softmax taken
 * here. It lives in engine/ops as a host file (like adam_host.c), beside the device CTC op whose loss it
 * reproduces, and not in engine/decode beside the streaming decoder: its caller is evaluation in
 * engine/train, which may use ops but not decode (decode sits above train in the layers). It needs no
 * OpenCL. Same definition as that op and tf.compat.v1.nn.ctc_loss (blank = class C-1,
 * ctc_merge_repeated): loss = -ln p(labels | logits). */
#include "ops/ctc_host.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/log_math.h"

struct cls_ctc_loss_stream {
  int C, S;          /* classes; extended states 2L+1 */
  int32_t *ext;      /* [S] class of each state */
  unsigned char *skip;  /* [S] whether state s may be entered from s-2 */
  double *alpha, *next;  /* [S] log-alphas of the last frame fed, and scratch */
  double *lp;        /* [C] the frame's log-softmax */
  long long frames;  /* frames fed so far */
};

void cls_ctc_loss_stream_free(cls_ctc_loss_stream *s) {
  if (!s) return;
  free(s->ext);
  free(s->skip);
  free(s->alpha);
  free(s->next);
  free(s->lp);
  free(s);
}

cls_status cls_ctc_loss_stream_begin(const int32_t *labels, int L, int C, cls_ctc_loss_stream **out) {
  if (!out) return CLS_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (C < 1 || L < 0 || (L > 0 && !labels) || L > (1 << 28)) return CLS_ERR_INVALID_ARGUMENT;
  for (int j = 0; j < L; j++)
    if (labels[j] < 0 || labels[j] > C - 2) return CLS_ERR_INVALID_ARGUMENT;
  cls_ctc_loss_stream *s = calloc(1, sizeof *s);
  if (!s) return CLS_ERR_OUT_OF_MEMORY;
  s->C = C;
  s->S = 2 * L + 1;
  s->ext = malloc((size_t)s->S * sizeof *s->ext);
  s->skip = malloc((size_t)s->S);
  s->alpha = malloc((size_t)s->S * sizeof *s->alpha);
  s->next = malloc((size_t)s->S * sizeof *s->next);
  s->lp = malloc((size_t)C * sizeof *s->lp);
  if (!s->ext || !s->skip || !s->alpha || !s->next || !s->lp) {
    cls_ctc_loss_stream_free(s);
    return CLS_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < s->S; i++) {
    s->ext[i] = (i & 1) ? labels[i >> 1] : C - 1;
    s->skip[i] = (i & 1) && i >= 3 && s->ext[i] != s->ext[i - 2];
  }
  *out = s;
  return CLS_OK;
}

cls_status cls_ctc_loss_stream_feed(cls_ctc_loss_stream *s, const float *logits, int T, size_t stride) {
  if (!s || T < 0 || (T > 0 && (!logits || stride < (size_t)s->C))) return CLS_ERR_INVALID_ARGUMENT;
  const int C = s->C, S = s->S;
  for (int t = 0; t < T; t++) {
    const float *row = logits + (size_t)t * stride;
    double norm = 0.0;
    if (cls_log_softmax_norm(row, C, &norm) != 0) return CLS_ERR_INVALID_ARGUMENT;
    for (int k = 0; k < C; k++) s->lp[k] = (double)row[k] - norm;
    if (s->frames == 0) {
      for (int i = 0; i < S; i++) s->next[i] = i < 2 ? s->lp[s->ext[i]] : -INFINITY;
    } else {
      for (int i = 0; i < S; i++) {
        double v = s->alpha[i];
        if (i >= 1) v = cls_log_add(v, s->alpha[i - 1]);
        if (s->skip[i]) v = cls_log_add(v, s->alpha[i - 2]);
        s->next[i] = v + s->lp[s->ext[i]];
      }
    }
    double *tmp = s->alpha;
    s->alpha = s->next;
    s->next = tmp;
    s->frames++;
  }
  return CLS_OK;
}

cls_status cls_ctc_loss_stream_finish(const cls_ctc_loss_stream *s, double *loss) {
  if (!s || !loss) return CLS_ERR_INVALID_ARGUMENT;
  const int S = s->S;
  if (s->frames == 0) {
    *loss = S == 1 ? 0.0 : INFINITY;
    return CLS_OK;
  }
  const double logp = S > 1 ? cls_log_add(s->alpha[S - 1], s->alpha[S - 2]) : s->alpha[0];
  *loss = -logp;
  return CLS_OK;
}
