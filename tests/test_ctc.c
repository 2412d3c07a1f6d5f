/* The CTC op on every device: loss and gradient against TensorFlow's tf.compat.v1.nn.ctc_loss
 * (fixtures from tests/ref/make_ctc_fixtures.py) and against a float64 log-space CTC written here,
 * which a finite-difference check also ties to the device gradient; every path (the work-group kernels
 * with local memory or the workspace, one work-item per utterance), accumulate, scale, views at
 * offsets, impossible alignments, argument checks, greedy decoding. */
#include "check.h"
#include "clspeech/internal/ops.h"
#include "clspeech/ops.h"
#include "ops_test.h"

/* A CTC problem on the host: logits [T*B, C] time-major, labels [B, Lmax]. */
typedef struct ctc_case {
  int T, B, C, Lmax;
  float *logits;
  int *labels, *label_lengths, *input_lengths;
} ctc_case;

static ctc_case case_alloc(int T, int B, int C, int Lmax) {
  ctc_case c = {T, B, C, Lmax, NULL, NULL, NULL, NULL};
  c.logits = calloc((size_t)T * B * C, sizeof(float));
  c.labels = calloc((size_t)B * Lmax, sizeof(int));
  c.label_lengths = calloc((size_t)B, sizeof(int));
  c.input_lengths = calloc((size_t)B, sizeof(int));
  return c;
}

static ctc_case case_copy(const ctc_case *s) {
  ctc_case c = case_alloc(s->T, s->B, s->C, s->Lmax);
  memcpy(c.logits, s->logits, (size_t)s->T * s->B * s->C * sizeof(float));
  memcpy(c.labels, s->labels, (size_t)s->B * s->Lmax * sizeof(int));
  memcpy(c.label_lengths, s->label_lengths, (size_t)s->B * sizeof(int));
  memcpy(c.input_lengths, s->input_lengths, (size_t)s->B * sizeof(int));
  return c;
}

static void case_free(ctc_case *c) {
  free(c->logits);
  free(c->labels);
  free(c->label_lengths);
  free(c->input_lengths);
}

static size_t case_n(const ctc_case *c) { return (size_t)c->T * c->B * c->C; }

/* ---- float64 host CTC, in log space ---- */

static double lse2(double a, double b) {
  double hi = a > b ? a : b, lo = a > b ? b : a;
  if (hi == -INFINITY) return -INFINITY;
  return hi + log1p(exp(lo - hi));
}

/* Loss of utterance b over logits x (double, [T*B, C]); adds d loss/d logits to grad when given.
 * +inf for an impossible alignment (and no gradient). */
static double host_ctc(const ctc_case *c, const double *x, int b, double *grad) {
  const int B = c->B, C = c->C, n = c->input_lengths[b], L = c->label_lengths[b], S = 2 * L + 1;
  const int *lab = c->labels + (size_t)b * c->Lmax;
  int need = L;
  for (int j = 1; j < L; j++) need += lab[j] == lab[j - 1];
  if (n < need) return INFINITY;
  if (n == 0) return 0.0;
  double *lp = calloc((size_t)n * C, sizeof(double)), *al = calloc((size_t)n * S, sizeof(double));
  double *be = calloc((size_t)n * S, sizeof(double));
  int *ext = malloc((size_t)S * sizeof(int));
  for (int s = 0; s < S; s++) ext[s] = (s & 1) ? lab[s >> 1] : C - 1;
  for (int t = 0; t < n; t++) {
    const double *row = x + ((size_t)t * B + b) * C;
    double m = -INFINITY, sum = 0;
    for (int k = 0; k < C; k++) m = row[k] > m ? row[k] : m;
    for (int k = 0; k < C; k++) sum += exp(row[k] - m);
    for (int k = 0; k < C; k++) lp[(size_t)t * C + k] = row[k] - m - log(sum);
  }
  for (int t = 0; t < n; t++)
    for (int s = 0; s < S; s++) {
      double v;
      if (t == 0) {
        v = s < 2 ? 0.0 : -INFINITY;
      } else {
        const double *p = al + (size_t)(t - 1) * S;
        v = p[s];
        if (s >= 1) v = lse2(v, p[s - 1]);
        if ((s & 1) && s >= 3 && ext[s] != ext[s - 2]) v = lse2(v, p[s - 2]);
      }
      al[(size_t)t * S + s] = v + lp[(size_t)t * C + ext[s]];
    }
  for (int t = n - 1; t >= 0; t--)
    for (int s = 0; s < S; s++) {
      double v;
      if (t == n - 1) {
        v = s >= S - 2 ? 0.0 : -INFINITY;
      } else {
        const double *nb = be + (size_t)(t + 1) * S, *nl = lp + (size_t)(t + 1) * C;
        v = nb[s] + nl[ext[s]];
        if (s + 1 < S) v = lse2(v, nb[s + 1] + nl[ext[s + 1]]);
        if ((s & 1) && s + 2 < S && ext[s + 2] != ext[s]) v = lse2(v, nb[s + 2] + nl[ext[s + 2]]);
      }
      be[(size_t)t * S + s] = v;
    }
  const double *last = al + (size_t)(n - 1) * S;
  const double logp = S > 1 ? lse2(last[S - 1], last[S - 2]) : last[0];
  if (grad)
    for (int t = 0; t < n; t++) {
      double *g = grad + ((size_t)t * B + b) * C;
      for (int k = 0; k < C; k++) g[k] += exp(lp[(size_t)t * C + k]);
      for (int s = 0; s < S; s++) g[ext[s]] -= exp(al[(size_t)t * S + s] + be[(size_t)t * S + s] - logp);
    }
  free(lp);
  free(al);
  free(be);
  free(ext);
  return -logp;
}

