/* The trainer's passes without dropout over a set on the lead tower (see pass.h): runs of utterances
 * that fit in batches through the loader and cls_tower_evaluate, each longer one streamed alone
 * (pass_stream.h), the step losses to the progress reports and the summaries, the batches' logits to
 * the caller; and the loop's pass shared between the ranks of a --horovod run (world.h). */
#include "train/pass.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/log.h"
#include "train/pass_stream.h"

struct cls_pass {
  cls_crew *crew;
  float *losses, *logits;   /* a batch's: [max_batch], [max_frames*max_batch, C] */
  cls_pass_stream *stream;  /* utterances longer than max_frames (made when first needed) */
};

cls_status cls_pass_create(cls_crew *c, cls_pass **out) {
  *out = NULL;
  cls_pass *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->crew = c;
  const int max_batch = c->max_batch, max_frames = c->max_frames, n_classes = c->o.model.n_classes;
  size_t rows = (size_t)max_frames * (size_t)max_batch;
  p->losses = malloc((size_t)(max_batch > 0 ? max_batch : 1) * sizeof(float));
  const size_t classes = (size_t)(n_classes > 0 ? n_classes : 1);
  p->logits = rows <= SIZE_MAX / sizeof(float) / classes ? malloc(rows * classes * sizeof(float)) : NULL;
  if (!p->losses || !p->logits) {
    cls_pass_destroy(p);
    return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY,
                    "out of host memory for the evaluation's logits buffer (%d frames x %d utterances x %d classes)",
                    max_frames, max_batch, n_classes);
  }
  *out = p;
  return CLS_OK;
}

void cls_pass_destroy(cls_pass *p) {
  if (!p) return;
  cls_pass_stream_destroy(p->stream);
  free(p->losses);
  free(p->logits);
  free(p);
}

/* Whether utterance i of a set is streamed (more frames than the towers hold). */
static int streamed(const cls_crew *c, const cls_eval_set *set, int i) {
  return set->frames && set->frames[i] > c->max_frames;
}

/* Runs of utterances that fit in batches on the lead tower, each streamed one alone (pass_stream.h). */
cls_status cls_pass_run(cls_pass *p, const cls_trainer_eval_request *req, int epoch, cls_summary_set summary_set,
                        cls_trainer_eval_result *result) {
  cls_crew *c = p->crew;
  if (!req || !req->set) return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT, "evaluation: no set");
  const cls_eval_set *set = req->set;
  const int batch_size = req->batch_size;
  const char *phase = req->phase;
  const cls_batch_fn on_batch = req->on_batch;
  const cls_progress_fn progress = req->progress;
  void *const user = req->progress_user;
  cls_crew_slot *lead = cls_crew_lead(c);
  if (!lead) return cls_crew_no_tower(c);
  if (batch_size > c->max_batch)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT, "evaluation batch of %d exceeds the trainer's %d", batch_size,
                    c->max_batch);
  if (batch_size < 1)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT, "evaluation batch of %d: the trainer takes 1 .. %d", batch_size,
                    c->max_batch);
  int64_t total = 0;
  int any = 0, n_streamed = 0;
  for (int i = 0, run = 0; i <= set->n; i++) { /* steps: each run's batches, one per streamed utterance */
    if (i < set->n && !streamed(c, set, i)) {
      run++;
      continue;
    }
    n_streamed += i < set->n;
    total += (run + batch_size - 1) / batch_size + (i < set->n);
    any |= i < set->n;
    run = 0;
  }
  /* The replica takes the lead tower's parameters of the moment (they change between passes). */
  cls_status st = any ? cls_pass_stream_prepare(c, &p->stream) : CLS_OK;
  if (any && st == CLS_OK)
    cls_log(c->e, CLS_LOG_NOTICE,
            "%s %s: %d sample%s longer than the %d frames a tower holds, streamed in chunks of %d", phase, set->name,
            n_streamed, n_streamed == 1 ? "" : "s", c->max_frames, c->max_frames);
  double t0 = cls_now_ms(), loss_sum = 0, audio = 0;
  int64_t steps = 0;
  for (int start = 0; st == CLS_OK && start < set->n;) {
    if (streamed(c, set, start)) {
      double loss = 0;
      st = cls_pass_stream_run(p->stream, &set->utts[start], start, req->on_chunk, req->batch_user, &loss);
      if (st != CLS_OK) break;
      loss_sum += loss;
      audio += (double)set->frames[start] * c->o.features.win_step_ms / 1000.0;
      if (summary_set != CLS_SUMMARY_SETS)
        cls_summaries_eval_step(c->summaries, summary_set, c->state.global_step, loss);
      steps++;
      cls_crew_report(progress, user, phase, set->name, epoch, steps, total, loss_sum, t0, audio, 0);
      start++;
      continue;
    }
    int end = start;
    while (end < set->n && !streamed(c, set, end)) end++;
    cls_loader *l = NULL;
    st = cls_crew_start_loader(c, set->utts + start, end - start, batch_size, 3, &l);
    for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
      int time = 0;
      st = cls_crew_tower_status(c, lead,
                                 cls_tower_evaluate(lead->tower, b, p->losses, on_batch ? p->logits : NULL, &time));
      if (st == CLS_OK && on_batch)
        on_batch(req->batch_user, start + b->first, b->batch, time, p->logits, b->frames, p->losses);
      if (st == CLS_OK) {
        double mean = 0;
        for (int i = 0; i < b->batch; i++) mean += p->losses[i];
        loss_sum += mean / b->batch;
        audio += b->audio_seconds;
        if (summary_set != CLS_SUMMARY_SETS)
          cls_summaries_eval_step(c->summaries, summary_set, c->state.global_step, mean / b->batch);
        steps++;
        cls_crew_report(progress, user, phase, set->name, epoch, steps, total, loss_sum, t0, audio, 0);
      }
      cls_loader_done(l, b);
    }
    cls_loader_stop(l);
    start = end;
  }
  if (result) *result = (cls_trainer_eval_result){steps ? loss_sum / (double)steps : 0.0, steps};
  if (st == CLS_OK) cls_crew_report(progress, user, phase, set->name, epoch, steps, total, loss_sum, t0, audio, 1);
  return st;
}

