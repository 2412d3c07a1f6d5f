/* The dense op against TensorFlow (fixtures from tests/ref/make_dense_fixtures.py) on every device:
 * forward (bias, clipped ReLU, inverted dropout), dX, dW and db; the Philox dropout mask against an
 * independent numpy implementation; the same activations for any split of the batch; accumulation;
 * finite differences of a double-precision host evaluation; and the mask of a layer wider than one
 * work-item's 64 units, with rates at a draw's value and just above it.
 * Tolerances: each value within 8 ulp (2^-21) of the sum of the magnitudes its dot product adds up,
 * the error bound of a float32 sum in any order of that length, for TF and us alike. */
#include <math.h>

#include "check.h"
#include "clspeech/internal/ops.h"
#include "clspeech/ops.h"
#include "ops_test.h"
#include "philox.h"

#define ULP8 0x1p-21

typedef struct dense_case {
  cls_safetensors *fx;
  int T, B, in, out, rows;
  cls_dense_act act;
  const float *x, *w, *b, *dy, *y, *dx, *dw, *db, *keep;
} dense_case;

static int load(dense_case *c, const char *file) {
  memset(c, 0, sizeof *c);
  c->fx = tst_fixture(file);
  if (!c->fx) return 0;
  c->T = tst_meta_int(c->fx, "T");
  c->B = tst_meta_int(c->fx, "B");
  c->in = tst_meta_int(c->fx, "in");
  c->out = tst_meta_int(c->fx, "out");
  c->rows = c->T * c->B;
  c->act.relu = tst_meta_int(c->fx, "relu");
  c->act.relu_clip = (float)atof(cls_safetensors_meta(c->fx, "clip"));
  c->act.dropout_rate = (float)atof(cls_safetensors_meta(c->fx, "rate"));
  c->act.seed = (uint32_t)tst_meta_int(c->fx, "seed");
  c->act.step = (uint32_t)tst_meta_int(c->fx, "step");
  c->act.layer = (uint32_t)tst_meta_int(c->fx, "layer");
  c->act.batch = c->B;
  c->act.utterance_offset = tst_meta_int(c->fx, "utterance_offset");
  int64_t ri = (int64_t)c->rows * c->in, ro = (int64_t)c->rows * c->out, io = (int64_t)c->in * c->out;
  c->x = tst_tensor(c->fx, "x", CLS_F32, ri);
  c->w = tst_tensor(c->fx, "w", CLS_F32, io);
  c->b = tst_tensor(c->fx, "b", CLS_F32, c->out);
  c->dy = tst_tensor(c->fx, "dy", CLS_F32, ro);
  c->y = tst_tensor(c->fx, "y", CLS_F32, ro);
  c->dx = tst_tensor(c->fx, "dx", CLS_F32, ri);
  c->dw = tst_tensor(c->fx, "dw", CLS_F32, io);
  c->db = tst_tensor(c->fx, "db", CLS_F32, c->out);
  c->keep = tst_tensor(c->fx, "keep", CLS_F32, ro);
  return c->x && c->w && c->b && c->dy && c->y && c->dx && c->dw && c->db && c->keep;
}

static double scale_of(const dense_case *c) {
  return c->act.relu && c->act.dropout_rate > 0 ? 1.0 / (1.0 - c->act.dropout_rate) : 1.0;
}

/* Error bounds from the magnitudes each output sums. */
static void bounds(const dense_case *c, double *by, double *bdx, double *bdw, double *bdb) {
  double s = scale_of(c);
  for (int r = 0; r < c->rows; r++)
    for (int j = 0; j < c->out; j++) {
      double acc = fabs(c->b[j]);
      for (int k = 0; k < c->in; k++) acc += fabs((double)c->x[r * c->in + k] * c->w[k * c->out + j]);
      by[r * c->out + j] = ULP8 * acc * s + 1e-30;
    }
  for (int r = 0; r < c->rows; r++)
    for (int k = 0; k < c->in; k++) {
      double acc = 0;
      for (int j = 0; j < c->out; j++) acc += fabs((double)c->dy[r * c->out + j] * c->w[k * c->out + j]);
      bdx[r * c->in + k] = ULP8 * acc * s + 1e-30;
    }
  for (int k = 0; k < c->in; k++)
    for (int j = 0; j < c->out; j++) {
      double acc = 0;
      for (int r = 0; r < c->rows; r++) acc += fabs((double)c->x[r * c->in + k] * c->dy[r * c->out + j]);
      bdw[k * c->out + j] = ULP8 * acc * s + 1e-30;
    }
  for (int j = 0; j < c->out; j++) {
    double acc = 0;
    for (int r = 0; r < c->rows; r++) acc += fabs(c->dy[r * c->out + j]);
    bdb[j] = ULP8 * acc * s + 1e-30;
  }
}

