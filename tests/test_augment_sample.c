/* --augment's sample-domain augmentations (features/augment/host_pass.c): an utterance's draws and the
 * volume and reverb definitions (levels.c, reverb.c) against the numpy reference
 * (tests/ref/augment_sample_ref.py, stored in tests/fixtures/augment_sample.safetensors: no numpy at test
 * time), their statistics over many draws (the fraction applied is p, picks inside their ranges),
 * resample's properties (resample.c; no numpy reference: libsamplerate is not numpy's), and the batch
 * loader applying them to a training batch alone. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops_test.h"
#include "augment_test.h"
#include "features/augment/device_ops.h"
#include "features/augment/host_pass.h"
#include "features/augment/levels.h"
#include "features/augment/resample.h"
#include "features/augment/reverb.h"

static const double PI = 3.14159265358979323846;

static void parse_fails(const char *spec, const char *needle) {
  cls_augmentation a;
  cls_error err;
  cls_error_clear(&err);
  CHECK(cls_augment_parse(spec, &a, &err) == CLS_ERR_INVALID_ARGUMENT, "\"%s\" was accepted", spec);
  CHECK_CONTAINS(err.text, needle);
}

/* Tensor data may sit at any offset of the file: copied out, never read in place. */
static void *copy_tensor(const cls_safetensors *fx, const char *name, cls_dtype dtype, int64_t n, size_t elem) {
  const void *p = tst_tensor(fx, name, dtype, n);
  const cls_tensor_info *t = cls_safetensors_find(fx, name);
  if (!p || !t) return NULL;
  const size_t bytes = (size_t)cls_tensor_elements(t) * elem;
  void *out = malloc(bytes ? bytes : 1);
  if (out) memcpy(out, p, bytes);
  return out;
}

/* ---- the parser: defaults, ranges, refusals ---- */

static void test_parse(void) {
  cls_augmentation a = augment_parse_supported("volume");
  CHECK(a.domain == CLS_AUGMENT_SAMPLE && a.param[0].start == 3.0103 && a.p == 1.0, "volume's defaults");
  a = augment_parse_supported("reverb[p=0.5,delay=5:50~3,decay=1~0.5]");
  CHECK(a.p == 0.5 && a.param[0].start == 5 && a.param[0].end == 50 && a.param[0].r == 3 && a.param[1].start == 1 &&
            a.param[1].r == 0.5,
        "reverb's ranges");
  a = augment_parse_supported("resample[rate=4000:8000~500]");
  CHECK(a.param[0].start == 4000 && a.param[0].end == 8000 && a.param[0].r == 500, "resample's range");
  augment_parse_supported("volume[dbfs=-40:0~5]"); /* dBFS may be anything */
  parse_fails("volume[level=3]", "volume: unknown parameter \"level\"");
  parse_fails("reverb[delay=1,delay=2]", "reverb: parameter \"delay\" given twice");
  parse_fails("reverb[decay=-1]", "decay must not be negative");
  parse_fails("reverb[delay=-5:10]", "delay must not be negative");
  parse_fails("resample[rate=0]", "rate must be positive");
  parse_fails("resample[rate=8000.5]", "is not an integer range");
  parse_fails("volume[p=2]", "volume: p must be in [0, 1]");
  parse_fails("volume[dbfs=x]", "is not a range");
  parse_fails("reverb[domain=spectrogram]", "reverb: unknown parameter \"domain\"");
  parse_fails("volume[dbfs=-1e308~1e308]", "the range with its radius overflows");
  /* a radius past 0: reverb's picks are clamped there, never a growing echo */
  cls_augmentation r = augment_parse_supported("reverb[delay=1~50,decay=1~50]");
  cls_sample_op op;
  int below = 0;
  for (uint32_t u = 0; u < 200; u++)
    if (cls_augment_sample_draw(&r, 1, 3, 0, u, 0.0, &op) == 1) below += op.v[0] < 0 || op.v[1] < 0;
  CHECK(below == 0, "%d reverb picks below 0", below);
}

/* ---- draws against the reference ---- */

static const int REF_KIND[3] = {CLS_AUGMENT_VOLUME, CLS_AUGMENT_REVERB, CLS_AUGMENT_RESAMPLE};

