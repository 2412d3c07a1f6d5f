/* The LSTM op against TensorFlow's BlockLSTM (fixtures from tests/ref/make_lstm_fixtures.py) on every
 * device: outputs and the gradients of x, the kernel and the bias, accumulate mode, views at offsets
 * inside larger buffers, outputs past the lengths exactly 0, streaming inference with carried state;
 * and a finite-difference check of backward against a double-precision LSTM on the host. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "clspeech/ops.h"
#include "clspeech/internal/ops.h"
#include "ops_test.h"

#define PAD 11                  /* elements before and after every view */
static const float GUARD = 4242.0f; /* what the padding holds; no op may change it */

/* ---- buffers with guarded padding ---- */

/* A buffer [PAD guards][n values: data, or `fill` when data is NULL][PAD guards]; the view is at PAD. */
static cl_mem padded(tst_env *env, int dev, const float *data, size_t n, float fill) {
  float *host = malloc((n + 2 * PAD) * sizeof(float));
  for (size_t i = 0; i < n + 2 * PAD; i++) host[i] = GUARD;
  for (size_t i = 0; i < n; i++) host[PAD + i] = data ? data[i] : fill;
  cl_mem m = tst_buffer(env, dev, host, (n + 2 * PAD) * sizeof(float));
  free(host);
  return m;
}

static cl_mem padded_int(tst_env *env, int dev, const int32_t *data, size_t n) {
  int32_t *host = malloc((n + 2 * PAD) * sizeof(int32_t));
  for (size_t i = 0; i < n + 2 * PAD; i++) host[i] = -777;
  memcpy(host + PAD, data, n * sizeof(int32_t));
  cl_mem m = tst_buffer(env, dev, host, (n + 2 * PAD) * sizeof(int32_t));
  free(host);
  return m;
}

/* n floats of a buffer from element `offset`, into a new host array. */
static float *read_at(tst_env *env, int dev, cl_mem m, size_t offset, size_t n) {
  float *out = calloc(n ? n : 1, sizeof(float));
  cl_int err = clEnqueueReadBuffer(tst_queue(env, dev), m, CL_TRUE, offset * sizeof(float), n * sizeof(float), out, 0,
                                   NULL, NULL);
  CHECK(err == CL_SUCCESS, "reading a test buffer failed: %d", err);
  return out;
}

/* The first and last `count` elements of a buffer of `total` floats still hold GUARD. */
static void check_guards(tst_env *env, int dev, cl_mem m, size_t total, size_t count, const char *what) {
  float *a = read_at(env, dev, m, 0, total);
  int bad = 0;
  for (size_t i = 0; i < count; i++) bad += (a[i] != GUARD) + (a[total - 1 - i] != GUARD);
  CHECK(bad == 0, "%s: %d padding elements around the views changed", what, bad);
  free(a);
}

/* ---- fixtures ---- */

typedef struct lstm_fx {
  cls_safetensors *st;
  int T, B, I, H;
  const float *x, *w, *b, *dh, *h, *dx, *dw, *db, *h_last, *c_last; /* shapes as in make_lstm_fixtures.py */
  const int32_t *len;
} lstm_fx;

static int load_fx(const char *file, lstm_fx *f) {
  memset(f, 0, sizeof *f);
  f->st = tst_fixture(file);
  if (!f->st) return 0;
  f->T = tst_meta_int(f->st, "T"), f->B = tst_meta_int(f->st, "B");
  f->I = tst_meta_int(f->st, "I"), f->H = tst_meta_int(f->st, "H");
  int64_t rows = (int64_t)f->T * f->B, I = f->I, H = f->H;
  f->x = tst_tensor(f->st, "x", CLS_F32, rows * I);
  f->w = tst_tensor(f->st, "w", CLS_F32, (I + H) * 4 * H);
  f->b = tst_tensor(f->st, "b", CLS_F32, 4 * H);
  f->len = tst_tensor(f->st, "lengths", CLS_I32, f->B);
  f->dh = tst_tensor(f->st, "dh", CLS_F32, rows * H);
  f->h = tst_tensor(f->st, "h", CLS_F32, rows * H);
  f->dx = tst_tensor(f->st, "dx", CLS_F32, rows * I);
  f->dw = tst_tensor(f->st, "dw", CLS_F32, (I + H) * 4 * H);
  f->db = tst_tensor(f->st, "db", CLS_F32, 4 * H);
  f->h_last = tst_tensor(f->st, "h_last", CLS_F32, f->B * H);
  f->c_last = tst_tensor(f->st, "c_last", CLS_F32, f->B * H);
  return f->x && f->w && f->b && f->len && f->dh && f->h && f->dx && f->dw && f->db && f->h_last && f->c_last;
}