/* Losses [B] and gradient [T*B, C] (scale 1) of a case, rounded to float for the comparisons. */
static void host_reference(const ctc_case *c, float *loss, float *grad) {
  size_t n = case_n(c);
  double *x = malloc(n * sizeof(double)), *g = calloc(n, sizeof(double));
  for (size_t i = 0; i < n; i++) x[i] = c->logits[i];
  for (int b = 0; b < c->B; b++) loss[b] = (float)host_ctc(c, x, b, g);
  for (size_t i = 0; i < n; i++) grad[i] = (float)g[i];
  free(x);
  free(g);
}

/* ---- the op on a device ---- */

#define SENTINEL 12345.0f
#define ISENTINEL 0x5a5a5a5a

static cl_mem upload_f(tst_env *env, int dev, const float *data, size_t n, size_t off) {
  float *h = malloc((off + n + 8) * sizeof(float));
  for (size_t i = 0; i < off + n + 8; i++) h[i] = SENTINEL;
  if (data) memcpy(h + off, data, n * sizeof(float));
  cl_mem m = tst_buffer(env, dev, h, (off + n + 8) * sizeof(float));
  free(h);
  return m;
}

static cl_mem upload_i(tst_env *env, int dev, const int *data, size_t n, size_t off) {
  int *h = malloc((off + n + 8) * sizeof(int));
  for (size_t i = 0; i < off + n + 8; i++) h[i] = ISENTINEL;
  if (data) memcpy(h + off, data, n * sizeof(int));
  cl_mem m = tst_buffer(env, dev, h, (off + n + 8) * sizeof(int));
  free(h);
  return m;
}

/* Reads a view back and checks that the elements around it kept their sentinel. */
static void download_f(tst_env *env, int dev, cl_mem m, float *out, size_t n, size_t off, const char *what) {
  float *h = malloc((off + n + 8) * sizeof(float));
  tst_read(env, dev, m, h, (off + n + 8) * sizeof(float));
  int bad = 0;
  for (size_t i = 0; i < off + n + 8; i++)
    if ((i < off || i >= off + n) && h[i] != SENTINEL) bad++;
  CHECK(bad == 0, "%s: %d elements outside the view changed", what, bad);
  memcpy(out, h + off, n * sizeof(float));
  free(h);
}

/* Runs cls_ctc_loss over case c with every view `off` elements into its buffer. grad_io: NULL for no
 * gradient, else the gradient's contents before (for CLS_ACCUMULATE) and after. Returns its status. */
static cls_status device_loss_status(tst_env *env, int dev, cls_ctc_plan *plan, const ctc_case *c, size_t off,
                                     float scale, cls_write_mode mode, float *loss, float *grad_io) {
  cl_command_queue q = tst_queue(env, dev);
  const size_t n = case_n(c), B = (size_t)c->B;
  cl_mem x = upload_f(env, dev, c->logits, n, off), lab = upload_i(env, dev, c->labels, B * c->Lmax, off);
  cl_mem ll = upload_i(env, dev, c->label_lengths, B, off), il = upload_i(env, dev, c->input_lengths, B, off);
  cl_mem lo = upload_f(env, dev, NULL, B, off), g = grad_io ? upload_f(env, dev, grad_io, n, off) : NULL;
  size_t wbytes = cls_ctc_workspace_bytes(plan, c->T, c->B);
  cl_mem w = wbytes ? tst_buffer(env, dev, NULL, wbytes + off * sizeof(float)) : NULL;
  cls_status st = cls_ctc_loss(plan, q, c->T, c->B, cls_buf_at(x, off), cls_buf_at(lab, off), cls_buf_at(ll, off),
                               cls_buf_at(il, off), cls_buf_at(lo, off), cls_buf_at(g, off), scale, mode,
                               cls_buf_at(w, off), NULL);
  if (st == CLS_OK) {
    clFinish(q);
    download_f(env, dev, lo, loss, B, off, "loss");
    if (g) download_f(env, dev, g, grad_io, n, off, "grad");
  }
  cl_mem all[] = {x, lab, ll, il, lo, g, w};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) clReleaseMemObject(all[i]);
  return st;
}

/* The same, which must succeed. */
static int device_loss(tst_env *env, int dev, cls_ctc_plan *plan, const ctc_case *c, size_t off, float scale,
                       cls_write_mode mode, float *loss, float *grad_io) {
  cls_status st = device_loss_status(env, dev, plan, c, off, scale, mode, loss, grad_io);
  CHECK(st == CLS_OK, "cls_ctc_loss: %s", cls_engine_error(env->engine));
  return st == CLS_OK;
}

/* The paths a test runs through, and their names. */
static const cls_ctc_path every_path[] = {CLS_CTC_PATH_LOCAL, CLS_CTC_PATH_GLOBAL, CLS_CTC_PATH_ITEM};
enum { N_PATHS = sizeof every_path / sizeof every_path[0] };

static const char *path_name(cls_ctc_path path) {
  return path == CLS_CTC_PATH_LOCAL ? "local" : path == CLS_CTC_PATH_GLOBAL ? "global" : "item";
}

/* Runs case c on the local-memory path when its tables fit there, else on the workspace path (what the
 * work-group kernels' automatic choice was); returns the path taken (left set on the plan), or AUTO when
 * the call failed. */