/* Host evaluation in double of sum(y · dy) with the fixture's mask. */
static double host_loss(const dense_case *c, const double *x, const double *w, const double *b) {
  double loss = 0, s = scale_of(c);
  for (int r = 0; r < c->rows; r++)
    for (int j = 0; j < c->out; j++) {
      double z = b[j];
      for (int k = 0; k < c->in; k++) z += x[r * c->in + k] * w[k * c->out + j];
      double y = z;
      if (c->act.relu) y = fmin(fmax(z, 0.0), c->act.relu_clip) * c->keep[r * c->out + j] * s;
      loss += y * c->dy[r * c->out + j];
    }
  return loss;
}

/* Central differences on a few entries of x, w and b, skipping entries whose rows sit within
   0.01 of a ReLU or clip kink (where the loss is not differentiable). The loss is piecewise linear,
   so away from kinks the difference quotient is exact up to double rounding. */
static void finite_differences(const dense_case *c, const float *gx, const float *gw, const float *gb) {
  size_t nx = (size_t)c->rows * c->in, nw = (size_t)c->in * c->out;
  double *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *b = malloc((size_t)c->out * sizeof *b);
  for (size_t i = 0; i < nx; i++) x[i] = c->x[i];
  for (size_t i = 0; i < nw; i++) w[i] = c->w[i];
  for (int i = 0; i < c->out; i++) b[i] = c->b[i];
  const double eps = 1e-3;
  int checked = 0, bad = 0;
  double worst = 0;
  for (int which = 0; which < 3; which++) {
    double *v = which == 0 ? x : which == 1 ? w : b;
    const float *g = which == 0 ? gx : which == 1 ? gw : gb;
    size_t n = which == 0 ? nx : which == 1 ? nw : (size_t)c->out;
    for (size_t probe = 0; probe < 12; probe++) {
      size_t i = (probe * 7919u + 13u * which) % n;
      double saved = v[i];
      v[i] = saved + eps;
      double up = host_loss(c, x, w, b);
      v[i] = saved - eps;
      double down = host_loss(c, x, w, b);
      v[i] = saved;
      /* Reject probes that crossed a kink: the one-sided slopes differ. */
      double mid = host_loss(c, x, w, b);
      if (fabs((up - mid) - (mid - down)) > 1e-6 * (fabs(up) + fabs(down) + 1)) continue;
      double fd = (up - down) / (2 * eps);
      double err = fabs(fd - g[i]);
      double tol = 1e-4 * (fabs(fd) + 1.0);
      worst = fmax(worst, err / tol);
      checked++;
      if (err > tol && bad++ < 5)
        fprintf(stderr, "    d%s[%zu]: device %.9g, finite difference %.9g\n", which == 0 ? "x" : which == 1 ? "w" : "b",
                i, g[i], fd);
    }
  }
  CHECK(bad == 0, "finite differences: %d of %d entries disagree", bad, checked);
  CHECK(checked >= 18, "finite differences: only %d usable probes", checked);
  printf("  finite differences: %d probes, worst %.3f of tolerance (1e-4 relative)\n", checked, worst);
  free(x);
  free(w);
  free(b);
}