/* Tolerances against TF (|got - want| <= atol + rtol*|want|). */
typedef struct tol {
  double h_rtol, h_atol; /* outputs and states */
  double g_rtol, g_atol; /* dx, dW, db */
} tol;

static void cmp(const char *file, const char *what, const float *got, const float *want, size_t n, double rtol,
                double atol) {
  char name[128];
  snprintf(name, sizeof name, "%s %s", file, what);
  tst_compare(name, got, want, n, rtol, atol);
}

/* ---- training forward and backward against TF ---- */

static void run_case(tst_env *env, int dev, const char *file, tol tl, cls_lstm_path path) {
  lstm_fx f;
  if (!load_fx(file, &f)) goto done;
  const int T = f.T, B = f.B, I = f.I, H = f.H;
  const size_t rows = (size_t)T * B, nw = (size_t)(I + H) * 4 * H, nb = 4 * (size_t)H;
  cl_command_queue q = tst_queue(env, dev);
  cls_engine *e = env->engine;
  cls_lstm_plan *plan = NULL;
  /* The plan's maximum shapes exceed this batch's, as a training run's would. */
  cls_status st = cls_lstm_create(e, dev, T + 3, B + 1, I, H, &plan);
  CHECK(st == CLS_OK, "lstm create: %s", cls_engine_error(e));
  if (st != CLS_OK) goto done;
  CHECK_INT(cls_lstm_set_path(plan, path), CLS_OK);
  CHECK_INT(cls_lstm_path_for(plan), path);
  printf("  %s, %s path\n", file, cls_lstm_path_name(path));

  /* One flat parameter buffer [pad][W][pad][b][pad], and a gradient buffer of the same layout. */
  const size_t w_at = PAD, b_at = PAD + nw + PAD, flat = b_at + nb + PAD;
  float *host = malloc(flat * sizeof(float));
  for (size_t i = 0; i < flat; i++) host[i] = GUARD;
  memcpy(host + w_at, f.w, nw * sizeof(float));
  memcpy(host + b_at, f.b, nb * sizeof(float));
  cl_mem params = tst_buffer(env, dev, host, flat * sizeof(float));
  for (size_t i = 0; i < nw; i++) host[w_at + i] = NAN; /* overwrite mode must not read what is there */
  for (size_t i = 0; i < nb; i++) host[b_at + i] = NAN;
  cl_mem grads = tst_buffer(env, dev, host, flat * sizeof(float));
  free(host);
  cl_mem x = padded(env, dev, f.x, rows * I, 0), dh = padded(env, dev, f.dh, rows * H, 0);
  cl_mem h = padded(env, dev, NULL, rows * H, NAN), dx = padded(env, dev, NULL, rows * I, NAN);
  cl_mem len = padded_int(env, dev, f.len, (size_t)B);
  size_t ws_floats = cls_lstm_workspace_bytes(plan, T, B) / sizeof(float);
  /* W_h packed (4H^2 floats), the gates, cells and dz, dh_rec and dc, xh, and the sequence path's sums of dz
     per group of rows (B x 4H) */
  CHECK(ws_floats == (size_t)4 * H * H + rows * 9 * H + 2 * (size_t)B * H + rows * (size_t)(I + H) + (size_t)B * 4 * H,
        "workspace of %zu floats", ws_floats);
  cl_mem ws = padded(env, dev, NULL, ws_floats, NAN); /* its contents must not matter */
  cls_buf xv = cls_buf_at(x, PAD), wv = cls_buf_at(params, w_at), bv = cls_buf_at(params, b_at);
  cls_buf lv = cls_buf_at(len, PAD), hv = cls_buf_at(h, PAD), wsv = cls_buf_at(ws, PAD), dhv = cls_buf_at(dh, PAD);
  cls_buf dxv = cls_buf_at(dx, PAD), dwv = cls_buf_at(grads, w_at), dbv = cls_buf_at(grads, b_at);

  cl_event ev = NULL;
  st = cls_lstm_forward(plan, q, T, B, xv, wv, bv, lv, hv, wsv, &ev);
  CHECK(st == CLS_OK, "lstm forward: %s", cls_engine_error(e));
  if (ev) {
    CHECK(clWaitForEvents(1, &ev) == CL_SUCCESS, "waiting for forward's event failed");
    clReleaseEvent(ev);
  }
  float *h_dev = read_at(env, dev, h, PAD, rows * H);
  cmp(file, "h", h_dev, f.h, rows * H, tl.h_rtol, tl.h_atol);
  int nonzero = 0;
  for (int t = 0; t < T; t++)
    for (int b = 0; b < B; b++)
      if (t >= f.len[b])
        for (int k = 0; k < H; k++) nonzero += h_dev[((size_t)t * B + b) * H + k] != 0.0f;
  CHECK(nonzero == 0, "%s: %d outputs past the lengths are not exactly 0", file, nonzero);

  ev = NULL;
  st = cls_lstm_backward(plan, q, T, B, xv, wv, lv, hv, dhv, wsv, dxv, dwv, dbv, CLS_OVERWRITE, &ev);
  CHECK(st == CLS_OK, "lstm backward: %s", cls_engine_error(e));
  if (ev) {
    CHECK(clWaitForEvents(1, &ev) == CL_SUCCESS, "waiting for backward's event failed");
    clReleaseEvent(ev);
  }
  float *dx1 = read_at(env, dev, dx, PAD, rows * I), *dw1 = read_at(env, dev, grads, w_at, nw);
  float *db1 = read_at(env, dev, grads, b_at, nb);
  cmp(file, "dx", dx1, f.dx, rows * I, tl.g_rtol, tl.g_atol);
  cmp(file, "dW", dw1, f.dw, nw, tl.g_rtol, tl.g_atol);
  cmp(file, "db", db1, f.db, nb, tl.g_rtol, tl.g_atol);

  /* Accumulate: a second backward adds the same gradients (the saved activations are unchanged). */
  st = cls_lstm_backward(plan, q, T, B, xv, wv, lv, hv, dhv, wsv, dxv, dwv, dbv, CLS_ACCUMULATE, NULL);
  CHECK(st == CLS_OK, "lstm backward (accumulate): %s", cls_engine_error(e));
  {
    float *dx2 = read_at(env, dev, dx, PAD, rows * I), *dw2 = read_at(env, dev, grads, w_at, nw);
    float *db2 = read_at(env, dev, grads, b_at, nb);
    for (size_t i = 0; i < rows * I; i++) dx1[i] *= 2;
    for (size_t i = 0; i < nw; i++) dw1[i] *= 2;
    for (size_t i = 0; i < nb; i++) db1[i] *= 2;
    /* The same sums again, added: 2x up to the rounding of the addition (in practice exact). */
    cmp(file, "accumulated dx = 2x", dx2, dx1, rows * I, 1e-6, 0);
    cmp(file, "accumulated dW = 2x", dw2, dw1, nw, 1e-6, 0);
    cmp(file, "accumulated db = 2x", db2, db1, nb, 1e-6, 0);
    free(dx2);
    free(dw2);
    free(db2);
  }
  /* Without dx: the weight gradients alone, overwritten again. */
  st = cls_lstm_backward(plan, q, T, B, xv, wv, lv, hv, dhv, wsv, cls_buf_of(NULL), dwv, dbv, CLS_OVERWRITE, NULL);
  CHECK(st == CLS_OK, "lstm backward (no dx): %s", cls_engine_error(e));
  {
    float *dw3 = read_at(env, dev, grads, w_at, nw), *dx3 = read_at(env, dev, dx, PAD, rows * I);
    for (size_t i = 0; i < nw; i++) dw1[i] /= 2;
    cmp(file, "dW without dx = first dW", dw3, dw1, nw, 0, 0);
    cmp(file, "dx untouched without dx", dx3, dx1, rows * I, 0, 0);
    free(dw3);
    free(dx3);
  }
  check_guards(env, dev, params, flat, PAD, "parameters");
  check_guards(env, dev, grads, flat, PAD, "gradients");
  check_guards(env, dev, x, rows * I + 2 * PAD, PAD, "x");
  check_guards(env, dev, h, rows * H + 2 * PAD, PAD, "h");
  check_guards(env, dev, dx, rows * I + 2 * PAD, PAD, "dx");
  check_guards(env, dev, ws, ws_floats + 2 * PAD, PAD, "workspace");

  /* ---- inference: one call from the zero state is forward; two chunks with carried state too ---- */
  {
    size_t iws = cls_lstm_infer_workspace_bytes(plan, T, B) / sizeof(float);
    cl_mem iw = padded(env, dev, NULL, iws, NAN);
    cl_mem hs = padded(env, dev, NULL, (size_t)B * H, 0), cs = padded(env, dev, NULL, (size_t)B * H, 0);
    cl_mem ho = padded(env, dev, NULL, rows * H, NAN);
    cls_buf hsv = cls_buf_at(hs, PAD), csv = cls_buf_at(cs, PAD), hov = cls_buf_at(ho, PAD);
    st = cls_lstm_infer(plan, q, T, B, xv, wv, bv, lv, hsv, csv, hov, cls_buf_at(iw, PAD), NULL);
    CHECK(st == CLS_OK, "lstm infer: %s", cls_engine_error(e));
    float *hi = read_at(env, dev, ho, PAD, rows * H);
    float *hs1 = read_at(env, dev, hs, PAD, (size_t)B * H), *cs1 = read_at(env, dev, cs, PAD, (size_t)B * H);
    cmp(file, "infer h = forward h", hi, h_dev, rows * H, 0, 0); /* the same operations in the same order */
    cmp(file, "infer final h state", hs1, f.h_last, (size_t)B * H, tl.h_rtol, tl.h_atol);
    cmp(file, "infer final c state", cs1, f.c_last, (size_t)B * H, tl.h_rtol, tl.h_atol);
    free(hi);
    free(hs1);
    free(cs1);

    const int T1 = (T + 1) / 2, T2 = T - T1;
    if (T2 > 0) {
      int32_t *l1 = malloc((size_t)B * sizeof(int32_t)), *l2 = malloc((size_t)B * sizeof(int32_t));
      /* Chunk 1 gets the whole lengths: a length above a call's T counts as T. */
      for (int b = 0; b < B; b++) {
        l1[b] = f.len[b];
        l2[b] = f.len[b] > T1 ? f.len[b] - T1 : 0;
      }
      cl_mem len1 = padded_int(env, dev, l1, (size_t)B), len2 = padded_int(env, dev, l2, (size_t)B);
      cl_mem z = padded(env, dev, NULL, (size_t)B * H, 0);
      clEnqueueCopyBuffer(q, z, hs, 0, 0, ((size_t)B * H + 2 * PAD) * sizeof(float), 0, NULL, NULL);
      clEnqueueCopyBuffer(q, z, cs, 0, 0, ((size_t)B * H + 2 * PAD) * sizeof(float), 0, NULL, NULL);
      /* The second chunk's x and h are views further into the same buffers. */
      st = cls_lstm_infer(plan, q, T1, B, xv, wv, bv, cls_buf_at(len1, PAD), hsv, csv, hov, cls_buf_at(iw, PAD), NULL);
      CHECK(st == CLS_OK, "lstm infer (chunk 1): %s", cls_engine_error(e));
      st = cls_lstm_infer(plan, q, T2, B, cls_buf_at(x, PAD + (size_t)T1 * B * I), wv, bv, cls_buf_at(len2, PAD), hsv,
                          csv, cls_buf_at(ho, PAD + (size_t)T1 * B * H), cls_buf_at(iw, PAD), NULL);
      CHECK(st == CLS_OK, "lstm infer (chunk 2): %s", cls_engine_error(e));
      float *hc = read_at(env, dev, ho, PAD, rows * H);
      float *hs2 = read_at(env, dev, hs, PAD, (size_t)B * H), *cs2 = read_at(env, dev, cs, PAD, (size_t)B * H);
      /* The input projection GEMM runs over fewer rows per chunk, and CLBlast may pick another kernel
         for that shape (another summation order): agreement to float rounding, not bit for bit. */
      cmp(file, "2 chunks h = forward h", hc, h_dev, rows * H, 1e-5, 1e-6);
      cmp(file, "2 chunks final h state", hs2, f.h_last, (size_t)B * H, tl.h_rtol, tl.h_atol);
      cmp(file, "2 chunks final c state", cs2, f.c_last, (size_t)B * H, tl.h_rtol, tl.h_atol);
      free(hc);
      free(hs2);
      free(cs2);
      free(l1);
      free(l2);
      clReleaseMemObject(len1);
      clReleaseMemObject(len2);
      clReleaseMemObject(z);
    }
    check_guards(env, dev, hs, (size_t)B * H + 2 * PAD, PAD, "h_state");
    check_guards(env, dev, cs, (size_t)B * H + 2 * PAD, PAD, "c_state");
    check_guards(env, dev, ho, rows * H + 2 * PAD, PAD, "inference h");
    check_guards(env, dev, iw, iws + 2 * PAD, PAD, "inference workspace");
    clReleaseMemObject(iw);
    clReleaseMemObject(hs);
    clReleaseMemObject(cs);
    clReleaseMemObject(ho);
  }

  free(h_dev);
  free(dx1);
  free(dw1);
  free(db1);
  clReleaseMemObject(params);
  clReleaseMemObject(grads);
  clReleaseMemObject(x);
  clReleaseMemObject(dh);
  clReleaseMemObject(h);
  clReleaseMemObject(dx);
  clReleaseMemObject(len);
  clReleaseMemObject(ws);
  cls_lstm_destroy(plan);
done:
  cls_safetensors_free(f.st);
}

