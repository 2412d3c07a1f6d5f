/* The speech-to-text API's speed (clspeech/stt.h): a WAV streamed in pieces of PIECE_MS (20) as a live
 * source feeds it, an intermediate decode after every piece; prints the real-time factor (audio
 * seconds per wall second, model creation excluded), the latency of a feed + intermediate decode
 * (median, 95th percentile, max), the final transcript's time, the process's peak resident memory, and
 * the network's arithmetic rate as a fraction of the device's measured FMA peak (clspeech bench's).
 *   bench_stt MODEL_DIR FILE.wav [PIECE_MS [BEAM_WIDTH]]
 *   bench_stt --make N_HIDDEN ALPHABET DIR   writes a checkpoint folder of random weights (speed only)
 * One CPU core: POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1 (or POCL_DEVICES=basic). */
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "clspeech/base.h"
#include "clspeech/data.h"
#include "clspeech/model.h"
#include "clspeech/package.h"
#include "clspeech/internal/bench.h"
#include "clspeech/stt.h"

static int make(int n_hidden, const char *alphabet_path, const char *dir) {
  cls_error err;
  cls_alphabet *a = NULL;
  if (cls_alphabet_load(alphabet_path, &a, &err) != CLS_OK) {
    fprintf(stderr, "bench_stt: %s\n", err.text);
    return 1;
  }
  const cls_model_config cfg = cls_model_config_deepspeech(n_hidden, cls_alphabet_size(a) + 1);
  cls_alphabet_destroy(a);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  const size_t n = cls_model_layout(&cfg, views);
  float *p = malloc(n * sizeof *p), *zeros = calloc(n, sizeof *zeros); /* no Adam moments: zeros */
  if (!p || !zeros) return 1;
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    p[i] = (float)((double)(x >> 11) / 9007199254740992.0 - 0.5) * 0.1f;
  }
  cls_checkpoint_vars vars;
  memset(&vars, 0, sizeof vars);
  vars.learning_rate = 0.001f;
  vars.adam.beta1_power = 0.9f;
  vars.adam.beta2_power = 0.999f;
  char saved[CLS_PATH_CAP];
  cls_status st = cls_make_dirs(dir);
  if (st == CLS_OK)
    st = cls_checkpoint_save_in(dir, "train", 1, &cfg, p, zeros, zeros, &vars, NULL, 0, saved, sizeof saved, &err);
  if (st == CLS_OK) st = cls_checkpoint_describe(dir, alphabet_path, 16000, 32, 20, &err);
  free(p);
  free(zeros);
  if (st != CLS_OK) fprintf(stderr, "bench_stt: %s\n", err.text);
  else printf("bench_stt: %s: n_hidden %d, %zu parameters\n", saved, n_hidden, n);
  return st == CLS_OK ? 0 : 1;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The network's forward FLOPs per frame: the first layer over the context window, layers 2, 3 and 5,
 * the LSTM's four gates over [input, state], and the output layer (elementwise work left out). */
static double flops_per_frame(const cls_model_config *c) {
  const double h = c->n_hidden;
  return 2.0 * (cls_model_input_width(c) * h + 3.0 * h * h + 4.0 * h * 2.0 * h + h * c->n_classes);
}

/* The geometry of MODEL (a checkpoint folder or a .clsm package); 0 when it cannot be read. */
static int model_geometry(const char *path, cls_model_config *cfg) {
  cls_error err;
  cls_package *pkg = NULL;
  if (cls_package_open(path, &pkg, &err) == CLS_OK) {
    *cfg = cls_package_get_info(pkg)->model;
    cls_package_close(pkg);
    return 1;
  }
  char ckpt[CLS_PATH_CAP];
  return cls_checkpoint_choose(path, CLS_LOAD_AUTO, ckpt, sizeof ckpt, NULL, &err) == CLS_OK &&
         cls_checkpoint_peek_model(ckpt, cfg, &err) == CLS_OK;
}

/* The FMA peak of the device the model ran on (the default selection's first device), GFLOP/s; 0 on
 * failure. */
static double device_peak(const cls_model_config *cfg) {
  cls_engine *e = NULL;
  int sel[CLS_MAX_DEVICES], n_sel = 0;
  cls_bench_peak peak = {0};
  cls_bench_config bc = {cfg->n_hidden, 1, 16, 5, NULL, NULL, cfg->n_classes};
  if (cls_engine_create(NULL, &e) == CLS_OK && cls_engine_select(e, NULL, sel, CLS_MAX_DEVICES, &n_sel) == CLS_OK &&
      cls_engine_prepare(e, sel, &n_sel) == CLS_OK && n_sel > 0)
    cls_bench_peak_run(e, sel[0], &bc, &peak);
  cls_engine_destroy(e);
  return peak.fma_gflops;
}