static cls_ctc_path device_loss_group(tst_env *env, int dev, cls_ctc_plan *plan, const ctc_case *c, size_t off,
                                      float scale, cls_write_mode mode, float *loss, float *grad_io) {
  CHECK_INT(cls_ctc_set_path(plan, CLS_CTC_PATH_LOCAL), CLS_OK);
  cls_status st = device_loss_status(env, dev, plan, c, off, scale, mode, loss, grad_io);
  if (st == CLS_OK) return CLS_CTC_PATH_LOCAL;
  CHECK(st == CLS_ERR_INVALID_ARGUMENT && strstr(cls_engine_error(env->engine), "local memory"),
        "cls_ctc_loss (local): %s", cls_engine_error(env->engine));
  CHECK_INT(cls_ctc_set_path(plan, CLS_CTC_PATH_GLOBAL), CLS_OK);
  return device_loss(env, dev, plan, c, off, scale, mode, loss, grad_io) ? CLS_CTC_PATH_GLOBAL : CLS_CTC_PATH_AUTO;
}

static int count_nan(const float *v, size_t n) {
  int k = 0;
  for (size_t i = 0; i < n; i++) k += isnan(v[i]) != 0;
  return k;
}

/* Gradient of utterance b on frames [from, to) is exactly `value` everywhere. */
static void check_frames(const ctc_case *c, const float *grad, int b, int from, int to, float value,
                         const char *what) {
  int bad = 0;
  for (int t = from; t < to; t++)
    for (int k = 0; k < c->C; k++)
      if (grad[((size_t)t * c->B + b) * c->C + k] != value) bad++;
  CHECK(bad == 0, "%s: utterance %d has %d gradient values on frames %d..%d that are not exactly %g", what, b, bad,
        from, to - 1, value);
}

/* ---- fixtures ---- */

typedef struct fixture_spec {
  const char *file;
  /* Gradient tolerance against TF. TF computes alpha and beta in float32 in absolute log space, so its
   * occupancies carry rounding of about T * 2^-24 * |log alpha| (relative): make_ctc_fixtures.py
   * measures TF against float64 at 1.4e-6 (small), 3.8e-5 (deepspeech, T=50), 1.1e-3 (long, T=500)
   * and 1.3e-4 (large logits). The device is held to 1e-5 against the float64 CTC below instead. */
  double grad_atol_tf;
} fixture_spec;

static const fixture_spec fixtures[] = {
    {"ctc_t1.safetensors", 1e-5},   {"ctc_small.safetensors", 1e-5}, {"ctc_deepspeech.safetensors", 1e-4},
    {"ctc_long.safetensors", 2e-3}, {"ctc_large.safetensors", 3e-4},
};

typedef struct fixture {
  cls_safetensors *st;
  ctc_case c;
  const float *loss, *grad; /* TF's */
} fixture;

static int fixture_load(const char *file, fixture *f) {
  memset(f, 0, sizeof *f);
  f->st = tst_fixture(file);
  if (!f->st) return 0;
  int T = tst_meta_int(f->st, "T"), B = tst_meta_int(f->st, "B"), C = tst_meta_int(f->st, "C");
  int Lmax = tst_meta_int(f->st, "max_label");
  const int64_t n = (int64_t)T * B * C;
  const float *x = tst_tensor(f->st, "logits", CLS_F32, n);
  const int *lab = tst_tensor(f->st, "labels", CLS_I32, (int64_t)B * Lmax);
  const int *ll = tst_tensor(f->st, "label_lengths", CLS_I32, B);
  const int *il = tst_tensor(f->st, "input_lengths", CLS_I32, B);
  f->loss = tst_tensor(f->st, "loss", CLS_F32, B);
  f->grad = tst_tensor(f->st, "grad", CLS_F32, n);
  if (!x || !lab || !ll || !il || !f->loss || !f->grad) {
    cls_safetensors_free(f->st);
    f->st = NULL;
    return 0;
  }
  f->c = case_alloc(T, B, C, Lmax);
  memcpy(f->c.logits, x, (size_t)n * sizeof(float));
  memcpy(f->c.labels, lab, (size_t)B * Lmax * sizeof(int));
  memcpy(f->c.label_lengths, ll, (size_t)B * sizeof(int));
  memcpy(f->c.input_lengths, il, (size_t)B * sizeof(int));
  return 1;
}

static void fixture_free(fixture *f) {
  if (f->st) case_free(&f->c);
  cls_safetensors_free(f->st);
}

/* Loss and gradient of one path against TF and the float64 CTC; padding frames exactly 0. */
static void check_fixture(const fixture_spec *spec, const fixture *f, const float *ref_loss, const float *ref_grad,
                          const char *path, const float *loss, const float *grad) {
  const ctc_case *c = &f->c;
  const size_t n = case_n(c), B = (size_t)c->B;
  char what[128];
  snprintf(what, sizeof what, "%s loss vs TF (%s)", spec->file, path);
  tst_compare(what, loss, f->loss, B, 1e-5, 0);
  snprintf(what, sizeof what, "%s grad vs TF (%s)", spec->file, path);
  tst_compare(what, grad, f->grad, n, 0, spec->grad_atol_tf);
  /* The float64 CTC: the device keeps every row relative to its maximum and normalises each
     frame's occupancies on their own, so only float rounding of O(1) values remains. */
  snprintf(what, sizeof what, "%s loss vs float64 (%s)", spec->file, path);
  tst_compare(what, loss, ref_loss, B, 2e-6, 0);
  snprintf(what, sizeof what, "%s grad vs float64 (%s)", spec->file, path);
  tst_compare(what, grad, ref_grad, n, 0, 1e-5);
  for (int b = 0; b < c->B; b++) check_frames(c, grad, b, c->input_lengths[b], c->T, 0.0f, spec->file);
  CHECK(count_nan(grad, n) == 0, "%s: NaN in the gradient (%s)", spec->file, path);
}

