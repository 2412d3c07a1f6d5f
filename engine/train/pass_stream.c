/* A pass's streamed utterances (see pass_stream.h): a forward-only replica (cls_infer, made with
 * stream_frames, the path `clspeech transcribe` streams files through) on the lead tower's device,
 * loaded with the lead tower's parameters before each pass that needs it, and a host CTC loss
 * (ops/ctc_host.h) fed each chunk's logits as they come, so that an utterance of any length takes the
 * memory of one chunk. */
#include "train/pass_stream.h"

#include <stdlib.h>

#include "device/log.h"
#include "model/infer.h"
#include "ops/ctc_host.h"

struct cls_pass_stream {
  cls_engine *e;
  cls_infer *infer;
  float *params; /* [n_params] the lead tower's, on their way to the replica */
  int n_classes;
};

void cls_pass_stream_destroy(cls_pass_stream *s) {
  if (!s) return;
  cls_infer_destroy(s->infer);
  free(s->params);
  free(s);
}

cls_status cls_pass_stream_prepare(cls_crew *c, cls_pass_stream **out) {
  cls_crew_slot *lead = cls_crew_lead(c);
  if (!lead) return cls_crew_no_tower(c);
  cls_pass_stream *s = *out;
  cls_status st = CLS_OK;
  if (!s) {
    s = calloc(1, sizeof *s);
    if (!s) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
    s->e = c->e;
    s->n_classes = c->o.model.n_classes;
    s->params = malloc(c->n_params * sizeof(float));
    cls_infer_config ic = {0};
    ic.model = c->o.model;
    ic.features = c->o.features;
    ic.host_features = 1;
    ic.max_batch = 1;
    ic.max_frames = c->max_frames > 0 ? c->max_frames : 1;
    ic.stream_frames = ic.max_frames;
    if (!s->params) st = cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu parameters", c->n_params);
    if (st == CLS_OK) st = cls_infer_create(c->e, cls_tower_device(lead->tower), &ic, &s->infer);
    if (st != CLS_OK) {
      cls_pass_stream_destroy(s);
      return st;
    }
    *out = s;
  }
  st = cls_crew_read_state(c, s->params, NULL, NULL);
  if (st == CLS_OK) st = cls_infer_write_params(s->infer, s->params);
  return st;
}

typedef struct stream_run {
  cls_ctc_loss_stream *loss;
  cls_chunk_eval_fn on_chunk;
  void *user;
  int index, n_classes;
  const char *path;
  cls_engine *e;
} stream_run;

static cls_status on_logits(void *user, int64_t first, int n, const float *logits) {
  stream_run *r = user;
  if (cls_ctc_loss_stream_feed(r->loss, logits, n, (size_t)r->n_classes) != CLS_OK)
    return cls_fail(r->e, CLS_ERR_INVALID_ARGUMENT, "%s: non-finite logits at frames %lld .. %lld", r->path,
                    (long long)first, (long long)first + n - 1);
  if (r->on_chunk) r->on_chunk(r->user, r->index, first, n, logits, NULL);
  return CLS_OK;
}

cls_status cls_pass_stream_run(cls_pass_stream *s, const cls_utterance *u, int index, cls_chunk_eval_fn on_chunk,
                               void *user, double *loss) {
  stream_run r = {NULL, on_chunk, user, index, s->n_classes, u->path, s->e};
  const cls_status begun = cls_ctc_loss_stream_begin(u->labels, u->n_labels, s->n_classes, &r.loss);
  if (begun == CLS_ERR_OUT_OF_MEMORY)
    return cls_fail(s->e, begun, "%s: out of host memory for the streamed loss", u->path);
  if (begun != CLS_OK)
    return cls_fail(s->e, begun, "%s: %d labels outside the model's %d classes", u->path, u->n_labels, s->n_classes);
  int64_t frames = 0;
  cls_status st = cls_infer_stream(s->infer, u->path, on_logits, &r, &frames);
  double value = 0;
  if (st == CLS_OK) st = cls_ctc_loss_stream_finish(r.loss, &value);
  cls_ctc_loss_stream_free(r.loss);
  if (st != CLS_OK) return st;
  *loss = value;
  if (on_chunk) {
    const float f = (float)value;
    on_chunk(user, index, frames, 0, NULL, &f);
  }
  return CLS_OK;
}
