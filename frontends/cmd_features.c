/* `clspeech features --audio FILE [--out FILE.npy]`: DeepSpeech's MFCC features of one audio file,
 * on the default device (or the host with --features_device host), written as a [T, 26] float32
 * .npy or summarised. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clspeech/features.h"
#include "flags.h"
#include "npy_writer.h"

static int device_features(const char *devices, const cls_mfcc_tables *t, const cls_audio *a, float *out, char *where,
                           size_t where_cap) {
  cls_engine *engine = NULL;
  int sel[CLS_MAX_DEVICES], n = 0;
  int rc = cli_open_devices("features", devices, &engine, sel, CLS_MAX_DEVICES, &n);
  if (rc) return rc;
  cls_status st = CLS_OK;
  cls_mfcc_plan *plan = NULL;
  st = cls_mfcc_create(engine, sel[0], t, &plan);
  const float *samples[1] = {a->samples};
  size_t n_samples[1] = {a->n_samples};
  if (st == CLS_OK) st = cls_mfcc_compute_host(plan, 1, samples, n_samples, NULL, out);
  if (st == CLS_OK) {
    const cls_device_info *d = cls_engine_device(engine, sel[0]);
    snprintf(where, where_cap, "computed on device %d:%d (%s)", d->platform_index, d->device_index, d->name);
  } else {
    rc = cli_report("features", engine, st);
  }
  cls_mfcc_destroy(plan);
  cls_engine_destroy(engine);
  return rc;
}

/* The flags of `clspeech features`, as given. */
typedef struct features_flags {
  const char *audio, *out, *devices, *where, *cache;
  int rate, win, step;
} features_flags;

/* The flags parsed and checked; *on_host for --features_device host. 0, -1 after --help (exit status 0),
 * or the exit status. */