/* Loss and gradient against TF and the float64 CTC on every path: the work-group kernels with local
 * memory when the tables fit (else the workspace), the workspace path, which must agree with it bit
 * for bit, and one work-item per utterance; the losses again without the gradient, bit for bit. */
static void test_fixture(tst_env *env, int dev, const fixture_spec *spec) {
  fixture f;
  if (!fixture_load(spec->file, &f)) return;
  const ctc_case *c = &f.c;
  const size_t n = case_n(c), B = (size_t)c->B;
  cls_ctc_plan *plan = NULL;
  cls_status st = cls_ctc_create(env->engine, dev, c->T, c->B, c->C, c->Lmax, &plan);
  CHECK(st == CLS_OK, "cls_ctc_create: %s", cls_engine_error(env->engine));
  float *loss = malloc(B * sizeof(float)), *grad = calloc(n, sizeof(float));
  float *loss_g = malloc(B * sizeof(float)), *grad_g = calloc(n, sizeof(float));
  float *ref_loss = malloc(B * sizeof(float)), *ref_grad = malloc(n * sizeof(float));
  host_reference(c, ref_loss, ref_grad);
  char what[128];
  cls_ctc_path group = plan ? device_loss_group(env, dev, plan, c, 0, 1.0f, CLS_OVERWRITE, loss, grad) : 0;
  if (group != CLS_CTC_PATH_AUTO) {
    const char *path = path_name(group);
    check_fixture(spec, &f, ref_loss, ref_grad, path, loss, grad);

    CHECK_INT(cls_ctc_set_path(plan, CLS_CTC_PATH_GLOBAL), CLS_OK);
    CHECK(cls_ctc_workspace_bytes(plan, c->T, c->B) > 0, "the global path needs a workspace");
    if (device_loss(env, dev, plan, c, 5, 1.0f, CLS_OVERWRITE, loss_g, grad_g)) {
      snprintf(what, sizeof what, "%s loss global == %s", spec->file, path);
      tst_compare(what, loss_g, loss, B, 0, 0);
      snprintf(what, sizeof what, "%s grad global == %s", spec->file, path);
      tst_compare(what, grad_g, grad, n, 0, 0);
    }
    /* Without the gradient: the same losses (the tables then keep two rows of alpha). */
    if (device_loss(env, dev, plan, c, 0, 1.0f, CLS_OVERWRITE, loss_g, NULL)) {
      snprintf(what, sizeof what, "%s loss without gradient (global)", spec->file);
      tst_compare(what, loss_g, loss, B, 0, 0);
    }
    CHECK_INT(cls_ctc_set_path(plan, group), CLS_OK);
    if (device_loss(env, dev, plan, c, 0, 1.0f, CLS_OVERWRITE, loss_g, NULL)) {
      snprintf(what, sizeof what, "%s loss without gradient (%s)", spec->file, path);
      tst_compare(what, loss_g, loss, B, 0, 0);
    }
  }
  /* One work-item per utterance: its own rounding, the same tolerances. */
  if (plan) {
    CHECK_INT(cls_ctc_set_path(plan, CLS_CTC_PATH_ITEM), CLS_OK);
    CHECK(cls_ctc_workspace_bytes(plan, c->T, c->B) > 0, "the item path needs a workspace");
  }
  memset(grad, 0, n * sizeof(float));
  if (plan && device_loss(env, dev, plan, c, 3, 1.0f, CLS_OVERWRITE, loss, grad)) {
    check_fixture(spec, &f, ref_loss, ref_grad, "item", loss, grad);
    if (device_loss(env, dev, plan, c, 0, 1.0f, CLS_OVERWRITE, loss_g, NULL)) {
      snprintf(what, sizeof what, "%s loss without gradient (item)", spec->file);
      tst_compare(what, loss_g, loss, B, 0, 0);
    }
  }
  free(loss);
  free(grad);
  free(loss_g);
  free(grad_g);
  free(ref_loss);
  free(ref_grad);
  cls_ctc_destroy(plan);
  fixture_free(&f);
}

