/* The host streaming CTC loss (cls_ctc_loss_stream_*, engine/ops/ctc_host.c): against TensorFlow's
 * tf.compat.v1.nn.ctc_loss (the fixtures of tests/ref/make_ctc_fixtures.py) and against the device CTC
 * op on random logits, fed in chunks of 1, 7 and all frames (the same bits whatever the chunking);
 * impossible alignments, empty labels, argument checks. */
#include "check.h"
#include "clspeech/ops.h"
#include "ops/ctc_host.h"
#include "ops_test.h"

static const int chunkings[] = {1, 7, 0}; /* 0: all frames in one feed */

/* Loss of utterance b of a time-major [T, B, C] batch, fed `chunk` frames at a time (0: all). */
static double stream_loss(const float *logits, int B, int C, int b, int n, const int32_t *labels, int L, int chunk) {
  cls_ctc_loss_stream *s = NULL;
  CHECK_INT(cls_ctc_loss_stream_begin(labels, L, C, &s), CLS_OK);
  if (!s) return NAN;
  const size_t stride = (size_t)B * C;
  for (int t = 0; t < n;) {
    int k = chunk > 0 && chunk < n - t ? chunk : n - t;
    CHECK_INT(cls_ctc_loss_stream_feed(s, logits + (size_t)t * stride + (size_t)b * C, k, stride), CLS_OK);
    t += k;
  }
  double loss = NAN;
  CHECK_INT(cls_ctc_loss_stream_finish(s, &loss), CLS_OK);
  cls_ctc_loss_stream_free(s);
  return loss;
}

/* Every utterance of a case in every chunking: the same double bits, returned as floats in loss[b]. */
static void stream_case(const char *what, const float *x, int B, int C, int Lmax, const int *labels,
                        const int *label_lengths, const int *input_lengths, float *loss) {
  int differ = 0;
  for (int b = 0; b < B; b++) {
    double first = 0.0;
    for (size_t k = 0; k < sizeof chunkings / sizeof chunkings[0]; k++) {
      double v = stream_loss(x, B, C, b, input_lengths[b], (const int32_t *)labels + (size_t)b * Lmax,
                             label_lengths[b], chunkings[k]);
      if (k == 0) first = v;
      else if (memcmp(&v, &first, sizeof v) != 0) differ++;
    }
    loss[b] = (float)first;
  }
  CHECK(differ == 0, "%s: %d losses differ between chunks of 1, 7 and all frames", what, differ);
}

/* The TF fixtures. TF runs its recursion in float32 and rounds the loss to float (the device op is held
 * to 1e-5 relative against it in tests/test_ctc.c); this double recursion measures at most 5.5e-7
 * relative (ctc_long, T=500), held to 2e-6. */
static void test_fixtures(void) {
  static const char *files[] = {"ctc_t1.safetensors", "ctc_small.safetensors", "ctc_deepspeech.safetensors",
                                "ctc_long.safetensors", "ctc_large.safetensors"};
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    cls_safetensors *st = tst_fixture(files[f]);
    if (!st) continue;
    int T = tst_meta_int(st, "T"), B = tst_meta_int(st, "B"), C = tst_meta_int(st, "C");
    int Lmax = tst_meta_int(st, "max_label");
    const float *x = tst_tensor(st, "logits", CLS_F32, (int64_t)T * B * C);
    const int *lab = tst_tensor(st, "labels", CLS_I32, (int64_t)B * Lmax);
    const int *ll = tst_tensor(st, "label_lengths", CLS_I32, B);
    const int *il = tst_tensor(st, "input_lengths", CLS_I32, B);
    const float *want = tst_tensor(st, "loss", CLS_F32, B);
    if (x && lab && ll && il && want) {
      float *loss = malloc((size_t)B * sizeof(float));
      char what[96];
      snprintf(what, sizeof what, "%s stream vs TF", files[f]);
      stream_case(what, x, B, C, Lmax, lab, ll, il, loss);
      tst_compare(what, loss, want, (size_t)B, 2e-6, 0);
      free(loss);
    }
    cls_safetensors_free(st);
  }
}

/* Random logits (wide, as an untrained model's, and peaked, as a trained one's) against the device op:
 * the device keeps float32 rows relative to their maximum, 2e-6 relative to float64 (tests/test_ctc.c);
 * measured 1.1e-7 relative here. */
