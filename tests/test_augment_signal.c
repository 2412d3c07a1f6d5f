/* --augment on the host beyond volume, reverb and resample: the signal-domain time_mask, dropout, add
 * and multiply (features/augment/signal_domain.c) and overlay (features/augment/overlay.c) against the numpy
 * reference (tests/ref/augment_signal_ref.py, stored in tests/fixtures/augment_signal.safetensors), their
 * statistics over many draws, overlay's signal-to-noise rule fitted back out of its output and its bad
 * starts and rates refused, its source loading (data/overlay_source.c, train/augment_sources.c: one pool
 * per source), and codec's properties (features/augment/codec.c: no numpy reference, libopus is not
 * numpy's): length and timing kept, lossy but close, worse at lower bitrates, audio too short for its
 * rate kept, the start-up probe, and the bytes libsndfile really writes per bitrate. */
#include <float.h>
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "data_present.h"
#include "data_files.h"
#include "ops_test.h"
#include "augment_test.h"
#include "data/overlay_source.h"
#include "features/augment/codec.h"
#include "features/augment/overlay.h"
#include "features/augment/host_pass.h"
#include "features/augment/levels.h"
#include "features/augment/signal_domain.h"
#include "log_capture.h"
#include "train/augment_sources.h"

static const double PI = 3.14159265358979323846;

static float *alloc_floats(size_t n) {
  float *p = calloc(n ? n : 1, sizeof *p);
  CHECK(p != NULL, "out of memory for %zu floats", n);
  return p;
}

/* Tensor data may sit at any offset of the file: copied out, never read in place. */
static void *copy_tensor(const cls_safetensors *fx, const char *name, cls_dtype dtype, size_t elem, size_t *n) {
  const void *p = tst_tensor(fx, name, dtype, -1);
  const cls_tensor_info *t = cls_safetensors_find(fx, name);
  if (!p || !t) return NULL;
  *n = (size_t)cls_tensor_elements(t);
  void *out = malloc(*n * elem + 1);
  if (out) memcpy(out, p, *n * elem);
  return out;
}

/* ---- against the reference ---- */

static void test_reference(const cls_safetensors *fx) {
  /* augment_signal_ref.py's CASES (also in the metadata) */
  const struct { uint32_t utt; double clock; } cases[] = {{0, 0.0}, {1, 0.2},       {2, 0.5},  {9, 0.7},
                                                          {1000, 1.0}, {77777, 0.35}, {3, -0.5}, {12, 0.95}};
  enum { N_CASES = 8 };
  cls_augmentation augs[16];
  const int n_augs = augment_fixture_specs(fx, augs, 16);
  const uint32_t seed = (uint32_t)tst_meta_int(fx, "seed"), epoch = (uint32_t)tst_meta_int(fx, "epoch");
  const int rate = tst_meta_int(fx, "rate");
  size_t n = 0, n_pool = 0, n_starts = 0, n_out = 0, n_draws = 0;
  float *input = copy_tensor(fx, "input", CLS_F32, sizeof(float), &n);
  float *samples = copy_tensor(fx, "pool", CLS_F32, sizeof(float), &n_pool);
  int64_t *starts64 = copy_tensor(fx, "pool_starts", CLS_I64, sizeof(int64_t), &n_starts);
  float *want = copy_tensor(fx, "out", CLS_F32, sizeof(float), &n_out);
  double *draws = copy_tensor(fx, "overlay_draws", CLS_F64, sizeof(double), &n_draws);
  size_t starts[8];
  float *x = alloc_floats(n);
  CHECK(n_augs == 7 && n_out == N_CASES * n && n_starts >= 2 && n_starts <= 8, "the fixture's shapes");
  if (!input || !samples || !starts64 || !want || !draws || !x || n_augs != 7 || n_out != N_CASES * n ||
      n_starts < 2 || n_starts > 8)
    goto done;
  for (size_t i = 0; i < n_starts; i++) starts[i] = (size_t)starts64[i];
  const cls_audio_pool pool = {samples, n_pool, starts, (int)n_starts - 1, rate};
  const cls_audio_pool *sources[16] = {NULL};
  for (int j = 0; j < n_augs; j++) sources[j] = augs[j].kind == CLS_AUGMENT_OVERLAY ? &pool : NULL;
  /* the overlays' draws: snr and layers, then each layer's start */
  size_t row = 0;
  int bad = 0, overlays = 0, layers_seen = 0;
  for (int k = 0; k < N_CASES; k++) {
    cls_sample_op ops[16];
    const int got = cls_augment_sample_draw(augs, n_augs, seed, epoch, cases[k].utt, cases[k].clock, ops);
    for (int i = 0; i < got; i++, overlays++) {
      const double *w = draws + 6 * row++;
      bad += row > n_draws / 6 || w[0] != k || w[1] != ops[i].aug || fabs(w[2] - ops[i].v[0]) > 1e-9 * fmax(1, fabs(w[2])) ||
             w[3] != ops[i].v[1];
      for (int l = 0; l < (int)ops[i].v[1] && row < n_draws / 6; l++, layers_seen++) {
        const double *s = draws + 6 * row++;
        int clip;
        size_t offset;
        cls_augment_overlay_start(&pool, seed, epoch, cases[k].utt, ops[i].aug, l, &clip, &offset);
        bad += s[2] != l || s[3] != clip || s[4] != (double)offset;
      }
    }
  }
  CHECK(bad == 0 && row == n_draws / 6, "overlay draws: %d differ from the reference's, %zu of %zu rows read", bad, row,
        n_draws / 6);
  CHECK(overlays >= 8 && layers_seen >= 12, "the cases drew only %d overlays, %d layers", overlays, layers_seen);
  printf("  overlay draws: %d overlays, %d layer starts equal the reference's\n", overlays, layers_seen);
  /* the utterances after every host augmentation */
  double worst = 0;
  for (int k = 0; k < N_CASES; k++) {
    memcpy(x, input, n * sizeof *x);
    cls_error err;
    CHECK(cls_augment_samples(augs, n_augs, sources, seed, epoch, cases[k].utt, cases[k].clock, x, n, rate, &err) ==
              CLS_OK,
          "case %d: %s", k, err.text);
    char what[64];
    snprintf(what, sizeof what, "host augmentations, case %d", k);
    worst = fmax(worst, tst_compare(what, x, want + (size_t)k * n, n, 1e-6, 1e-7));
  }
  printf("  reference: %d utterances within 1e-6 relative + 1e-7 (largest |diff| %.3g)\n", N_CASES, worst);
done:
  free(input);
  free(samples);
  free(starts64);
  free(want);
  free(draws);
  free(x);
}