/* ---- finite differences against a double-precision LSTM on the host ---- */

/* sum over valid (t, b) of h_t . dh_t, with h from the recurrence of lstm.h in double precision;
 * h_out [T*B, H] (may be NULL) receives the masked outputs. */
static double host_loss(int T, int B, int I, int H, const double *x, const double *w, const double *bias,
                        const int32_t *len, const double *dh, double *h_out) {
  double *h = calloc((size_t)B * H, sizeof(double)), *c = calloc((size_t)B * H, sizeof(double));
  double *z = malloc(4 * (size_t)H * sizeof(double)), loss = 0;
  for (int t = 0; t < T; t++)
    for (int b = 0; b < B; b++) {
      double *hb = h + (size_t)b * H, *cb = c + (size_t)b * H;
      const double *xt = x + ((size_t)t * B + b) * I;
      const int valid = t < len[b];
      if (valid) {
        for (int n = 0; n < 4 * H; n++) {
          double s = bias[n];
          for (int r = 0; r < I; r++) s += xt[r] * w[(size_t)r * 4 * H + n];
          for (int r = 0; r < H; r++) s += hb[r] * w[(size_t)(I + r) * 4 * H + n];
          z[n] = s;
        }
        /* every z used the old h: now the state can change */
        for (int k = 0; k < H; k++) {
          double i = 1 / (1 + exp(-z[k])), j = tanh(z[H + k]), f = 1 / (1 + exp(-z[2 * H + k]));
          double o = 1 / (1 + exp(-z[3 * H + k]));
          cb[k] = i * j + f * cb[k];
          hb[k] = o * tanh(cb[k]);
          loss += hb[k] * dh[((size_t)t * B + b) * H + k];
        }
      }
      if (h_out)
        for (int k = 0; k < H; k++) h_out[((size_t)t * B + b) * H + k] = valid ? hb[k] : 0;
    }
  free(h);
  free(c);
  free(z);
  return loss;
}

