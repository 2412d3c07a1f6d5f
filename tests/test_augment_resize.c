/* --augment's power-spectrogram path (kernels/augment_resize.cl, features/augment/power.c): pitch,
 * tempo, warp and the staged masks, dropout, add and multiply against TensorFlow's legacy image ops
 * (tests/ref/augment_resize_ref.py) on every device; a tone's peak moving by the pitch; add's and
 * multiply's moments on the power; the device MFCC through the power path unchanged by operations that
 * change nothing; and the host draws: pitch's mean, tempo's frame counts with the transcript floor and
 * the caps, features-domain time masks within their range. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops_test.h"
#include "augment_draw.h"
#include "device/log.h"
#include "device/program.h"
#include "features/augment/device_ops.h"
#include "features/augment/power.h"
#include "features/augment/tempo.h"
#include "features/mfcc_device.h"
#include "ops/ops_util.h"
#include "augment_test.h"

/* One batch through the power path: spectrum real parts re [sum frames, n_bins] (imaginary 0), the
 * utterances' operations; *out (malloc'ed) receives the power [sum out_frames, n_bins]. Returns the
 * output rows, or -1. */
static int run_power(tst_env *env, int dev, int batch, int n_bins, const float *re, const int *frames,
                     const cls_augment_op *ops, const int *op_first, const uint32_t *utt, uint32_t seed, uint32_t epoch,
                     int *out_frames, float **out) {
  cls_device *d = NULL;
  cls_augment_power *w = NULL;
  cls_status st = cls_ops_device(env->engine, dev, &d);
  const int f64 = st == CLS_OK && d->info.fp64;
  if (st == CLS_OK) st = cls_augment_power_create(env->engine, d, f64, &w);
  CHECK(st == CLS_OK, "power path: %s", cls_engine_error(env->engine));
  if (st != CLS_OK) return -1;
  int base[16], obase[16], total = 0, total_out = 0;
  const cls_augment_batch aug = {ops, op_first, utt, seed, epoch};
  cls_augment_power_frames(&aug, batch, frames, out_frames);
  for (int b = 0; b < batch; b++) {
    base[b] = total;
    obase[b] = total_out;
    total += frames[b];
    total_out += out_frames[b];
  }
  const size_t n = (size_t)total * n_bins, real = f64 ? sizeof(double) : sizeof(float);
  unsigned char *spec = calloc(n * 2, real);
  for (size_t i = 0; i < n; i++) {
    if (f64)
      ((double *)spec)[2 * i] = re[i];
    else
      ((float *)spec)[2 * i] = re[i];
  }
  int first[17];
  for (int b = 0; b <= batch; b++) first[b] = op_first[b] - op_first[0];
  const int n_ops = op_first[batch] - op_first[0];
  cl_mem m_spec = tst_buffer(env, dev, spec, n * 2 * real), m_first = tst_buffer(env, dev, first, (size_t)(batch + 1) * 4);
  cl_mem m_ops = tst_buffer(env, dev, ops + op_first[0], (size_t)(n_ops ? n_ops : 1) * sizeof *ops);
  cl_mem m_utt = tst_buffer(env, dev, utt, (size_t)batch * 4), power = NULL;
  const cls_augment_power_batch pb = {batch, n_bins, m_spec, base, frames, obase, out_frames, (size_t)total_out,
                                      m_first, m_ops, m_utt};
  cl_command_queue q = tst_queue(env, dev);
  st = cls_augment_power_run(w, cls_engine_errors(env->engine), q, &aug, &pb, &power);
  if (st == CLS_OK) st = clFinish(q) == CL_SUCCESS ? CLS_OK : CLS_ERR_OPENCL;
  CHECK(st == CLS_OK, "running the power path: %s", cls_engine_error(env->engine));
  *out = malloc((size_t)(total_out ? total_out : 1) * n_bins * sizeof **out);
  if (st == CLS_OK && total_out) tst_read(env, dev, power, *out, (size_t)total_out * n_bins * sizeof(float));
  cl_mem ms[] = {m_spec, m_first, m_ops, m_utt};
  for (int i = 0; i < 4; i++) clReleaseMemObject(ms[i]);
  cls_augment_power_destroy(w);
  free(spec);
  return st == CLS_OK ? total_out : -1;
}