/* Accumulate, scale, views at offsets, padding frames left alone when accumulating (small fixture). */
static void test_modes(tst_env *env, int dev) {
  fixture f;
  if (!fixture_load("ctc_small.safetensors", &f)) return;
  const ctc_case *c = &f.c;
  const size_t n = case_n(c), B = (size_t)c->B;
  cls_ctc_plan *plan = NULL;
  cls_status st = cls_ctc_create(env->engine, dev, c->T + 3, c->B + 1, c->C, c->Lmax, &plan);
  CHECK(st == CLS_OK, "cls_ctc_create: %s", cls_engine_error(env->engine));
  float *loss = malloc(B * sizeof(float)), *g1 = calloc(n, sizeof(float)), *g2 = malloc(n * sizeof(float));
  float *want = malloc(n * sizeof(float));
  for (int pi = 0; plan && pi < N_PATHS; pi++) {
    const cls_ctc_path path = every_path[pi];
    const char *pname = path_name(path);
    char what[128];
    CHECK_INT(cls_ctc_set_path(plan, path), CLS_OK);
    memset(g1, 0, n * sizeof(float));
    if (!device_loss(env, dev, plan, c, 0, 1.0f, CLS_OVERWRITE, loss, g1)) break;
    /* Accumulating the same gradient onto itself doubles it exactly. */
    memcpy(g2, g1, n * sizeof(float));
    if (device_loss(env, dev, plan, c, 3, 1.0f, CLS_ACCUMULATE, loss, g2)) {
      for (size_t i = 0; i < n; i++) want[i] = 2.0f * g1[i];
      snprintf(what, sizeof what, "accumulate twice == 2x (%s)", pname);
      tst_compare(what, g2, want, n, 0, 0);
    }
    /* Accumulating onto 7: padding frames stay exactly 7. */
    for (size_t i = 0; i < n; i++) g2[i] = 7.0f;
    if (device_loss(env, dev, plan, c, 11, 1.0f, CLS_ACCUMULATE, loss, g2)) {
      for (size_t i = 0; i < n; i++) want[i] = 7.0f + g1[i];
      snprintf(what, sizeof what, "accumulate onto 7 (%s)", pname);
      tst_compare(what, g2, want, n, 0, 0);
      for (int b = 0; b < c->B; b++) check_frames(c, g2, b, c->input_lengths[b], c->T, 7.0f, "accumulate onto 7");
    }
    /* A power-of-two scale scales exactly; 1/3 as TF's gradient over 3 utterances would be. */
    for (size_t i = 0; i < n; i++) g2[i] = -1.0f; /* overwritten */
    if (device_loss(env, dev, plan, c, 1, 0.25f, CLS_OVERWRITE, loss, g2)) {
      for (size_t i = 0; i < n; i++) want[i] = 0.25f * g1[i];
      snprintf(what, sizeof what, "scale 0.25 (%s)", pname);
      tst_compare(what, g2, want, n, 0, 0);
    }
    if (device_loss(env, dev, plan, c, 1, 1.0f / 3.0f, CLS_OVERWRITE, loss, g2)) {
      for (size_t i = 0; i < n; i++) want[i] = f.grad[i] / 3.0f;
      snprintf(what, sizeof what, "scale 1/3 vs TF/3 (%s)", pname);
      tst_compare(what, g2, want, n, 0, 1e-5 / 3);
      snprintf(what, sizeof what, "loss with scale 1/3 vs TF (%s)", pname);
      tst_compare(what, loss, f.loss, B, 1e-5, 0); /* the loss is not scaled */
    }
  }
  free(loss);
  free(g1);
  free(g2);
  free(want);
  cls_ctc_destroy(plan);
  fixture_free(&f);
}

/* Impossible alignments: loss +inf, gradient exactly 0, no NaN, the other utterances as TF has them. */
static void test_impossible(tst_env *env, int dev) {
  fixture f;
  if (!fixture_load("ctc_small.safetensors", &f)) return;
  const size_t n = case_n(&f.c), B = (size_t)f.c.B;
  cls_ctc_plan *plan = NULL;
  cls_status st = cls_ctc_create(env->engine, dev, f.c.T, f.c.B, f.c.C, f.c.Lmax, &plan);
  CHECK(st == CLS_OK, "cls_ctc_create: %s", cls_engine_error(env->engine));
  float *loss = malloc(B * sizeof(float)), *grad = malloc(n * sizeof(float));
  float *ref_loss = malloc(B * sizeof(float)), *ref_grad = malloc(n * sizeof(float));
  /* variant 0: utterance 1 is [3,3,3,3] over 6 frames (needs 7: three blanks between the repeats);
     variant 1: utterance 0 has 4 labels over 3 frames;
     variant 2: utterance 1 is [3,3,3,3] over 7 frames: exactly enough (float64 reference). */
  for (int variant = 0; plan && variant < 3; variant++) {
    ctc_case c = case_copy(&f.c);
    int bad_b = variant == 1 ? 0 : 1;
    if (variant == 1) {
      c.input_lengths[0] = 3;
      c.label_lengths[0] = 4;
      int l0[4] = {1, 2, 1, 2};
      memcpy(c.labels, l0, sizeof l0);
    } else {
      c.input_lengths[1] = variant == 0 ? 6 : 7;
      for (int j = 0; j < 4; j++) c.labels[c.Lmax + j] = 3;
      c.label_lengths[1] = 4;
    }
    for (int pi = 0; pi < N_PATHS; pi++) {
      for (int mode = CLS_OVERWRITE; mode <= CLS_ACCUMULATE; mode++) {
        char what[128];
        snprintf(what, sizeof what, "impossible variant %d %s %s", variant, path_name(every_path[pi]),
                 mode == CLS_OVERWRITE ? "overwrite" : "accumulate");
        cls_ctc_set_path(plan, every_path[pi]);
        for (size_t i = 0; i < n; i++) grad[i] = mode == CLS_OVERWRITE ? NAN : 0.0f;
        if (!device_loss(env, dev, plan, &c, 2, 1.0f, (cls_write_mode)mode, loss, grad)) continue;
        CHECK(count_nan(grad, n) == 0 && count_nan(loss, B) == 0, "%s: NaN in the results", what);
        if (variant < 2) {
          CHECK(isinf(loss[bad_b]) && loss[bad_b] > 0, "%s: loss[%d] = %g, expected +inf", what, bad_b, loss[bad_b]);
          check_frames(&c, grad, bad_b, 0, c.T, 0.0f, what);
          for (int b = 0; b < c.B; b++) {
            if (b == bad_b) continue;
            char w2[256];
            snprintf(w2, sizeof w2, "%s utt %d loss vs TF", what, b);
            tst_compare(w2, loss + b, f.loss + b, 1, 1e-5, 0);
            for (int t = 0; t < c.T; t++) {
              size_t at = ((size_t)t * c.B + b) * c.C;
              snprintf(w2, sizeof w2, "%s utt %d frame %d grad vs TF", what, b, t);
              if (t == 0 || t == c.T - 1) /* print two frames; check every one */
                tst_compare(w2, grad + at, f.grad + at, (size_t)c.C, 0, 1e-5);
              else {
                int bad = 0;
                for (int k = 0; k < c.C; k++) bad += !(fabs(grad[at + k] - f.grad[at + k]) <= 1e-5);
                CHECK(bad == 0, "%s: %d values differ from TF", w2, bad);
              }
            }
          }
        } else {
          host_reference(&c, ref_loss, ref_grad);
          CHECK(isfinite(loss[1]), "%s: loss[1] = %g, expected finite", what, loss[1]);
          snprintf(what + strlen(what), sizeof what - strlen(what), " (boundary) vs float64");
          tst_compare(what, loss, ref_loss, B, 2e-6, 0);
          tst_compare(what, grad, ref_grad, n, 0, 1e-5);
        }
      }
    }
    case_free(&c);
  }
  /* Values the host cannot check give NaN (never a read out of range); an empty label is allowed. */
  for (int variant = 0; plan && variant < 4 * N_PATHS; variant++) {
    ctc_case c = case_copy(&f.c);
    const int v = variant % 4;
    const char *names[] = {"label value = blank", "negative label", "input length > time", "empty label"};
    char name[96];
    snprintf(name, sizeof name, "%s (%s)", names[v], path_name(every_path[variant / 4]));
    cls_ctc_set_path(plan, every_path[variant / 4]);
    if (v == 0) c.labels[0] = c.C - 1;
    if (v == 1) c.labels[1] = -2;
    if (v == 2) c.input_lengths[0] = c.T + 1;
    if (v == 3) c.label_lengths[0] = 0;
    for (size_t i = 0; i < n; i++) grad[i] = 5.0f;
    if (device_loss(env, dev, plan, &c, 0, 1.0f, CLS_OVERWRITE, loss, grad)) {
      if (v < 3) {
        CHECK(isnan(loss[0]), "%s: loss[0] = %g, expected NaN", name, loss[0]);
        check_frames(&c, grad, 0, 0, c.T, 0.0f, name);
        tst_compare(name, loss + 1, f.loss + 1, 2, 1e-5, 0);
      } else {
        host_reference(&c, ref_loss, ref_grad);
        snprintf(name, sizeof name, "empty label loss vs float64 (%s)", path_name(every_path[variant / 4]));
        tst_compare(name, loss, ref_loss, B, 2e-6, 0);
        snprintf(name, sizeof name, "empty label grad vs float64 (%s)", path_name(every_path[variant / 4]));
        tst_compare(name, grad, ref_grad, n, 0, 1e-5);
      }
    }
    case_free(&c);
  }
  free(loss);
  free(grad);
  free(ref_loss);
  free(ref_grad);
  cls_ctc_destroy(plan);
  fixture_free(&f);
}