/* ---- statistics over many draws ---- */

static void test_statistics(void) {
  cls_error err;
  /* the fraction applied is p */
  const cls_augmentation masked = augment_parse_supported("time_mask[domain=signal,p=0.3,n=1,size=10:30]");
  enum { U = 4000 };
  float x[64];
  int applied = 0;
  for (uint32_t u = 0; u < U; u++) applied += cls_augment_signal(&masked, 0, 5, 1, u, 0.5, x, 64, 16000);
  CHECK(fabs((double)applied / U - 0.3) < 0.022, "time_mask p=0.3 applied to %.4f", (double)applied / U);
  /* one mask: one run of zeros, its length the pick in samples (10 .. 30 ms at 16 kHz as the clock runs) */
  const cls_augmentation one = augment_parse_supported("time_mask[domain=signal,n=1,size=10:30]");
  const size_t n = 16000;
  float *y = alloc_floats(n);
  int runs_bad = 0, size_bad = 0;
  for (uint32_t u = 0; y && u < 500; u++) {
    for (size_t i = 0; i < n; i++) y[i] = 0.25f;
    const double clock = u / 500.0;
    cls_augment_signal(&one, 0, 5, 1, u, clock, y, n, 16000);
    size_t first = n, last = 0, zeros = 0;
    for (size_t i = 0; i < n; i++)
      if (y[i] == 0.0f) first = i < first ? i : first, last = i, zeros++;
    runs_bad += zeros == 0 || last - first + 1 != zeros;
    size_bad += fabs((double)zeros - trunc((10 + 20 * clock) * 16.0)) > 0;
  }
  CHECK(runs_bad == 0 && size_bad == 0, "time masks: %d not one run of zeros, %d of the wrong size", runs_bad, size_bad);
  /* dropout: the fraction dropped is the rate; the others untouched */
  const size_t m = 200000;
  float *z = alloc_floats(m);
  if (!y || !z) goto done;
  const cls_augmentation drop = augment_parse_supported("dropout[domain=signal,rate=0.2]");
  for (size_t i = 0; i < m; i++) z[i] = 0.5f + (float)(i % 7) * 0.01f;
  cls_augment_signal(&drop, 2, 11, 3, 42, 0.0, z, m, 16000);
  size_t dropped = 0, changed = 0;
  for (size_t i = 0; i < m; i++) dropped += z[i] == 0.0f, changed += z[i] != 0.0f && z[i] != 0.5f + (float)(i % 7) * 0.01f;
  CHECK(fabs((double)dropped / m - 0.2) < 0.003 && changed == 0, "dropout rate 0.2: %.4f dropped, %zu others changed",
        (double)dropped / m, changed);
  /* add: zero-mean noise of the deviation, about 68.3% within one deviation */
  const cls_augmentation add = augment_parse_supported("add[domain=signal,stddev=0.1]");
  for (size_t i = 0; i < m; i++) z[i] = 0.5f;
  cls_augment_signal(&add, 1, 11, 3, 42, 0.0, z, m, 16000);
  double s1 = 0, s2 = 0, within = 0;
  for (size_t i = 0; i < m; i++) {
    const double d = z[i] - 0.5;
    s1 += d, s2 += d * d, within += fabs(d) < 0.1;
  }
  const double mean = s1 / m, sd = sqrt(s2 / m - mean * mean);
  CHECK(fabs(mean) < 1e-3 && fabs(sd - 0.1) < 1e-3 && fabs(within / m - 0.6827) < 0.005,
        "add stddev 0.1: mean %.5f, deviation %.5f, %.4f within one deviation", mean, sd, within / m);
  /* multiply: a factor of mean 1 and the deviation */
  const cls_augmentation mul = augment_parse_supported("multiply[domain=signal,stddev=0.2]");
  for (size_t i = 0; i < m; i++) z[i] = -0.5f;
  cls_augment_signal(&mul, 4, 11, 3, 43, 0.0, z, m, 16000);
  s1 = s2 = 0;
  for (size_t i = 0; i < m; i++) {
    const double f = z[i] / -0.5;
    s1 += f, s2 += f * f;
  }
  const double fmean = s1 / m, fsd = sqrt(s2 / m - fmean * fmean);
  CHECK(fabs(fmean - 1) < 2e-3 && fabs(fsd - 0.2) < 2e-3, "multiply stddev 0.2: factor mean %.5f, deviation %.5f", fmean,
        fsd);
  /* nothing renormalised or clipped afterwards */
  const cls_augmentation loud = augment_parse_supported("add[domain=signal,stddev=2]");
  for (size_t i = 0; i < n; i++) y[i] = 0.5f;
  cls_augment_signal(&loud, 0, 1, 1, 1, 0.0, y, n, 16000);
  float peak = 0;
  for (size_t i = 0; i < n; i++) peak = fmaxf(peak, fabsf(y[i]));
  CHECK(peak > 4.0f, "add stddev 2: peak %.2f, clipped or renormalised", peak);
  /* a deviation past float's range saturates: never inf or NaN, silence times noise stays 0 */
  const cls_augmentation huge[2] = {augment_parse_supported("multiply[domain=signal,stddev=1e300]"),
                                    augment_parse_supported("add[domain=signal,stddev=1e300]")};
  int finite = 1, saturated = 0;
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < n; i++) y[i] = i % 2 ? 0.5f : 0.0f;
    cls_augment_signal(&huge[k], k, 1, 1, 1, 0.0, y, n, 16000);
    for (size_t i = 0; i < n; i++) {
      finite &= isfinite(y[i]) && (k == 1 || i % 2 || y[i] == 0.0f);
      saturated += fabsf(y[i]) == FLT_MAX;
    }
  }
  CHECK(finite && saturated > 0, "a deviation of 1e300: values not finite (%d) or none saturated (%d)", !finite,
        saturated);
  /* the signal domain after the sample domain whatever the command-line order: a mask then volume keeps zeros */
  cls_augmentation both[2] = {augment_parse_supported("time_mask[domain=signal,n=1,size=100]"), augment_parse_supported("volume[dbfs=-20]")};
  for (size_t i = 0; i < n; i++) y[i] = 0.25f;
  CHECK(cls_augment_samples(both, 2, NULL, 3, 0, 7, 0.0, y, n, 16000, &err) == CLS_OK, "%s", err.text);
  size_t zeros = 0;
  for (size_t i = 0; i < n; i++) zeros += y[i] == 0.0f;
  CHECK(zeros == 1600 && fabs(cls_audio_max_dbfs(y, n) + 20) < 1e-4, "mask after volume: %zu zeros, peak %.3f dBFS",
        zeros, cls_audio_max_dbfs(y, n));
  printf("  statistics: p 0.3 -> %.4f; 500 masks one run of the picked size; dropout 0.2 -> %.4f; add sd %.5f "
         "(mean %.1e, %.4f within 1 sd); multiply factor %.5f sd %.5f\n",
         (double)applied / U, (double)dropped / m, sd, mean, within / m, fmean, fsd);
