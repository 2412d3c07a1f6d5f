/* --augment: the specification parser (DeepSpeech 0.9.3's grammar, defaults and the refusals), an
 * utterance's draws against the numpy reference (tests/ref/augment_ref.py) and their statistics, the
 * kernels (kernels/augment.cl) on given operations against the reference on every device, their
 * statistics over many draws, and the device MFCC with augmentation: nothing changes without
 * operations, a time mask silences exactly its frames, and an utterance's augmented features are the
 * same in a batch on one device as alone on each other device (towers). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data_present.h"
#include "ops_test.h"
#include "augment_test.h"
#include "data_files.h"
#include "device/log.h"
#include "device/kernel_args.h"
#include "device/program.h"
#include "features/augment/device_ops.h"
#include "features/mfcc_device.h"
#include "ops/ops_util.h"
#include "augment_draw.h"
#include "data/batch_loader.h"

static void parse_fails(const char *spec, const char *needle) {
  cls_augmentation a;
  cls_error err;
  cls_error_clear(&err);
  CHECK(cls_augment_parse(spec, &a, &err) == CLS_ERR_INVALID_ARGUMENT, "\"%s\" was accepted", spec);
  CHECK_CONTAINS(err.text, needle);
}

static int range_is(cls_value_range v, double s, double e, double r) { return v.start == s && v.end == e && v.r == r; }

static void test_parse(void) {
  /* DeepSpeech's defaults (util/augmentations.py) */
  cls_augmentation a = augment_parse("overlay[source=noise.csv]");
  CHECK(a.kind == CLS_AUGMENT_OVERLAY && !strcmp(a.source, "noise.csv") && range_is(a.param[0], 3, 3, 0) &&
            range_is(a.param[1], 1, 1, 0) && a.p == 1.0 && a.domain == CLS_AUGMENT_SAMPLE,
        "overlay defaults");
  a = augment_parse("codec");
  CHECK(range_is(a.param[0], 3200, 3200, 0), "codec bitrate");
  a = augment_parse("reverb");
  CHECK(range_is(a.param[0], 20, 20, 0) && range_is(a.param[1], 10, 10, 0), "reverb delay, decay");
  a = augment_parse("resample");
  CHECK(range_is(a.param[0], 8000, 8000, 0), "resample rate");
  a = augment_parse("volume");
  CHECK(range_is(a.param[0], 3.0103, 3.0103, 0), "volume dbfs");
  a = augment_parse("pitch");
  CHECK(range_is(a.param[0], 1.075, 1.075, 0.125) && a.domain == CLS_AUGMENT_SPECTROGRAM, "pitch");
  a = augment_parse("tempo");
  CHECK(range_is(a.param[0], 1.1, 1.1, 0) && a.param[1].start == -1, "tempo factor, max_time");
  a = augment_parse("warp");
  CHECK(range_is(a.param[0], 1, 1, 0) && range_is(a.param[1], 1, 1, 0) && range_is(a.param[2], 0.1, 0.1, 0) &&
            range_is(a.param[3], 0, 0, 0),
        "warp nt, nf, wt, wf");
  a = augment_parse("frequency_mask");
  CHECK(range_is(a.param[0], 3, 3, 0) && range_is(a.param[1], 2, 2, 0), "frequency_mask n, size");
  a = augment_parse("time_mask");
  CHECK(range_is(a.param[0], 3, 3, 0) && range_is(a.param[1], 10, 10, 0) && a.domain == CLS_AUGMENT_SPECTROGRAM,
        "time_mask n, size, domain");
  a = augment_parse("dropout");
  CHECK(range_is(a.param[0], 0.05, 0.05, 0) && a.domain == CLS_AUGMENT_SPECTROGRAM, "dropout rate, domain");
  a = augment_parse("add");
  CHECK(range_is(a.param[0], 5, 5, 0) && a.domain == CLS_AUGMENT_FEATURES, "add stddev, domain");
  a = augment_parse("multiply");
  CHECK(range_is(a.param[0], 5, 5, 0) && a.domain == CLS_AUGMENT_FEATURES, "multiply stddev, domain");
  CHECK(!strcmp(cls_augment_param_name(CLS_AUGMENT_WARP, 3), "wf") && !cls_augment_param_name(CLS_AUGMENT_ADD, 1),
        "parameter names");
  /* the value grammar: v, v~r, a:b, a:b~r; white space stripped as DeepSpeech's str.strip */
  a = augment_parse("time_mask[p=0.25, n=2:5~1 ,size=50.5~12.5,domain=spectrogram]");
  CHECK(a.p == 0.25 && range_is(a.param[0], 2, 5, 1) && range_is(a.param[1], 50.5, 50.5, 12.5), "ranges");
  a = augment_parse("dropout[domain=features,rate=0.1:0.3]");
  CHECK(a.domain == CLS_AUGMENT_FEATURES && range_is(a.param[0], 0.1, 0.3, 0), "a:b");
  /* refusals */
  parse_fails("nosuch", "unknown augmentation \"nosuch\"");
  parse_fails("Frequency_mask", "not an augmentation specification");
  parse_fails("add[", "not an augmentation specification");
  parse_fails("add[stddev=1]x", "not an augmentation specification");
  parse_fails("add[sigma=1]", "unknown parameter \"sigma\" (its parameters: p, stddev, domain)");
  parse_fails("add[stddev=1,stddev=2]", "parameter \"stddev\" given twice");
  parse_fails("add[p=1.5]", "p must be in [0, 1]");
  parse_fails("add[p=-0.1]", "p must be in [0, 1]");
  parse_fails("add[p=nan]", "not a number");
  parse_fails("frequency_mask[size=-1]", "size must not be negative");
  parse_fails("time_mask[n=-2:3]", "n must not be negative");
  parse_fails("time_mask[size=10~-1]", "radius");
  parse_fails("frequency_mask[n=1.5]", "not an integer range");
  parse_fails("frequency_mask[n=1:2:3]", "not an integer range");
  parse_fails("frequency_mask[n=1~2~3]", "not an integer range");
  parse_fails("frequency_mask[n=]", "not an integer range");
  parse_fails("dropout[rate=x]", "not a range");
  parse_fails("dropout[rate=1.5]", "must be in [0, 1]");
  parse_fails("dropout[domain=cepstrum]", "domain must be signal, spectrogram or features");
  parse_fails("frequency_mask[domain=features]", "unknown parameter \"domain\"");
  parse_fails("add[stddev]", "not key=value");
  parse_fails("add[a=b=c]", "not key=value");
  parse_fails("add[]", "not key=value");
  parse_fails("overlay", "needs source=FILE");
  parse_fails("frequency_mask[n=1001]", "at most 1000");
  parse_fails("tempo[max_time=1:2]", "not a number");
  /* what training runs: every augmentation in every domain DeepSpeech allows */
  const char *runs[] = {"volume",   "reverb", "resample", "frequency_mask",          "time_mask",
                        "dropout",  "add",    "multiply", "dropout[domain=features]", "pitch", "tempo", "warp",
                        "time_mask[domain=features]", "add[domain=spectrogram]", "multiply[domain=spectrogram]",
                        "pitch[pitch=0.5:1.5~0.4]", "tempo[factor=0.5~0.25,max_time=200]", "warp[nt=0:4~2,wf=0.1]",
                        "overlay[source=x]", "codec", "time_mask[domain=signal]", "dropout[domain=signal]",
                        "multiply[domain=signal]"};
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    a = augment_parse(runs[i]);
    cls_error err;
    CHECK(cls_augment_check_supported(&a, &err) == CLS_OK, "%s refused: %s", runs[i], err.text);
  }
  /* pitch and tempo ranges that can pick 0 or less */
  const struct { const char *spec, *why; } refused[] = {{"pitch[pitch=1~1]", "can pick values at or below 0"},
                                                        {"tempo[factor=0.5~0.6]", "can pick values at or below 0"},
                                                        {"tempo[factor=2:0.1~0.2]", "can pick values at or below 0"}};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    a = augment_parse(refused[i].spec);
    cls_error err;
    cls_error_clear(&err);
    CHECK(cls_augment_check_supported(&a, &err) == CLS_ERR_INVALID_ARGUMENT, "%s accepted", refused[i].spec);
    CHECK_CONTAINS(err.text, refused[i].why);
  }
}

