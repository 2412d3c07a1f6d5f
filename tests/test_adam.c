/* Adam against TensorFlow 1's AdamOptimizer (fixtures from tests/ref/make_adam_fixtures.py): ten steps,
 * parameters, both moments and the beta powers after every step, checked with one set of tolerances for
 * both implementations: the device op (cls_adam_update, kernels/adam.cl) on every device, and the host
 * update the asynchronous strategy applies (cls_adam_host_update, engine/ops/adam_host.c). */
#include "check.h"
#include "clspeech/ops.h"
#include "ops/adam_host.h"
#include "ops_test.h"

/* One fixture's inputs and TF's results. */
typedef struct adam_case {
  const char *file;
  int n, steps;
  float lr, b1, b2, eps;
  const float *theta0, *grads, *params, *m, *v, *powers;
} adam_case;

static cls_safetensors *load_case(const char *file, adam_case *c) {
  memset(c, 0, sizeof *c);
  cls_safetensors *fx = tst_fixture(file);
  if (!fx) return NULL;
  c->file = file;
  c->n = tst_meta_int(fx, "n");
  c->steps = tst_meta_int(fx, "steps");
  c->lr = (float)atof(cls_safetensors_meta(fx, "lr"));
  c->b1 = (float)atof(cls_safetensors_meta(fx, "beta1"));
  c->b2 = (float)atof(cls_safetensors_meta(fx, "beta2"));
  c->eps = (float)atof(cls_safetensors_meta(fx, "epsilon"));
  const int64_t all = (int64_t)c->steps * c->n;
  c->theta0 = tst_tensor(fx, "theta0", CLS_F32, c->n);
  c->grads = tst_tensor(fx, "grads", CLS_F32, all);
  c->params = tst_tensor(fx, "params", CLS_F32, all);
  c->m = tst_tensor(fx, "m", CLS_F32, all);
  c->v = tst_tensor(fx, "v", CLS_F32, all);
  c->powers = tst_tensor(fx, "beta_powers", CLS_F32, (int64_t)c->steps * 2);
  CHECK(c->n > 0 && c->steps > 0, "%s: n %d, steps %d", file, c->n, c->steps);
  if (!c->theta0 || !c->grads || !c->params || !c->m || !c->v || !c->powers || c->n <= 0 || c->steps <= 0) {
    cls_safetensors_free(fx);
    return NULL;
  }
  return fx;
}

/* Step s (0-based) of implementation `who` against TF, with the tolerances both implementations share:
 * - parameters: |diff| <= 2e-6 |want| + 1e-7. Same float32 formulas as TF; only sqrt and division may
 *   round differently (OpenCL allows 3 and 2.5 ulp): relative 2e-6 of a parameter is far below one
 *   step's size.
 * - moments: m += (g - m)(1 - beta1) cancels when g ~ m, so its error is relative to the gradients that
 *   fed it, not to m: |diff| <= 2^-22 max|g| over the steps so far (4 ulp of the largest gradient);
 *   v: |diff| <= 1e-6 |v| + 2^-22 max g^2. TF's CPU kernel may fuse multiply-adds where we do not (or
 *   the reverse), which is all that differs.
 * - beta powers: exact (host float32 products, as TF's). */
static void check_step(const adam_case *c, const char *who, int s, const float *params, const float *m,
                       const float *v, const cls_adam_state *state) {
  const size_t n = (size_t)c->n, at = (size_t)s * n;
  char what[128];
  snprintf(what, sizeof what, "%s %s step %d params", who, c->file, s + 1);
  tst_compare(what, params, c->params + at, n, 2e-6, 1e-7);
  int bad = 0;
  double worst_m = 0, worst_v = 0;
  for (size_t i = 0; i < n; i++) {
    double gmax = 0;
    for (int k = 0; k <= s; k++) gmax = fmax(gmax, fabs(c->grads[(size_t)k * n + i]));
    double em = fabs(m[i] - c->m[at + i]), ev = fabs(v[i] - c->v[at + i]);
    double tm = 0x1p-22 * gmax, tv = 1e-6 * fabs(c->v[at + i]) + 0x1p-22 * gmax * gmax;
    if (isnan(em)) em = INFINITY;
    if (isnan(ev)) ev = INFINITY;
    worst_m = fmax(worst_m, em / tm);
    worst_v = fmax(worst_v, ev / tv);
    if (!(em <= tm) || !(ev <= tv)) {
      if (bad++ < 5)
        fprintf(stderr, "    %s step %d element %zu: m %.9g (expected %.9g), v %.9g (expected %.9g)\n", who, s + 1, i,
                m[i], c->m[at + i], v[i], c->v[at + i]);
    }
  }
  CHECK(bad == 0, "%s %s step %d: %d moments outside tolerance", who, c->file, s + 1, bad);
  printf("  %s %s step %d moments: worst m error %.2f, v error %.2f of tolerance\n", who, c->file, s + 1, worst_m,
         worst_v);
  float pw[2] = {state->beta1_power, state->beta2_power};
  snprintf(what, sizeof what, "%s %s step %d beta powers", who, c->file, s + 1);
  tst_compare(what, pw, c->powers + 2 * s, 2, 0, 0);
  CHECK_INT(state->step, s + 1);
}

