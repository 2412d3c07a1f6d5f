/* The trainer's passes without dropout over a set on the lead tower (pass.c): the loop's dev and metrics
 * sets and the public cls_trainer_evaluate (clspeech/train.h) run them. A pass object holds what they
 * need beside the crew: the host's losses and logits of a batch and, made when first needed, the
 * streamed replica of pass_stream.h for utterances longer than the towers hold. */
#ifndef CLS_PASS_H
#define CLS_PASS_H

#include "train/crew.h"
#include "train/summaries.h"

typedef struct cls_pass cls_pass;

/* A pass object for the crew's towers (its max_batch, max_frames and model's classes); the engine's
 * error text on a failure. */
cls_status cls_pass_create(cls_crew *crew, cls_pass **out);
void cls_pass_destroy(cls_pass *pass);

/* One pass of `request`, as cls_trainer_evaluate documents it, into *result (may be NULL); each step's
 * loss also to the summaries' `summary_set` (CLS_SUMMARY_SETS: none); `epoch` for the progress reports. */
cls_status cls_pass_run(cls_pass *pass, const cls_trainer_eval_request *request, int epoch,
                        cls_summary_set summary_set, cls_trainer_eval_result *result);

/* The loop's pass, at the options' dev_batch_size, losses only: with several ranks each takes every
 * ranks-th batch of the set and the ranks' loss sums and step counts are summed, so that every rank
 * has the same mean. */
cls_status cls_pass_shared(cls_pass *pass, const cls_eval_set *set, const char *phase, int epoch,
                           cls_summary_set summary_set, cls_progress_fn progress, void *user, double *mean_loss,
                           int64_t *steps_out);

#endif