static void test_draws_reference(const cls_safetensors *fx) {
  /* augment_sample_ref.py's SPECS and CASES (also in the fixture's metadata) */
  const char *specs[] = {"volume[p=0.6,dbfs=-30:-5~4]", "frequency_mask", "reverb[p=0.8,delay=5:60~10,decay=2:12~1.5]",
                         "resample[p=0.5,rate=4000:12000~1500]", "volume", "reverb[delay=2~20,decay=1~20]"};
  const struct { uint32_t utt; double clock; } cases[] = {{0, 0.0}, {1, 0.1},       {2, 0.5}, {77, 0.9},
                                                          {4096, 1.0}, {123456, 0.33}, {5, 1.5}};
  enum { N_SPECS = 6, N_CASES = 7 };
  cls_augmentation augs[N_SPECS];
  for (int i = 0; i < N_SPECS; i++) augs[i] = augment_parse_supported(specs[i]);
  const uint32_t seed = (uint32_t)tst_meta_int(fx, "draw_seed"), epoch = (uint32_t)tst_meta_int(fx, "draw_epoch");
  int32_t *counts = copy_tensor(fx, "draw_counts", CLS_I32, N_CASES, sizeof(int32_t));
  double *want = copy_tensor(fx, "draw_ops", CLS_F64, -1, sizeof(double));
  if (!counts || !want) {
    free(counts);
    free(want);
    return;
  }
  cls_sample_op ops[N_SPECS];
  int at = 0, bad = 0;
  for (int k = 0; k < N_CASES; k++) {
    const int n = cls_augment_sample_draw(augs, N_SPECS, seed, epoch, cases[k].utt, cases[k].clock, ops);
    CHECK(n == counts[k], "case %d: %d operations, the reference %d", k, n, counts[k]);
    for (int i = 0; i < n && i < counts[k]; i++) {
      const double *w = want + (size_t)(at + i) * 4;
      const cls_sample_op *o = &ops[i];
      int ok = o->aug == (int)w[0] && w[1] >= 0 && w[1] < 3 && (int)o->kind == REF_KIND[(int)w[1]];
      for (int v = 0; v < 2; v++) ok = ok && fabs(o->v[v] - w[2 + v]) <= 1e-9 * fmax(1.0, fabs(w[2 + v]));
      if (!ok && bad++ < 5)
        fprintf(stderr, "    case %d op %d: got aug %d %s %.12g %.12g, reference aug %g kind %g %.12g %.12g\n", k, i,
                o->aug, cls_augment_kind_name(o->kind), o->v[0], o->v[1], w[0], w[1], w[2], w[3]);
    }
    at += counts[k];
  }
  CHECK(bad == 0, "%d draws differ from augment_sample_ref.py's", bad);
  CHECK(at > 4, "the reference's cases drew only %d operations", at);
  printf("  draws: %d operations of %d utterances equal the numpy reference's (1e-9 relative)\n", at, N_CASES);
  free(counts);
  free(want);
}

/* ---- volume and reverb against the reference ---- */

/* The largest |got - want| over n values. */
static double max_error(const float *got, const float *want, size_t n) {
  double e = 0;
  for (size_t i = 0; i < n; i++) e = fmax(e, fabs((double)got[i] - (double)want[i]));
  return e;
}

static void test_signals_reference(const cls_safetensors *fx) {
  const int rate = tst_meta_int(fx, "rate");
  const cls_tensor_info *ti = cls_safetensors_find(fx, "input");
  CHECK(ti != NULL, "fixture lacks input");
  if (!ti) return;
  const size_t n = (size_t)cls_tensor_elements(ti);
  /* augment_sample_ref.py's VOLUMES and REVERBS */
  const double volumes[] = {3.0103, -6.0, -25.5, 12.0};
  const double reverbs[][2] = {{20.0, 10.0}, {0.3, 3.0}, {7.5, 0.0}, {400.0, 6.0}};
  const int n_vol = 4, n_rev = 4;
  float *in = copy_tensor(fx, "input", CLS_F32, (int64_t)n, sizeof(float));
  float *vol = copy_tensor(fx, "volume_out", CLS_F32, (int64_t)n * n_vol, sizeof(float));
  float *rev = copy_tensor(fx, "reverb_out", CLS_F32, (int64_t)n * n_rev, sizeof(float));
  float *x = malloc(n * sizeof *x);
  if (in && vol && rev && x) {
    const double tol = 1e-6; /* the same float and double operations in the same order as numpy's */
    for (int i = 0; i < n_vol; i++) {
      memcpy(x, in, n * sizeof *x);
      cls_augment_volume(x, n, volumes[i]);
      const double e = max_error(x, vol + (size_t)i * n, n);
      CHECK(e <= tol, "volume %g dBFS: largest error %.3g against numpy", volumes[i], e);
      printf("  volume %g dBFS: peak %.4f dBFS, largest error %.3g (tolerance %g)\n", volumes[i],
             cls_audio_max_dbfs(x, n), e, tol);
      if (volumes[i] <= 0) CHECK(fabs(cls_audio_max_dbfs(x, n) - volumes[i]) < 1e-4, "volume: peak not at the target");
    }
    for (int i = 0; i < n_rev; i++) {
      memcpy(x, in, n * sizeof *x);
      cls_error err;
      CHECK(cls_augment_reverb(x, n, rate, reverbs[i][0], reverbs[i][1], &err) == CLS_OK, "reverb failed");
      const double e = max_error(x, rev + (size_t)i * n, n);
      CHECK(e <= tol, "reverb delay %g ms decay %g dB: largest error %.3g against numpy", reverbs[i][0], reverbs[i][1], e);
      printf("  reverb delay %g ms, decay %g dB: largest error %.3g (tolerance %g)\n", reverbs[i][0], reverbs[i][1], e,
             tol);
      CHECK(fabs(cls_audio_max_dbfs(x, n) - cls_audio_max_dbfs(in, n)) < 1e-4, "reverb: the peak level moved");
    }
  }
  free(in);
  free(vol);
  free(rev);
  free(x);
}