/* The fixture's cases on one device (tolerance: 1e-5 relative + 1e-5 absolute on powers of 1 .. 100). */
/* One utterance of `frames` rows through the power path with one operation: its power (malloc'ed) when
 * the path gives `rows` rows (checked), else NULL. */
static float *run_one(tst_env *env, int dev, int n_bins, const float *re, int frames, const cls_augment_op *op,
                      uint32_t utt, uint32_t seed, uint32_t epoch, int rows) {
  const int first[2] = {0, 1};
  int out_frames[1];
  float *p = NULL;
  const int got = run_power(env, dev, 1, n_bins, re, &frames, op, first, &utt, seed, epoch, out_frames, &p);
  CHECK_INT(got, rows);
  if (got == rows) return p;
  free(p);
  return NULL;
}

static void test_reference(tst_env *env, int dev, const cls_safetensors *fx) {
  const char *names[] = {"pitch", "tempo", "warp", "stages"};
  const int n_bins = tst_meta_int(fx, "n_bins");
  for (int c = 0; c < 4; c++) {
    char key[64];
#define TENSOR(var, type, dtype, what)                          \
  snprintf(key, sizeof key, "%s.%s", names[c], what);           \
  const cls_tensor_info *var##_info = cls_safetensors_find(fx, key); \
  const type *var = tst_tensor(fx, key, dtype, -1);
    TENSOR(frames, int32_t, CLS_I32, "frames")
    TENSOR(op_first, int32_t, CLS_I32, "op_first")
    TENSOR(ops, int32_t, CLS_I32, "ops")
    TENSOR(utt, uint32_t, CLS_I32, "utt")
    TENSOR(re, float, CLS_F32, "re")
    TENSOR(want, float, CLS_F32, "power")
    TENSOR(want_frames, int32_t, CLS_I32, "out_frames")
#undef TENSOR
    (void)ops_info, (void)utt_info, (void)re_info, (void)want_frames_info, (void)op_first_info;
    if (!frames || !op_first || !ops || !utt || !re || !want || !want_frames) continue;
    const int batch = (int)cls_tensor_elements(frames_info);
    int out_frames[16];
    float *got = NULL;
    const int rows = run_power(env, dev, batch, n_bins, re, frames, (const cls_augment_op *)ops, op_first, utt,
                               (uint32_t)tst_meta_int(fx, "seed"), (uint32_t)tst_meta_int(fx, "epoch"), out_frames, &got);
    for (int b = 0; b < batch; b++) CHECK_INT(out_frames[b], want_frames[b]);
    CHECK_INT((int64_t)rows * n_bins, cls_tensor_elements(want_info));
    if (rows > 0 && (int64_t)rows * n_bins == cls_tensor_elements(want_info)) {
      char what[96];
      snprintf(what, sizeof what, "%s vs augment_resize_ref.py", names[c]);
      tst_compare(what, got, want, (size_t)rows * n_bins, 1e-5, 1e-5);
    }
    free(got);
  }
}

/* A tone: the power of one frame peaks at bin 100 of 257; pitch p moves the peak to bin 100 p (within
 * a bin: the resize samples bin j at j bins / int(bins p)). */
static void test_tone(tst_env *env, int dev) {
  const int n_bins = 257, frames = 3;
  float *re = malloc((size_t)frames * n_bins * sizeof *re);
  for (int t = 0; t < frames; t++)
    for (int i = 0; i < n_bins; i++) re[t * n_bins + i] = 1.0f + 30.0f * expf(-0.5f * (float)((i - 100) * (i - 100)) / 4.0f);
  const float pitches[] = {0.8f, 1.2f, 1.05f};
  for (int k = 0; k < 3; k++) {
    const int wide = (int)((float)n_bins * pitches[k]);
    cls_augment_op op = {CLS_AUGOP_PITCH, CLS_AUGOP_SPECTROGRAM, wide, n_bins, 0, pitches[k], 0, 0.0f};
    float *p = run_one(env, dev, n_bins, re, frames, &op, 5, 1, 1, frames);
    if (p) {
      int peak = 0;
      for (int i = 1; i < n_bins; i++)
        if (p[n_bins + i] > p[n_bins + peak]) peak = i;
      CHECK(fabs(peak - 100.0 * pitches[k]) <= 1.0, "pitch %.2f: the peak moved from bin 100 to %d", pitches[k], peak);
      printf("  pitch %.2f: a tone's peak from bin 100 to bin %d (100 x pitch = %.1f)\n", pitches[k], peak,
             100.0 * pitches[k]);
    }
    free(p);
  }
  free(re);
}

