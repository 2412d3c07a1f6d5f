/* Feature throughput (seconds of audio per second) of DeepSpeech's MFCC on each OpenCL device and on
 * the host path, for a batch of utterances (one file repeated), median of --reps runs after one
 * warm-up. Device runs include the upload of samples and the download of the features.
 *   bench_features --audio FILE [--batch 16] [--reps 5] [--devices SEL] [--json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/clspeech.h"
#include "clspeech/features.h"

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void report(int json, const char *where, double ms, double audio_s, int batch) {
  if (json)
    printf("{\"path\": \"%s\", \"batch\": %d, \"ms\": %.4f, \"audio_seconds_per_second\": %.1f}\n", where, batch, ms,
           audio_s / (ms / 1e3));
  else
    printf("%-50.50s %8.3f ms %12.1f audio-s/s\n", where, ms, audio_s / (ms / 1e3));
  fflush(stdout);
}

int main(int argc, char **argv) {
  const char *audio = NULL, *devices = NULL;
  int batch = 16, reps = 5, json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--audio")) audio = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--batch")) batch = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--devices")) devices = argv[++i];
    else {
      fprintf(stderr, "usage: bench_features --audio FILE [--batch 16] [--reps 5] [--devices SEL] [--json]\n");
      return 2;
    }
  }
  if (!audio || batch < 1 || reps < 1 || reps > 100) {
    fprintf(stderr, "bench_features: --audio FILE is required; batch >= 1, reps 1..100\n");
    return 2;
  }
  cls_error err;
  cls_audio a;
  if (cls_audio_read(audio, 16000, &a, &err) != CLS_OK) {
    fprintf(stderr, "bench_features: %s\n", err.text);
    return 1;
  }
  cls_mfcc_config cfg = cls_mfcc_default(16000);
  cls_mfcc_tables *t = NULL;
  cls_mfcc_tables_create(&cfg, &t, &err);
  const float **samples = malloc((size_t)batch * sizeof *samples);
  size_t *n = malloc((size_t)batch * sizeof *n), frames = cls_mfcc_frames(t, a.n_samples);
  float *out = malloc((size_t)batch * frames * 26 * sizeof *out);
  for (int b = 0; b < batch; b++) {
    samples[b] = a.samples;
    n[b] = a.n_samples;
  }
  const double audio_s = (double)a.n_samples / 16000.0 * batch;
  double times[101];
  for (int r = 0; r <= reps; r++) {
    double t0 = cls_now_ms();
    for (int b = 0; b < batch; b++) cls_mfcc_host(t, a.samples, a.n_samples, out + (size_t)b * frames * 26);
    times[r] = cls_now_ms() - t0;
  }
  qsort(times + 1, (size_t)reps, sizeof *times, compare_double);
  report(json, "host (plain C, double)", times[1 + reps / 2], audio_s, batch);

  cls_engine *e = NULL;
  cls_status st = cls_engine_create(NULL, &e);
  int sel[CLS_MAX_DEVICES], nsel = 0;
  if (st == CLS_OK) st = cls_engine_select(e, devices, sel, CLS_MAX_DEVICES, &nsel);
  if (st == CLS_OK) st = cls_engine_prepare(e, sel, &nsel);
  for (int i = 0; st == CLS_OK && i < nsel; i++) {
    cls_mfcc_plan *plan = NULL;
    st = cls_mfcc_create(e, sel[i], t, &plan);
    for (int r = 0; st == CLS_OK && r <= reps; r++) {
      double t0 = cls_now_ms();
      st = cls_mfcc_compute_host(plan, batch, samples, n, NULL, out);
      times[r] = cls_now_ms() - t0;
    }
    if (st == CLS_OK) {
      qsort(times + 1, (size_t)reps, sizeof *times, compare_double);
      const cls_device_info *d = cls_engine_device(e, sel[i]);
      char where[400];
      snprintf(where, sizeof where, "device %d:%d %s%s", d->platform_index, d->device_index, d->name,
               d->fp64 ? " (fp64 FFT)" : "");
      report(json, where, times[1 + reps / 2], audio_s, batch);
    }
    cls_mfcc_destroy(plan);
  }
  if (st != CLS_OK) fprintf(stderr, "bench_features: %s\n", cls_engine_error(e));
  cls_engine_destroy(e);
  cls_mfcc_tables_destroy(t);
  cls_audio_free(&a);
  free(samples);
  free(n);
  free(out);
  return st == CLS_OK ? 0 : 1;
}