/* ---- draws ---- */

static void test_draws_reference(const cls_safetensors *fx) {
  cls_augmentation augs[16];
  const int n_augs = augment_fixture_specs(fx, augs, 16);
  CHECK_INT(n_augs, 6);
  const cls_augment_context c = {augs, n_augs, (uint32_t)tst_meta_int(fx, "draw_seed"),
                                 (uint32_t)tst_meta_int(fx, "draw_epoch"), tst_meta_int(fx, "n_bins"),
                                 tst_meta_int(fx, "win_step_ms"), 0};
  /* the cases of augment_ref.py: (utterance, clock, frames) */
  const struct { uint32_t utt; double clock; int frames; } cases[] = {{0, 0.0, 145}, {1, 0.25, 50}, {7, 0.5, 2},
                                                                      {100, 0.9, 1}, {12345, 1.0, 300}, {3, 0.6, 145}};
  const int n_cases = (int)(sizeof cases / sizeof *cases);
  const int32_t *counts = tst_tensor(fx, "draw_counts", CLS_I32, n_cases);
  const int32_t *want = tst_tensor(fx, "draw_ops", CLS_I32, -1);
  if (!counts || !want) return;
  cls_augment_op *ops = malloc((size_t)cls_augment_max_ops(augs, n_augs) * sizeof *ops);
  int at = 0, bad = 0;
  for (int k = 0; k < n_cases; k++) {
    const int n = cls_augment_utterance(&c, cases[k].utt, cases[k].clock, cases[k].frames, 0, ops, NULL);
    CHECK(n == counts[k], "case %d: %d operations, the reference %d", k, n, counts[k]);
    for (int i = 0; i < n && i < counts[k]; i++) {
      const int32_t *w = want + (size_t)(at + i) * 8;
      float value;
      memcpy(&value, &w[5], sizeof value);
      const cls_augment_op *o = &ops[i];
      if (o->kind != w[0] || o->domain != w[1] || o->lo != w[2] || o->hi != w[3] || o->aug != w[4] ||
          fabsf(o->value - value) > 1e-6f * fmaxf(1.0f, fabsf(value))) {
        if (bad++ < 5)
          fprintf(stderr, "    case %d op %d: got %d %d [%d, %d) aug %d %.9g, reference %d %d [%d, %d) aug %d %.9g\n", k,
                  i, o->kind, o->domain, o->lo, o->hi, o->aug, o->value, w[0], w[1], w[2], w[3], w[4], value);
      }
    }
    at += counts[k];
  }
  CHECK(bad == 0, "%d operations differ from augment_ref.py's", bad);
  printf("  draws: %d operations of %d utterances equal the numpy reference's\n", at, n_cases);
  free(ops);
}