static void run_case(tst_env *env, int dev, const char *file) {
  dense_case c;
  if (!load(&c, file)) {
    cls_safetensors_free(c.fx);
    return;
  }
  size_t ri = (size_t)c.rows * c.in, ro = (size_t)c.rows * c.out, io = (size_t)c.in * c.out;
  /* The Philox mask computed here (C, kernels/philox.h) equals numpy's (tests/ref/philox.py). */
  if (c.act.relu && c.act.dropout_rate > 0) {
    int mism = 0;
    for (int r = 0; r < c.rows; r++)
      for (int j = 0; j < c.out; j++) {
        float u = cls_dropout_uniform(c.act.seed, c.act.step, c.act.layer, (cls_u32)(c.act.utterance_offset + r % c.B),
                                      (cls_u32)(r / c.B), (cls_u32)j);
        mism += (u >= c.act.dropout_rate) != (c.keep[r * c.out + j] != 0);
      }
    CHECK_INT(mism, 0);
  }
  /* Parameters as views into one flat buffer: w at offset 7, b right after it. */
  size_t flat_n = 7 + io + (size_t)c.out;
  float *flat = calloc(flat_n, sizeof *flat);
  memcpy(flat + 7, c.w, io * sizeof(float));
  memcpy(flat + 7 + io, c.b, (size_t)c.out * sizeof(float));
  cl_mem params = tst_buffer(env, dev, flat, flat_n * sizeof(float));
  cl_mem grads = tst_buffer(env, dev, NULL, flat_n * sizeof(float));
  cl_mem x = tst_buffer(env, dev, c.x, ri * sizeof(float)), y = tst_buffer(env, dev, NULL, ro * sizeof(float));
  cl_mem dy = tst_buffer(env, dev, c.dy, ro * sizeof(float)), dx = tst_buffer(env, dev, NULL, ri * sizeof(float));
  cls_dense_plan *plan = NULL;
  cls_status st = cls_dense_create(env->engine, dev, c.in, c.out, &plan);
  CHECK(st == CLS_OK, "dense create: %s", cls_engine_error(env->engine));
  cl_mem ws = tst_buffer(env, dev, NULL, plan ? cls_dense_workspace_bytes(plan, c.rows) : 4);
  cl_command_queue q = tst_queue(env, dev);
  cls_buf w = cls_buf_at(params, 7), b = cls_buf_at(params, 7 + io);
  cls_buf dw = cls_buf_at(grads, 7), db = cls_buf_at(grads, 7 + io);
  double *by = malloc(ro * sizeof *by), *bdx = malloc(ri * sizeof *bdx), *bdw = malloc(io * sizeof *bdw);
  double *bdb = malloc((size_t)c.out * sizeof *bdb);
  bounds(&c, by, bdx, bdw, bdb);
  float *gy = malloc(ro * sizeof *gy), *gx = malloc(ri * sizeof *gx), *gflat = malloc(flat_n * sizeof *gflat);
  char what[128];
  if (plan) {
    st = cls_dense_forward(plan, q, c.rows, cls_buf_of(x), w, b, cls_buf_of(y), &c.act, NULL);
    CHECK(st == CLS_OK, "forward: %s", cls_engine_error(env->engine));
    tst_read(env, dev, y, gy, ro * sizeof(float));
    snprintf(what, sizeof what, "%s y", file);
    tst_compare_bound(what, gy, c.y, by, ro);

    st = cls_dense_backward(plan, q, c.rows, cls_buf_of(x), w, cls_buf_of(y), cls_buf_of(dy), cls_buf_of(dx), dw, db, &c.act,
                            CLS_OVERWRITE, cls_buf_of(ws), NULL);
    CHECK(st == CLS_OK, "backward: %s", cls_engine_error(env->engine));
    tst_read(env, dev, dx, gx, ri * sizeof(float));
    tst_read(env, dev, grads, gflat, flat_n * sizeof(float));
    snprintf(what, sizeof what, "%s dx", file);
    tst_compare_bound(what, gx, c.dx, bdx, ri);
    snprintf(what, sizeof what, "%s dw", file);
    tst_compare_bound(what, gflat + 7, c.dw, bdw, io);
    snprintf(what, sizeof what, "%s db", file);
    tst_compare_bound(what, gflat + 7 + io, c.db, bdb, (size_t)c.out);
    for (int i = 0; i < 7; i++) CHECK(gflat[i] == 0.0f, "gradient before the view written: [%d] = %g", i, gflat[i]);
    finite_differences(&c, gx, gflat + 7, gflat + 7 + io);

    /* Accumulate: a second backward adds the same gradients again. */
    st = cls_dense_backward(plan, q, c.rows, cls_buf_of(x), w, cls_buf_of(y), cls_buf_of(dy), cls_buf_of(dx), dw, db,
                            &c.act, CLS_ACCUMULATE, cls_buf_of(ws), NULL);
    CHECK(st == CLS_OK, "backward (accumulate): %s", cls_engine_error(env->engine));
    float *twice = malloc(flat_n * sizeof *twice), *twice_x = malloc(ri * sizeof *twice_x);
    tst_read(env, dev, grads, twice, flat_n * sizeof(float));
    tst_read(env, dev, dx, twice_x, ri * sizeof(float));
    for (size_t i = 0; i < flat_n; i++) gflat[i] *= 2.0f;
    for (size_t i = 0; i < ri; i++) gx[i] *= 2.0f;
    snprintf(what, sizeof what, "%s accumulated dw, db", file);
    tst_compare(what, twice, gflat, flat_n, 0, 0); /* x + x == 2x exactly */
    snprintf(what, sizeof what, "%s accumulated dx", file);
    tst_compare(what, twice_x, gx, ri, 0, 0);
    free(twice);
    free(twice_x);

    /* Any split of the batch gives the same activations: utterances [0, B-1) in one tower and the
       last in another, each with its own B and utterance offset. */
    if (c.B > 1) {
      int parts[2][2] = {{0, c.B - 1}, {c.B - 1, 1}};
      for (int part = 0; part < 2; part++) {
        int b0 = parts[part][0], nb = parts[part][1], rows = c.T * nb;
        float *xs = malloc((size_t)rows * c.in * sizeof *xs), *ys = malloc((size_t)rows * c.out * sizeof *ys);
        float *yref = malloc((size_t)rows * c.out * sizeof *yref);
        double *bs = malloc((size_t)rows * c.out * sizeof *bs);
        for (int t = 0; t < c.T; t++)
          for (int k = 0; k < nb; k++) {
            int src = t * c.B + b0 + k, dst = t * nb + k;
            memcpy(xs + (size_t)dst * c.in, c.x + (size_t)src * c.in, (size_t)c.in * sizeof(float));
            memcpy(yref + (size_t)dst * c.out, c.y + (size_t)src * c.out, (size_t)c.out * sizeof(float));
            memcpy(bs + (size_t)dst * c.out, by + (size_t)src * c.out, (size_t)c.out * sizeof(double));
          }
        cl_mem xsub = tst_buffer(env, dev, xs, (size_t)rows * c.in * sizeof(float));
        cl_mem ysub = tst_buffer(env, dev, NULL, (size_t)rows * c.out * sizeof(float));
        cls_dense_act act = c.act;
        act.batch = nb;
        act.utterance_offset = c.act.utterance_offset + b0;
        st = cls_dense_forward(plan, q, rows, cls_buf_of(xsub), w, b, cls_buf_of(ysub), &act, NULL);
        CHECK(st == CLS_OK, "split forward: %s", cls_engine_error(env->engine));
        tst_read(env, dev, ysub, ys, (size_t)rows * c.out * sizeof(float));
        int zero_mismatch = 0;
        for (int i = 0; i < rows * c.out; i++) zero_mismatch += (ys[i] == 0.0f) != (yref[i] == 0.0f);
        CHECK_INT(zero_mismatch, 0); /* the same units dropped */
        snprintf(what, sizeof what, "%s split %d y", file, part);
        tst_compare_bound(what, ys, yref, bs, (size_t)rows * c.out);
        clReleaseMemObject(xsub);
        clReleaseMemObject(ysub);
        free(xs);
        free(ys);
        free(yref);
        free(bs);
      }
    }
  }
  cls_dense_destroy(plan);
  cl_mem mems[] = {params, grads, x, y, dy, dx, ws};
  for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
    if (mems[i]) clReleaseMemObject(mems[i]);
  free(flat);
  free(by);
  free(bdx);
  free(bdw);
  free(bdb);
  free(gy);
  free(gx);
  free(gflat);
  cls_safetensors_free(c.fx);
}