/* The edges the docs promise: a warp with no control points (nt = nf = 0) or no deviation, and any warp
 * of a one-frame utterance, leave the power as it is (exactly inside; at the last frame and bin, where
 * TF's clamped gather computes a + 1 * (b - a) in two rounds, within two float steps); a pitch to one bin keeps bin 0 (TF's legacy
 * resize takes source 0) and zero-pads the rest; a tempo to one frame keeps frame 0. The power of
 * value v is v * v here (the power path's own rounding: one product, the imaginary part 0). */
static void test_edges(tst_env *env, int dev) {
  const int n_bins = 33, frames = 7;
  float re[7 * 33], want[7 * 33];
  for (int i = 0; i < frames * n_bins; i++) {
    re[i] = 0.5f + 0.01f * (float)((i * 37) % 101);
    want[i] = re[i] * re[i];
  }
  const struct {
    const char *what;
    cls_augment_op op;
    int frames; /* of the input (1: a one-frame utterance) */
  } same[] = {
      {"warp nt=0 nf=0", {CLS_AUGOP_WARP, CLS_AUGOP_SPECTROGRAM, 0, 0, 0, 2.0f, 0, 2.0f}, frames},
      {"warp nt=4 nf=2 without deviation", {CLS_AUGOP_WARP, CLS_AUGOP_SPECTROGRAM, 4, 2, 0, 0.0f, 0, 0.0f}, frames},
      {"warp of one frame", {CLS_AUGOP_WARP, CLS_AUGOP_SPECTROGRAM, 2, 2, 0, 3.0f, 0, 3.0f}, 1},
  };
  for (size_t k = 0; k < sizeof same / sizeof *same; k++) {
    const int got = same[k].frames;
    float *p = run_one(env, dev, n_bins, re, got, &same[k].op, 9, 3, 1, got);
    double worst = 0, edge = 0; /* relative: inside, and on the last frame or bin */
    for (int t = 0; p && t < got; t++)
      for (int i = 0; i < n_bins; i++) {
        const double d = fabs(p[t * n_bins + i] - want[t * n_bins + i]) / want[t * n_bins + i];
        if ((t == got - 1 && got > 1) || i == n_bins - 1) edge = fmax(edge, d);
        else worst = fmax(worst, d);
      }
    CHECK(worst == 0, "%s changed the power inside by up to %g relative", same[k].what, worst);
    CHECK(edge <= 0x1p-22, "%s changed the last frame or bin by up to %g relative (more than two float steps)",
          same[k].what, edge);
    free(p);
  }
  /* pitch to one bin: bin 0 kept, the other bins 0 */
  cls_augment_op pitch = {CLS_AUGOP_PITCH, CLS_AUGOP_SPECTROGRAM, 1, n_bins, 0, 1.0f / (float)n_bins, 0, 0.0f};
  float *p = run_one(env, dev, n_bins, re, frames, &pitch, 9, 3, 1, frames);
  if (p) {
    int bad = 0;
    for (int t = 0; t < frames; t++)
      for (int i = 0; i < n_bins; i++) bad += p[t * n_bins + i] != (i == 0 ? want[t * n_bins] : 0.0f);
    CHECK(bad == 0, "pitch to one bin: %d values other than bin 0 kept and the rest 0", bad);
  }
  free(p);
  /* tempo to one frame: frame 0 kept */
  cls_augment_op tempo = {CLS_AUGOP_TEMPO, CLS_AUGOP_SPECTROGRAM, frames, 1, 0, (float)frames, 0, 0.0f};
  p = run_one(env, dev, n_bins, re, frames, &tempo, 9, 3, 1, 1);
  int bad = 0;
  for (int i = 0; p && i < n_bins; i++) bad += p[i] != want[i];
  CHECK(bad == 0, "tempo to one frame: %d bins differ from frame 0", bad);
  free(p);
  printf("  edges: warp without points, without deviation and of one frame leave the power; pitch to 1 bin, "
         "tempo to 1 frame keep source 0\n");
}