done:
  free(y);
  free(z);
}

/* ---- overlay: the SNR rule and the layers, fitted back out of the output ---- */

/* Least squares y ~ sum_k c[k] b[k] for k < nb (nb <= 3); the residual's largest magnitude. */
static double fit(const float *y, const double *const *b, int nb, size_t n, double *c) {
  double a[3][4] = {{0}};
  for (size_t i = 0; i < n; i++)
    for (int r = 0; r < nb; r++) {
      for (int k = 0; k < nb; k++) a[r][k] += b[r][i] * b[k][i];
      a[r][3] += b[r][i] * y[i];
    }
  for (int p = 0; p < nb; p++) /* Gauss-Jordan without pivoting: the bases are far from collinear */
    for (int r = 0; r < nb; r++) {
      if (r == p) continue;
      const double f = a[r][p] / a[p][p];
      for (int k = 0; k < 4; k++) a[r][k] -= f * a[p][k];
    }
  for (int r = 0; r < nb; r++) c[r] = a[r][3] / a[r][r];
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double v = y[i];
    for (int k = 0; k < nb; k++) v -= c[k] * b[k][i];
    worst = fmax(worst, fabs(v));
  }
  return worst;
}

static double peak_of(const double *v, size_t n) {
  double p = 0;
  for (size_t i = 0; i < n; i++) p = fmax(p, fabs(v[i]));
  return p;
}