/* The host update (the async strategy's), on the fixture's buffers in place. */
static void run_host_case(const char *file) {
  adam_case c;
  cls_safetensors *fx = load_case(file, &c);
  if (!fx) return;
  const size_t bytes = (size_t)c.n * sizeof(float);
  float *p = malloc(bytes), *m = calloc((size_t)c.n, sizeof(float)), *v = calloc((size_t)c.n, sizeof(float));
  CHECK(p && m && v, "out of memory");
  if (p && m && v) {
    memcpy(p, c.theta0, bytes);
    cls_adam_state state = cls_adam_state_init(c.b1, c.b2);
    for (int s = 0; s < c.steps; s++) {
      cls_adam_host_update((size_t)c.n, p, m, v, c.grads + (size_t)s * c.n, c.lr, c.b1, c.b2, c.eps, &state);
      check_step(&c, "host", s, p, m, v, &state);
    }
  }
  free(p);
  free(m);
  free(v);
  cls_safetensors_free(fx);
}

/* The device op; parameters live at an offset inside a larger buffer, as views of the flat buffer do. */
static void run_device_case(tst_env *env, int dev, const char *file) {
  adam_case c;
  cls_safetensors *fx = load_case(file, &c);
  if (!fx) return;
  const int n = c.n;
  cl_command_queue q = tst_queue(env, dev);
  size_t bytes = (size_t)n * sizeof(float);
  float *host = calloc((size_t)n + 16, sizeof(float));
  memcpy(host + 16, c.theta0, bytes);
  cl_mem p = tst_buffer(env, dev, host, bytes + 16 * sizeof(float));
  cl_mem m = tst_buffer(env, dev, NULL, bytes), v = tst_buffer(env, dev, NULL, bytes), g = tst_buffer(env, dev, NULL, bytes);
  cls_adam_plan *plan = NULL;
  cls_status st = cls_adam_create(env->engine, dev, &plan);
  CHECK(st == CLS_OK, "adam create: %s", cls_engine_error(env->engine));
  cls_adam_state state = cls_adam_state_init(c.b1, c.b2);
  float *out = malloc(bytes), *m_host = malloc(bytes), *v_host = malloc(bytes);
  char who[32];
  snprintf(who, sizeof who, "device %d", dev);
  for (int s = 0; plan && s < c.steps; s++) {
    clEnqueueWriteBuffer(q, g, CL_TRUE, 0, bytes, c.grads + (size_t)s * n, 0, NULL, NULL);
    st = cls_adam_update(plan, q, (size_t)n, cls_buf_at(p, 16), cls_buf_of(m), cls_buf_of(v), cls_buf_of(g), c.lr, c.b1,
                         c.b2, c.eps, &state, NULL);
    CHECK(st == CLS_OK, "adam update: %s", cls_engine_error(env->engine));
    clEnqueueReadBuffer(q, p, CL_TRUE, 16 * sizeof(float), bytes, out, 0, NULL, NULL);
    clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, m_host, 0, NULL, NULL);
    clEnqueueReadBuffer(q, v, CL_TRUE, 0, bytes, v_host, 0, NULL, NULL);
    check_step(&c, who, s, out, m_host, v_host, &state);
  }
  CHECK_INT(state.step, c.steps);
  /* The parameters before the view were not touched. */
  float guard[16];
  clEnqueueReadBuffer(q, p, CL_TRUE, 0, sizeof guard, guard, 0, NULL, NULL);
  for (int i = 0; i < 16; i++) CHECK(guard[i] == 0.0f, "element %d before the view changed to %g", i, guard[i]);
  free(out);
  free(m_host);
  free(v_host);
  free(host);
  cls_adam_destroy(plan);
  clReleaseMemObject(p);
  clReleaseMemObject(m);
  clReleaseMemObject(v);
  clReleaseMemObject(g);
  cls_safetensors_free(fx);
}

int main(void) {
  static const char *const files[] = {"adam_deepspeech.safetensors", "adam_odd.safetensors"};
  for (int f = 0; f < 2; f++) run_host_case(files[f]);
  tst_env env;
  if (tst_open(&env)) {
    for (int i = 0; i < env.n_devices; i++) {
      printf("device %d: %s\n", env.devices[i], tst_device_name(&env, env.devices[i]));
      for (int f = 0; f < 2; f++) run_device_case(&env, env.devices[i], files[f]);
    }
  }
  tst_close_env(&env);
  return check_finish("test_adam");
}