/* Over many utterances: the fraction augmented is p, counts and sizes lie in their ranges (DeepSpeech's
 * clamps), masks lie inside the utterance, and a:b ranges follow the clock. */
static void test_draw_statistics(void) {
  cls_augmentation augs[3] = {augment_parse("frequency_mask[p=0.3,n=1:3,size=2~2]"),
                              augment_parse("time_mask[p=0.6,n=2~2,size=60~30]"), augment_parse("add[stddev=1:3]")};
  const cls_augment_context c = {augs, 3, 99, 1, 257, 20, 0};
  cls_augment_op ops[64];
  const int N = 20000, frames = 40;
  long applied_f = 0, applied_t = 0, out_of_range = 0, wrong_n = 0;
  double add_sum = 0;
  for (int u = 0; u < N; u++) {
    const double clock = (double)u / N;
    const int n = cls_augment_utterance(&c, (uint32_t)u, clock, frames, 0, ops, NULL);
    int nf = 0, nt = 0;
    for (int i = 0; i < n; i++) {
      const cls_augment_op *o = &ops[i];
      if (o->kind == CLS_AUGOP_FREQUENCY_MASK) {
        nf++;
        /* size 2~2 picks 0..4, clamped to >= 1 */
        if (o->lo < 0 || o->hi > 257 || o->hi - o->lo < 1 || o->hi - o->lo > 4) out_of_range++;
      } else if (o->kind == CLS_AUGOP_TIME_MASK) {
        nt++;
        /* 60~30 ms picks 30..90 ms: 1..4 frames of 20 ms (truncated) */
        if (o->lo < 0 || o->hi > frames || o->hi - o->lo < 1 || o->hi - o->lo > 4) out_of_range++;
      } else if (o->kind == CLS_AUGOP_ADD) {
        add_sum += o->value;
        if (fabs(o->value - (1.0 + 2.0 * clock)) > 1e-6) out_of_range++; /* 1:3 with r = 0 follows the clock */
      }
    }
    const int centre_f = (int)nearbyint(1.0 + 2.0 * clock); /* n = 1:3 rounded at the clock */
    if (nf) applied_f++;
    if (nt) applied_t++;
    if (nf && nf != centre_f) wrong_n++;
    if (nt > 4) wrong_n++; /* n = 2~2: 0..4 */
  }
  const double pf = (double)applied_f / N, pt = (double)applied_t / N;
  /* binomial: 4 sigma of N = 20000 draws is about 0.013 at p = 0.3 and 0.014 at 0.6 (less: n may be 0) */
  CHECK(fabs(pf - 0.3) < 0.013, "frequency_mask applied to %.4f of utterances, p = 0.3", pf);
  /* time_mask: p = 0.6 and n = 2~2 (n >= 1 in 7/8 of picks: rint of 0..4 uniform gives 0 for [0, 0.5)) */
  CHECK(fabs(pt - 0.6 * 0.875) < 0.014, "time_mask applied to %.4f of utterances, p 0.6 x P(n > 0) 0.875", pt);
  CHECK(out_of_range == 0, "%ld masks or values out of their ranges", out_of_range);
  CHECK(wrong_n == 0, "%ld utterances with a count outside its range", wrong_n);
  CHECK(fabs(add_sum / N - 2.0) < 1e-3, "add's stddev averaged %.5f over a clock 0..1 of 1:3", add_sum / N);
  printf("  draw statistics: frequency_mask on %.4f (p 0.3), time_mask on %.4f (0.525)\n", pf, pt);
}