static int parse_features_flags(int argc, char **argv, features_flags *ff, int *on_host) {
  cli_flag flags[] = {
      {"audio", CLI_STRING, &ff->audio, "the audio file (WAV, FLAC or OGG; any rate, several channels are averaged)",
       false},
      {"out", CLI_STRING, &ff->out, "write the [frames, 26] float32 matrix here as .npy (default: print a summary)",
       false},
      {"audio_sample_rate", CLI_INT, &ff->rate, "sample rate the features are computed at; other rates are resampled",
       false},
      {"feature_win_len", CLI_INT, &ff->win, "feature window length in milliseconds", false},
      {"feature_win_step", CLI_INT, &ff->step, "feature window step in milliseconds", false},
      {"features_device", CLI_STRING, &ff->where, "where to compute: device (OpenCL) or host (plain C)", false},
      {"devices", CLI_STRING, &ff->devices, "device selection for --features_device device (the first one is used)",
       false},
      {"feature_cache", CLI_STRING, &ff->cache, "folder caching features per file (path, size, mtime and parameters)",
       false},
  };
  int rc = cli_parse_flags(argc, argv, 2, flags, (int)(sizeof flags / sizeof flags[0]), "features",
                           "Computes DeepSpeech's MFCC features of one audio file.", NULL, 0, NULL);
  if (rc) return rc == 1 ? -1 : CLI_EXIT_USAGE;
  if (!*ff->audio) {
    fprintf(stderr, "clspeech features: --audio FILE is required\n");
    return CLI_EXIT_USAGE;
  }
  if ((rc = cli_refuse_input("features", "--out", ff->out, "--audio", ff->audio))) return rc;
  *on_host = !strcmp(ff->where, "host");
  if (!*on_host && strcmp(ff->where, "device")) {
    fprintf(stderr, "clspeech features: --features_device must be device or host, not \"%s\"\n", ff->where);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* The features computed from the audio (read, resampled, on the host or the device), stored in
 * --feature_cache under `key` when there is one. *feats (malloc'ed, the caller frees it), *frames, *seconds
 * (the audio's length) and `where` they were computed. 0 or the exit status. */
static int compute_features(const features_flags *ff, int on_host, const cls_mfcc_tables *t, const char *key,
                            float **feats, size_t *frames, double *seconds, char *where, size_t where_cap) {
  cls_error err;
  cls_audio a;
  if (cls_audio_read(ff->audio, ff->rate, &a, &err) != CLS_OK) {
    fprintf(stderr, "clspeech features: %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  if (a.source_rate != a.sample_rate)
    fprintf(stderr, "clspeech: warning: %s is %d Hz; resampled to %d Hz\n", ff->audio, a.source_rate, a.sample_rate);
  *seconds = (double)a.n_samples / a.sample_rate;
  *frames = cls_mfcc_frames(t, a.n_samples);
  int rc = 0;
  if (*frames == 0) {
    fprintf(stderr, "clspeech features: %s: shorter than one feature window (%zu samples < %d)\n", ff->audio,
            a.n_samples, t->window);
    rc = CLI_EXIT_FAILURE;
  } else if (!(*feats = malloc(*frames * (size_t)t->cfg.n_coeff * sizeof **feats))) {
    fprintf(stderr, "clspeech features: out of memory\n");
    rc = CLI_EXIT_FAILURE;
  } else if (on_host) {
    cls_mfcc_host(t, a.samples, a.n_samples, *feats);
    snprintf(where, where_cap, "computed on the host");
  } else {
    rc = device_features(ff->devices, t, &a, *feats, where, where_cap);
  }
  cls_audio_free(&a);
  if (!rc && *ff->cache && *key &&
      cls_feature_cache_store(ff->cache, key, t->cfg.n_coeff, *feats, *frames, &err) != CLS_OK)
    fprintf(stderr, "clspeech: warning: %s\n", err.text);
  return rc;
}

/* The summary printed without --out: frames, audio length, where computed, and each coefficient's mean,
 * min and max. */
static void print_summary(const features_flags *ff, const float *feats, size_t frames, int n_coeff, double seconds,
                          const char *where) {
  printf("%s: %zu frames x %d coefficients", ff->audio, frames, n_coeff);
  if (seconds >= 0) printf(", %.2f s of audio at %d Hz", seconds, ff->rate);
  printf(", %s\n", where);
  printf("%-6s %10s %10s %10s\n", "coeff", "mean", "min", "max");
  for (int k = 0; k < n_coeff; k++) {
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (size_t f = 0; f < frames; f++) {
      double v = feats[f * (size_t)n_coeff + (size_t)k];
      sum += v;
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    printf("%-6d %10.4f %10.4f %10.4f\n", k, sum / (double)frames, lo, hi);
  }
}

int cmd_features(int argc, char **argv) {
  features_flags ff = {"", "", "", "device", "", 16000, 32, 20};
  int on_host = 0;
  int rc = parse_features_flags(argc, argv, &ff, &on_host);
  if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
  cls_error err;
  cls_mfcc_config cfg = cls_mfcc_default(ff.rate);
  cfg.win_len_ms = ff.win;
  cfg.win_step_ms = ff.step;
  cls_mfcc_tables *t = NULL;
  if (cls_mfcc_tables_create(&cfg, &t, &err) != CLS_OK) {
    fprintf(stderr, "clspeech features: %s\n", err.text);
    return CLI_EXIT_USAGE;
  }
  float *feats = NULL;
  size_t frames = 0;
  char key[65] = "", where[512] = "read from the feature cache";
  double seconds = -1;
  if (*ff.cache && cls_feature_cache_key(ff.audio, &cfg, key, &err) == CLS_OK)
    cls_feature_cache_load(ff.cache, key, cfg.n_coeff, &feats, &frames);
  if (!feats) rc = compute_features(&ff, on_host, t, key, &feats, &frames, &seconds, where, sizeof where);
  if (!rc && *ff.out) {
    if (npy_write_f32(ff.out, feats, frames, (size_t)cfg.n_coeff, &err)) {
      fprintf(stderr, "clspeech features: %s\n", err.text);
      rc = CLI_EXIT_FAILURE;
    } else {
      printf("%s: %zu frames x %d coefficients written to %s (%s)\n", ff.audio, frames, cfg.n_coeff, ff.out, where);
    }
  } else if (!rc) {
    print_summary(&ff, feats, frames, cfg.n_coeff, seconds, where);
  }
  free(feats);
  cls_mfcc_tables_destroy(t);
  return rc;
}