/* One layer as the pool lays it from (clip, offset), independently of the code under test. */
static void lay(const cls_audio_pool *pool, int clip, size_t offset, double *out, size_t n) {
  size_t at = 0;
  while (at < n) {
    const size_t len = pool->clip_start[clip + 1] - pool->clip_start[clip];
    for (size_t i = offset; i < len && at < n; i++) out[at++] = pool->samples[pool->clip_start[clip] + i];
    clip = (clip + 1) % pool->n_clips;
    offset = 0;
  }
}

static void test_overlay(void) {
  enum { N = 16000 };
  static float clips[12000], y[N];
  static double x[N], m1[N], m2[N], sum[N];
  for (int i = 0; i < 12000; i++)
    clips[i] = (float)(0.3 * sin(2 * PI * 1234.5 * i / 16000.0) + 0.2 * sin(2 * PI * 3001.0 * i / 16000.0 + 1.0) *
                                                                         cos(2 * PI * 97.0 * i / 16000.0));
  size_t starts[3] = {0, 5000, 12000};
  const cls_audio_pool pool = {clips, 12000, starts, 2, 16000};
  for (int i = 0; i < N; i++) x[i] = 0.5 * sin(2 * PI * 440.0 * i / 16000.0);
  const double snrs[3] = {10.0, 0.0, -6.0};
  double worst_snr = 0, worst_level = 0, worst_resid = 0;
  cls_error err;
  for (int layers = 1; layers <= 2; layers++)
    for (int s = 0; s < 3; s++) {
      const int clip[2] = {1, 0};
      const size_t offset[2] = {3000, 1234};
      for (int i = 0; i < N; i++) y[i] = (float)x[i];
      CHECK(cls_augment_overlay(y, N, &pool, snrs[s], layers, clip, offset, &err) == CLS_OK, "overlay: %s", err.text);
      lay(&pool, clip[0], offset[0], m1, N);
      lay(&pool, clip[1], offset[1], m2, N);
      const double *bases[3] = {x, m1, m2};
      double c[3];
      const double resid = fit(y, bases, layers + 1, N, c);
      for (int i = 0; i < N; i++) sum[i] = m1[i] + (layers > 1 ? m2[i] : 0.0);
      /* DeepSpeech's rule: the overlay's gain is max_dbfs(x) - max_dbfs(overlay) - snr, with every layer the same */
      const double snr = 20 * log10(peak_of(x, N) / (peak_of(sum, N) * c[1] / c[0]));
      float ypeak = 0;
      for (int i = 0; i < N; i++) ypeak = fmaxf(ypeak, fabsf(y[i]));
      worst_snr = fmax(worst_snr, fabs(snr - snrs[s]));
      worst_level = fmax(worst_level, fabs(ypeak - 0.5));
      worst_resid = fmax(worst_resid, resid);
      CHECK(fabs(snr - snrs[s]) < 1e-6, "%d layers: fitted SNR %.6f dB, asked %.1f", layers, snr, snrs[s]);
      CHECK(layers == 1 || fabs(c[2] / c[1] - 1) < 1e-5, "the two layers' gains differ: %.7f and %.7f", c[1], c[2]);
      CHECK(resid < 2e-7, "%d layers: the output is not x and the layers laid end to end (residual %.3g)", layers, resid);
      CHECK(fabs(ypeak - 0.5) < 1e-6, "the mix's peak %.7f, not the utterance's 0.5", ypeak);
    }
  /* silence overlaid stays finite; no layers leave the utterance as it was */
  memset(y, 0, sizeof y);
  const int clip0 = 0;
  const size_t off0 = 0;
  CHECK(cls_augment_overlay(y, N, &pool, 3.0, 1, &clip0, &off0, &err) == CLS_OK, "%s", err.text);
  int finite = 1;
  for (int i = 0; i < N; i++) finite &= isfinite(y[i]) && fabsf(y[i]) < 1e-10f;
  CHECK(finite, "silence overlaid: not finite or not near silence");
  for (int i = 0; i < N; i++) y[i] = (float)x[i];
  CHECK(cls_augment_overlay(y, N, &pool, 3.0, 0, NULL, NULL, &err) == CLS_OK, "%s", err.text);
  double e = 0;
  for (int i = 0; i < N; i++) e = fmax(e, fabs(y[i] - (float)x[i]));
  CHECK(e < 1e-6, "no layers changed the utterance by %.3g", e);
  /* a start outside the pool (a clip past the last, an offset at or past its clip's end) is refused, never read */
  const int bad_clip[3] = {0, 1, 2};
  const size_t bad_offset[3] = {5000, 7000, 0};
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < N; i++) y[i] = (float)x[i];
    cls_error_clear(&err);
    CHECK(cls_augment_overlay(y, N, &pool, 3.0, 1, &bad_clip[k], &bad_offset[k], &err) == CLS_ERR_INVALID_ARGUMENT,
          "overlay from clip %d offset %zu was not refused", bad_clip[k], bad_offset[k]);
    CHECK_CONTAINS(err.text, "overlay: layer 0 starts");
    double d = 0;
    for (int i = 0; i < N; i++) d = fmax(d, fabs(y[i] - (float)x[i]));
    CHECK(d == 0, "a refused overlay changed the utterance by %.3g", d);
  }
  /* the pool at another rate than the utterance's is refused, naming both */
  cls_augmentation over = augment_parse_supported("overlay[source=unused.csv,snr=3]");
  const cls_audio_pool at8k = {clips, 12000, starts, 2, 8000};
  const cls_audio_pool *sources[1] = {&at8k};
  cls_error_clear(&err);
  CHECK(cls_augment_samples(&over, 1, sources, 1, 0, 0, 0.0, y, N, 16000, &err) == CLS_ERR_INVALID_ARGUMENT,
        "an 8 kHz overlay pool on 16 kHz audio was not refused");
  CHECK_CONTAINS(err.text, "overlay: its source audio is at 8000 Hz, the utterance at 16000 Hz");
  printf("  overlay: fitted SNR within %.2g dB of 10, 0, -6 dB with 1 and 2 layers; peak kept within %.2g; "
         "residual of the end-to-end layout %.2g\n",
         worst_snr, worst_level, worst_resid);
}

