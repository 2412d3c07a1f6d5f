/* The training step as every benchmark times it (see bench_step.h and cls_bench_step_config in
 * clspeech/internal/bench.h): training's own step (train/step.h, cls_step_run, planned as training
 * plans it) on a trainer of default options with a synthetic batch, timed by the wall clock, and
 * once profiled by op on the first tower's compute queue. `clspeech bench`'s training step on one
 * device and on all devices as towers, and the bench_train program, run it. Prints nothing. */
#include "bench/bench_step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_profile.h"
#include "clspeech/base.h"
#include "device/log.h"
#include "model/tower.h"
#include "train/step.h"
#include "train/trainer.h"

#define PI 3.14159265358979323846

struct cls_bench_step {
  cls_engine *e;
  cls_bench_step_config c;
  cls_trainer *t;
  cls_host_batch b;
  float *audio;          /* the longest utterance's samples, which every utterance's audio begins with */
  size_t n_params;
  double frame_ms;
};

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void cls_bench_audio(float *x, size_t n) {
  unsigned seed = 7;
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    double s = (double)i / 16000.0;
    x[i] = (float)(0.3 * sin(2 * PI * 220.0 * s) + 0.2 * sin(2 * PI * 1375.0 * s) +
                   0.05 * ((double)(seed >> 8) / 8388608.0 - 1.0));
  }
}

/* Waits until every tower's queues are idle; a tower's failure is reported as the crew reports it. */
static cls_status finish_towers(cls_crew *crew) {
  cls_status st = CLS_OK;
  for (int i = 0; st == CLS_OK && i < crew->n_towers; i++)
    if (crew->towers[i].tower)
      st = cls_crew_tower_status(crew, &crew->towers[i], cls_tower_finish(crew->towers[i].tower));
  return st;
}

cls_status cls_bench_towers_steps(cls_trainer *t, const cls_host_batch *b, int warm, int runs, double *times,
                                  double *last_loss) {
  cls_crew *crew = cls_trainer_crew(t);
  cls_step *step = NULL;
  cls_status st = cls_step_create(crew, &step);
  cls_step_result r;
  memset(&r, 0, sizeof r);
  for (int k = -warm; st == CLS_OK && k < runs; k++) {
    double t0 = cls_now_ms();
    const cls_step_plan plan = cls_step_plan_default(crew, b);
    st = cls_step_run(step, &plan, &r);
    if (st == CLS_OK) st = finish_towers(crew);
    if (k >= 0) times[k] = cls_now_ms() - t0;
  }
  if (last_loss) *last_loss = r.mean_loss;
  cls_step_destroy(step);
  return st;
}

/* The global batch of N utterances, as the loader would hand it over: context windows, or audio of
 * exactly frames[u] MFCC frames (the crew's feature tables). */