static uint32_t lcg_state = 12345u;
static float lcg_uniform(float lo, float hi) {
  lcg_state = lcg_state * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(lcg_state >> 8) / 16777216.0f;
}

static void finite_difference(tst_env *env, int dev, cls_lstm_path path) {
  enum { T = 6, B = 3, I = 3, H = 5 };
  const int32_t len[B] = {6, 4, 1};
  const size_t rows = T * B, nx = rows * I, nw = (size_t)(I + H) * 4 * H, nb = 4 * H, nh = rows * H;
  float xf[T * B * I], wf[(I + H) * 4 * H], bf[4 * H], dhf[T * B * H];
  lcg_state = 12345u;
  for (size_t i = 0; i < nx; i++) xf[i] = lcg_uniform(-1, 1);
  for (size_t i = 0; i < nw; i++) wf[i] = lcg_uniform(-0.6f, 0.6f);
  for (size_t i = 0; i < nb; i++) bf[i] = lcg_uniform(-0.5f, 0.5f);
  for (size_t i = 0; i < nh; i++) dhf[i] = lcg_uniform(-1, 1);

  cl_command_queue q = tst_queue(env, dev);
  cls_engine *e = env->engine;
  cls_lstm_plan *plan = NULL;
  cls_status st = cls_lstm_create(e, dev, T, B, I, H, &plan);
  CHECK(st == CLS_OK, "lstm create: %s", cls_engine_error(e));
  if (st != CLS_OK) return;
  CHECK_INT(cls_lstm_set_path(plan, path), CLS_OK);
  cl_mem x = tst_buffer(env, dev, xf, sizeof xf), w = tst_buffer(env, dev, wf, sizeof wf);
  cl_mem b = tst_buffer(env, dev, bf, sizeof bf), dh = tst_buffer(env, dev, dhf, sizeof dhf);
  cl_mem l = tst_buffer(env, dev, len, sizeof len), h = tst_buffer(env, dev, NULL, nh * sizeof(float));
  cl_mem ws = tst_buffer(env, dev, NULL, cls_lstm_workspace_bytes(plan, T, B));
  cl_mem dx = tst_buffer(env, dev, NULL, sizeof xf), dw = tst_buffer(env, dev, NULL, sizeof wf);
  cl_mem db = tst_buffer(env, dev, NULL, sizeof bf);
  st = cls_lstm_forward(plan, q, T, B, cls_buf_of(x), cls_buf_of(w), cls_buf_of(b), cls_buf_of(l), cls_buf_of(h),
                        cls_buf_of(ws), NULL);
  CHECK(st == CLS_OK, "lstm forward: %s", cls_engine_error(e));
  st = cls_lstm_backward(plan, q, T, B, cls_buf_of(x), cls_buf_of(w), cls_buf_of(l), cls_buf_of(h), cls_buf_of(dh),
                         cls_buf_of(ws), cls_buf_of(dx), cls_buf_of(dw), cls_buf_of(db), CLS_OVERWRITE, NULL);
  CHECK(st == CLS_OK, "lstm backward: %s", cls_engine_error(e));
  float *h_dev = read_at(env, dev, h, 0, nh), *g_dev[3];
  g_dev[0] = read_at(env, dev, dx, 0, nx);
  g_dev[1] = read_at(env, dev, dw, 0, nw);
  g_dev[2] = read_at(env, dev, db, 0, nb);

  double xd[T * B * I], wd[(I + H) * 4 * H], bd[4 * H], dhd[T * B * H], hd[T * B * H];
  for (size_t i = 0; i < nx; i++) xd[i] = xf[i];
  for (size_t i = 0; i < nw; i++) wd[i] = wf[i];
  for (size_t i = 0; i < nb; i++) bd[i] = bf[i];
  for (size_t i = 0; i < nh; i++) dhd[i] = dhf[i];
  host_loss(T, B, I, H, xd, wd, bd, len, dhd, hd);
  float hh[T * B * H];
  for (size_t i = 0; i < nh; i++) hh[i] = (float)hd[i];
  /* float32 against double: a few ulp of |h| <= 1 */
  tst_compare("finite-difference case h vs double host", h_dev, hh, nh, 1e-5, 1e-6);

  /* Central differences on every entry of x, W and b. The host loss is double precision and smooth,
     so with eps 1e-4 the difference quotient is exact to ~1e-8; the device gradient is float32. */
  const double eps = 1e-4;
  double *params[3] = {xd, wd, bd};
  const size_t counts[3] = {nx, nw, nb};
  const char *names[3] = {"dx", "dW", "db"};
  for (int p = 0; p < 3; p++) {
    float *fd = malloc(counts[p] * sizeof(float));
    for (size_t i = 0; i < counts[p]; i++) {
      double keep = params[p][i];
      params[p][i] = keep + eps;
      double up = host_loss(T, B, I, H, xd, wd, bd, len, dhd, NULL);
      params[p][i] = keep - eps;
      double down = host_loss(T, B, I, H, xd, wd, bd, len, dhd, NULL);
      params[p][i] = keep;
      fd[i] = (float)((up - down) / (2 * eps));
    }
    char what[64];
    snprintf(what, sizeof what, "finite differences %s (%zu entries)", names[p], counts[p]);
    tst_compare(what, g_dev[p], fd, counts[p], 1e-4, 2e-6);
    free(fd);
    free(g_dev[p]);
  }
  free(h_dev);
  cl_mem all[] = {x, w, b, dh, l, h, ws, dx, dw, db};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) clReleaseMemObject(all[i]);
  cls_lstm_destroy(plan);
}

