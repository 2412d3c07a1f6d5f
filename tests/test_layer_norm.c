/* The layer norm op against TensorFlow (fixtures from tests/ref/make_layer_norm_fixtures.py:
 * tf_slim.layers.layer_norm, gradients by GradientTape) and against the same math in float64, on every
 * device: forward (y and each row's saved mean and rstd), dx, dgamma and dbeta, and the same followed by
 * dropout (its Philox mask against numpy's, tests/ref/philox.py); accumulation; in place
 * forward and backward giving the bits of out of place; finite differences of a float64 host evaluation;
 * rows of one value (y exactly beta); and the argument checks.
 * Tolerances: each value within ULPS = 8 units of 2^-23 of the magnitudes it is computed from (per
 * element: a = (|x| + |mean| + mean|x|) * rstd bounds what computing xhat = (x - mean) * rstd rounds,
 * the mean's and variance's sums included; y: a*|gamma| + |beta|; dx: rstd * (|g| + mean|g| +
 * a * mean|g*xhat| + |xhat| * mean(|g|*a)), g = dy*gamma; dgamma: the sum over rows of |dy|*a; dbeta:
 * the sum of |dy|; dy through the dropout, y times its scale), the bound of TensorFlow's float32
 * formula and of ours alike. Against the float64 results a row of one value takes a = 0: ours computes
 * its xhat as exactly 0 (TensorFlow's does not). Finite differences: within 5e-5 of the gradient's
 * scale. */
#include "check.h"
#include "clspeech/internal/ops.h"
#include "clspeech/ops.h"
#include "ops_test.h"
#include "philox.h"

#define ULPS (8 * 0x1p-23)

typedef struct ln_case {
  const char *file;
  cls_safetensors *fx;
  int rows, h;
  const float *x, *gamma, *beta, *dy, *y, *dx, *dgamma, *dbeta;
  const float *y64, *dx64, *dgamma64, *dbeta64; /* the float64 results (NULL where the fixture has none) */
  const float *keep;                            /* [rows*h] the dropout mask (NULL without dropout) */
  cls_dense_act drop;                           /* the dropout (rate 0: none) */
  double scale;                                 /* 1/(1-rate) */
  double *dyd;                                  /* [rows*h] dy through the dropout: dy * keep * scale */
  double *mean, *rstd;                          /* [rows], in double from x */
  int *constant;                                /* [rows]: every value of the row equal */
} ln_case;

static const float *optional(const cls_safetensors *fx, const char *name, int64_t n) {
  return cls_safetensors_find(fx, name) ? tst_tensor(fx, name, CLS_F32, n) : NULL;
}