static cls_status make_batch(cls_bench_step *s, const cls_crew *crew, int N, int L) {
  const cls_bench_step_config *c = &s->c;
  cls_host_batch *b = &s->b;
  const int T = c->time;
  b->batch = N;
  b->time = T;
  b->max_label = L;
  b->frames = malloc((size_t)N * sizeof *b->frames);
  b->labels = malloc((size_t)N * L * sizeof *b->labels);
  b->label_len = malloc((size_t)N * sizeof *b->label_len);
  bool ok = b->frames && b->labels && b->label_len;
  for (int u = 0; ok && u < N; u++) {
    b->frames[u] = c->varied ? cls_bench_varied_frames(T, u) : T;
    b->label_len[u] = L;
    for (int k = 0; k < L; k++) b->labels[(size_t)u * L + k] = (u * 7 + k * 3) % (c->n_classes - 1);
  }
  b->host_windows = c->host_features;
  if (ok && c->host_features) {
    const size_t n = (size_t)T * N * (size_t)cls_model_input_width(&crew->o.model);
    b->windows = malloc(n * sizeof *b->windows);
    unsigned seed = 22;
    for (size_t i = 0; b->windows && i < n; i++) {
      seed = seed * 1664525u + 1013904223u;
      b->windows[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
    }
    ok = b->windows != NULL;
  } else if (ok) {
    const size_t step = (size_t)crew->tables->step, window = (size_t)crew->tables->window;
    const size_t most = (size_t)(T - 1) * step + window;
    s->audio = malloc(most * sizeof *s->audio);
    b->audio = malloc((size_t)N * sizeof *b->audio);
    b->n_audio = malloc((size_t)N * sizeof *b->n_audio);
    ok = s->audio && b->audio && b->n_audio;
    if (ok) cls_bench_audio(s->audio, most);
    for (int u = 0; ok && u < N; u++) {
      b->audio[u] = s->audio;
      b->n_audio[u] = (size_t)(b->frames[u] - 1) * step + window;
      b->audio_seconds += (double)b->n_audio[u] / crew->tables->cfg.sample_rate;
    }
  }
  return ok ? CLS_OK : cls_fail(s->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for the bench's batch");
}

cls_status cls_bench_step_open(cls_engine *e, const int *devices, int n, const cls_bench_step_config *c,
                               cls_bench_step **out) {
  *out = NULL;
  if (n < 1 || c->batch < 1 || c->time < 1 || c->n_classes < 2 || c->runs < 1 || c->runs > CLS_BENCH_MAX_RUNS ||
      c->warmups < 0)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "bench: a training step of %d towers, B=%d, T=%d, %d runs", n,
                    c->batch, c->time, c->runs);
  cls_bench_step *s = calloc(1, sizeof *s);
  if (!s) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  s->e = e;
  s->c = *c;
  const int B = c->batch, T = c->time, L = c->labels > 0 ? c->labels : cls_bench_label_length(T);
  cls_train_options o = cls_train_options_default(c->n_hidden, c->n_classes);
  o.train_batch_size = o.dev_batch_size = o.test_batch_size = B;
  o.learning_rate = 1e-4f;
  o.load_train = CLS_LOAD_INIT;
  o.host_features = c->host_features;
  o.replica_check_steps = 0;
  cls_param_view views[CLS_MODEL_N_TENSORS];
  s->n_params = cls_model_layout(&o.model, views);
  s->frame_ms = o.features.win_step_ms;
  cls_status st = cls_trainer_create(e, devices, n, &o, B, T, L, &s->t);
  if (st == CLS_OK) st = cls_trainer_load(s->t, CLS_LOAD_INIT, 0);
  if (st == CLS_OK) st = make_batch(s, cls_trainer_crew(s->t), B * n, L);
  if (st != CLS_OK) {
    cls_bench_step_close(s);
    return st;
  }
  *out = s;
  return CLS_OK;
}

void cls_bench_step_close(cls_bench_step *s) {
  if (!s) return;
  cls_trainer_destroy(s->t);
  free(s->b.frames);
  free(s->b.labels);
  free(s->b.label_len);
  free(s->b.windows);
  free(s->b.audio);
  free(s->b.n_audio);
  free(s->audio);
  free(s);
}

cls_status cls_bench_step_time(cls_bench_step *s, cls_bench_train *out) {
  memset(out, 0, sizeof *out);
  out->n_params = s->n_params;
  out->frame_ms = s->frame_ms;
  for (int u = 0; u < s->b.batch; u++) out->frames += s->b.frames[u];
  double times[CLS_BENCH_MAX_RUNS];
  cls_status st = cls_bench_towers_steps(s->t, &s->b, s->c.warmups, s->c.runs, times, NULL);
  if (st == CLS_OK) {
    qsort(times, (size_t)s->c.runs, sizeof *times, compare_double);
    out->ms = times[s->c.runs / 2];
  }
  return st;
}

static cls_status marker(cls_engine *e, cl_command_queue q, cl_event *ev) {
  cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, ev);
  if (err == CL_SUCCESS) err = clFlush(q);
  return err == CL_SUCCESS ? CLS_OK
                           : cls_fail(e, CLS_ERR_OPENCL, "bench: enqueueing a marker failed: %s", cls_cl_error_name(err));
}

static cls_status marker_end(cls_engine *e, cl_event ev, cl_ulong *end) {
  cl_int err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof *end, end, NULL);
  if (err != CL_SUCCESS)
    return cls_fail(e, CLS_ERR_OPENCL, "bench: reading a marker's profiling event failed: %s", cls_cl_error_name(err));
  return CLS_OK;
}