/* The dropout mask over a wide layer (two 64-unit runs of a work-item and a tail): with w = 0 and
 * b = 1 every unit's activation is 1, so y is exactly 1/(1-rate) where the Philox draw (philox.h, checked
 * against Random123's vectors in test_philox) keeps the unit and 0 where it drops it; with dy = 1 the
 * gradient passes exactly where y is kept, so db counts each column's kept units times 1/(1-rate).
 * at_unit >= 0: the rate is exactly the draw of that unit of row 1, which the draw keeps (u >= rate), or with
 * `above` the next float above it, between two draws' values (the unit's draw is below 0.5, where floats are
 * finer than the draws' 2^-24), which drops it: the kernel's integer threshold must agree with the float
 * comparison on both sides of the boundary. */
static void wide_mask(tst_env *env, int dev, int at_unit, int above) {
  enum { T = 3, B = 5, IN = 2, OUT = 165, ROWS = T * B };
  cls_dense_act act = {1, 20.0f, 0.3f, 4568, 9, 6, B, 11};
  if (at_unit >= 0) {
    act.dropout_rate = cls_dropout_uniform(act.seed, act.step, act.layer, (cls_u32)(act.utterance_offset + 1), 0,
                                           (cls_u32)at_unit);
    CHECK(act.dropout_rate > 0.0f && act.dropout_rate < (above ? 0.5f : 1.0f), "unit %d's draw %g", at_unit,
          (double)act.dropout_rate);
    if (above) act.dropout_rate = nextafterf(act.dropout_rate, 1.0f);
  }
  const float scale = 1.0f / (1.0f - act.dropout_rate);
  float *ones = malloc(ROWS * OUT * sizeof *ones), *bias = malloc(OUT * sizeof *bias);
  float *y = malloc(ROWS * OUT * sizeof *y), *db = malloc(OUT * sizeof *db), zeros[IN * OUT] = {0};
  for (int i = 0; i < ROWS * OUT; i++) ones[i] = 1.0f;
  for (int j = 0; j < OUT; j++) bias[j] = 1.0f;
  cl_mem x = tst_buffer(env, dev, ones, ROWS * IN * sizeof(float)), w = tst_buffer(env, dev, zeros, sizeof zeros);
  cl_mem b = tst_buffer(env, dev, bias, OUT * sizeof(float));
  cl_mem dy = tst_buffer(env, dev, ones, ROWS * OUT * sizeof(float));
  cl_mem yb = tst_buffer(env, dev, NULL, ROWS * OUT * sizeof(float)), dw = tst_buffer(env, dev, NULL, sizeof zeros);
  cl_mem dbb = tst_buffer(env, dev, NULL, OUT * sizeof(float));
  cl_mem ws = tst_buffer(env, dev, NULL, ROWS * OUT * sizeof(float));
  cls_dense_plan *plan = NULL;
  cls_status st = cls_dense_create(env->engine, dev, IN, OUT, &plan);
  CHECK(st == CLS_OK, "dense create: %s", cls_engine_error(env->engine));
  if (plan) {
    cl_command_queue q = tst_queue(env, dev);
    st = cls_dense_forward(plan, q, ROWS, cls_buf_of(x), cls_buf_of(w), cls_buf_of(b), cls_buf_of(yb), &act, NULL);
    CHECK(st == CLS_OK, "wide forward: %s", cls_engine_error(env->engine));
    st = cls_dense_backward(plan, q, ROWS, cls_buf_of(x), cls_buf_of(w), cls_buf_of(yb), cls_buf_of(dy),
                            (cls_buf){NULL, 0}, cls_buf_of(dw), cls_buf_of(dbb), &act, CLS_OVERWRITE, cls_buf_of(ws),
                            NULL);
    CHECK(st == CLS_OK, "wide backward: %s", cls_engine_error(env->engine));
    tst_read(env, dev, yb, y, ROWS * OUT * sizeof(float));
    tst_read(env, dev, dbb, db, OUT * sizeof(float));
    int wrong_y = 0, wrong_db = 0, kept_total = 0;
    for (int j = 0; j < OUT; j++) {
      int kept = 0;
      for (int r = 0; r < ROWS; r++) {
        float u = cls_dropout_uniform(act.seed, act.step, act.layer, (cls_u32)(act.utterance_offset + r % B),
                                      (cls_u32)(r / B), (cls_u32)j);
        float want = u >= act.dropout_rate ? scale : 0.0f;
        kept += want != 0.0f;
        wrong_y += y[r * OUT + j] != want;
      }
      float sum = 0.0f; /* the kernel's additions, in row order */
      for (int r = 0; r < ROWS; r++) sum += y[r * OUT + j] != 0.0f ? scale : 0.0f;
      wrong_db += db[j] != sum;
      kept_total += kept;
    }
    CHECK_INT(wrong_y, 0);
    CHECK_INT(wrong_db, 0);
    CHECK(kept_total > 0 && kept_total < ROWS * OUT, "kept %d of %d", kept_total, ROWS * OUT);
    if (at_unit < 0) CHECK(kept_total > ROWS * OUT / 2, "kept %d of %d at rate 0.3", kept_total, ROWS * OUT);
    else CHECK(y[1 * OUT + at_unit] == (above ? 0.0f : scale), "row 1 unit %d, the rate %s its draw: y %g", at_unit,
               above ? "just above" : "exactly", (double)y[OUT + at_unit]);
  }
  cls_dense_destroy(plan);
  cl_mem mems[] = {x, w, b, dy, yb, dw, dbb, ws};
  for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++) clReleaseMemObject(mems[i]);
  free(ones);
  free(bias);
  free(y);
  free(db);
}