/* ---- statistics over many utterances ---- */

static void test_draw_statistics(void) {
  cls_augmentation augs[3] = {augment_parse_supported("volume[p=0.3,dbfs=-20:-10~2]"), augment_parse_supported("reverb[p=0.7,delay=10~5,decay=4:8]"),
                              augment_parse_supported("resample[rate=6000:10000~1000]")};
  const int N = 20000;
  long applied[3] = {0, 0, 0}, outside = 0, non_integer = 0;
  double clock_hi_mean = 0;
  long clock_hi_n = 0;
  cls_sample_op ops[3];
  for (int u = 0; u < N; u++) {
    const double clock = (double)u / N;
    const int n = cls_augment_sample_draw(augs, 3, 7, 2, (uint32_t)u, clock, ops);
    for (int i = 0; i < n; i++) {
      const cls_sample_op *o = &ops[i];
      applied[o->aug]++;
      if (o->kind == CLS_AUGMENT_VOLUME) {
        const double c = -20 + 10 * clock;
        outside += o->v[0] < c - 2 || o->v[0] > c + 2;
      } else if (o->kind == CLS_AUGMENT_REVERB) {
        const double c = 4 + 4 * clock;
        outside += o->v[0] < 5 || o->v[0] > 15 || fabs(o->v[1] - c) > 1e-9;
      } else {
        const double c = 6000 + 4000 * clock;
        outside += o->v[0] < c - 1000.5 || o->v[0] > c + 1000.5;
        non_integer += o->v[0] != nearbyint(o->v[0]);
        if (clock > 0.9) clock_hi_mean += o->v[0], clock_hi_n++;
      }
    }
  }
  const double p[3] = {0.3, 0.7, 1.0};
  for (int i = 0; i < 3; i++)
    CHECK(fabs((double)applied[i] / N - p[i]) < 0.015, "%s: applied to %.4f of the utterances, p = %g",
          cls_augment_kind_name(augs[i].kind), (double)applied[i] / N, p[i]);
  CHECK(outside == 0, "%ld picks outside their ranges", outside);
  CHECK(non_integer == 0, "%ld resample rates not whole", non_integer);
  clock_hi_mean /= clock_hi_n > 0 ? (double)clock_hi_n : 1;
  CHECK(fabs(clock_hi_mean - 9800) < 60, "resample's mean rate at clock 0.9 .. 1 is %.1f, not about 9800", clock_hi_mean);
  printf("  statistics: applied %.4f %.4f %.4f (p 0.3 0.7 1), all picks in range, late rates mean %.1f Hz\n",
         (double)applied[0] / N, (double)applied[1] / N, (double)applied[2] / N, clock_hi_mean);
}

/* ---- resample: the band below the new Nyquist frequency kept, the one above removed ---- */

static double tone_rms(const float *x, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; i++) s += (double)x[i] * x[i];
  return sqrt(s / (double)(to - from));
}