static int load(ln_case *c, const char *file) {
  memset(c, 0, sizeof *c);
  c->file = file;
  c->fx = tst_fixture(file);
  if (!c->fx) return 0;
  c->rows = tst_meta_int(c->fx, "rows");
  c->h = tst_meta_int(c->fx, "hidden");
  int64_t n = (int64_t)c->rows * c->h;
  c->x = tst_tensor(c->fx, "x", CLS_F32, n);
  c->gamma = tst_tensor(c->fx, "gamma", CLS_F32, c->h);
  c->beta = tst_tensor(c->fx, "beta", CLS_F32, c->h);
  c->dy = tst_tensor(c->fx, "dy", CLS_F32, n);
  c->y = tst_tensor(c->fx, "y", CLS_F32, n);
  c->dx = tst_tensor(c->fx, "dx", CLS_F32, n);
  c->dgamma = tst_tensor(c->fx, "dgamma", CLS_F32, c->h);
  c->dbeta = tst_tensor(c->fx, "dbeta", CLS_F32, c->h);
  c->y64 = optional(c->fx, "y_exact", n);
  c->dx64 = optional(c->fx, "dx_exact", n);
  c->dgamma64 = optional(c->fx, "dgamma_exact", c->h);
  c->dbeta64 = optional(c->fx, "dbeta_exact", c->h);
  if (!(c->x && c->gamma && c->beta && c->dy && c->y && c->dx && c->dgamma && c->dbeta)) return 0;
  if (cls_safetensors_meta(c->fx, "rate")) {
    c->drop.dropout_rate = (float)atof(cls_safetensors_meta(c->fx, "rate"));
    c->drop.batch = tst_meta_int(c->fx, "batch");
    c->drop.seed = (uint32_t)tst_meta_int(c->fx, "seed");
    c->drop.step = (uint32_t)tst_meta_int(c->fx, "step");
    c->drop.layer = (uint32_t)tst_meta_int(c->fx, "layer");
    c->drop.utterance_offset = tst_meta_int(c->fx, "utterance_offset");
    c->keep = tst_tensor(c->fx, "keep", CLS_F32, n);
    if (!c->keep) return 0;
  }
  c->scale = 1.0 / (1.0 - c->drop.dropout_rate);
  c->dyd = malloc((size_t)n * sizeof *c->dyd);
  for (int64_t i = 0; i < n; i++) c->dyd[i] = c->dy[i] * (c->keep ? c->keep[i] * c->scale : 1.0);
  c->mean = malloc((size_t)c->rows * sizeof *c->mean);
  c->rstd = malloc((size_t)c->rows * sizeof *c->rstd);
  c->constant = malloc((size_t)c->rows * sizeof *c->constant);
  for (int r = 0; r < c->rows; r++) {
    const float *xr = c->x + (size_t)r * c->h;
    double s = 0, v = 0;
    c->constant[r] = 1;
    for (int j = 0; j < c->h; j++) {
      s += xr[j];
      c->constant[r] &= xr[j] == xr[0];
    }
    c->mean[r] = s / c->h;
    for (int j = 0; j < c->h; j++) v += (xr[j] - c->mean[r]) * (xr[j] - c->mean[r]);
    c->rstd[r] = 1.0 / sqrt(v / c->h + (double)CLS_LAYER_NORM_EPSILON);
  }
  return 1;
}

static void unload(ln_case *c) {
  free(c->dyd);
  free(c->mean);
  free(c->rstd);
  free(c->constant);
  cls_safetensors_free(c->fx);
}

/* The bounds of y, dx, dgamma and dbeta ([rows*h], [rows*h], [h], [h]); `exact`: a = 0 on rows of one
 * value (see the top). */
static void bounds(const ln_case *c, int exact, double *by, double *bdx, double *bdg, double *bdb) {
  int h = c->h;
  double *a = malloc((size_t)h * sizeof *a);
  for (int j = 0; j < h; j++) bdg[j] = bdb[j] = 0;
  for (int r = 0; r < c->rows; r++) {
    const float *xr = c->x + (size_t)r * h;
    const double *dyr = c->dyd + (size_t)r * h;
    double mabs = 0, mg = 0, mgx = 0, mga = 0;
    for (int j = 0; j < h; j++) mabs += fabs(xr[j]) / h;
    for (int j = 0; j < h; j++) {
      a[j] = exact && c->constant[r] ? 0 : (fabs(xr[j]) + fabs(c->mean[r]) + mabs) * c->rstd[r];
      double g = fabs(dyr[j] * c->gamma[j]), xh = fabs(xr[j] - c->mean[r]) * c->rstd[r];
      mg += g / h;
      mgx += g * xh / h;
      mga += g * a[j] / h;
    }
    for (int j = 0; j < h; j++) {
      size_t i = (size_t)r * h + j;
      double g = fabs(dyr[j] * c->gamma[j]), xh = fabs(xr[j] - c->mean[r]) * c->rstd[r];
      by[i] = ULPS * (a[j] * fabs(c->gamma[j]) + fabs(c->beta[j])) * c->scale + 1e-30;
      bdx[i] = ULPS * c->rstd[r] * (g + mg + a[j] * mgx + xh * mga) + 1e-30;
      bdg[j] += ULPS * fabs(dyr[j]) * (a[j] + xh);
      bdb[j] += ULPS * fabs(dyr[j]);
    }
  }
  for (int j = 0; j < h; j++) {
    bdg[j] += 1e-30;
    bdb[j] += 1e-30;
  }
  free(a);
}