/* A training loader's batches carry each utterance's index in the epoch and its clock: a rank's shard
 * (2 of every global batch of 6, from the third) of an epoch of 36 utterances, run epoch 1 of 4. */
static void test_loader_indices(const cls_mfcc_tables *t) {
  cls_utterance u[12];
  const int32_t label = 1;
  for (int i = 0; i < 12; i++) u[i] = (cls_utterance){SMOKE "/LDC93S1.wav", &label, 1};
  cls_loader_options o = {.tables = t, .n_context = 9, .depth = 2, .augment = 1, .run_epoch = 1, .epochs = 4,
                          .epoch_size = 36, .index_local = 2, .index_global = 6, .index_first = 2, .epoch_key = 7};
  cls_loader *l = NULL;
  cls_error err;
  CHECK(cls_loader_start(u, 12, 4, &o, &l, &err) == CLS_OK, "loader: %s", err.text);
  int seen = 0, bad = 0;
  for (cls_host_batch *b; l && (b = cls_loader_next(l));) {
    for (int i = 0; i < b->batch; i++) {
      const int at = b->first + i, g = at / 2 * 6 + 2 + at % 2;
      if (!b->augmented || b->aug_epoch != 7 || b->aug_index[i] != (uint32_t)g ||
          fabs(b->aug_clock[i] - (1.0 + g / 36.0) / 4.0) > 1e-12)
        bad++;
      seen++;
    }
    cls_loader_done(l, b);
  }
  cls_loader_stop(l);
  CHECK(seen == 12 && bad == 0, "%d of %d utterances with a wrong index, clock or epoch key", bad, seen);
  /* an evaluation loader's batches are not augmented */
  cls_loader_options e = {.tables = t, .n_context = 9, .depth = 1};
  CHECK(cls_loader_start(u, 2, 2, &e, &l, &err) == CLS_OK, "loader: %s", err.text);
  cls_host_batch *b = l ? cls_loader_next(l) : NULL;
  CHECK(b && !b->augmented, "an evaluation batch is marked augmented");
  if (b) cls_loader_done(l, b);
  cls_loader_stop(l);
}

/* ---- kernels ---- */

typedef struct kernel_tables {
  cl_mem frame_utt, frame_base, op_first, ops, utt;
} kernel_tables;

static void tables_release(kernel_tables *k) {
  cl_mem m[] = {k->frame_utt, k->frame_base, k->op_first, k->ops, k->utt};
  for (int i = 0; i < 5; i++)
    if (m[i]) clReleaseMemObject(m[i]);
}

/* The tables of utterances with `frames[b]` frames, `n_ops[b]` operations each (ops concatenated). */
static kernel_tables tables_make(tst_env *env, int dev, int batch, const int *frames, const uint32_t *utt,
                                 const int32_t *ops, const int32_t *n_ops) {
  int total = 0, n_all = 0, base[8], first[9];
  for (int b = 0; b < batch; b++) {
    base[b] = total;
    first[b] = n_all;
    total += frames[b];
    n_all += n_ops[b];
  }
  first[batch] = n_all;
  int *fu = malloc((size_t)total * sizeof *fu);
  for (int b = 0; b < batch; b++)
    for (int f = 0; f < frames[b]; f++) fu[base[b] + f] = b;
  kernel_tables k = {tst_buffer(env, dev, fu, (size_t)total * sizeof(int)),
                     tst_buffer(env, dev, base, (size_t)batch * sizeof(int)),
                     tst_buffer(env, dev, first, (size_t)(batch + 1) * sizeof(int)),
                     tst_buffer(env, dev, ops, (size_t)(n_all ? n_all : 1) * 8 * sizeof(int32_t)),
                     tst_buffer(env, dev, utt, (size_t)batch * sizeof(uint32_t))};
  free(fu);
  return k;
}

