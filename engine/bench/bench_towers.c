/* `clspeech bench`'s row for all selected devices together as towers: training's step (train/step.h,
 * cls_step_run: split by measured speed, every tower's forward and backward on its own thread, the
 * host reduction, Adam on every replica, the hooks training asks for) on a synthetic batch, planned
 * as training plans it, timed by the wall clock. */
#include "bench/bench_towers.h"

#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/internal/bench.h"
#include "device/log.h"
#include "train/step.h"
#include "train/trainer.h"

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
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
    for (int i = 0; st == CLS_OK && i < crew->n_towers; i++)
      if (crew->towers[i].tower)
        st = cls_crew_tower_status(crew, &crew->towers[i], cls_tower_finish(crew->towers[i].tower));
    if (k >= 0) times[k] = cls_now_ms() - t0;
  }
  if (last_loss) *last_loss = r.mean_loss;
  cls_step_destroy(step);
  return st;
}

cls_status cls_bench_towers_run(cls_engine *e, const int *devices, int n, const cls_bench_config *cfg,
                                cls_bench_train *out) {
  memset(out, 0, sizeof *out);
  const int B = cfg->batch, T = cfg->time, L = cls_bench_label_length(T), N = B * n;
  cls_train_options o = cls_train_options_default(cfg->n_hidden, cfg->n_classes);
  const size_t I = (size_t)cls_model_input_width(&o.model);
  o.train_batch_size = o.dev_batch_size = o.test_batch_size = B;
  o.learning_rate = 1e-4f;
  o.load_train = CLS_LOAD_INIT;
  o.host_features = 1;
  o.replica_check_steps = 0;
  cls_param_view views[CLS_MODEL_N_TENSORS];
  out->n_params = cls_model_layout(&o.model, views);
  out->frames = (double)T * N;
  out->frame_ms = o.features.win_step_ms;
  /* The synthetic global batch, as the loader would hand it over. */
  cls_host_batch b;
  memset(&b, 0, sizeof b);
  b.batch = N;
  b.time = T;
  b.max_label = L;
  b.frames = malloc((size_t)N * sizeof *b.frames);
  b.windows = malloc((size_t)T * N * I * sizeof *b.windows);
  b.labels = malloc((size_t)N * L * sizeof *b.labels);
  b.label_len = malloc((size_t)N * sizeof *b.label_len);
  cls_status st = b.frames && b.windows && b.labels && b.label_len
                      ? CLS_OK
                      : cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for the towers' batch");
  unsigned seed = 22;
  for (size_t i = 0; st == CLS_OK && i < (size_t)T * N * I; i++) {
    seed = seed * 1664525u + 1013904223u;
    b.windows[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
  }
  for (int u = 0; st == CLS_OK && u < N; u++) {
    b.frames[u] = T;
    b.label_len[u] = L;
    for (int k = 0; k < L; k++) b.labels[(size_t)u * L + k] = (u * 7 + k * 3) % (o.model.n_classes - 1);
  }
  cls_trainer *t = NULL;
  if (st == CLS_OK) st = cls_trainer_create(e, devices, n, &o, B, T, L, &t);
  if (st == CLS_OK) st = cls_trainer_load(t, CLS_LOAD_INIT, 0);
  if (st == CLS_OK)
    cls_bench_progress(cfg, "all %d devices as towers: hybrid step H=%d, %d utterances per tower", n, cfg->n_hidden, B);
  double times[CLS_BENCH_MAX_RUNS];
  if (st == CLS_OK) st = cls_bench_towers_steps(t, &b, 2, cfg->runs, times, NULL);
  if (st == CLS_OK) {
    qsort(times, (size_t)cfg->runs, sizeof *times, compare_double);
    out->ms = times[cfg->runs / 2];
  }
  cls_trainer_destroy(t);
  free(b.frames);
  free(b.windows);
  free(b.labels);
  free(b.label_len);
  return st;
}