/* Central differences of the float64 loss (summed over the batch) against the device gradient. */
static void test_finite_differences(tst_env *env, int dev) {
  fixture f;
  if (!fixture_load("ctc_small.safetensors", &f)) return;
  const ctc_case *c = &f.c;
  const size_t n = case_n(c), B = (size_t)c->B;
  cls_ctc_plan *plan = NULL;
  cls_status st = cls_ctc_create(env->engine, dev, c->T, c->B, c->C, c->Lmax, &plan);
  CHECK(st == CLS_OK, "cls_ctc_create: %s", cls_engine_error(env->engine));
  float *loss = malloc(B * sizeof(float)), *grad = calloc(n, sizeof(float));
  double *x = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++) x[i] = c->logits[i];
  enum { POINTS = 40 };
  const double eps = 1e-3;
  float fd[POINTS], got[POINTS];
  size_t at[POINTS];
  for (int i = 0; i < POINTS; i++) {
    at[i] = ((size_t)i * 7919u) % n; /* spread over frames, utterances and classes */
    double keep = x[at[i]], up = 0, down = 0;
    x[at[i]] = keep + eps;
    for (int b = 0; b < c->B; b++) up += host_ctc(c, x, b, NULL);
    x[at[i]] = keep - eps;
    for (int b = 0; b < c->B; b++) down += host_ctc(c, x, b, NULL);
    x[at[i]] = keep;
    fd[i] = (float)((up - down) / (2 * eps));
  }
  for (int pi = 0; plan && pi < N_PATHS; pi++) {
    CHECK_INT(cls_ctc_set_path(plan, every_path[pi]), CLS_OK);
    if (!device_loss(env, dev, plan, c, 0, 1.0f, CLS_OVERWRITE, loss, grad)) continue;
    for (int i = 0; i < POINTS; i++) got[i] = grad[at[i]];
    /* Truncation error eps^2/6 * |d3 loss| is below 1e-6 here; the rest is the device's float32. */
    char what[96];
    snprintf(what, sizeof what, "finite differences (eps 1e-3) vs device grad (%s)", path_name(every_path[pi]));
    tst_compare(what, got, fd, POINTS, 0, 5e-6);
  }
  free(loss);
  free(grad);
  free(x);
  cls_ctc_destroy(plan);
  fixture_free(&f);
}