/* add and multiply on a constant power of 100 (4-sigma bounds over 2000 x 257 values; multiply's
 * deviation 0.1 keeps the factor positive, so nothing is clamped). */
static void test_moments(tst_env *env, int dev) {
  const int n_bins = 257, frames = 2000, n = n_bins * frames;
  float *re = malloc((size_t)n * sizeof *re);
  for (int i = 0; i < n; i++) re[i] = 10.0f;
  const struct { int kind; float s; double mean, sd; } cases[] = {{CLS_AUGOP_ADD, 2.0f, 100.0, 2.0},
                                                                  {CLS_AUGOP_MULTIPLY, 0.1f, 100.0, 10.0}};
  for (int c = 0; c < 2; c++) {
    cls_augment_op op = {cases[c].kind, CLS_AUGOP_SPECTROGRAM, 0, 0, 3, cases[c].s, 0, 0.0f};
    float *p = run_one(env, dev, n_bins, re, frames, &op, 17, 9, 2, frames);
    if (p) {
      double s1 = 0, s2 = 0;
      for (int i = 0; i < n; i++) s1 += p[i], s2 += (double)p[i] * p[i];
      const double mean = s1 / n, sd = sqrt(s2 / n - mean * mean);
      CHECK(fabs(mean - cases[c].mean) < 4 * cases[c].sd / sqrt(n), "%s: mean %.5f", c ? "multiply" : "add", mean);
      CHECK(fabs(sd - cases[c].sd) < 4 * cases[c].sd / sqrt(2.0 * n), "%s: deviation %.5f", c ? "multiply" : "add", sd);
      printf("  spectrogram %s[stddev=%.1f] on power 100: mean %.4f, deviation %.4f (expected %.1f, %.1f)\n",
             c ? "multiply" : "add", cases[c].s, mean, sd, cases[c].mean, cases[c].sd);
    }
    free(p);
  }
  /* a power pushed below 0 is 0 */
  cls_augment_op op = {CLS_AUGOP_ADD, CLS_AUGOP_SPECTROGRAM, 0, 0, 3, 1000.0f, 0, 0.0f};
  const int few = 20;
  float *p = run_one(env, dev, n_bins, re, few, &op, 17, 9, 2, few);
  if (p) {
    int zeros = 0, negative = 0;
    for (int i = 0; i < few * n_bins; i++) zeros += p[i] == 0.0f, negative += p[i] < 0.0f;
    CHECK(negative == 0 && zeros > few * n_bins / 4, "add clamped: %d zeros, %d negative", zeros, negative);
  }
  free(p);
  free(re);
}

/* The device MFCC through the power path with operations that change nothing (add 0, a tempo and a
 * pitch of 1, a warp of no control points) gives the plain features bit for bit. */