/* sum(dropout(layer_norm(x)) * dy) = sum(layer_norm(x) * dy') in double. */
static double host_loss(const ln_case *c, const double *x, const double *gamma, const double *beta) {
  double loss = 0;
  for (int r = 0; r < c->rows; r++) {
    const double *xr = x + (size_t)r * c->h;
    double s = 0, v = 0;
    for (int j = 0; j < c->h; j++) s += xr[j];
    double mean = s / c->h;
    for (int j = 0; j < c->h; j++) v += (xr[j] - mean) * (xr[j] - mean);
    double rstd = 1.0 / sqrt(v / c->h + (double)CLS_LAYER_NORM_EPSILON);
    for (int j = 0; j < c->h; j++)
      loss += ((xr[j] - mean) * rstd * gamma[j] + beta[j]) * c->dyd[(size_t)r * c->h + j];
  }
  return loss;
}

/* Central differences on entries of x (rows of more than one value; the step a thousandth of the row's
 * spread), gamma and beta (on which the loss is linear) against the device's gradients. */
static void finite_differences(const ln_case *c, const float *gx, const float *gg, const float *gb) {
  size_t n = (size_t)c->rows * c->h;
  double *x = malloc(n * sizeof *x), *gamma = malloc((size_t)c->h * sizeof *gamma);
  double *beta = malloc((size_t)c->h * sizeof *beta);
  for (size_t i = 0; i < n; i++) x[i] = c->x[i];
  for (int j = 0; j < c->h; j++) {
    gamma[j] = c->gamma[j];
    beta[j] = c->beta[j];
  }
  int checked = 0, bad = 0;
  double worst = 0;
  for (int which = 0; which < 3; which++) {
    double *v = which == 0 ? x : which == 1 ? gamma : beta;
    const float *g = which == 0 ? gx : which == 1 ? gg : gb;
    size_t len = which == 0 ? n : (size_t)c->h;
    for (size_t probe = 0; probe < 10; probe++) {
      size_t i = (probe * 7919u + 13u * which) % len;
      int r = (int)(i / (size_t)c->h);
      if (which == 0 && c->constant[r]) continue;
      double eps = which == 0 ? 1e-3 / c->rstd[r] : 1e-3;
      /* the gradient's scale: rstd * sum|dy*gamma| of the row for x, the column's sum|dy| * max|xhat| */
      double norm = 0;
      if (which == 0)
        for (int j = 0; j < c->h; j++) norm += c->rstd[r] * fabs(c->dyd[(size_t)r * c->h + j] * c->gamma[j]);
      else
        for (int k = 0; k < c->rows; k++) norm += fabs(c->dyd[(size_t)k * c->h + i]) * sqrt((double)c->h);
      double saved = v[i];
      v[i] = saved + eps;
      double up = host_loss(c, x, gamma, beta);
      v[i] = saved - eps;
      double down = host_loss(c, x, gamma, beta);
      v[i] = saved;
      double fd = (up - down) / (2 * eps), err = fabs(fd - g[i]), tol = 5e-5 * (fabs(fd) + norm);
      worst = fmax(worst, err / tol);
      checked++;
      if (err > tol && bad++ < 5)
        fprintf(stderr, "    d%s[%zu]: device %.9g, finite difference %.9g\n",
                which == 0 ? "x" : which == 1 ? "gamma" : "beta", i, g[i], fd);
    }
  }
  CHECK(bad == 0, "%s finite differences: %d of %d entries disagree", c->file, bad, checked);
  CHECK(checked >= 20, "%s finite differences: only %d usable probes", c->file, checked);
  printf("  finite differences: %d probes, worst %.3f of tolerance (5e-5 relative)\n", checked, worst);
  free(x);
  free(gamma);
  free(beta);
}

static void compare_both(const ln_case *c, const char *name, const float *got, const float *tf, const float *exact,
                         const double *btf, const double *bexact, size_t n) {
  char what[160];
  snprintf(what, sizeof what, "%s %s", c->file, name);
  tst_compare_bound(what, got, tf, btf, n);
  if (!exact) return;
  snprintf(what, sizeof what, "%s %s (float64)", c->file, name);
  tst_compare_bound(what, got, exact, bexact, n);
}