cls_status cls_pass_shared(cls_pass *p, const cls_eval_set *set, const char *phase, int epoch,
                           cls_summary_set summary_set, cls_progress_fn progress, void *user, double *mean_loss,
                           int64_t *steps_out) {
  cls_crew *c = p->crew;
  const int ranks = cls_world_size(c->world), rank = cls_world_rank(c->world), B = c->o.dev_batch_size;
  cls_trainer_eval_request req = {set, B, phase, NULL, NULL, NULL, progress, user};
  cls_trainer_eval_result res = {0, 0};
  if (ranks == 1) {
    cls_status st = cls_pass_run(p, &req, epoch, summary_set, &res);
    if (mean_loss) *mean_loss = res.mean_loss;
    if (steps_out) *steps_out = res.steps;
    return st;
  }
  cls_utterance *mine = malloc((size_t)(set->n > 0 ? set->n : 1) * sizeof *mine);
  int *frames = set->frames ? malloc((size_t)(set->n > 0 ? set->n : 1) * sizeof *frames) : NULL;
  if (!mine || (set->frames && !frames)) {
    free(mine);
    free(frames);
    return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  int n = 0;
  for (int first = rank * B; first < set->n; first += ranks * B) {
    int count = set->n - first < B ? set->n - first : B;
    memcpy(mine + n, set->utts + first, (size_t)count * sizeof *mine);
    if (frames) memcpy(frames + n, set->frames + first, (size_t)count * sizeof *frames); /* streamed ones too */
    n += count;
  }
  cls_eval_set part = {set->name, mine, n, frames};
  req.set = &part;
  /* A rank without a batch of its own still takes part in the sum. */
  cls_status st = n > 0 ? cls_pass_run(p, &req, epoch, summary_set, &res) : CLS_OK;
  free(mine);
  free(frames);
  if (st != CLS_OK) return st;
  double sums[2] = {res.mean_loss * (double)res.steps, (double)res.steps};
  st = cls_world_sum_double(c->world, sums, 2);
  if (mean_loss) *mean_loss = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
  if (steps_out) *steps_out = (int64_t)sums[1];
  return st;
}