static void test_mfcc_identity(tst_env *env, int dev, const cls_mfcc_tables *t) {
  const size_t n[2] = {16000, 9000};
  float *x[2];
  for (int b = 0; b < 2; b++) {
    x[b] = malloc(n[b] * sizeof(float));
    uint32_t r = 12345u + (uint32_t)b;
    for (size_t i = 0; i < n[b]; i++) {
      r = r * 1664525u + 1013904223u;
      x[b][i] = 0.3f * sinf(0.05f * (float)i * (float)(b + 1)) + (float)((int)(r >> 9) - (1 << 22)) / (float)(1 << 26);
    }
  }
  cls_mfcc_plan *plan = NULL;
  CHECK(cls_mfcc_create(env->engine, dev, t, &plan) == CLS_OK && cls_mfcc_enable_augment(plan) == CLS_OK, "plan: %s",
        cls_engine_error(env->engine));
  if (!plan) return;
  const int f0 = (int)cls_mfcc_frames(t, n[0]), f1 = (int)cls_mfcc_frames(t, n[1]), nc = t->cfg.n_coeff;
  const size_t total = (size_t)(f0 + f1) * nc;
  float *plain = malloc(total * sizeof *plain), *aug = malloc(total * sizeof *aug);
  cls_buf none = {NULL, 0};
  cl_command_queue q = tst_queue(env, dev);
  CHECK(cls_mfcc_compute(plan, q, 2, (const float *const *)x, n, 0, none, NULL, NULL, plain) == CLS_OK, "plain: %s",
        cls_engine_error(env->engine));
  const cls_augment_op ops[] = {
      {CLS_AUGOP_ADD, CLS_AUGOP_SPECTROGRAM, 0, 0, 0, 0.0f, 0, 0.0f},
      {CLS_AUGOP_TEMPO, CLS_AUGOP_SPECTROGRAM, f0, f0, 1, 1.0f, 0, 0.0f},
      {CLS_AUGOP_PITCH, CLS_AUGOP_SPECTROGRAM, t->n_bins, t->n_bins, 2, 1.0f, 1, 0.0f},
      {CLS_AUGOP_MULTIPLY, CLS_AUGOP_SPECTROGRAM, 0, 0, 3, 0.0f, 2, 0.0f},
  };
  const int first[3] = {0, 4, 4};
  const uint32_t index[2] = {3, 4};
  const cls_augment_batch batch = {ops, first, index, 7, 1};
  int frames[2] = {0, 0};
  CHECK(cls_mfcc_compute_augmented(plan, q, 2, (const float *const *)x, n, &batch, 0, none, NULL, frames, aug) == CLS_OK,
        "power path: %s", cls_engine_error(env->engine));
  CHECK(frames[0] == f0 && frames[1] == f1, "frames %d %d, expected %d %d", frames[0], frames[1], f0, f1);
  tst_compare("power path without change vs plain", aug, plain, total, 0, 0);
  /* a tempo of 2 halves the first clip's frames and a features time mask silences the second's [2, 5) */
  const cls_augment_op ops2[] = {
      {CLS_AUGOP_TEMPO, CLS_AUGOP_SPECTROGRAM, f0, f0 / 2, 0, 2.0f, 0, 0.0f},
      {CLS_AUGOP_TIME_MASK, CLS_AUGOP_FEATURES, 2, 5, 1, 0.0f, 0, 0.0f},
  };
  const int first2[3] = {0, 1, 2};
  const cls_augment_batch batch2 = {ops2, first2, index, 7, 1};
  CHECK(cls_mfcc_compute_augmented(plan, q, 2, (const float *const *)x, n, &batch2, 0, none, NULL, frames, aug) == CLS_OK,
        "tempo: %s", cls_engine_error(env->engine));
  CHECK(frames[0] == f0 / 2 && frames[1] == f1, "tempo 2: frames %d %d, expected %d %d", frames[0], frames[1], f0 / 2, f1);
  int masked = 0, kept = 0;
  for (int f = 0; f < f1; f++)
    for (int c = 0; c < nc; c++) {
      const float got = aug[(size_t)(f0 / 2 + f) * nc + c], was = plain[(size_t)(f0 + f) * nc + c];
      if (f >= 2 && f < 5) masked += got == 0.0f;
      else kept += got == was;
    }
  CHECK(masked == 3 * nc && kept == (f1 - 3) * nc, "features time mask: %d of %d zero, %d of %d kept", masked, 3 * nc,
        kept, (f1 - 3) * nc);
  cls_mfcc_destroy(plan);
  free(plain);
  free(aug);
  free(x[0]);
  free(x[1]);
}

/* The host's draws against augment_resize_ref.py's (ints exact, values within 1e-6 relative), and the
 * batch loader's count of the frames after the tempos. */