static int run_kernel(tst_env *env, int dev, const char *name, int n_frames, int width, cl_mem data,
                      const kernel_tables *k, uint32_t seed, uint32_t epoch) {
  cls_device *d = NULL;
  cl_kernel kern = NULL;
  cls_status st = cls_ops_device(env->engine, dev, &d);
  if (st == CLS_OK) st = cls_device_kernel(env->engine, d, "augment", name, &kern);
  CHECK(st == CLS_OK, "kernel %s: %s", name, cls_engine_error(env->engine));
  if (st != CLS_OK) return 0;
  cls_kargs ka = cls_kargs_begin(cls_engine_errors(env->engine), kern, name);
  cls_kargs_int(&ka, n_frames);
  cls_kargs_int(&ka, width);
  cls_kargs_mem(&ka, data);
  cls_kargs_mem(&ka, k->frame_utt);
  cls_kargs_mem(&ka, k->frame_base);
  cls_kargs_mem(&ka, k->op_first);
  cls_kargs_mem(&ka, k->ops);
  cls_kargs_mem(&ka, k->utt);
  cls_kargs_uint(&ka, (cl_uint)seed);
  cls_kargs_uint(&ka, (cl_uint)epoch);
  st = cls_kargs_end(&ka);
  size_t g[2] = {((size_t)width + 3) / 4, (size_t)n_frames}, l[2] = {1, 1};
  if (st == CLS_OK)
    st = cls_ops_launch_to(cls_engine_errors(env->engine), tst_queue(env, dev), kern, name, 2, g, l, NULL);
  CHECK(st == CLS_OK, "running %s: %s", name, cls_engine_error(env->engine));
  clReleaseKernel(kern);
  return st == CLS_OK;
}