static void test_device(tst_env *env, int dev) {
  const int T = 120, B = 4, C = 29, Lmax = 40;
  float *x = malloc((size_t)T * B * C * sizeof(float)), loss_dev[4], loss_host[4];
  int labels[4 * 40] = {0}, ll[4] = {40, 17, 0, 33}, il[4] = {120, 63, 90, 101};
  uint32_t s = 7;
  for (int scale = 0; scale < 2; scale++) {
    for (size_t i = 0; i < (size_t)T * B * C; i++) {
      s = s * 1664525u + 1013904223u;
      x[i] = (float)((s >> 8) * (1.0 / 16777216.0) * (scale ? 24.0 : 6.0) - (scale ? 12.0 : 3.0));
    }
    for (int i = 0; i < B * Lmax; i++) {
      s = s * 1664525u + 1013904223u;
      labels[i] = (int)((s >> 16) % (C - 1));
    }
    cls_ctc_plan *plan = NULL;
    CHECK_INT(cls_ctc_create(env->engine, dev, T, B, C, Lmax, &plan), CLS_OK);
    if (!plan) break;
    cl_mem mx = tst_buffer(env, dev, x, (size_t)T * B * C * sizeof(float));
    cl_mem ml = tst_buffer(env, dev, labels, sizeof labels), mll = tst_buffer(env, dev, ll, sizeof ll);
    cl_mem mil = tst_buffer(env, dev, il, sizeof il), mloss = tst_buffer(env, dev, NULL, sizeof loss_dev);
    size_t ws = cls_ctc_workspace_bytes(plan, T, B);
    cl_mem mws = ws ? tst_buffer(env, dev, NULL, ws) : NULL;
    cls_status st = cls_ctc_loss(plan, tst_queue(env, dev), T, B, cls_buf_of(mx), cls_buf_of(ml), cls_buf_of(mll),
                                 cls_buf_of(mil), cls_buf_of(mloss), cls_buf_of(NULL), 1.0f, CLS_OVERWRITE,
                                 cls_buf_of(mws), NULL);
    CHECK(st == CLS_OK, "cls_ctc_loss: %s", cls_engine_error(env->engine));
    tst_read(env, dev, mloss, loss_dev, sizeof loss_dev);
    char what[96];
    snprintf(what, sizeof what, "random logits (%s) stream vs device", scale ? "peaked" : "wide");
    stream_case(what, x, B, C, Lmax, labels, ll, il, loss_host);
    tst_compare(what, loss_host, loss_dev, (size_t)B, 2e-6, 0);
    clReleaseMemObject(mx);
    clReleaseMemObject(ml);
    clReleaseMemObject(mll);
    clReleaseMemObject(mil);
    clReleaseMemObject(mloss);
    if (mws) clReleaseMemObject(mws);
    cls_ctc_destroy(plan);
  }
  free(x);
}

/* Edge cases with known answers and the argument checks. */
/* Uniform logits x over 3 classes, label lab[L]: after `few` frames the loss is +inf (too few for the
 * label), after one frame more exactly (few + 1) ln 3 (one alignment). Leaves the stream in *s. */
static void too_few_then_one(const float *x, const int32_t *lab, int L, int few, cls_ctc_loss_stream **s) {
  double loss = 0;
  CHECK_INT(cls_ctc_loss_stream_begin(lab, L, 3, s), CLS_OK);
  CHECK_INT(cls_ctc_loss_stream_feed(*s, x, few, 3), CLS_OK);
  CHECK_INT(cls_ctc_loss_stream_finish(*s, &loss), CLS_OK);
  CHECK(isinf(loss) && loss > 0, "%d labels over %d frames: loss %g, expected +inf", L, few, loss);
  CHECK_INT(cls_ctc_loss_stream_feed(*s, x, 1, 3), CLS_OK);
  CHECK_INT(cls_ctc_loss_stream_finish(*s, &loss), CLS_OK);
  CHECK(fabs(loss - (few + 1) * log(3.0)) < 1e-12, "%d labels over %d frames: loss %.15g, expected %.15g", L, few + 1,
        loss, (few + 1) * log(3.0));
}

static void test_edges(void) {
  /* Uniform logits over C classes: every frame's probability is 1/C, so an empty label over T frames
   * (all blanks) has loss T ln C; a label of length T has exactly one alignment, loss T ln C too. */
  float x[5 * 3] = {0};
  int32_t lab[5] = {0, 1, 0, 1, 0}, rep[2] = {1, 1};
  double loss = 0;
  cls_ctc_loss_stream *s = NULL;
  CHECK_INT(cls_ctc_loss_stream_begin(NULL, 0, 3, &s), CLS_OK);
  CHECK_INT(cls_ctc_loss_stream_finish(s, &loss), CLS_OK);
  CHECK(loss == 0.0, "empty label over zero frames: loss %g, expected 0", loss);
  CHECK_INT(cls_ctc_loss_stream_feed(s, x, 5, 3), CLS_OK);
  CHECK_INT(cls_ctc_loss_stream_finish(s, &loss), CLS_OK);
  CHECK(fabs(loss - 5 * log(3.0)) < 1e-12, "all blanks: loss %.15g, expected %.15g", loss, 5 * log(3.0));
  cls_ctc_loss_stream_free(s);
  too_few_then_one(x, lab, 5, 4, &s);
  cls_ctc_loss_stream_free(s);
  /* A repeated label needs a blank between: 2 frames are too few, 3 have one alignment. */
  too_few_then_one(x, rep, 2, 2, &s);
  /* Bad input. */
  float bad[3] = {0.0f, NAN, 0.0f};
  CHECK_INT(cls_ctc_loss_stream_feed(s, bad, 1, 3), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_loss_stream_feed(s, x, 1, 2), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_loss_stream_feed(s, NULL, 1, 3), CLS_ERR_INVALID_ARGUMENT);
  cls_ctc_loss_stream_free(s);
  int32_t out_of_range[1] = {2};
  s = (cls_ctc_loss_stream *)1;
  CHECK_INT(cls_ctc_loss_stream_begin(out_of_range, 1, 3, &s), CLS_ERR_INVALID_ARGUMENT);
  CHECK(s == NULL, "a failed begin leaves *out NULL");
  CHECK_INT(cls_ctc_loss_stream_begin(lab, 1, 0, &s), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_loss_stream_finish(NULL, &loss), CLS_ERR_INVALID_ARGUMENT);
  printf("  edge cases and argument checks done\n");
}

int main(void) {
  test_fixtures();
  test_edges();
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_ctc_stream");
  for (int i = 0; i < env.n_devices; i++) {
    printf("device %s\n", tst_device_name(&env, env.devices[i]));
    test_device(&env, env.devices[i]);
  }
  tst_close_env(&env);
  return check_finish("test_ctc_stream");
}