static void run_case(tst_env *env, int dev, const char *file) {
  ln_case c;
  if (!load(&c, file)) {
    unload(&c);
    return;
  }
  size_t n = (size_t)c.rows * c.h, h = (size_t)c.h, ns = cls_layer_norm_stats_floats(c.rows);
  /* views at offsets: x at 3 of its buffer, gamma at 5 and beta after it in a flat parameter buffer,
   * the gradients at the same places of a flat gradient buffer, stats at 2 */
  float *flat = calloc(5 + 2 * h, sizeof *flat), *xs = calloc(3 + n, sizeof *xs);
  memcpy(flat + 5, c.gamma, h * sizeof(float));
  memcpy(flat + 5 + h, c.beta, h * sizeof(float));
  memcpy(xs + 3, c.x, n * sizeof(float));
  cl_mem params = tst_buffer(env, dev, flat, (5 + 2 * h) * sizeof(float));
  cl_mem grads = tst_buffer(env, dev, NULL, (5 + 2 * h) * sizeof(float));
  cl_mem x = tst_buffer(env, dev, xs, (3 + n) * sizeof(float)), y = tst_buffer(env, dev, NULL, n * sizeof(float));
  cl_mem stats = tst_buffer(env, dev, NULL, (2 + ns) * sizeof(float));
  cl_mem dy = tst_buffer(env, dev, c.dy, n * sizeof(float)), dx = tst_buffer(env, dev, NULL, n * sizeof(float));
  cls_buf xv = cls_buf_at(x, 3), gv = cls_buf_at(params, 5), bv = cls_buf_at(params, 5 + h), sv = cls_buf_at(stats, 2);
  cls_buf dgv = cls_buf_at(grads, 5), dbv = cls_buf_at(grads, 5 + h);
  cls_layer_norm_plan *plan = NULL;
  cls_status st = cls_layer_norm_create(env->engine, dev, c.h, &plan);
  CHECK(st == CLS_OK, "layer norm create: %s", cls_engine_error(env->engine));
  double *by = malloc(n * sizeof *by), *bdx = malloc(n * sizeof *bdx), *bdg = malloc(h * sizeof *bdg);
  double *bdb = malloc(h * sizeof *bdb), *ey = malloc(n * sizeof *ey), *edx = malloc(n * sizeof *edx);
  double *edg = malloc(h * sizeof *edg), *edb = malloc(h * sizeof *edb);
  bounds(&c, 0, by, bdx, bdg, bdb);
  bounds(&c, 1, ey, edx, edg, edb);
  float *gy = malloc(n * sizeof *gy), *gx = malloc(n * sizeof *gx), *gs = malloc(ns * sizeof *gs);
  float *gflat = malloc((5 + 2 * h) * sizeof *gflat), *again = malloc((5 + 2 * h) * sizeof *again);
  float *gx2 = malloc(n * sizeof *gx2);
  cl_command_queue q = tst_queue(env, dev);
  const cls_dense_act *drop = c.keep ? &c.drop : NULL;
  if (c.keep) { /* the Philox mask computed here (C, kernels/philox.h) equals numpy's */
    int mism = 0;
    for (int r = 0; r < c.rows; r++)
      for (int j = 0; j < c.h; j++) {
        cls_u32 utt = (cls_u32)(c.drop.utterance_offset + r % c.drop.batch), t = (cls_u32)(r / c.drop.batch);
        float u = cls_dropout_uniform(c.drop.seed, c.drop.step, c.drop.layer, utt, t, (cls_u32)j);
        mism += (u >= c.drop.dropout_rate) != (c.keep[(size_t)r * c.h + j] != 0);
      }
    CHECK_INT(mism, 0);
  }
  if (plan) {
    st = cls_layer_norm_forward(plan, q, c.rows, xv, gv, bv, cls_buf_of(y), sv, drop, NULL);
    CHECK(st == CLS_OK, "forward: %s", cls_engine_error(env->engine));
    tst_read(env, dev, y, gy, n * sizeof(float));
    compare_both(&c, "y", gy, c.y, c.y64, by, ey, n);
    if (c.keep) { /* exactly the dropped units are 0 */
      int wrong = 0;
      for (size_t i = 0; i < n; i++) wrong += (gy[i] == 0.0f) != (c.keep[i] == 0.0f);
      CHECK_INT(wrong, 0);
    }
    /* a row of one value: xhat exactly 0, so y is beta to the bit */
    int not_beta = 0;
    for (int r = 0; r < c.rows && !c.keep; r++) {
      for (int j = 0; c.constant[r] && j < c.h; j++) not_beta += gy[(size_t)r * c.h + j] != c.beta[j];
    }
    CHECK_INT(not_beta, 0);
    /* the saved statistics: the mean within ULPS of mean|x|, rstd within 64 units of 2^-23 */
    float *stats_all = malloc((2 + ns) * sizeof *stats_all);
    tst_read(env, dev, stats, stats_all, (2 + ns) * sizeof(float));
    memcpy(gs, stats_all + 2, ns * sizeof(float));
    int bad_stats = 0;
    for (int r = 0; r < c.rows; r++) {
      double mabs = 0;
      for (int j = 0; j < c.h; j++) mabs += fabs(c.x[(size_t)r * c.h + j]) / c.h;
      bad_stats += !(fabs(gs[2 * r] - c.mean[r]) <= ULPS * mabs);
      bad_stats += !(fabs(gs[2 * r + 1] - c.rstd[r]) <= 64 * 0x1p-23 * c.rstd[r]);
      if (c.constant[r]) bad_stats += gs[2 * r] != c.x[(size_t)r * c.h];
    }
    CHECK(bad_stats == 0, "%s: %d saved means or rstds off", file, bad_stats);
    CHECK(stats_all[0] == 0.0f && stats_all[1] == 0.0f, "stats written before the view");
    free(stats_all);

    st = cls_layer_norm_backward(plan, q, c.rows, xv, gv, sv, cls_buf_of(dy), cls_buf_of(dx), dgv, dbv, CLS_OVERWRITE,
                                 drop, NULL);
    CHECK(st == CLS_OK, "backward: %s", cls_engine_error(env->engine));
    tst_read(env, dev, dx, gx, n * sizeof(float));
    tst_read(env, dev, grads, gflat, (5 + 2 * h) * sizeof(float));
    compare_both(&c, "dx", gx, c.dx, c.dx64, bdx, edx, n);
    compare_both(&c, "dgamma", gflat + 5, c.dgamma, c.dgamma64, bdg, edg, h);
    compare_both(&c, "dbeta", gflat + 5 + h, c.dbeta, c.dbeta64, bdb, edb, h);
    for (int i = 0; i < 5; i++) CHECK(gflat[i] == 0.0f, "gradient before the view written: [%d] = %g", i, gflat[i]);
    finite_differences(&c, gx, gflat + 5, gflat + 5 + h);

    /* Accumulate: dgamma and dbeta added again (x + x == 2x exactly); dx written, the same bits. */
    st = cls_layer_norm_backward(plan, q, c.rows, xv, gv, sv, cls_buf_of(dy), cls_buf_of(dx), dgv, dbv, CLS_ACCUMULATE,
                                 drop, NULL);
    CHECK(st == CLS_OK, "backward (accumulate): %s", cls_engine_error(env->engine));
    tst_read(env, dev, grads, again, (5 + 2 * h) * sizeof(float));
    tst_read(env, dev, dx, gx2, n * sizeof(float));
    for (size_t i = 0; i < 5 + 2 * h; i++) gflat[i] *= 2.0f;
    char what[160];
    snprintf(what, sizeof what, "%s accumulated dgamma, dbeta", file);
    tst_compare(what, again, gflat, 5 + 2 * h, 0, 0);
    snprintf(what, sizeof what, "%s dx of the accumulating call", file);
    tst_compare(what, gx2, gx, n, 0, 0);

    /* In place: y over x, then dx over dy, give the bits of out of place. */
    cl_mem xin = tst_buffer(env, dev, c.x, n * sizeof(float)), din = tst_buffer(env, dev, c.dy, n * sizeof(float));
    cl_mem sin = tst_buffer(env, dev, NULL, ns * sizeof(float));
    st = cls_layer_norm_forward(plan, q, c.rows, cls_buf_of(xin), gv, bv, cls_buf_of(xin), cls_buf_of(sin), drop,
                                NULL);
    CHECK(st == CLS_OK, "forward in place: %s", cls_engine_error(env->engine));
    tst_read(env, dev, xin, gx2, n * sizeof(float));
    snprintf(what, sizeof what, "%s y in place", file);
    tst_compare(what, gx2, gy, n, 0, 0);
    st = cls_layer_norm_backward(plan, q, c.rows, xv, gv, sv, cls_buf_of(din), cls_buf_of(din), dgv, dbv,
                                 CLS_OVERWRITE, drop, NULL);
    CHECK(st == CLS_OK, "backward in place: %s", cls_engine_error(env->engine));
    tst_read(env, dev, din, gx2, n * sizeof(float));
    tst_read(env, dev, grads, again, (5 + 2 * h) * sizeof(float));
    for (size_t i = 0; i < 5 + 2 * h; i++) gflat[i] *= 0.5f;
    snprintf(what, sizeof what, "%s dx in place", file);
    tst_compare(what, gx2, gx, n, 0, 0);
    snprintf(what, sizeof what, "%s dgamma, dbeta with dx in place", file);
    tst_compare(what, again, gflat, 5 + 2 * h, 0, 0);
    clReleaseMemObject(xin);
    clReleaseMemObject(din);
    clReleaseMemObject(sin);
  }
  cls_layer_norm_destroy(plan);
  cl_mem mems[] = {params, grads, x, y, stats, dy, dx};
  for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
    if (mems[i]) clReleaseMemObject(mems[i]);
  void *host[] = {flat, xs, by, bdx, bdg, bdb, ey, edx, edg, edb, gy, gx, gs, gflat, again, gx2};
  for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) free(host[i]);
  unload(&c);
}