/* Labels longer than local memory holds: the local path refuses them, the workspace and item paths run them. */
static void test_long_labels(tst_env *env, int dev) {
  ctc_case c = case_alloc(1000, 2, 29, 300);
  uint32_t s = 99;
  for (size_t i = 0; i < case_n(&c); i++) {
    s = s * 1664525u + 1013904223u;
    c.logits[i] = (float)((s >> 8) * (1.0 / 16777216.0) * 8.0 - 4.0);
  }
  for (int b = 0; b < 2; b++) {
    c.label_lengths[b] = b ? 300 : 217;
    c.input_lengths[b] = b ? 1000 : 880;
    for (int j = 0; j < c.label_lengths[b]; j++) {
      s = s * 1664525u + 1013904223u;
      c.labels[b * 300 + j] = (int)((s >> 16) % 28);
    }
  }
  cls_ctc_plan *plan = NULL;
  cls_status st = cls_ctc_create(env->engine, dev, c.T, c.B, c.C, c.Lmax, &plan);
  CHECK(st == CLS_OK, "cls_ctc_create: %s", cls_engine_error(env->engine));
  const size_t n = case_n(&c);
  float *loss = malloc(2 * sizeof(float)), *grad = calloc(n, sizeof(float));
  float *ref_loss = malloc(2 * sizeof(float)), *ref_grad = malloc(n * sizeof(float));
  if (plan) {
    /* 2.4 MB of tables per utterance: more than any device's local memory we know of (PoCL: 512 KB to
       2 MB, GPUs: 32-64 KB); forcing local memory when the tables do not fit is an error, not a crash.
       Should one hold them, the local path runs too. */
    CHECK_INT(cls_ctc_set_path(plan, CLS_CTC_PATH_LOCAL), CLS_OK);
    cl_mem dummy = tst_buffer(env, dev, NULL, n * sizeof(float));
    st = cls_ctc_loss(plan, tst_queue(env, dev), c.T, c.B, cls_buf_of(dummy), cls_buf_of(dummy), cls_buf_of(dummy),
                      cls_buf_of(dummy), cls_buf_of(dummy), cls_buf_of(dummy), 1.0f, CLS_OVERWRITE, cls_buf_of(NULL),
                      NULL);
    const int fits = st == CLS_OK;
    if (!fits) {
      CHECK_INT(st, CLS_ERR_INVALID_ARGUMENT);
      CHECK_CONTAINS(cls_engine_error(env->engine), "local memory");
    }
    clFinish(tst_queue(env, dev));
    clReleaseMemObject(dummy);
    CHECK_INT(cls_ctc_set_path(plan, CLS_CTC_PATH_AUTO), CLS_OK);
    printf("  long labels (T=1000, L=300): local memory %s, automatic path %s, workspace %zu bytes\n",
           fits ? "holds the tables" : "too small", path_name(cls_ctc_path_for(plan, c.T, 1)),
           cls_ctc_workspace_bytes(plan, c.T, c.B));
    host_reference(&c, ref_loss, ref_grad);
    for (int pi = fits ? 0 : 1; pi < N_PATHS; pi++) {
      char what[96];
      CHECK_INT(cls_ctc_set_path(plan, every_path[pi]), CLS_OK);
      if (!device_loss(env, dev, plan, &c, 0, 1.0f, CLS_OVERWRITE, loss, grad)) continue;
      snprintf(what, sizeof what, "long labels loss vs float64 (%s)", path_name(every_path[pi]));
      tst_compare(what, loss, ref_loss, 2, 2e-6, 0);
      /* 1000 frames of float32 log-space recursion over 601 diffuse states: the rounding of each row
         (2^-24 of |log alpha| per frame) accumulates. The same recurrences emulated in numpy float32
         (numpy's exp and log) differ from float64 by 3.3e-5 here; the fixtures, shorter or
         peaked as a trained model's, stay below 4e-6. */
      snprintf(what, sizeof what, "long labels grad vs float64 (%s)", path_name(every_path[pi]));
      tst_compare(what, grad, ref_grad, n, 0, 6e-5);
    }
  }
  free(loss);
  free(grad);
  free(ref_loss);
  free(ref_grad);
  cls_ctc_destroy(plan);
  case_free(&c);
}

/* ---- greedy decoding ---- */

static int host_decode(const ctc_case *c, int b, int *out) {
  int k = 0, prev = -1;
  for (int t = 0; t < c->input_lengths[b]; t++) {
    const float *x = c->logits + ((size_t)t * c->B + b) * c->C;
    int best = 0;
    for (int j = 1; j < c->C; j++)
      if (x[j] > x[best]) best = j;
    if (best != c->C - 1 && best != prev) out[k++] = best;
    prev = best;
  }
  for (int t = k; t < c->T; t++) out[t] = -1;
  return k;
}

static void check_decode(tst_env *env, int dev, const ctc_case *c, const char *what) {
  cls_ctc_plan *plan = NULL;
  cls_status st = cls_ctc_create(env->engine, dev, c->T, c->B, c->C, 1, &plan);
  CHECK(st == CLS_OK, "cls_ctc_create: %s", cls_engine_error(env->engine));
  if (!plan) return;
  const size_t off = 9, B = (size_t)c->B, BT = B * (size_t)c->T;
  cl_mem x = upload_f(env, dev, c->logits, case_n(c), off), il = upload_i(env, dev, c->input_lengths, B, off);
  cl_mem ol = upload_i(env, dev, NULL, BT, off), on = upload_i(env, dev, NULL, B, off);
  cl_command_queue q = tst_queue(env, dev);
  st = cls_ctc_greedy_decode(plan, q, c->T, c->B, cls_buf_at(x, off), cls_buf_at(il, off), cls_buf_at(ol, off),
                             cls_buf_at(on, off), NULL);
  CHECK(st == CLS_OK, "cls_ctc_greedy_decode: %s", cls_engine_error(env->engine));
  int *got = malloc((off + BT + 8) * sizeof(int)), *lens = malloc((off + B + 8) * sizeof(int));
  int *want = malloc(BT * sizeof(int));
  tst_read(env, dev, ol, got, (off + BT + 8) * sizeof(int));
  tst_read(env, dev, on, lens, (off + B + 8) * sizeof(int));
  int bad = 0, guards = 0, total = 0;
  for (int b = 0; b < c->B; b++) {
    int k = host_decode(c, b, want + (size_t)b * c->T);
    total += k;
    if (lens[off + b] != k) bad++;
    for (int t = 0; t < c->T; t++)
      if (got[off + (size_t)b * c->T + t] != want[(size_t)b * c->T + t]) bad++;
  }
  for (size_t i = 0; i < off; i++) guards += (got[i] != ISENTINEL) + (lens[i] != ISENTINEL);
  for (size_t i = 0; i < 8; i++) guards += (got[off + BT + i] != ISENTINEL) + (lens[off + B + i] != ISENTINEL);
  CHECK(bad == 0, "%s: %d decoded labels or lengths differ from the host's", what, bad);
  CHECK(guards == 0, "%s: %d elements outside the views changed", what, guards);
  printf("  %-40s %d utterances, %d labels decoded, %d differences\n", what, c->B, total, bad);
  free(got);
  free(lens);
  free(want);
  clReleaseMemObject(x);
  clReleaseMemObject(il);
  clReleaseMemObject(ol);
  clReleaseMemObject(on);
  cls_ctc_destroy(plan);
}