int main(int argc, char **argv) {
  if (argc == 5 && !strcmp(argv[1], "--make")) return make(atoi(argv[2]), argv[3], argv[4]);
  if (argc < 3) {
    fprintf(stderr, "usage: bench_stt MODEL_DIR FILE.wav [PIECE_MS [BEAM_WIDTH]] | --make N_HIDDEN ALPHABET DIR\n");
    return 2;
  }
  const int piece_ms = argc > 3 ? atoi(argv[3]) : 20, beam = argc > 4 ? atoi(argv[4]) : 1024;
  SF_INFO info;
  memset(&info, 0, sizeof info);
  SNDFILE *f = sf_open(argv[2], SFM_READ, &info);
  if (!f || info.channels != 1) {
    fprintf(stderr, "bench_stt: %s: a mono WAV is needed\n", argv[2]);
    return 1;
  }
  int16_t *pcm = malloc((size_t)info.frames * sizeof *pcm);
  const size_t n = (size_t)sf_readf_short(f, pcm, info.frames);
  sf_close(f);
  char detail[2048];
  cls_stt_model *m = NULL;
  double t0 = cls_now_ms();
  int rc = cls_stt_model_create(argv[1], NULL, &m, detail, sizeof detail);
  if (rc != CLS_STT_OK) {
    fprintf(stderr, "bench_stt: %s: %s\n", cls_stt_error_message(rc), detail);
    return 1;
  }
  const double create_ms = cls_now_ms() - t0;
  cls_stt_model_set_beam_width(m, beam);
  char *text = NULL;
  /* A warm-up pass: the device compiles each kernel for its sizes the first time it runs (seconds on
   * PoCL); the figures are the steady state's. */
  t0 = cls_now_ms();
  rc = cls_stt_speech_to_text(m, pcm, n, info.samplerate, &text);
  cls_stt_string_free(text);
  text = NULL;
  const double warm_ms = cls_now_ms() - t0;
  const size_t piece = (size_t)info.samplerate * (size_t)piece_ms / 1000;
  const size_t pieces = (n + piece - 1) / piece;
  double *lat = malloc(pieces * sizeof *lat);
  cls_stt_stream *s = NULL;
  if (rc == CLS_STT_OK) rc = cls_stt_stream_create(m, &s);
  size_t k = 0;
  t0 = cls_now_ms();
  for (size_t at = 0; rc == CLS_STT_OK && at < n; at += piece, k++) {
    const double a = cls_now_ms();
    rc = cls_stt_stream_feed(s, pcm + at, n - at < piece ? n - at : piece);
    if (rc == CLS_STT_OK) rc = cls_stt_stream_intermediate(s, &text);
    cls_stt_string_free(text);
    text = NULL;
    lat[k] = cls_now_ms() - a;
  }
  const double b = cls_now_ms();
  if (rc == CLS_STT_OK) rc = cls_stt_stream_finish(s, &text);
  const double wall = cls_now_ms() - t0, finish_ms = cls_now_ms() - b;
  if (rc != CLS_STT_OK) {
    fprintf(stderr, "bench_stt: %s: %s\n", cls_stt_error_message(rc), cls_stt_stream_detail(s));
    return 1;
  }
  qsort(lat, k, sizeof *lat, by_value);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const double audio = (double)n / info.samplerate;
  printf("bench_stt: %s: %.2f s of audio in %zu pieces of %d ms, beam %d: %.3f s wall, real-time factor %.2f "
         "(audio s per wall s); feed + intermediate: median %.2f ms, p95 %.2f ms, max %.2f ms; finish %.2f ms; "
         "model created in %.0f ms, warm-up one-shot %.0f ms; peak RSS %.0f MiB\n",
         argv[1], audio, k, piece_ms, beam, wall / 1000.0, audio / (wall / 1000.0), lat[k / 2], lat[k * 95 / 100],
         lat[k - 1], finish_ms, create_ms, warm_ms, (double)ru.ru_maxrss / 1024.0);
  printf("%s\n", text);
  cls_model_config cfg;
  if (model_geometry(argv[1], &cfg)) {
    const double gflops = flops_per_frame(&cfg) * 50.0 * audio / (wall / 1000.0) / 1e9, peak = device_peak(&cfg);
    printf("bench_stt: n_hidden %d: %.1f MFLOP a frame, %.2f GFLOP/s streamed, %.1f %% of the device's FMA peak "
           "(%.1f GFLOP/s, measured after the stream)\n",
           cfg.n_hidden, flops_per_frame(&cfg) / 1e6, gflops, peak > 0 ? 100.0 * gflops / peak : 0.0, peak);
  }
  cls_stt_string_free(text);
  cls_stt_stream_free(s);
  cls_stt_model_free(m);
  free(lat);
  free(pcm);
  return 0;
}