static void test_draws_reference(const cls_safetensors *fx) {
  char specs[1024];
  snprintf(specs, sizeof specs, "%s", cls_safetensors_meta(fx, "draw_specs") ? cls_safetensors_meta(fx, "draw_specs") : "");
  cls_augmentation augs[16];
  int n_augs = 0;
  for (char *save = NULL, *spec = strtok_r(specs, ";", &save); spec && n_augs < 16; spec = strtok_r(NULL, ";", &save))
    augs[n_augs++] = augment_parse(spec);
  CHECK_INT(n_augs, 7);
  const cls_tensor_info *ci = cls_safetensors_find(fx, "draws.counts");
  const int n_cases = ci ? (int)cls_tensor_elements(ci) : 0;
  const int32_t *cases = tst_tensor(fx, "draws.cases", CLS_I32, (int64_t)n_cases * 4);
  const double *clock = tst_tensor(fx, "draws.clock", CLS_F64, n_cases);
  const int32_t *counts = tst_tensor(fx, "draws.counts", CLS_I32, n_cases);
  const int32_t *want = tst_tensor(fx, "draws.ops", CLS_I32, -1);
  const int32_t *want_frames = tst_tensor(fx, "draws.frames", CLS_I32, n_cases);
  if (!n_cases || !cases || !clock || !counts || !want || !want_frames) return;
  const uint32_t seed = (uint32_t)tst_meta_int(fx, "draw_seed"), epoch = (uint32_t)tst_meta_int(fx, "draw_epoch");
  const int win_step = tst_meta_int(fx, "draw_win_step_ms");
  cls_augment_op *ops = malloc((size_t)cls_augment_max_ops(augs, n_augs) * sizeof *ops);
  int at = 0, bad = 0;
  for (int k = 0; k < n_cases; k++) {
    const int32_t *cs = cases + 4 * k;
    const cls_augment_context c = {augs, n_augs, seed, epoch, tst_meta_int(fx, "draw_n_bins"), win_step, cs[3]};
    int after = 0;
    const int n = cls_augment_utterance(&c, (uint32_t)cs[0], clock[k], cs[1], cs[2], ops, &after);
    CHECK(n == counts[k], "case %d: %d operations, the reference %d", k, n, counts[k]);
    CHECK(after == want_frames[k], "case %d: %d frames after the tempos, the reference %d", k, after, want_frames[k]);
    CHECK_INT(cls_augment_frames(augs, n_augs, seed, epoch, (uint32_t)cs[0], clock[k], cs[1], cs[2], cs[3], win_step),
              want_frames[k]);
    for (int i = 0; i < n && i < counts[k]; i++) {
      const int32_t *w = want + (size_t)(at + i) * 8;
      float value[2];
      memcpy(value, &w[5], sizeof value[0]);
      memcpy(value + 1, &w[7], sizeof value[1]);
      const cls_augment_op *o = &ops[i];
      if (o->kind != w[0] || o->domain != w[1] || o->lo != w[2] || o->hi != w[3] || o->aug != w[4] ||
          o->stage != w[6] || fabsf(o->value - value[0]) > 1e-6f * fmaxf(1.0f, fabsf(value[0])) ||
          fabsf(o->value2 - value[1]) > 1e-6f * fmaxf(1.0f, fabsf(value[1]))) {
        if (bad++ < 5)
          fprintf(stderr, "    case %d op %d: got %d %d [%d, %d) aug %d %.9g stage %d %.9g, reference %d %d [%d, %d) "
                          "aug %d %.9g stage %d %.9g\n",
                  k, i, o->kind, o->domain, o->lo, o->hi, o->aug, o->value, o->stage, o->value2, w[0], w[1], w[2], w[3],
                  w[4], value[0], w[6], value[1]);
      }
    }
    at += counts[k];
  }
  CHECK(bad == 0, "%d operations differ from augment_resize_ref.py's", bad);
  printf("  draws: %d operations of %d utterances (stages, tempo frames) equal the reference's\n", at, n_cases);
  free(ops);
}