/* The fixture's operations (the drawn values given) on the reference's formula inputs. */
static void test_kernels_reference(tst_env *env, int dev, const cls_safetensors *fx) {
  const int n_bins = 257, nc = 26, frames[2] = {6, 5}, total = 11;
  const uint32_t utt[2] = {5, 9}, seed = (uint32_t)tst_meta_int(fx, "kernel_seed"),
                 epoch = (uint32_t)tst_meta_int(fx, "kernel_epoch");
  const int32_t *n_ops = tst_tensor(fx, "kernel_op_counts", CLS_I32, 2);
  const int32_t *ops = tst_tensor(fx, "kernel_ops", CLS_I32, -1);
  const uint8_t *keep = tst_tensor(fx, "spectrum_keep", CLS_U8, (int64_t)total * n_bins);
  /* features_out follows the U8 mask in the file, so its bytes are not 4-byte aligned: copied out. */
  const float *stored = tst_tensor(fx, "features_out", CLS_F32, (int64_t)total * nc);
  float *want = malloc((size_t)total * nc * sizeof *want);
  if (stored && want) memcpy(want, stored, (size_t)total * nc * sizeof *want);
  if (!n_ops || !ops || !keep || !stored || !want) {
    free(want);
    return;
  }
  kernel_tables k = tables_make(env, dev, 2, frames, utt, ops, n_ops);
  /* the spectrum, per frame of its utterance (augment_ref.py spectrum_input), in float and double */
  const int fp64 = cls_engine_device(env->engine, dev)->fp64;
  for (int precision = 0; precision < 1 + fp64; precision++) {
    const size_t real = precision ? sizeof(double) : sizeof(float), bytes = (size_t)total * n_bins * 2 * real;
    unsigned char *in = malloc(bytes), *out = malloc(bytes);
    for (int b = 0, row = 0; b < 2; b++)
      for (int f = 0; f < frames[b]; f++, row++)
        for (int i = 0; i < n_bins; i++) {
          const double re = ((f * 37 + i * 11) % 101) / 8.0 - 6.0, im = ((f * 13 + i * 7) % 53) / 4.0 - 6.5;
          const size_t at = ((size_t)row * n_bins + i) * 2;
          if (precision) {
            ((double *)in)[at] = re;
            ((double *)in)[at + 1] = im;
          } else {
            ((float *)in)[at] = (float)re;
            ((float *)in)[at + 1] = (float)im;
          }
        }
    cl_mem spectrum = tst_buffer(env, dev, in, bytes);
    if (run_kernel(env, dev, precision ? "augment_spectrogram_f64" : "augment_spectrogram", total, n_bins, spectrum, &k,
                   seed, epoch)) {
      tst_read(env, dev, spectrum, out, bytes);
      int bad = 0, dropped = 0;
      for (size_t e = 0; e < (size_t)total * n_bins; e++) {
        const int same = !memcmp(out + e * 2 * real, in + e * 2 * real, 2 * real);
        double zero[2] = {0, 0};
        float zf[2] = {0, 0};
        const int zeroed = !memcmp(out + e * 2 * real, precision ? (void *)zero : (void *)zf, 2 * real);
        dropped += !keep[e];
        if (keep[e] ? !same : !zeroed) bad++;
      }
      CHECK(bad == 0, "%s: %d of %d spectrum values differ from the reference's mask (%d dropped there)",
            precision ? "f64" : "f32", bad, total * n_bins, dropped);
      printf("  spectrogram kernel (%s): %d of %d values dropped as the reference drops them\n",
             precision ? "double" : "float", dropped, total * n_bins);
    }
    clReleaseMemObject(spectrum);
    free(in);
    free(out);
  }
  float *feats = malloc((size_t)total * nc * sizeof *feats), *got = malloc((size_t)total * nc * sizeof *got);
  for (int f = 0; f < total; f++)
    for (int c = 0; c < nc; c++) feats[f * nc + c] = (float)(((f * 29 + c * 17) % 97) / 4.0 - 12.0);
  cl_mem fm = tst_buffer(env, dev, feats, (size_t)total * nc * sizeof(float));
  if (run_kernel(env, dev, "augment_features", total, nc, fm, &k, seed, epoch)) {
    tst_read(env, dev, fm, got, (size_t)total * nc * sizeof(float));
    tst_compare("features kernel vs augment_ref.py", got, want, (size_t)total * nc, 1e-5, 1e-5);
  }
  clReleaseMemObject(fm);
  free(feats);
  free(got);
  free(want);
  tables_release(&k);
}

/* Many elements of one utterance: dropout's fraction is its rate, add's noise has mean 0 and deviation
 * s, multiply's factor mean 1 and deviation s (4-sigma bounds for n = 104,000 values). */
static void test_kernel_statistics(tst_env *env, int dev) {
  const int frames = 4000, nc = 26, n = frames * nc;
  const uint32_t utt = 77;
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  for (int i = 0; i < n; i++) x[i] = 1.0f + (float)(i % 7);
  struct { int kind; float value; } cases[] = {{CLS_AUGOP_DROPOUT, 0.3f}, {CLS_AUGOP_ADD, 0.5f}, {CLS_AUGOP_MULTIPLY, 0.2f}};
  for (int c = 0; c < 3; c++) {
    int32_t op[8] = {cases[c].kind, CLS_AUGOP_FEATURES, 0, 0, c, 0, 0, 0};
    memcpy(&op[5], &cases[c].value, sizeof(float));
    const int32_t n_ops = 1;
    kernel_tables k = tables_make(env, dev, 1, &frames, &utt, op, &n_ops);
    cl_mem m = tst_buffer(env, dev, x, (size_t)n * sizeof(float));
    if (run_kernel(env, dev, "augment_features", frames, nc, m, &k, 5, 0)) {
      tst_read(env, dev, m, y, (size_t)n * sizeof(float));
      double s1 = 0, s2 = 0;
      long zeros = 0;
      for (int i = 0; i < n; i++) {
        const double v = cases[c].kind == CLS_AUGOP_ADD ? (double)y[i] - x[i] : (double)y[i] / x[i];
        zeros += y[i] == 0.0f;
        s1 += v;
        s2 += v * v;
      }
      const double mean = s1 / n, sd = sqrt(s2 / n - mean * mean), s = cases[c].value;
      if (cases[c].kind == CLS_AUGOP_DROPOUT) {
        const double frac = (double)zeros / n, tol = 4 * sqrt(s * (1 - s) / n);
        CHECK(fabs(frac - s) < tol, "dropout zeroed %.5f, rate %.2f (+-%.4f)", frac, s, tol);
        printf("  dropout kernel: %.5f of %d values zeroed at rate %.2f\n", frac, n, s);
      } else {
        const double centre = cases[c].kind == CLS_AUGOP_ADD ? 0.0 : 1.0;
        /* mean: 4 s / sqrt(n); deviation: 4 s / sqrt(2 n) */
        CHECK(fabs(mean - centre) < 4 * s / sqrt(n), "%s: mean %.6f, expected %.1f", c == 1 ? "add" : "multiply", mean,
              centre);
        CHECK(fabs(sd - s) < 4 * s / sqrt(2.0 * n), "%s: deviation %.6f, expected %.2f", c == 1 ? "add" : "multiply", sd,
              s);
        printf("  %s kernel: mean %.5f, deviation %.5f (stddev %.2f)\n", c == 1 ? "add" : "multiply", mean, sd, s);
      }
    }
    clReleaseMemObject(m);
    tables_release(&k);
  }
  free(x);
  free(y);
}

