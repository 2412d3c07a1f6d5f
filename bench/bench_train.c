/* One-device training throughput of the DeepSpeech model: training's own step (engine/train's
 * cls_step_run on a one-tower trainer, as `clspeech train` runs it: forward, CTC loss, backward, and
 * Adam on the gradient left on the device; clspeech/internal/bench.h,
 * cls_bench_step_run) on a synthetic batch for each --n_hidden, at B utterances of up to T frames (20 ms
 * each; lengths T - (b % 4) * (T / 10), as the PyTorch peer in compare_train.py). The batch carries
 * context windows (--features host, the default: the PyTorch peer's input too) or audio whose MFCC the
 * step computes on the device (--features device, `clspeech train`'s default). Median wall time over
 * --steps after two warm-up steps; frames/s and audio-seconds/s.
 *   bench_train [--n_hidden 512,2048] [--batch 16] [--time 150] [--labels 40] [--steps 5] [--features host]
 *               [--devices SEL] [--json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/internal/bench.h"

static cls_status bench(cls_engine *e, int dev, int H, int B, int T, int L, int steps, int host_features, int json) {
  cls_bench_step_config c = {.n_hidden = H, .n_classes = 29, .batch = B, .time = T, .labels = L, .varied = 1,
                             .host_features = host_features, .warmups = 2, .runs = steps};
  cls_bench_train r;
  cls_status st = cls_bench_step_run(e, &dev, 1, &c, &r);
  if (st == CLS_OK) {
    const double ms = r.ms, frames = r.frames, audio = frames * r.frame_ms / 1e3;
    const cls_device_info *d = cls_engine_device(e, dev);
    if (json)
      printf("{\"device\": \"%d:%d %s\", \"n_hidden\": %d, \"batch\": %d, \"time\": %d, \"ms\": %.3f, "
             "\"frames_per_second\": %.1f, \"audio_seconds_per_second\": %.2f, \"parameters\": %zu, "
             "\"features\": \"%s\"}\n",
             d->platform_index, d->device_index, d->name, H, B, T, ms, frames / (ms / 1e3), audio / (ms / 1e3),
             r.n_params, host_features ? "host" : "device");
    else
      printf("%-40.40s H=%-5d B=%-3d T=%-4d %10.1f ms/step %10.1f frames/s %8.2f audio-s/s (%zu parameters)\n", d->name,
             H, B, T, ms, frames / (ms / 1e3), audio / (ms / 1e3), r.n_params);
    fflush(stdout);
  }
  return st;
}

int main(int argc, char **argv) {
  char hidden[128] = "512,2048";
  int B = 16, T = 150, L = 40, steps = 5, json = 0, host_features = 1;
  const char *devices = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--n_hidden")) snprintf(hidden, sizeof hidden, "%s", argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--batch")) B = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--time")) T = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--labels")) L = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--steps")) steps = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--devices")) devices = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--features") &&
             (!strcmp(argv[i + 1], "host") || !strcmp(argv[i + 1], "device")))
      host_features = !strcmp(argv[++i], "host");
    else {
      fprintf(stderr, "usage: bench_train [--n_hidden 512,2048] [--batch 16] [--time 150] [--labels 40] [--steps 5] "
                      "[--features host|device] [--devices SEL] [--json]\n");
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
      st = bench(e, sel[i], atoi(tok), B, T, L, steps, host_features, json);
    }
  if (st != CLS_OK) fprintf(stderr, "bench_train: %s\n", cls_engine_error(e));
  cls_engine_destroy(e);
  return st == CLS_OK ? 0 : 1;
}