cls_status cls_bench_step_profile(cls_bench_step *s, const cls_gemm_shape *shapes, const double *gemm_ms, int n_shapes,
                                  cls_bench_profile *out) {
  memset(out, 0, sizeof *out);
  cls_engine *e = s->e;
  cls_crew *crew = cls_trainer_crew(s->t);
  cls_tower *tower = crew->n_towers > 0 ? crew->towers[0].tower : NULL;
  if (!tower) return cls_crew_no_tower(crew);
  const cl_command_queue q = cls_tower_queue(tower);
  cls_step *step = NULL;
  cls_status st = cls_step_create(crew, &step);
  if (st == CLS_OK) st = finish_towers(crew);
  cls_bench_recorder *r = NULL;
  if (st == CLS_OK) st = cls_bench_recorder_open(e, q, &r);
  cl_event marks[2] = {NULL, NULL};
  double t0 = cls_now_ms();
  if (st == CLS_OK) st = marker(e, q, &marks[0]);
  cls_step_result result;
  const cls_step_plan plan = cls_step_plan_default(crew, &s->b);
  if (st == CLS_OK) st = cls_step_run(step, &plan, &result);
  if (st == CLS_OK) st = finish_towers(crew);
  if (st == CLS_OK) st = marker(e, q, &marks[1]);
  if (st == CLS_OK && clFinish(q) != CL_SUCCESS) st = cls_fail(e, CLS_ERR_OPENCL, "bench: clFinish failed");
  out->wall_ms = cls_now_ms() - t0;
  cl_ulong end[2] = {0, 0}, mfcc_end = 0;
  for (int i = 0; i < 2 && st == CLS_OK; i++) st = marker_end(e, marks[i], &end[i]);
  out->device_ms = end[1] > end[0] ? (double)(end[1] - end[0]) * 1e-6 : 0;
  if (st == CLS_OK) st = cls_bench_recorder_group_end(r, CLS_PROFILE_MFCC, &mfcc_end);
  const double mfcc_ms = mfcc_end > end[0] ? (double)(mfcc_end - end[0]) * 1e-6 : 0;
  if (st == CLS_OK) st = cls_bench_recorder_rows(r, mfcc_ms, shapes, gemm_ms, n_shapes, out);
  if (st != CLS_OK) clFinish(q);
  cls_bench_recorder_close(r);
  for (int i = 0; i < 2; i++)
    if (marks[i]) clReleaseEvent(marks[i]);
  cls_step_destroy(step);
  return st;
}

cls_status cls_bench_step_run(cls_engine *e, const int *devices, int n, const cls_bench_step_config *c,
                              cls_bench_train *out) {
  memset(out, 0, sizeof *out);
  cls_bench_step *s = NULL;
  cls_status st = cls_bench_step_open(e, devices, n, c, &s);
  if (st == CLS_OK) st = cls_bench_step_time(s, out);
  cls_bench_step_close(s);
  return st;
}

/* `clspeech bench`'s step: B utterances of T frames per tower, audio (training's default). */
static cls_bench_step_config bench_config(const cls_bench_config *cfg) {
  cls_bench_step_config c = {cfg->n_hidden, cfg->n_classes, cfg->batch, cfg->time, 0, 0, 0, 2, cfg->runs};
  return c;
}

cls_status cls_bench_train_profile_run(cls_engine *e, int device, const cls_bench_config *cfg,
                                       const cls_gemm_shape *shapes, const double *gemm_ms, int n_shapes,
                                       cls_bench_train *out, cls_bench_profile *profile) {
  memset(out, 0, sizeof *out);
  if (profile) memset(profile, 0, sizeof *profile);
  const cls_bench_step_config c = bench_config(cfg);
  cls_bench_step *s = NULL;
  cls_status st = cls_bench_step_open(e, &device, 1, &c, &s);
  if (st == CLS_OK)
    cls_bench_progress(cfg, "training step H=%d (training's step: MFCC, forward, CTC, backward, reduction, Adam)",
                       cfg->n_hidden);
  if (st == CLS_OK) st = cls_bench_step_time(s, out);
  if (st == CLS_OK && profile) {
    cls_bench_progress(cfg, "training step H=%d once more, profiled by op (with the batch's MFCC)", cfg->n_hidden);
    st = cls_bench_step_profile(s, shapes, gemm_ms, n_shapes, profile);
  }
  cls_bench_step_close(s);
  return st;
}

cls_status cls_bench_train_run(cls_engine *e, int device, const cls_bench_config *cfg, cls_bench_train *out) {
  return cls_bench_train_profile_run(e, device, cfg, NULL, NULL, 0, out, NULL);
}

cls_status cls_bench_towers_run(cls_engine *e, const int *devices, int n, const cls_bench_config *cfg,
                                cls_bench_train *out) {
  const cls_bench_step_config c = bench_config(cfg);
  cls_bench_progress(cfg, "all %d devices as towers: training's step H=%d, %d utterances per tower", n, cfg->n_hidden,
                     cfg->batch);
  return cls_bench_step_run(e, devices, n, &c, out);
}