/* No rows: the parameter gradients are sums of nothing, written as 0 (or adding 0); dx untouched. */
static void no_rows(tst_env *env, int dev) {
  enum { H = 20 };
  float sevens[H];
  for (int j = 0; j < H; j++) sevens[j] = 7.0f;
  cl_mem buf = tst_buffer(env, dev, sevens, sizeof sevens), dg = tst_buffer(env, dev, sevens, sizeof sevens);
  cl_mem db = tst_buffer(env, dev, sevens, sizeof sevens), dx = tst_buffer(env, dev, sevens, sizeof sevens);
  cls_layer_norm_plan *plan = NULL;
  cls_status st = cls_layer_norm_create(env->engine, dev, H, &plan);
  CHECK(st == CLS_OK, "layer norm create: %s", cls_engine_error(env->engine));
  if (plan) {
    cls_buf b = cls_buf_of(buf);
    st = cls_layer_norm_backward(plan, tst_queue(env, dev), 0, b, b, b, b, cls_buf_of(dx), cls_buf_of(dg),
                                 cls_buf_of(db), CLS_ACCUMULATE, NULL, NULL);
    CHECK(st == CLS_OK, "backward of 0 rows (accumulate): %s", cls_engine_error(env->engine));
    float got[H], want[H];
    tst_read(env, dev, dg, got, sizeof got);
    tst_compare("0 rows: dgamma accumulated", got, sevens, H, 0, 0);
    st = cls_layer_norm_backward(plan, tst_queue(env, dev), 0, b, b, b, b, cls_buf_of(dx), cls_buf_of(dg),
                                 cls_buf_of(db), CLS_OVERWRITE, NULL, NULL);
    CHECK(st == CLS_OK, "backward of 0 rows: %s", cls_engine_error(env->engine));
    memset(want, 0, sizeof want);
    tst_read(env, dev, db, got, sizeof got);
    tst_compare("0 rows: dbeta written", got, want, H, 0, 0);
    tst_read(env, dev, dx, got, sizeof got);
    tst_compare("0 rows: dx untouched", got, sevens, H, 0, 0);
  }
  cls_layer_norm_destroy(plan);
  clReleaseMemObject(buf);
  clReleaseMemObject(dg);
  clReleaseMemObject(db);
  clReleaseMemObject(dx);
}

