/* An evaluation request (clspeech/evaluate.h's cls_eval_request): its defaults, and the checks that
 * cls_evaluate and cls_eval_logits make of it against the trainer before any work (the trainer's crew,
 * train/trainer.h). It calls no other file of this folder. */
#include <string.h>

#include "device/log.h"
#include "eval/eval_parts.h"
#include "train/trainer.h"

cls_eval_request cls_eval_request_default(void) {
  cls_eval_request r;
  memset(&r, 0, sizeof r);
  r.batch_size = 1;
  r.beam = cls_beam_options_default();
  r.report_count = 5;
  return r;
}

cls_status cls_eval_check_request(cls_trainer *t, const cls_alphabet *alphabet, const cls_eval_request *req) {
  const cls_crew *c = cls_trainer_crew(t);
  cls_engine *e = c->e;
  if (!alphabet || !req || !req->sets || req->n_sets < 1)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "evaluation: no alphabet, or no set to evaluate");
  if (cls_alphabet_size(alphabet) + 1 != c->o.model.n_classes)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "evaluation: an alphabet of %d labels for a model of %d classes",
                    cls_alphabet_size(alphabet), c->o.model.n_classes);
  if (req->batch_size < 1 || req->batch_size > c->max_batch)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "evaluation batch size %d: the trainer takes 1 .. %d",
                    req->batch_size, c->max_batch);
  return CLS_OK;
}