/* ---- overlay's source ---- */

static void write_silent_wav(const char *name) {
  SF_INFO info = {.samplerate = 16000, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
  const char *p = tmp_path(name);
  SNDFILE *f = sf_open(p, SFM_WRITE, &info);
  CHECK(f != NULL, "cannot write %s", p);
  if (!f) return;
  static const float zeros[1600];
  sf_writef_float(f, zeros, 1600);
  sf_close(f);
  remember(p);
}

static void test_source(void) {
  cls_audio_pool pool;
  cls_overlay_source_info info;
  cls_error err;
  cls_audio a;
  CHECK(cls_audio_read(SMOKE "/LDC93S1.wav", 16000, &a, &err) == CLS_OK, "%s", err.text);
  CHECK(cls_overlay_source_check(SMOKE "/ldc93s1.csv", &err) == CLS_OK, "check: %s", err.text);
  CHECK(cls_overlay_source_load(SMOKE "/ldc93s1.csv", 16000, &pool, &info, &err) == CLS_OK, "load: %s", err.text);
  CHECK(pool.n_clips == 1 && pool.n_samples == a.n_samples && info.rows == 1 && info.unreadable == 0 &&
            !memcmp(pool.samples, a.samples, a.n_samples * sizeof(float)),
        "LDC93S1 as a source: %d clips of %zu samples, not its %zu decoded samples", pool.n_clips, pool.n_samples,
        a.n_samples);
  cls_audio_pool_clear(&pool);
  CHECK(cls_overlay_source_load(SMOKE "/ldc93s1.csv", 8000, &pool, &info, &err) == CLS_OK, "load: %s", err.text);
  CHECK(pool.sample_rate == 8000 && labs((long)pool.n_samples - (long)(a.n_samples / 2)) <= 1,
        "at 8 kHz: %zu samples, not about %zu", pool.n_samples, a.n_samples / 2);
  cls_audio_pool_clear(&pool);
  cls_audio_free(&a);
  if (!data_files_open("augment-source")) return;
  write_text("header.csv", "wav_filename,wav_filesize,transcript\n");
  write_text("junk.wav", "not audio at all");
  write_silent_wav("silent.wav");
  write_text("junk.csv", "wav_filename,wav_filesize,transcript\njunk.wav,16,x\nnone.wav,1,x\n");
  write_text("silent.csv", "wav_filename,wav_filesize,transcript\nsilent.wav,3244,x\n");
  char text[1024];
  snprintf(text, sizeof text, "wav_filename,wav_filesize,transcript\njunk.wav,16,x\n%s/LDC93S1.wav,1,x\n", SMOKE);
  write_text("mixed.csv", text);
  const struct { const char *csv; cls_status check, load; const char *says; } bad[] = {
      {"missing.csv", CLS_ERR_IO, CLS_ERR_IO, "missing.csv: cannot open"},
      {"header.csv", CLS_ERR_INVALID_ARGUMENT, CLS_ERR_INVALID_ARGUMENT, "header.csv: the CSV lists no audio"},
      {"junk.csv", CLS_ERR_INVALID_ARGUMENT, CLS_ERR_INVALID_ARGUMENT, "junk.csv: none of its 2 audio files"},
      {"silent.csv", CLS_OK, CLS_ERR_INVALID_ARGUMENT, "silent.csv: its audio is silence only"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cls_error_clear(&err);
    CHECK(cls_overlay_source_check(tmp_path(bad[i].csv), &err) == bad[i].check, "check %s: %s", bad[i].csv, err.text);
    cls_error_clear(&err);
    CHECK(cls_overlay_source_load(tmp_path(bad[i].csv), 16000, &pool, &info, &err) == bad[i].load, "load %s: %s",
          bad[i].csv, err.text);
    CHECK_CONTAINS(err.text, bad[i].says);
    CHECK(pool.samples == NULL && pool.n_clips == 0, "a failed load left a pool");
  }
  CHECK(cls_overlay_source_load(tmp_path("mixed.csv"), 16000, &pool, &info, &err) == CLS_OK, "mixed: %s", err.text);
  CHECK(pool.n_clips == 1 && info.rows == 2 && info.unreadable == 1, "mixed: %d clips of %d rows, %d unreadable",
        pool.n_clips, info.rows, info.unreadable);
  CHECK_CONTAINS(info.first_unreadable, "junk.wav");
  cls_audio_pool_clear(&pool);
  /* for training: two overlays of one source share its pool; the rows left out are counted with the first reason */
  cls_engine_options eo;
  memset(&eo, 0, sizeof eo);
  eo.log = capture_log;
  cls_engine *e = NULL;
  if (cls_engine_create(&eo, &e) == CLS_OK) {
    char spec[3][700];
    snprintf(spec[0], sizeof spec[0], "overlay[source=%s,snr=3]", tmp_path("mixed.csv"));
    snprintf(spec[1], sizeof spec[1], "volume[dbfs=-3]");
    snprintf(spec[2], sizeof spec[2], "overlay[source=%s,snr=10,layers=2]", tmp_path("mixed.csv"));
    cls_augmentation augs[3];
    for (int k = 0; k < 3; k++) augs[k] = augment_parse_supported(spec[k]);
    cls_augment_sources src;
    log_text[0] = '\0';
    const cls_status loaded = cls_augment_sources_load(e, augs, 3, 16000, &src);
    CHECK(loaded == CLS_OK, "sources: %s", cls_engine_error(e));
    if (loaded == CLS_OK) {
      CHECK(src.by_aug[0] && src.by_aug[0] == src.by_aug[2] && !src.by_aug[1], "two overlays of one source: two pools");
      CHECK_CONTAINS(log_text, "1 of its 2 rows unreadable, left out (the first: ");
      CHECK_CONTAINS(log_text, "junk.wav");
      const char *again = strstr(log_text, "clip");
      CHECK(again && !strstr(again + 1, "clip"), "the shared source was loaded twice:\n%s", log_text);
      cls_augment_sources_free(&src);
    }
  } else {
    printf("  (no engine: %s; the shared source is not checked)\n", e ? cls_engine_error(e) : "no memory");
  }
  cls_engine_destroy(e);
  data_files_close();
  printf("  source: LDC93S1 loads as one clip (16 and 8 kHz); missing, header-only, unreadable and silent sources "
         "refused\n");
}

/* ---- codec ---- */

/* The lag in [-max, max] where y best correlates with x. */
static int best_lag(const float *x, const float *y, size_t n, int max) {
  int best = 0;
  double best_c = -INFINITY;
  for (int l = -max; l <= max; l++) {
    double c = 0;
    for (size_t i = (size_t)(l < 0 ? -l : 0); i < n && (long)i + l < (long)n; i++) c += (double)x[i] * y[i + l];
    if (c > best_c) best_c = c, best = l;
  }
  return best;
}

static double rms(const float *x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
  return sqrt(s / (double)n);
}

static double err_db(const float *x, const float *y, size_t n) {
  double e = 0, s = 0;
  for (size_t i = 0; i < n; i++) e += ((double)y[i] - x[i]) * ((double)y[i] - x[i]), s += (double)x[i] * x[i];
  return 10 * log10(e / s);
}

/* One round trip of x at `rate`: length, no lag, level close, changed; the error in dB (relative). */
static double codec_case(const float *x, size_t n, int rate, int bitrate, double *seconds) {
  float *y = alloc_floats(n);
  if (!y) return 0;
  memcpy(y, x, n * sizeof *y);
  cls_error err;
  const double t0 = (cls_now_ms() / 1e3);
  CHECK(cls_augment_codec(y, n, rate, bitrate, &err) == CLS_OK, "codec %d bps at %d Hz: %s", bitrate, rate, err.text);
  *seconds = (cls_now_ms() / 1e3) - t0;
  size_t tail = 0; /* the decoded end reaches the last samples (nothing zero-filled) */
  for (size_t i = n > 64 ? n - 64 : 0; i < n; i++) tail += y[i] != 0.0f;
  const int lag = best_lag(x, y, n, rate / 50);
  const double level = 20 * log10(rms(y, n) / rms(x, n)), e = err_db(x, y, n);
  int finite = 1;
  for (size_t i = 0; i < n; i++) finite &= isfinite(y[i]);
  CHECK(finite && tail > 0, "codec %d bps at %d Hz: not finite, or its end zero-filled", bitrate, rate);
  /* Opus keeps timing to a sample or two (its phase at low bitrates); libsndfile drops the pre-skip */
  CHECK(abs(lag) <= 2, "codec %d bps at %d Hz: lag %d samples", bitrate, rate, lag);
  CHECK(fabs(level) < 3.0, "codec %d bps at %d Hz: level changed by %.2f dB", bitrate, rate, level);
  CHECK(e > -40 && e < 3, "codec %d bps at %d Hz: error %.1f dB of the signal (unchanged or lost)", bitrate, rate, e);
  printf("  codec %6d bps at %5d Hz: lag %d, level %+.2f dB, error %.1f dB, %.1f ms per second of audio\n", bitrate,
         rate, lag, level, e, *seconds * 1e3 / ((double)n / rate));
  free(y);
  return e;
}

static void test_codec(void) {
  /* the bitrate libsndfile sets from the level: (int)((1 - q) 250000 + 6000) */
  const int rates[] = {500, 3200, 5999, 6000, 6001, 16000, 32000, 255999, 256000};
  for (size_t i = 0; i < sizeof rates / sizeof *rates; i++)
    CHECK((int)((1.0 - cls_codec_level(rates[i])) * 250000.0 + 6000.0) == rates[i], "level for %d bps", rates[i]);
  CHECK((int)((1.0 - cls_codec_level(100)) * 250000.0 + 6000.0) == CLS_CODEC_MIN_BITRATE, "100 bps not clamped");
  CHECK(cls_codec_rate(16000) == 16000 && cls_codec_rate(44100) == 48000 && cls_codec_rate(22050) == 24000 &&
            cls_codec_rate(96000) == 48000 && cls_codec_rate(11025) == 12000,
        "the codec's rates");
  cls_audio a;
  cls_error err;
  CHECK(cls_audio_read(SMOKE "/LDC93S1.wav", 16000, &a, &err) == CLS_OK, "%s", err.text);
  if (a.n_samples == 0) return;
  double s = 0;
  const double e32 = codec_case(a.samples, a.n_samples, 16000, 32000, &s);
  const double e12 = codec_case(a.samples, a.n_samples, 16000, 12000, &s);
  const double e6 = codec_case(a.samples, a.n_samples, 16000, 6000, &s);
  codec_case(a.samples, a.n_samples, 16000, 3200, &s);
  CHECK(e6 > e12 + 1 && e12 > e32 + 1, "lower bitrates should lose more: %.1f, %.1f, %.1f dB at 6, 12, 32 kbps", e6,
        e12, e32);
  cls_audio_free(&a);
  /* rates Opus does not take go through the next one and back */
  const int other[] = {8000, 44100, 22050};
  for (int k = 0; k < 3; k++) {
    CHECK(cls_audio_read(SMOKE "/LDC93S1.wav", other[k], &a, &err) == CLS_OK, "%s", err.text);
    if (a.n_samples) codec_case(a.samples, a.n_samples, other[k], 16000, &s);
    cls_audio_free(&a);
  }
  /* a tone survives the lowest default bitrate: most of the output's energy at its frequency */
  enum { N = 16000 };
  static float tone[N], y[N];
  for (int i = 0; i < N; i++) tone[i] = y[i] = (float)(0.5 * sin(2 * PI * 440.0 * i / 16000.0));
  CHECK(cls_augment_codec(y, N, 16000, 3200, &err) == CLS_OK, "codec: %s", err.text);
  double re = 0, im = 0;
  for (int i = 0; i < N; i++) re += y[i] * cos(2 * PI * 440.0 * i / 16000.0), im += y[i] * sin(2 * PI * 440.0 * i / 16000.0);
  const double amp = 2 * sqrt(re * re + im * im) / N, share = (amp * amp / 2) / (rms(y, N) * rms(y, N));
  CHECK(amp > 0.4 && amp < 0.6 && share > 0.9, "a 440 Hz tone at 3200 bps: amplitude %.3f, %.3f of the energy", amp,
        share);
  const int tone_lag = best_lag(tone, y, N, 16);
  CHECK(abs(tone_lag) <= 2, "the tone is delayed by %d samples", tone_lag);
  /* no samples: nothing to do; a few samples (less than an Opus frame) come back too, at any rate, also
     where the conversion to the codec's rate leaves none (1 sample at 96 kHz through 48 kHz) */
  CHECK(cls_augment_codec(y, 0, 16000, 3200, &err) == CLS_OK, "codec of no samples: %s", err.text);
  const size_t few[6] = {1, 7, 200, 1, 2, 1};
  const int few_rates[6] = {16000, 44100, 8000, 96000, 44100, 192000};
  for (int k = 0; k < 6; k++) {
    for (size_t i = 0; i < few[k]; i++) y[i] = 0.3f;
    CHECK(cls_augment_codec(y, few[k], few_rates[k], 3200, &err) == CLS_OK, "codec of %zu samples at %d Hz: %s",
          few[k], few_rates[k], err.text);
    int ok = 1;
    for (size_t i = 0; i < few[k]; i++) ok &= isfinite(y[i]) && fabsf(y[i]) < 2.0f;
    CHECK(ok, "codec of %zu samples: not finite", few[k]);
    CHECK(few_rates[k] < 96000 || y[0] == 0.3f, "codec of 1 sample at %d Hz (none at 48 kHz) changed it to %g",
          few_rates[k], y[0]);
  }
  printf("  codec: 440 Hz at 3200 bps amplitude %.3f (of 0.5), %.3f of the energy, lag %d\n", amp, share, tone_lag);
  /* the start-up probe: Ogg/Opus at an Opus rate works, at one Opus does not take it is refused by name */
  CHECK(cls_codec_probe(16000, &err) == CLS_OK, "probe at 16 kHz: %s", err.text);
  cls_error_clear(&err);
  CHECK(cls_codec_probe(44100, &err) == CLS_ERR_IO, "a probe at 44.1 kHz (no Opus rate) passed");
  CHECK_CONTAINS(err.text, "codec: libsndfile cannot start an Ogg/Opus encoder at 44100 Hz");
  const cls_augmentation codec = augment_parse_supported("codec[bitrate=6000]");
  CHECK(cls_augment_check_supported(&codec, &err) == CLS_OK, "codec not supported: %s", err.text);
}

/* What libsndfile really encodes at a compression level cls_codec_level gives: ~3 s of noise-like audio
   written as Ogg/Opus; the file within 0.8 .. 1.5 times bitrate x seconds / 8 bytes (Ogg's pages included). */
static void test_codec_bitrate(void) {
  if (!data_files_open("augment-bitrate")) return;
  enum { RATE = 16000, N = 3 * RATE };
  static float x[N];
  uint32_t r = 12345;
  for (int i = 0; i < N; i++) {
    r = r * 1664525u + 1013904223u;
    x[i] = (float)(0.3 * sin(2 * PI * 440.0 * i / RATE) + 0.2 * ((double)(r >> 8) / 16777216.0 - 0.5));
  }
  const int bitrates[2] = {8000, 32000};
  long bytes[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    char name[32];
    snprintf(name, sizeof name, "b%d.opus", bitrates[k]);
    const char *path = tmp_path(name);
    SF_INFO info = {.samplerate = RATE, .channels = 1, .format = SF_FORMAT_OGG | SF_FORMAT_OPUS};
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    CHECK(f != NULL, "cannot write %s", path);
    if (!f) continue;
    remember(path);
    double level = cls_codec_level(bitrates[k]);
    CHECK(sf_command(f, SFC_SET_COMPRESSION_LEVEL, &level, sizeof level) == SF_TRUE, "level for %d bps", bitrates[k]);
    CHECK(sf_writef_float(f, x, N) == N && sf_close(f) == 0, "writing %s", path);
    FILE *in = fopen(path, "rb");
    if (in && fseek(in, 0, SEEK_END) == 0) bytes[k] = ftell(in);
    if (in) fclose(in);
    const double want = bitrates[k] * 3.0 / 8.0;
    CHECK(bytes[k] > 0.8 * want && bytes[k] < 1.5 * want, "%d bps for 3 s: %ld bytes, not within 0.8 .. 1.5 x %.0f",
          bitrates[k], bytes[k], want);
  }
  data_files_close();
  printf("  codec bitrate: 3 s at 8 and 32 kbps encode to %ld and %ld bytes (%.0f and %.0f bps)\n", bytes[0], bytes[1],
         bytes[0] * 8 / 3.0, bytes[1] * 8 / 3.0);
}

int main(void) {
  if (!data_present()) return check_finish("test_augment_signal");
  cls_safetensors *fx = tst_fixture("augment_signal.safetensors");
  if (fx) test_reference(fx);
  test_statistics();
  test_overlay();
  test_source();
  test_codec();
  test_codec_bitrate();
  cls_safetensors_free(fx);
  return check_finish("test_augment_signal");
}
