/* Training summaries for TensorBoard (see summaries.h): the three event files, the tags, the
 * cadence of the variables' statistics and the running sums behind epoch_loss. */
#include "train/summaries.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/event_file.h"
#include "device/log.h"

/* The longest a written event waits in memory: what a crash can lose. */
#define FLUSH_SECS 5.0

static const char *const set_names[CLS_SUMMARY_SETS] = {"train", "dev", "metrics"};

struct cls_summaries {
  cls_engine *e;
  int variable_steps;
  pthread_mutex_t lock;
  cls_event_file *files[CLS_SUMMARY_SETS]; /* NULL: not opened, or silenced after a failure */
  double loss_sum[CLS_SUMMARY_SETS];
  int64_t loss_steps[CLS_SUMMARY_SETS];
  cls_summary *summary;                    /* the event being built */
  cls_tensor_stats *scratch;               /* [2 * CLS_MODEL_MAX_TENSORS] */
};

cls_status cls_summaries_open(cls_engine *e, const char *dir, int variable_steps, int dev, int metrics,
                              cls_summaries **out) {
  *out = NULL;
  if (!dir || !*dir) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "summaries: no folder");
  if (variable_steps < 0)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "--summary_steps must not be negative, not %d", variable_steps);
  cls_summaries *s = calloc(1, sizeof *s);
  if (!s) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  s->e = e;
  s->variable_steps = variable_steps;
  pthread_mutex_init(&s->lock, NULL);
  s->summary = cls_summary_create();
  s->scratch = malloc(2 * CLS_MODEL_MAX_TENSORS * sizeof *s->scratch);
  cls_status st = s->summary && s->scratch ? CLS_OK : cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int k = 0; st == CLS_OK && k < CLS_SUMMARY_SETS; k++) {
    if ((k == CLS_SUMMARY_METRICS && !metrics) || (k == CLS_SUMMARY_DEV && !dev)) continue;
    char sub[CLS_PATH_CAP];
    cls_error err;
    snprintf(sub, sizeof sub, "%s/%s", dir, set_names[k]);
    if (cls_event_file_open(sub, FLUSH_SECS, &s->files[k], &err) != CLS_OK)
      st = cls_fail(e, CLS_ERR_IO, "--summary_dir: %s", err.text);
  }
  if (st != CLS_OK) {
    cls_summaries_close(s);
    return st;
  }
  cls_log(e, CLS_LOG_NOTICE, "summaries for TensorBoard in %s (train%s%s): tensorboard --logdir %s", dir,
          dev ? ", dev" : "", metrics ? ", metrics" : "", dir);
  *out = s;
  return CLS_OK;
}