/* cls_dense_set_error points the plan's own GEMM there too: a product's failure (no x) lands in the
 * given sink, not the engine's. */
static void own_gemm_sink(tst_env *env, int dev) {
  cls_dense_plan *plan = NULL;
  cls_status st = cls_dense_create(env->engine, dev, 2, 3, &plan);
  CHECK(st == CLS_OK, "dense create: %s", cls_engine_error(env->engine));
  if (!plan) return;
  cls_error sink = {CLS_OK, ""};
  cls_dense_set_error(plan, &sink);
  cl_mem w = tst_buffer(env, dev, NULL, 6 * sizeof(float)), y = tst_buffer(env, dev, NULL, 3 * sizeof(float));
  cls_dense_act act = {0};
  st = cls_dense_forward(plan, tst_queue(env, dev), 1, (cls_buf){NULL, 0}, cls_buf_of(w), cls_buf_of(y), cls_buf_of(y),
                         &act, NULL);
  CHECK_INT(st, CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(sink.status, CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(sink.text, "no buffer given");
  cls_dense_destroy(plan);
  clReleaseMemObject(w);
  clReleaseMemObject(y);
}

int main(void) {
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_dense");
  const char *files[] = {"dense_relu_dropout.safetensors", "dense_relu_clip.safetensors", "dense_linear.safetensors",
                         "dense_single.safetensors", "dense_deepspeech.safetensors"};
  for (int i = 0; i < env.n_devices; i++) {
    printf("device %s\n", tst_device_name(&env, env.devices[i]));
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) run_case(&env, env.devices[i], files[f]);
    wide_mask(&env, env.devices[i], -1, 0);
    wide_mask(&env, env.devices[i], 70, 0);  /* in the second full run */
    wide_mask(&env, env.devices[i], 150, 0); /* in the tail */
    wide_mask(&env, env.devices[i], 70, 1);  /* its draw 0.43 */
    wide_mask(&env, env.devices[i], 130, 1); /* 0.099, in the tail */
    own_gemm_sink(&env, env.devices[i]);
  }
  tst_close_env(&env);
  return check_finish("test_dense");
}