/* Host draws: pitch's mean, tempo's frames, features time masks. */
static void test_draws(void) {
  cls_augmentation augs[4] = {augment_parse("pitch"), augment_parse("tempo[factor=1~0.5,max_time=900]"),
                              augment_parse("time_mask[domain=features,n=2,size=20:100~40]"), augment_parse("warp[nt=1:3,nf=2]")};
  const cls_augment_context c = {augs, 4, 99, 1, 257, 20, 60};
  cls_augment_op ops[64];
  const int n_utts = 4000;
  double s1 = 0, lo = 9, hi = 0;
  int n_pitch = 0, bad_tempo = 0, bad_mask = 0, bad_warp = 0, masks = 0;
  for (int u = 0; u < n_utts; u++) {
    const int frames = 20 + u % 40, transcript = 5 + u % 30;
    int after = 0;
    const int n = cls_augment_utterance(&c, (uint32_t)u, 0.3, frames, transcript, ops, &after);
    /* tempo: int(frames / factor), at most 900 ms = 45 frames, at least the transcript, at most 60 */
    int expect = frames;
    for (int i = 0; i < n; i++) {
      const cls_augment_op *o = &ops[i];
      if (o->kind == CLS_AUGOP_PITCH) {
        s1 += o->value, n_pitch++;
        lo = fmin(lo, o->value), hi = fmax(hi, o->value);
        bad_warp += o->lo != (int)((float)257 * o->value);
      } else if (o->kind == CLS_AUGOP_TEMPO) {
        int want = (int)fmin(floor((double)((float)frames / o->value)), 45.0);
        want = want < transcript ? transcript : want;
        want = want > 60 ? 60 : want;
        bad_tempo += o->lo != frames || o->hi != want || o->stage != 1;
        expect = want;
      } else if (o->kind == CLS_AUGOP_TIME_MASK) {
        masks++;
        bad_mask += o->domain != CLS_AUGOP_FEATURES || o->hi - o->lo < 1 || o->hi - o->lo > 5 || o->lo < 0 ||
                    o->hi > expect;
      } else if (o->kind == CLS_AUGOP_WARP) {
        bad_warp += o->lo < 1 || o->lo > 3 || o->hi != 2 || o->stage != 2 ||
                    fabsf(o->value - 0.1f * (float)expect / (float)(2 * (o->lo + 1))) > 1e-6f;
      }
    }
    bad_tempo += after != expect ||
                 after != cls_augment_frames(augs, 4, 99, 1, (uint32_t)u, 0.3, frames, transcript, 60, 20) ||
                 after < (transcript < 60 ? transcript : 60);
  }
  const double mean = s1 / n_pitch;
  /* uniform on 1.075 +- 0.125: deviation 0.0722; 4 sigma of the mean over 4000 */
  CHECK(n_pitch == n_utts && fabs(mean - 1.075) < 4 * 0.0722 / sqrt(n_utts) && lo >= 0.95 && hi <= 1.2,
        "pitch: %d picks, mean %.5f, range [%.4f, %.4f]", n_pitch, mean, lo, hi);
  printf("  pitch: mean factor %.5f over %d draws (centre 1.075), range [%.4f, %.4f]\n", mean, n_pitch, lo, hi);
  CHECK(bad_tempo == 0, "tempo: %d utterances with wrong frame counts", bad_tempo);
  CHECK(bad_mask == 0 && masks == 2 * n_utts, "features time masks: %d of %d out of range", bad_mask, masks);
  CHECK(bad_warp == 0, "pitch/warp operations: %d wrong", bad_warp);
  /* a cap below the transcript: the transcript wins; the tower's room wins over both */
  cls_augmentation slow = augment_parse("tempo[factor=0.5,max_time=100]");
  CHECK_INT(cls_augment_tempo_frames(&slow, 0.5, 40, 12, 0, 20), 12);
  CHECK_INT(cls_augment_tempo_frames(&slow, 0.5, 40, 12, 10, 20), 10);
  CHECK_INT(cls_augment_tempo_frames(&augs[1], 1.5, 40, 3, 0, 20), 26);
  CHECK_INT(cls_augment_tempo_frames(&augs[1], 3.0, 1, 0, 0, 20), 1);
}

int main(void) {
  test_draws();
  cls_safetensors *fx = tst_fixture("augment_resize.safetensors");
  if (fx) test_draws_reference(fx);
  tst_env env;
  if (tst_open(&env)) {
    for (int i = 0; i < env.n_devices; i++) {
      printf("device %s\n", tst_device_name(&env, env.devices[i]));
      if (fx) test_reference(&env, env.devices[i], fx);
    }
    test_tone(&env, env.devices[0]);
    test_edges(&env, env.devices[0]);
    test_moments(&env, env.devices[0]);
    cls_mfcc_config cfg = cls_mfcc_default(16000);
    cls_mfcc_tables *t = NULL;
    cls_error err;
    /* on every device: the power path must round as the plain one does, whatever the compiler fuses */
    if (cls_mfcc_tables_create(&cfg, &t, &err) != CLS_OK) t = NULL;
    for (int i = 0; t && i < env.n_devices; i++) test_mfcc_identity(&env, env.devices[i], t);
    cls_mfcc_tables_destroy(t);
    tst_close_env(&env);
  }
  cls_safetensors_free(fx);
  return check_finish("test_augment_resize");
}