void cls_summaries_close(cls_summaries *s) {
  if (!s) return;
  for (int k = 0; k < CLS_SUMMARY_SETS; k++) {
    cls_error err;
    if (s->files[k] && cls_event_file_close(s->files[k], &err) != CLS_OK)
      cls_log(s->e, CLS_LOG_WARNING, "summaries: %s", err.text);
  }
  cls_summary_destroy(s->summary);
  free(s->scratch);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

/* Writes the event being built to `set` at `step` and empties it (lock held). */
static void write_event(cls_summaries *s, cls_summary_set set, int64_t step, cls_status built) {
  cls_event_file *f = s->files[set];
  cls_error err;
  if (f && built != CLS_OK) {
    cls_log(s->e, CLS_LOG_WARNING, "summaries: out of host memory for the %s summary at step %lld; it is skipped",
            set_names[set], (long long)step);
  } else if (f && cls_event_file_write(f, step, s->summary, &err) != CLS_OK) {
    cls_log(s->e, CLS_LOG_WARNING, "summaries: %s; no more %s summaries are written", err.text, set_names[set]);
    cls_event_file_close(f, NULL);
    s->files[set] = NULL;
  }
  cls_summary_clear(s->summary);
}

void cls_summaries_train_step(cls_summaries *s, int64_t step, double loss, double lr, double audio_s, double wall_s,
                              const cls_tower_summary *towers, int n_towers) {
  if (!s) return;
  pthread_mutex_lock(&s->lock);
  cls_summary *m = s->summary;
  cls_status st = cls_summary_scalar(m, "step_loss", loss);
  if (st == CLS_OK) st = cls_summary_scalar(m, "learning_rate", lr);
  if (st == CLS_OK && wall_s > 0) st = cls_summary_scalar(m, "audio_seconds_per_second", audio_s / wall_s);
  for (int i = 0; st == CLS_OK && i < n_towers; i++) {
    char tag[64];
    snprintf(tag, sizeof tag, "towers/step_ms/%d", towers[i].tower);
    st = cls_summary_scalar(m, tag, towers[i].ms);
    snprintf(tag, sizeof tag, "towers/batch_share/%d", towers[i].tower);
    if (st == CLS_OK) st = cls_summary_scalar(m, tag, towers[i].share);
    snprintf(tag, sizeof tag, "towers/staleness/%d", towers[i].tower);
    if (st == CLS_OK && towers[i].staleness >= 0) st = cls_summary_scalar(m, tag, (double)towers[i].staleness);
  }
  s->loss_sum[CLS_SUMMARY_TRAIN] += loss;
  s->loss_steps[CLS_SUMMARY_TRAIN]++;
  write_event(s, CLS_SUMMARY_TRAIN, step, st);
  pthread_mutex_unlock(&s->lock);
}

void cls_summaries_ranks(cls_summaries *s, int64_t step, const double *rank_ms, int n_ranks, double allreduce_ms) {
  if (!s) return;
  pthread_mutex_lock(&s->lock);
  cls_summary *m = s->summary;
  cls_status st = cls_summary_scalar(m, "ranks/allreduce_ms", allreduce_ms);
  for (int r = 0; st == CLS_OK && r < n_ranks; r++) {
    char tag[64];
    snprintf(tag, sizeof tag, "ranks/step_ms/%d", r);
    st = cls_summary_scalar(m, tag, rank_ms[r]);
  }
  write_event(s, CLS_SUMMARY_TRAIN, step, st);
  pthread_mutex_unlock(&s->lock);
}

int cls_summaries_variables_due(const cls_summaries *s, int64_t step) {
  return s && s->variable_steps > 0 && s->files[CLS_SUMMARY_TRAIN] && step % s->variable_steps == 0;
}

cls_tensor_stats *cls_summaries_scratch(cls_summaries *s) { return s->scratch; }

void cls_summaries_variables(cls_summaries *s, int64_t step, const cls_model_config *model) {
  if (!s) return;
  cls_param_view v[CLS_MODEL_MAX_TENSORS];
  const int n = cls_model_layout_all(model, v, NULL);
  pthread_mutex_lock(&s->lock);
  cls_summary *m = s->summary;
  cls_status st = CLS_OK;
  for (int i = 0; st == CLS_OK && i < n; i++) {
    const cls_tensor_stats *p = &s->scratch[i], *g = &s->scratch[n + i];
    char tag[256];
    snprintf(tag, sizeof tag, "%s/mean", v[i].name);
    st = cls_summary_scalar(m, tag, cls_tensor_stats_mean(p));
    snprintf(tag, sizeof tag, "%s/stddev", v[i].name);
    if (st == CLS_OK) st = cls_summary_scalar(m, tag, cls_tensor_stats_stddev(p));
    snprintf(tag, sizeof tag, "%s/max", v[i].name);
    if (st == CLS_OK) st = cls_summary_scalar(m, tag, p->max);
    snprintf(tag, sizeof tag, "%s/min", v[i].name);
    if (st == CLS_OK) st = cls_summary_scalar(m, tag, p->min);
    if (st == CLS_OK) st = cls_summary_histogram(m, v[i].name, p);
    snprintf(tag, sizeof tag, "%s/gradients", v[i].name);
    if (st == CLS_OK) st = cls_summary_histogram(m, tag, g);
  }
  write_event(s, CLS_SUMMARY_TRAIN, step, st);
  pthread_mutex_unlock(&s->lock);
}

void cls_summaries_eval_step(cls_summaries *s, cls_summary_set set, int64_t step, double loss) {
  if (!s || set <= CLS_SUMMARY_TRAIN || set >= CLS_SUMMARY_SETS) return;
  pthread_mutex_lock(&s->lock);
  cls_status st = cls_summary_scalar(s->summary, "step_loss", loss);
  s->loss_sum[set] += loss;
  s->loss_steps[set]++;
  write_event(s, set, step, st);
  pthread_mutex_unlock(&s->lock);
}

void cls_summaries_epoch(cls_summaries *s, cls_summary_set set, int64_t step) {
  if (!s || set < 0 || set >= CLS_SUMMARY_SETS) return;
  pthread_mutex_lock(&s->lock);
  if (s->loss_steps[set] > 0) {
    cls_status st = cls_summary_scalar(s->summary, "epoch_loss", s->loss_sum[set] / (double)s->loss_steps[set]);
    write_event(s, set, step, st);
  }
  s->loss_sum[set] = 0;
  s->loss_steps[set] = 0;
  pthread_mutex_unlock(&s->lock);
}
