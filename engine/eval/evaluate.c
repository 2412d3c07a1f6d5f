/* cls_evaluate (clspeech/evaluate.h): the request checked (eval_request.c), then per test set its two
 * halves — the device pass of eval_logits.c, each utterance's logits decoded on the host by
 * eval_decode.c as soon as they are complete and then freed (so one utterance's logits are held at a
 * time, and decoding keeps pace with the pass's progress), then the set's corpus figures and
 * DeepSpeech's best, median and worst samples (eval_decode.c). The top of the folder: nothing in it
 * calls this file. It prints nothing; errors go to the engine's error text. */
#include <stdlib.h>

#include "device/log.h"
#include "eval/eval_parts.h"
#include "train/trainer.h"

/* Set k: its pass, each utterance decoded as its logits complete, then the set's figures into r. */
static cls_status evaluate_set(cls_trainer *t, const cls_alphabet *alphabet, const cls_eval_request *req, int k,
                               cls_eval_set_report *r) {
  cls_engine *e = cls_trainer_crew(t)->e;
  cls_eval_set_logits logits;
  cls_status st = cls_eval_set_logits_run(t, alphabet, req, k, &logits, NULL, r);
  cls_eval_set_logits_clear(&logits);
  if (st != CLS_OK) return st;
  cls_error err = {0};
  st = cls_eval_set_summarise(req->report_count, req->by_cer, r, &err);
  return cls_fail_wrap(e, st, &err, NULL);
}

cls_status cls_evaluate(cls_trainer *t, const cls_alphabet *alphabet, const cls_eval_request *req,
                        cls_eval_report **out) {
  *out = NULL;
  const cls_crew *c = cls_trainer_crew(t);
  cls_engine *e = c->e;
  cls_status st = cls_eval_check_request(t, alphabet, req);
  if (st != CLS_OK) return st;
  if (req->report_count < 0)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "evaluation report_count %d is negative", req->report_count);
  cls_ctc_decoder *probe = NULL; /* the decoder's options checked before any work */
  st = cls_ctc_decoder_begin(c->o.model.n_classes, req->beam.beam_width <= 1, &req->beam, &probe);
  cls_ctc_decoder_free(probe);
  if (st != CLS_OK)
    return cls_fail(e, st, "evaluation: bad beam search options (width %d, cutoff_prob %g, cutoff_top_n %d)",
                    req->beam.beam_width, req->beam.cutoff_prob, req->beam.cutoff_top_n);
  cls_eval_report *r = calloc(1, sizeof *r);
  if (r) r->sets = calloc((size_t)req->n_sets, sizeof *r->sets);
  if (!r || !r->sets) {
    free(r);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  r->n_sets = req->n_sets;
  for (int k = 0; st == CLS_OK && k < req->n_sets; k++) st = evaluate_set(t, alphabet, req, k, &r->sets[k]);
  if (st != CLS_OK) {
    cls_eval_report_free(r);
    return st;
  }
  *out = r;
  return CLS_OK;
}
