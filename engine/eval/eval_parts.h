/* The parts of an evaluation (clspeech/evaluate.h) that the folder's files share, one set at a time:
 * the request's checks (eval_request.c), the device pass that keeps each utterance's logits
 * (eval_logits.c) and the host's decoding and report (eval_decode.c), which cls_evaluate (evaluate.c),
 * cls_eval_logits and cls_eval_decode compose. */
#ifndef CLS_EVAL_PARTS_H
#define CLS_EVAL_PARTS_H

#include "clspeech/evaluate.h"

/* What every evaluation request must satisfy (an alphabet of the model's classes, at least one set, a
 * batch size the trainer holds); the engine's error text on a failure. */
cls_status cls_eval_check_request(cls_trainer *trainer, const cls_alphabet *alphabet, const cls_eval_request *request);

/* Set k of the request through the trainer's lead tower (cls_trainer_evaluate): each
 * utterance's logits, transcript, path and loss into *out; *memory_bytes (may be NULL) grows by the
 * logits kept. With `decode_into` (cls_evaluate: a zeroed set report), each utterance is instead decoded
 * with request->beam as soon as its logits are complete (cls_eval_sample_decode into the report's
 * samples, which this makes with its name) and its logits freed, so that no more than one utterance's
 * logits are held and decoding keeps pace with the pass's progress. On an error the engine's error text
 * says what failed; *out (and *decode_into) hold what was made so far either way: free *out with
 * cls_eval_set_logits_clear (and the report with its report). */
cls_status cls_eval_set_logits_run(cls_trainer *trainer, const cls_alphabet *alphabet, const cls_eval_request *request,
                                   int k, cls_eval_set_logits *out, size_t *memory_bytes,
                                   cls_eval_set_report *decode_into);
void cls_eval_set_logits_clear(cls_eval_set_logits *set);

/* One utterance's logits decoded with `beam` (beam_width <= 1: greedy) into r: its text, copies of its
 * transcript and path, its loss and figures. What r holds is freed with its report, also after an error. */
cls_status cls_eval_sample_decode(const cls_eval_sample_logits *s, int n_classes, const cls_alphabet *alphabet,
                                  const cls_beam_options *beam, cls_eval_sample *r);

/* A set report whose samples are all in: its corpus WER/CER, mean loss and DeepSpeech's best, median and
 * worst samples. `err` gets a failure. */
cls_status cls_eval_set_summarise(int report_count, bool by_cer, cls_eval_set_report *r, cls_error *err);

/* One set's logits decoded (cls_eval_decode's work for one set) into *out, whose name, samples and lists the
 * caller frees as part of a report (cls_eval_report_free), also after an error. No engine: `err` gets
 * the failure. */
cls_status cls_eval_set_decode(const cls_eval_set_logits *set, int n_classes, const cls_alphabet *alphabet,
                               const cls_beam_options *beam, int report_count, bool by_cer, cls_eval_set_report *out,
                               cls_error *err);

#endif