static void test_decode(tst_env *env, int dev) {
  fixture f;
  if (fixture_load("ctc_deepspeech.safetensors", &f)) {
    check_decode(env, dev, &f.c, "greedy decode (deepspeech fixture)");
    fixture_free(&f);
  }
  /* A chosen best path: repeats merge, a blank separates equal labels, padding frames are ignored. */
  const int path[12] = {1, 1, 4, 1, 2, 2, 4, 4, 3, 0, 0, 2};
  ctc_case c = case_alloc(12, 2, 5, 1);
  for (int t = 0; t < 12; t++)
    for (int b = 0; b < 2; b++)
      for (int k = 0; k < 5; k++) c.logits[((size_t)t * 2 + b) * 5 + k] = k == path[t] ? 1.0f : -(float)(k + t) * 0.1f;
  c.input_lengths[0] = 12;
  c.input_lengths[1] = 8;
  int want0[] = {1, 1, 2, 3, 0, 2}, got0[12];
  CHECK_INT(host_decode(&c, 0, got0), 6);
  CHECK(memcmp(got0, want0, sizeof want0) == 0, "host decoder disagrees with the hand-made path");
  check_decode(env, dev, &c, "greedy decode (chosen path)");
  case_free(&c);
}

/* ---- argument checks ---- */

static void test_arguments(tst_env *env, int dev) {
  cls_ctc_plan *plan = NULL;
  CHECK_INT(cls_ctc_create(env->engine, dev, 0, 4, 29, 10, &plan), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(env->engine), "max_time 0");
  CHECK_INT(cls_ctc_create(env->engine, dev, 10, 4, 1, 10, &plan), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_create(env->engine, dev, 10, 4, 29, 10, &plan), CLS_OK);
  if (!plan) return;
  cl_mem small = tst_buffer(env, dev, NULL, 64), big = tst_buffer(env, dev, NULL, 10 * 4 * 29 * sizeof(float));
  cl_command_queue q = tst_queue(env, dev);
  cls_buf sb = cls_buf_of(small), bb = cls_buf_of(big);
  CHECK_INT(cls_ctc_loss(plan, q, 11, 4, bb, bb, bb, bb, bb, bb, 1.0f, CLS_OVERWRITE, bb, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(env->engine), "max_time");
  CHECK_INT(cls_ctc_loss(plan, q, 10, 5, bb, bb, bb, bb, bb, bb, 1.0f, CLS_OVERWRITE, bb, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_loss(plan, q, 10, 4, sb, bb, bb, bb, bb, bb, 1.0f, CLS_OVERWRITE, bb, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(env->engine), "logits");
  CHECK_INT(cls_ctc_loss(plan, q, 10, 4, cls_buf_at(big, 1), bb, bb, bb, bb, bb, 1.0f, CLS_OVERWRITE, bb, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_loss(plan, q, 10, 4, bb, bb, bb, bb, bb, bb, 1.0f, (cls_write_mode)7, bb, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_loss(plan, q, 10, 4, bb, cls_buf_of(NULL), bb, bb, bb, bb, 1.0f, CLS_OVERWRITE, bb, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(env->engine), "labels");
  CHECK_INT(cls_ctc_set_path(plan, CLS_CTC_PATH_GLOBAL), CLS_OK);
  CHECK_INT(cls_ctc_loss(plan, q, 10, 4, bb, bb, bb, bb, bb, bb, 1.0f, CLS_OVERWRITE, cls_buf_of(NULL), NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(env->engine), "workspace");
  CHECK_INT(cls_ctc_set_path(plan, (cls_ctc_path)9), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_greedy_decode(plan, q, 10, 4, bb, bb, sb, bb, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(env->engine), "out_labels");
  clReleaseMemObject(small);
  clReleaseMemObject(big);
  cls_ctc_destroy(plan);
}

int main(void) {
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_ctc");
  for (int i = 0; i < env.n_devices; i++) {
    int dev = env.devices[i];
    printf("device %s\n", tst_device_name(&env, dev));
    for (size_t k = 0; k < sizeof fixtures / sizeof fixtures[0]; k++) test_fixture(&env, dev, &fixtures[k]);
    test_modes(&env, dev);
    test_impossible(&env, dev);
    test_finite_differences(&env, dev);
    test_long_labels(&env, dev);
    test_decode(&env, dev);
    test_arguments(&env, dev);
  }
  tst_close_env(&env);
  return check_finish("test_ctc");
}
