/* One-device training throughput of the DeepSpeech model: forward, CTC loss, backward and the Adam
 * update on synthetic context windows, for each --n_hidden, at B utterances of T frames (20 ms each).
 * Median step time over --steps after two warm-up steps; frames/s and audio-seconds/s.
 *   bench_train [--n_hidden 512,2048] [--batch 16] [--time 150] [--labels 40] [--steps 5] [--devices SEL] [--json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/internal/ops.h"
#include "clspeech/model.h"
#include "clspeech/ops.h"

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static cl_mem filled(cl_context ctx, cl_command_queue q, size_t n, unsigned seed, float scale) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
  float *h = malloc(n * sizeof *h);
  for (size_t i = 0; h && i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    h[i] = scale * ((float)(seed >> 8) / 8388608.0f - 1.0f);
  }
  if (m && h) clEnqueueWriteBuffer(q, m, CL_TRUE, 0, n * sizeof(float), h, 0, NULL, NULL);
  free(h);
  return m;
}

static cl_mem ints(cl_context ctx, const int32_t *v, size_t n) {
  cl_int err = CL_SUCCESS;
  return clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *v, (void *)v, &err);
}

static cls_status bench(cls_engine *e, int dev, int H, int B, int T, int L, int steps, int json) {
  cls_model_config cfg = cls_model_config_deepspeech(H, 29);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  size_t n = cls_model_layout(&cfg, views);
  cl_context ctx = NULL;
  cl_command_queue q = NULL;
  cls_status st = cls_engine_device_cl(e, dev, &ctx, NULL, &q);
  cls_model *model = NULL;
  cls_adam_plan *adam = NULL;
  if (st == CLS_OK) st = cls_model_create(e, dev, &cfg, T, B, L, &model);
  if (st == CLS_OK) st = cls_adam_create(e, dev, &adam);
  if (st != CLS_OK) return st;
  cl_mem p = filled(ctx, q, n, 1, 0.05f), g = filled(ctx, q, n, 2, 0), m = filled(ctx, q, n, 3, 0),
         v = filled(ctx, q, n, 4, 0);
  cl_mem x = filled(ctx, q, (size_t)T * B * cls_model_input_width(&cfg), 5, 1.0f);
  int32_t *seq = malloc((size_t)B * sizeof *seq), *lab = malloc((size_t)B * L * sizeof *lab), *ll = malloc((size_t)B * sizeof *ll);
  for (int b = 0; b < B; b++) {
    seq[b] = T - (b % 4) * (T / 10); /* a batch of sorted, nearly equal lengths */
    ll[b] = L;
    for (int k = 0; k < L; k++) lab[b * L + k] = (b * 7 + k * 3) % 28;
  }
  cl_mem sb = ints(ctx, seq, (size_t)B), lb = ints(ctx, lab, (size_t)B * L), llb = ints(ctx, ll, (size_t)B);
  cls_model_batch batch = {T, B, cls_buf_of(x), cls_buf_of(sb), cls_buf_of(lb), cls_buf_of(llb)};
  cls_model_dropout drop = {{0.05f, 0.05f, 0.05f, 0, 0, 0.05f}, 4568, 0, 0};
  cls_adam_state state = cls_adam_state_init(0.9f, 0.999f);
  float *losses = malloc((size_t)B * sizeof *losses);
  double t[64];
  for (int s = 0; st == CLS_OK && s < steps + 2; s++) {
    double t0 = cls_now_ms();
    drop.step = (uint32_t)s;
    st = cls_model_train_step(model, q, &batch, cls_buf_of(p), &drop, cls_buf_of(g), 1.0f / (float)B, CLS_OVERWRITE,
                              losses);
    if (st == CLS_OK)
      st = cls_adam_update(adam, q, n, cls_buf_of(p), cls_buf_of(m), cls_buf_of(v), cls_buf_of(g), 0.0001f, 0.9f, 0.999f,
                           1e-8f, &state, NULL);
    clFinish(q);
    if (s >= 2) t[s - 2] = cls_now_ms() - t0;
  }
  if (st == CLS_OK) {
    qsort(t, (size_t)steps, sizeof *t, compare_double);
    double ms = t[steps / 2], frames = 0;
    for (int b = 0; b < B; b++) frames += seq[b];
    const cls_device_info *d = cls_engine_device(e, dev);
    if (json)
      printf("{\"device\": \"%d:%d %s\", \"n_hidden\": %d, \"batch\": %d, \"time\": %d, \"ms\": %.3f, "
             "\"frames_per_second\": %.1f, \"audio_seconds_per_second\": %.2f, \"parameters\": %zu}\n",
             d->platform_index, d->device_index, d->name, H, B, T, ms, frames / (ms / 1e3), frames * 0.02 / (ms / 1e3), n);
    else
      printf("%-40.40s H=%-5d B=%-3d T=%-4d %10.1f ms/step %10.1f frames/s %8.2f audio-s/s (%zu parameters)\n", d->name,
             H, B, T, ms, frames / (ms / 1e3), frames * 0.02 / (ms / 1e3), n);
    fflush(stdout);
  }
  free(seq);
  free(lab);
  free(ll);
  free(losses);
  cl_mem all[] = {p, g, m, v, x, sb, lb, llb};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (all[i]) clReleaseMemObject(all[i]);
  cls_adam_destroy(adam);
  cls_model_destroy(model);
  return st;
}

int main(int argc, char **argv) {
  char hidden[128] = "512,2048";
  int B = 16, T = 150, L = 40, steps = 5, json = 0;
  const char *devices = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--n_hidden")) snprintf(hidden, sizeof hidden, "%s", argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--batch")) B = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--time")) T = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--labels")) L = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--steps")) steps = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--devices")) devices = argv[++i];
    else {
      fprintf(stderr, "usage: bench_train [--n_hidden 512,2048] [--batch 16] [--time 150] [--labels 40] [--steps 5] "
                      "[--devices SEL] [--json]\n");
      return 2;
    }
  }
  if (B < 1 || T < 10 || L < 1 || 2 * L + 1 > T - (T / 10) * 3 || steps < 1 || steps > 64) {
    fprintf(stderr, "bench_train: bad sizes (labels must fit the shortest utterance; steps 1..64)\n");
    return 2;
  }
  cls_engine *e = NULL;
  cls_status st = cls_engine_create(NULL, &e);
  int sel[CLS_MAX_DEVICES], n = 0;
  if (st == CLS_OK) st = cls_engine_select(e, devices, sel, CLS_MAX_DEVICES, &n);
  if (st == CLS_OK) st = cls_engine_prepare(e, sel, &n);
  for (char *tok = strtok(hidden, ","); st == CLS_OK && tok; tok = strtok(NULL, ","))
    for (int i = 0; st == CLS_OK && i < n; i++) {
      fprintf(stderr, "bench_train: H=%d on device %d...\n", atoi(tok), sel[i]);
      st = bench(e, sel[i], atoi(tok), B, T, L, steps, json);
    }
  if (st != CLS_OK) fprintf(stderr, "bench_train: %s\n", cls_engine_error(e));
  cls_engine_destroy(e);
  return st == CLS_OK ? 0 : 1;
}