/* ---- argument errors ---- */

static void argument_errors(tst_env *env, int dev) {
  cls_engine *e = env->engine;
  cls_lstm_plan *plan = NULL;
  CHECK_INT(cls_lstm_create(e, dev, 0, 1, 1, 1, &plan), CLS_ERR_INVALID_ARGUMENT);
  CHECK(plan == NULL, "a failed create left a plan");
  CHECK_INT(cls_lstm_create(e, dev, 100000, 1000, 8, 2048, &plan), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "2^31");
  cls_status st = cls_lstm_create(e, dev, 4, 2, 3, 5, &plan);
  CHECK(st == CLS_OK, "lstm create: %s", cls_engine_error(e));
  if (st != CLS_OK) return;
  cl_command_queue q = tst_queue(env, dev);
  cl_mem big = tst_buffer(env, dev, NULL, 4096 * sizeof(float)), small = tst_buffer(env, dev, NULL, 16);
  cls_buf v = cls_buf_of(big);
  CHECK_INT(cls_lstm_forward(plan, q, 5, 2, v, v, v, v, v, v, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "time 5");
  CHECK_INT(cls_lstm_forward(plan, q, 4, 2, v, v, v, v, v, cls_buf_of(small), NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "workspace needs");
  CHECK_INT(cls_lstm_backward(plan, q, 4, 2, v, v, v, v, v, v, v, cls_buf_at(big, 4000), v, CLS_OVERWRITE, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "dweights");
  CHECK_INT(cls_lstm_infer(plan, q, 4, 2, v, v, v, v, cls_buf_of(NULL), v, v, v, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "h_state");
  clReleaseMemObject(big);
  clReleaseMemObject(small);
  cls_lstm_destroy(plan);
}

/* With --sequence-short: the sequence path alone, on the fixtures of a few steps and the finite differences
   (what the Oclgrind run takes: tests/vendors/CMakeLists.txt; the whole test there takes minutes). */
int main(int argc, char **argv) {
  const bool short_run = argc > 1 && !strcmp(argv[1], "--sequence-short");
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_lstm");
  /* Tolerances against TF's float32 BlockLSTM. Both sides round differently (TF multiplies [x, h] by W
     in one product, here x*W_x and h*W_h are separate GEMMs; CLBlast and Eigen sum in other orders;
     exp/tanh differ by ulps), and the differences are carried through the recurrence: ~1e-6 of
     values of size ~1 per step. Gradients sum over every step and utterance (dW, db: T*B terms of
     each sign), so their absolute tolerance scales with the largest gradient of the case. */
  const tol t_small = {1e-5, 1e-6, 1e-5, 2e-6};
  const tol t_ds = {1e-5, 2e-6, 1e-5, 1e-5};
  const tol t_long = {1e-5, 2e-6, 1e-5, 1e-4}; /* 500 steps: h errors compound along the recurrence; dW sums 1000 rows */
  for (int i = 0; i < env.n_devices; i++) {
    int dev = env.devices[i];
    printf("device %s\n", tst_device_name(&env, dev));
    /* Both recurrence paths (clspeech/internal/ops.h), each against TF: the sequence path is written for
       CPU devices, but is correct on any. */
    const cls_lstm_path paths[] = {CLS_LSTM_PATH_STEPS, CLS_LSTM_PATH_SEQUENCE};
    for (int k = short_run ? 1 : 0; k < 2; k++) {
      run_case(&env, dev, "lstm_t1.safetensors", t_small, paths[k]);
      run_case(&env, dev, "lstm_odd.safetensors", t_small, paths[k]);
      run_case(&env, dev, "lstm_short.safetensors", t_small, paths[k]);
      if (!short_run) {
        run_case(&env, dev, "lstm_ds_small.safetensors", t_ds, paths[k]);
        run_case(&env, dev, "lstm_long.safetensors", t_long, paths[k]);
      }
      finite_difference(&env, dev, paths[k]);
    }
    if (!short_run) argument_errors(&env, dev);
  }
  tst_close_env(&env);
  return check_finish("test_lstm");
}