/* ---- the device MFCC with augmentation ---- */

typedef struct clips {
  const float *samples[3];
  size_t n[3];
  cls_audio audio;
} clips;

/* Three clips of LDC93S1: its first 1.0 s, 2.925 s (all) and 1.7 s from 0.5 s. */
static int clips_load(clips *c) {
  cls_error err;
  if (cls_audio_read(SMOKE "/LDC93S1.wav", 16000, &c->audio, &err) != CLS_OK) {
    CHECK(0, "audio: %s", err.text);
    return 0;
  }
  c->samples[0] = c->audio.samples;
  c->n[0] = 16000;
  c->samples[1] = c->audio.samples;
  c->n[1] = c->audio.n_samples;
  c->samples[2] = c->audio.samples + 8000;
  c->n[2] = 27200;
  return 1;
}

static void test_mfcc_augmented(tst_env *env, const cls_mfcc_tables *t, const clips *cl) {
  cls_augmentation augs[4] = {augment_parse("frequency_mask[n=2,size=3~2]"), augment_parse("dropout[rate=0.2]"),
                              augment_parse("add[stddev=0.5]"), augment_parse("dropout[domain=features,rate=0.1]")};
  const cls_augment_context ctx = {augs, 4, 31337, 4, t->n_bins, t->cfg.win_step_ms, 0};
  const uint32_t index[3] = {40, 41, 42};
  cls_augment_op *ops = malloc((size_t)3 * cls_augment_max_ops(augs, 4) * sizeof *ops);
  int first[4] = {0}, frames[3];
  for (int b = 0; b < 3; b++) {
    frames[b] = (int)cls_mfcc_frames(t, cl->n[b]);
    first[b + 1] = first[b] + cls_augment_utterance(&ctx, index[b], 0.5, frames[b], 0, ops + first[b], NULL);
  }
  const size_t total = (size_t)frames[0] + frames[1] + frames[2], nc = 26;
  float *plain = malloc(total * nc * sizeof(float)), *batch = malloc(total * nc * sizeof(float));
  float *alone = malloc((size_t)frames[1] * nc * sizeof(float)), *lead = malloc((size_t)frames[1] * nc * sizeof(float));
  const cls_buf none = {NULL, 0};
  for (int i = 0; i < env->n_devices; i++) {
    const int dev = env->devices[i];
    cls_mfcc_plan *plan = NULL;
    cl_command_queue q = tst_queue(env, dev);
    cls_status st = cls_mfcc_create(env->engine, dev, t, &plan);
    if (st == CLS_OK) st = cls_mfcc_enable_augment(plan);
    CHECK(st == CLS_OK, "plan: %s", cls_engine_error(env->engine));
    if (st != CLS_OK) {
      cls_mfcc_destroy(plan);
      continue;
    }
    if (i == 0) {
      /* no operations: the plain features, bit for bit */
      const int no_ops[4] = {0, 0, 0, 0};
      const cls_augment_batch empty = {ops, no_ops, index, 31337, 4};
      CHECK(cls_mfcc_compute(plan, q, 3, cl->samples, cl->n, 0, none, NULL, NULL, plain) == CLS_OK, "plain: %s",
            cls_engine_error(env->engine));
      CHECK(cls_mfcc_compute_augmented(plan, q, 3, cl->samples, cl->n, &empty, 0, none, NULL, NULL, batch) == CLS_OK,
            "no operations: %s", cls_engine_error(env->engine));
      tst_compare("augmented without operations vs plain", batch, plain, total * nc, 0, 0);
      /* a time mask of frames [3, 7) of the second clip: those frames become a silent frame's features
         (every channel at the log floor), the others stay as they were */
      cls_augment_op mask = {CLS_AUGOP_TIME_MASK, CLS_AUGOP_SPECTROGRAM, 3, 7, 0, 0.0f, 0, 0.0f};
      const int mask_first[2] = {0, 1};
      const cls_augment_batch masked = {&mask, mask_first, &index[1], 1, 1};
      CHECK(cls_mfcc_compute_augmented(plan, q, 1, cl->samples + 1, cl->n + 1, &masked, 0, none, NULL, NULL, alone) ==
                CLS_OK,
            "time mask: %s", cls_engine_error(env->engine));
      const float *p1 = plain + (size_t)frames[0] * nc;
      int changed_outside = 0, unequal_inside = 0;
      for (int f = 0; f < frames[1]; f++)
        for (size_t c = 0; c < nc; c++) {
          const float v = alone[f * nc + c];
          if (f >= 3 && f < 7) unequal_inside += v != alone[3 * nc + c];
          else changed_outside += v != p1[f * nc + c];
        }
      /* a silent frame: the DCT of 40 channels at log(1e-12): coefficient 0 is sqrt(2/40) 40 log(1e-12) */
      const double c0 = sqrt(2.0 / 40.0) * 40.0 * log(1e-12);
      CHECK(changed_outside == 0 && unequal_inside == 0 && fabs(alone[3 * nc] - c0) < 1e-3 * fabs(c0),
            "time mask: %d values changed outside frames [3, 7), %d unequal inside, c0 %.4f (silence %.4f)",
            changed_outside, unequal_inside, alone[3 * nc], c0);
      /* the batch of three, augmented */
      const cls_augment_batch all = {ops, first, index, 31337, 4};
      CHECK(cls_mfcc_compute_augmented(plan, q, 3, cl->samples, cl->n, &all, 0, none, NULL, NULL, batch) == CLS_OK,
            "augmented batch: %s", cls_engine_error(env->engine));
      memcpy(lead, batch + (size_t)frames[0] * nc, (size_t)frames[1] * nc * sizeof(float));
      int changed = 0;
      for (size_t e = 0; e < total * nc; e++) changed += batch[e] != plain[e];
      CHECK(changed > (int)(total * nc) / 2, "only %d of %zu features changed by the augmentation", changed, total * nc);
    }
    /* the second clip alone on this device, with its own operations: a tower's share of one */
    const int one_first[2] = {first[1], first[2]};
    const cls_augment_batch one = {ops, one_first, &index[1], 31337, 4};
    CHECK(cls_mfcc_compute_augmented(plan, q, 1, cl->samples + 1, cl->n + 1, &one, 0, none, NULL, NULL, alone) == CLS_OK,
          "alone: %s", cls_engine_error(env->engine));
    char what[320];
    snprintf(what, sizeof what, "clip 2 alone on %s vs in the batch on the first", tst_device_name(env, dev));
    tst_compare(what, alone, lead, (size_t)frames[1] * nc, 0, 0);
    cls_mfcc_destroy(plan);
  }
  free(plain);
  free(batch);
  free(alone);
  free(lead);
  free(ops);
}

int main(void) {
  if (!data_present()) return check_finish("test_augment");
  test_parse();
  cls_safetensors *fx = tst_fixture("augment.safetensors");
  if (fx) {
    test_draws_reference(fx);
  }
  test_draw_statistics();
  tst_env env;
  if (tst_open(&env)) {
    for (int i = 0; fx && i < env.n_devices; i++) {
      printf("device %s\n", tst_device_name(&env, env.devices[i]));
      test_kernels_reference(&env, env.devices[i], fx);
    }
    test_kernel_statistics(&env, env.devices[0]);
    cls_mfcc_config cfg = cls_mfcc_default(16000);
    cls_mfcc_tables *t = NULL;
    cls_error err;
    clips cl;
    if (cls_mfcc_tables_create(&cfg, &t, &err) == CLS_OK && clips_load(&cl)) {
      test_loader_indices(t);
      test_mfcc_augmented(&env, t, &cl);
      cls_audio_free(&cl.audio);
    }
    cls_mfcc_tables_destroy(t);
    tst_close_env(&env);
  }
  cls_safetensors_free(fx);
  return check_finish("test_augment");
}
