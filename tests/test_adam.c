/* The Adam op against TensorFlow 1's AdamOptimizer (fixtures from tests/ref/make_adam_fixtures.py):
 * ten steps, parameters, both moments and the beta powers after every step, on every device; plus a
 * finite-difference check that the update is a descent step on a quadratic. */
#include "check.h"
#include "clspeech/ops.h"
#include "ops_test.h"

static void run_case(tst_env *env, int dev, const char *file) {
  cls_safetensors *fx = tst_fixture(file);
  if (!fx) return;
  int n = tst_meta_int(fx, "n"), steps = tst_meta_int(fx, "steps");
  float lr = (float)atof(cls_safetensors_meta(fx, "lr")), b1 = (float)atof(cls_safetensors_meta(fx, "beta1"));
  float b2 = (float)atof(cls_safetensors_meta(fx, "beta2")), eps = (float)atof(cls_safetensors_meta(fx, "epsilon"));
  const float *theta0 = tst_tensor(fx, "theta0", CLS_F32, n);
  const float *grads = tst_tensor(fx, "grads", CLS_F32, (int64_t)steps * n);
  const float *params = tst_tensor(fx, "params", CLS_F32, (int64_t)steps * n);
  const float *m_ref = tst_tensor(fx, "m", CLS_F32, (int64_t)steps * n);
  const float *v_ref = tst_tensor(fx, "v", CLS_F32, (int64_t)steps * n);
  const float *powers = tst_tensor(fx, "beta_powers", CLS_F32, (int64_t)steps * 2);
  if (!theta0 || !grads || !params || !m_ref || !v_ref || !powers) goto done;

  cl_command_queue q = tst_queue(env, dev);
  size_t bytes = (size_t)n * sizeof(float);
  /* Parameters live at an offset inside a larger buffer, as views of the flat buffer do. */
  float *host = calloc((size_t)n + 16, sizeof(float));
  memcpy(host + 16, theta0, bytes);
  cl_mem p = tst_buffer(env, dev, host, bytes + 16 * sizeof(float));
  cl_mem m = tst_buffer(env, dev, NULL, bytes), v = tst_buffer(env, dev, NULL, bytes), g = tst_buffer(env, dev, NULL, bytes);
  cls_adam_plan *plan = NULL;
  cls_status st = cls_adam_create(env->engine, dev, &plan);
  CHECK(st == CLS_OK, "adam create: %s", cls_engine_error(env->engine));
  cls_adam_state state = cls_adam_state_init(b1, b2);
  float *out = malloc(bytes);
  for (int s = 0; plan && s < steps; s++) {
    clEnqueueWriteBuffer(q, g, CL_TRUE, 0, bytes, grads + (size_t)s * n, 0, NULL, NULL);
    st = cls_adam_update(plan, q, (size_t)n, cls_buf_at(p, 16), cls_buf_of(m), cls_buf_of(v), cls_buf_of(g), lr, b1, b2,
                         eps, &state, NULL);
    CHECK(st == CLS_OK, "adam update: %s", cls_engine_error(env->engine));
    char what[64];
    clEnqueueReadBuffer(q, p, CL_TRUE, 16 * sizeof(float), bytes, out, 0, NULL, NULL);
    snprintf(what, sizeof what, "%s step %d params", file, s + 1);
    /* Same float32 formulas as TF; only sqrt and division may round differently (OpenCL allows
       3 and 2.5 ulp): relative 2e-6 of a parameter is far below one step's size. */
    tst_compare(what, out, params + (size_t)s * n, (size_t)n, 2e-6, 1e-7);
    /* The moments: m += (g - m)(1 - beta1) cancels when g ~ m, so its error is relative to the
       gradients that fed it, not to m: within 4 ulp (2^-22) of the largest |g| so far (v: of g^2).
       TF's CPU kernel may fuse multiply-adds where the device does not, which is all that differs. */
    float *m_host = malloc(bytes), *v_host = malloc(bytes);
    clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, m_host, 0, NULL, NULL);
    clEnqueueReadBuffer(q, v, CL_TRUE, 0, bytes, v_host, 0, NULL, NULL);
    int bad = 0;
    double worst_m = 0, worst_v = 0;
    for (int i = 0; i < n; i++) {
      double gmax = 0;
      for (int k = 0; k <= s; k++) gmax = fmax(gmax, fabs(grads[(size_t)k * n + i]));
      double em = fabs(m_host[i] - m_ref[(size_t)s * n + i]), ev = fabs(v_host[i] - v_ref[(size_t)s * n + i]);
      double tm = 0x1p-22 * gmax, tv = 1e-6 * fabs(v_ref[(size_t)s * n + i]) + 0x1p-22 * gmax * gmax;
      worst_m = fmax(worst_m, em / tm);
      worst_v = fmax(worst_v, ev / tv);
      if (em > tm || ev > tv) {
        if (bad++ < 5)
          fprintf(stderr, "    step %d element %d: m %.9g (expected %.9g), v %.9g (expected %.9g)\n", s + 1, i,
                  m_host[i], m_ref[(size_t)s * n + i], v_host[i], v_ref[(size_t)s * n + i]);
      }
    }
    CHECK(bad == 0, "%s step %d: %d moments outside tolerance", file, s + 1, bad);
    printf("  %s step %d moments: worst m error %.2f, v error %.2f of tolerance\n", file, s + 1, worst_m, worst_v);
    free(m_host);
    free(v_host);
    float pw[2] = {state.beta1_power, state.beta2_power};
    snprintf(what, sizeof what, "%s step %d beta powers", file, s + 1);
    tst_compare(what, pw, powers + 2 * s, 2, 0, 0); /* host float32 products: exact */
  }
  CHECK_INT(state.step, steps);
  /* The parameters before the view were not touched. */
  float guard[16];
  clEnqueueReadBuffer(q, p, CL_TRUE, 0, sizeof guard, guard, 0, NULL, NULL);
  for (int i = 0; i < 16; i++) CHECK(guard[i] == 0.0f, "element %d before the view changed to %g", i, guard[i]);
  free(out);
  free(host);
  cls_adam_destroy(plan);
  clReleaseMemObject(p);
  clReleaseMemObject(m);
  clReleaseMemObject(v);
  clReleaseMemObject(g);
done:
  cls_safetensors_free(fx);
}

int main(void) {
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_adam");
  for (int i = 0; i < env.n_devices; i++) {
    printf("device %s\n", tst_device_name(&env, env.devices[i]));
    run_case(&env, env.devices[i], "adam_deepspeech.safetensors");
    run_case(&env, env.devices[i], "adam_odd.safetensors");
  }
  tst_close_env(&env);
  return check_finish("test_adam");
}