static void test_resample(void) {
  const int rate = 16000;
  const size_t n = 8000;
  float *low = malloc(n * sizeof *low), *high = malloc(n * sizeof *high), *x = malloc(n * sizeof *x);
  if (!low || !high || !x) {
    CHECK(0, "out of memory");
    free(low), free(high), free(x);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    low[i] = (float)(0.5 * sin(2 * PI * 500.0 * (double)i / rate));
    high[i] = (float)(0.5 * sin(2 * PI * 6000.0 * (double)i / rate));
  }
  cls_error err;
  /* 500 Hz through 8 kHz: the same signal, in place and in time (no delay), away from the ends */
  memcpy(x, low, n * sizeof *x);
  CHECK(cls_augment_resample(x, n, rate, 8000, &err) == CLS_OK, "resample: %s", err.text);
  double e = 0;
  for (size_t i = 400; i < n - 400; i++) e = fmax(e, fabs((double)x[i] - low[i]));
  CHECK(e < 0.01, "500 Hz through 8 kHz: largest difference %.4f (of amplitude 0.5)", e);
  /* 6 kHz through 8 kHz (Nyquist 4 kHz): gone, at least 40 dB down */
  memcpy(x, high, n * sizeof *x);
  CHECK(cls_augment_resample(x, n, rate, 8000, &err) == CLS_OK, "resample: %s", err.text);
  const double atten = 20 * log10(tone_rms(x, 400, n - 400) / tone_rms(high, 400, n - 400) + 1e-12);
  CHECK(atten < -40, "6 kHz through 8 kHz: only %.1f dB down", atten);
  /* 6 kHz through 14 kHz (Nyquist 7 kHz): kept */
  memcpy(x, high, n * sizeof *x);
  CHECK(cls_augment_resample(x, n, rate, 14000, &err) == CLS_OK, "resample: %s", err.text);
  const double kept = 20 * log10(tone_rms(x, 400, n - 400) / tone_rms(high, 400, n - 400));
  CHECK(fabs(kept) < 0.5, "6 kHz through 14 kHz: level changed by %.2f dB", kept);
  /* at or above the rate: untouched; a rate below rate / 256: libsamplerate's limit, no failure */
  memcpy(x, high, n * sizeof *x);
  CHECK(cls_augment_resample(x, n, rate, rate, &err) == CLS_OK && !memcmp(x, high, n * sizeof *x),
        "resample to the same rate changed the audio");
  CHECK(cls_augment_resample(x, n, rate, 10, &err) == CLS_OK, "resample to 10 Hz: %s", err.text);
  int finite = 1;
  for (size_t i = 0; i < n; i++) finite &= isfinite(x[i]) && fabsf(x[i]) <= 1.0f;
  CHECK(finite, "resample to 10 Hz: values not finite or outside [-1, 1]");
  CHECK(cls_augment_resample(x, 0, rate, 8000, &err) == CLS_OK, "resample of no samples failed");
  printf("  resample: 500 Hz through 8 kHz within %.4f; 6 kHz through 8 kHz %.1f dB; through 14 kHz %+.2f dB\n", e,
         atten, kept);
  free(low);
  free(high);
  free(x);
}

/* ---- whole utterances: deterministic, the length kept, silence stays silence ---- */

static void test_utterance(void) {
  cls_augmentation augs[4] = {augment_parse_supported("resample[rate=8000]"), augment_parse_supported("add"), augment_parse_supported("reverb[delay=12,decay=3]"),
                              augment_parse_supported("volume[dbfs=-12]")};
  const size_t n = 4000;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  if (!a || !b) {
    free(a), free(b);
    return;
  }
  for (size_t i = 0; i < n; i++) a[i] = b[i] = (float)(0.3 * sin(0.05 * (double)i) * exp(-(double)i / 2000.0));
  cls_error err;
  CHECK(cls_augment_samples(augs, 4, NULL, 1, 0, 9, 0.5, a, n, 16000, &err) == CLS_OK, "augment: %s", err.text);
  CHECK(cls_augment_samples(augs, 4, NULL, 1, 0, 9, 0.5, b, n, 16000, &err) == CLS_OK, "augment: %s", err.text);
  CHECK(!memcmp(a, b, n * sizeof *a), "the same utterance augmented twice differs");
  CHECK(fabs(cls_audio_max_dbfs(a, n) + 12) < 1e-4, "volume last: peak %.4f dBFS, not -12", cls_audio_max_dbfs(a, n));
  memset(a, 0, n * sizeof *a);
  CHECK(cls_augment_samples(augs, 4, NULL, 1, 0, 9, 0.5, a, n, 16000, &err) == CLS_OK, "augment: %s", err.text);
  int zero = 1;
  for (size_t i = 0; i < n; i++) zero &= a[i] == 0.0f;
  CHECK(zero, "silence did not stay silent");
  /* a gain beyond float's range: silence still silent, a signal clipped to +-1, never NaN */
  cls_augment_volume(a, n, 2000.0);
  for (size_t i = 0; i < n; i++) b[i] = i % 7 ? 0.0f : 1e-30f * (float)(i % 3) - 1e-30f;
  cls_augment_volume(b, n, 2000.0);
  int ok = 1;
  for (size_t i = 0; i < n; i++) ok &= a[i] == 0.0f && isfinite(b[i]) && fabsf(b[i]) <= 1.0f;
  CHECK(ok, "volume at 2000 dBFS: not silent or not finite");
  free(a);
  free(b);
}

int main(void) {
  test_parse();
  cls_safetensors *fx = tst_fixture("augment_sample.safetensors");
  if (fx) {
    test_draws_reference(fx);
    test_signals_reference(fx);
  }
  test_draw_statistics();
  test_resample();
  test_utterance();
  cls_safetensors_free(fx);
  return check_finish("test_augment_sample");
}