/* What the plan refuses, and where it says so: a feature count below 1 at create (the engine's error), a
 * missing buffer and dx over x at enqueue (the sink cls_layer_norm_set_error gave). */
static void refusals(tst_env *env, int dev) {
  cls_layer_norm_plan *plan = NULL;
  CHECK_INT(cls_layer_norm_create(env->engine, dev, 0, &plan), CLS_ERR_INVALID_ARGUMENT);
  CHECK(plan == NULL, "no plan for 0 features");
  CHECK_CONTAINS(cls_engine_error(env->engine), "layer norm: bad feature count 0");
  cls_status st = cls_layer_norm_create(env->engine, dev, 4, &plan);
  CHECK(st == CLS_OK, "layer norm create: %s", cls_engine_error(env->engine));
  if (!plan) return;
  cls_error sink = {CLS_OK, ""};
  cls_layer_norm_set_error(plan, &sink);
  cl_mem m = tst_buffer(env, dev, NULL, 16 * sizeof(float));
  cls_buf b = cls_buf_of(m), none = {NULL, 0};
  cl_command_queue q = tst_queue(env, dev);
  CHECK_INT(cls_layer_norm_forward(plan, q, 2, b, b, none, b, b, NULL, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(sink.status, CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(sink.text, "layer norm: no buffer given for beta");
  sink = (cls_error){CLS_OK, ""};
  CHECK_INT(cls_layer_norm_backward(plan, q, 2, b, b, none, b, b, b, b, CLS_OVERWRITE, NULL, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(sink.text, "layer norm backward: no buffer given for stats");
  sink = (cls_error){CLS_OK, ""};
  CHECK_INT(cls_layer_norm_backward(plan, q, 2, b, b, b, cls_buf_at(m, 8), b, b, b, CLS_OVERWRITE, NULL, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(sink.text, "dx must not be x");
  sink = (cls_error){CLS_OK, ""};
  CHECK_INT(cls_layer_norm_forward(plan, q, -1, b, b, b, b, b, NULL, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(sink.text, "-1 rows");
  cls_dense_act bad = {0};
  bad.dropout_rate = 1.0f;
  bad.batch = 1;
  sink = (cls_error){CLS_OK, ""};
  CHECK_INT(cls_layer_norm_forward(plan, q, 2, b, b, b, b, b, &bad, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(sink.text, "dropout rate 1 is not in [0, 1)");
  bad.dropout_rate = 0.5f;
  bad.batch = 0;
  sink = (cls_error){CLS_OK, ""};
  CHECK_INT(cls_layer_norm_backward(plan, q, 2, b, b, b, b, cls_buf_at(m, 8), b, b, CLS_OVERWRITE, &bad, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(sink.text, "dropout needs the batch size (got 0)");
  cls_layer_norm_destroy(plan);
  clReleaseMemObject(m);
}

int main(void) {
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_layer_norm");
  const char *files[] = {"layer_norm_1x8.safetensors", "layer_norm_37x64.safetensors",
                         "layer_norm_160x100.safetensors", "layer_norm_constant.safetensors",
                         "layer_norm_large.safetensors", "layer_norm_dropout.safetensors",
                         "layer_norm_dropout_wide.safetensors", "layer_norm_dropout_70.safetensors"};
  for (int i = 0; i < env.n_devices; i++) {
    printf("device %s\n", tst_device_name(&env, env.devices[i]));
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) run_case(&env, env.devices[i], files[f]);
    no_rows(&env, env.devices[i]);
    refusals(&env, env.devices[i]);
  }
  tst_close_env(&env);
  return check_finish("test_layer_norm");
}
