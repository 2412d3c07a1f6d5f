/* The peak beside other work (clspeech/internal/bench.h, engine/bench/bench_device.c): a probe runs the FMA kernel of
 * the width the peak names (float4 without a peak) and reports a positive rate each run; a product timed
 * beside it counts a run at full speed exactly when both probes beside it reach CLS_BENCH_FULL_SPEED of the
 * peak it is given (the rule on made-up readings; on a device, every run for a peak of 0, none for one no
 * device reaches), reports their median (the
 * median of all runs when all count, -1 when none does), and refuses a run count outside 1..64; the probe
 * keeps its fastest run. On every device. */
#include <math.h>

#include "check.h"
#include "clspeech/internal/bench.h"
#include "ops_test.h"

/* The rule itself, on made-up readings: both probes beside a run must reach 85 % of the peak. */
static void full_speed_rule(void) {
  CHECK(cls_bench_at_full_speed(200, 200, 200), "both at the peak");
  CHECK(cls_bench_at_full_speed(170, 180, 200), "both at 85 %% or more");
  CHECK(!cls_bench_at_full_speed(169.9, 200, 200), "the one before under 85 %%");
  CHECK(!cls_bench_at_full_speed(200, 100, 200), "the one after under 85 %%");
  CHECK(!cls_bench_at_full_speed(0, 0, 200), "no reading");
  CHECK(cls_bench_at_full_speed(0, 0, 0), "a peak of 0 counts every run");
  /* and the peak measured in a slow stretch: a probe run more than 10 % above it */
  CHECK(cls_bench_peak_measured_slow(221, 200) && !cls_bench_peak_measured_slow(219, 200), "10 %% above the peak");
  CHECK(!cls_bench_peak_measured_slow(100, 0), "no peak");
}

static void run_device(tst_env *env, int dev) {
  cls_engine *e = env->engine;
  cl_command_queue q = NULL;
  CHECK(cls_bench_queue(e, dev, &q) == CLS_OK, "queue: %s", cls_engine_error(e));
  if (!q) return;
  cls_bench_peak peak = {0};
  peak.fma_width = 8;
  cls_bench_probe *probe = NULL, *plain = NULL;
  CHECK(cls_bench_probe_create(e, dev, q, &peak, &probe) == CLS_OK, "probe: %s", cls_engine_error(e));
  CHECK(cls_bench_probe_create(e, dev, q, NULL, &plain) == CLS_OK, "probe without a peak: %s", cls_engine_error(e));
  double g8 = 0, g4 = 0;
  if (probe) CHECK(cls_bench_probe_run(probe, &g8) == CLS_OK && g8 > 0 && isfinite(g8), "probe rate %g", g8);
  if (plain) CHECK(cls_bench_probe_run(plain, &g4) == CLS_OK && g4 > 0 && isfinite(g4), "float4 probe rate %g", g4);

  cls_gemm_shape shapes[CLS_BENCH_MAX_SHAPES];
  const cls_model_config model = cls_model_config_deepspeech(16, 29);
  const int n = cls_bench_gemm_shapes(&model, 2, 6, shapes);
  int out_fwd = -1;
  for (int i = 0; i < n; i++)
    if (!strcmp(shapes[i].name, "out_fwd")) out_fwd = i;
  CHECK(out_fwd >= 0, "no out_fwd among %d shapes", n);
  cls_gemm_cases *cases = NULL;
  CHECK(cls_gemm_cases_create(e, dev, q, shapes, n, &cases) == CLS_OK, "cases: %s", cls_engine_error(e));
  if (cases && probe && out_fwd >= 0) {
    const int runs = 5;
    cls_bench_beside all, none;
    CHECK(cls_gemm_cases_time_beside(cases, out_fwd, probe, 0.0, 1, runs, &all) == CLS_OK, "%s",
          cls_engine_error(e));
    CHECK_INT(all.full_runs, runs);
    CHECK(all.full_median_ms == all.median_ms, "every run at full speed: median %g, full-speed median %g",
          all.median_ms, all.full_median_ms);
    CHECK(all.best_ms > 0 && all.best_ms <= all.median_ms, "best %g, median %g", all.best_ms, all.median_ms);
    CHECK(cls_bench_probe_best(probe) >= g8, "best probe run %g, first %g", cls_bench_probe_best(probe), g8);
    CHECK(cls_gemm_cases_time_beside(cases, out_fwd, probe, 1e12, 0, 3, &none) == CLS_OK, "%s", cls_engine_error(e));
    CHECK_INT(none.full_runs, 0);
    CHECK(none.full_median_ms == -1 && none.median_ms > 0, "no run at full speed: %g, median %g", none.full_median_ms,
          none.median_ms);
    /* two sides taking turns (the same cases twice): a time per side and run, one full-speed flag per run */
    cls_gemm_cases *two[2] = {cases, cases}, *three[3] = {cases, cases, cases};
    double ms[2][CLS_BENCH_MAX_RUNS];
    bool full[CLS_BENCH_MAX_RUNS];
    int failed = 5;
    CHECK(cls_gemm_cases_turns_beside(two, 2, out_fwd, probe, 0.0, 0, 3, ms, full, &failed) == CLS_OK, "%s",
          cls_engine_error(e));
    CHECK(failed == -1 && full[0] && full[1] && full[2], "turns: failed %d, full %d %d %d", failed, full[0], full[1],
          full[2]);
    CHECK(ms[0][0] > 0 && ms[0][2] > 0 && ms[1][0] > 0 && ms[1][2] > 0, "turns: %g %g %g %g ms", ms[0][0], ms[0][2],
          ms[1][0], ms[1][2]);
    CHECK(cls_gemm_cases_turns_beside(three, 3, out_fwd, probe, 0.0, 0, 3, ms, full, &failed) ==
              CLS_ERR_INVALID_ARGUMENT && failed == -1, "3 sides accepted (failed %d)", failed);
    CHECK_CONTAINS(cls_engine_error(e), "sides must be 1..2");
    cls_bench_beside bad;
    CHECK(cls_gemm_cases_time_beside(cases, out_fwd, probe, 0.0, 0, 0, &bad) == CLS_ERR_INVALID_ARGUMENT,
          "0 runs accepted");
    CHECK_CONTAINS(cls_engine_error(e), "runs must be 1..64");
    CHECK(cls_gemm_cases_time_beside(cases, out_fwd, probe, 0.0, 0, CLS_BENCH_MAX_RUNS + 1, &bad) ==
              CLS_ERR_INVALID_ARGUMENT, "%d runs accepted", CLS_BENCH_MAX_RUNS + 1);
  }
  CHECK(cls_bench_probe_best(NULL) == 0, "no probe, best %g", cls_bench_probe_best(NULL));
  cls_gemm_cases_destroy(cases);
  cls_bench_probe_destroy(probe);
  cls_bench_probe_destroy(plain);
  clReleaseCommandQueue(q);
}

int main(void) {
  tst_env env;
  full_speed_rule();
  if (!tst_open(&env)) return check_finish("test_bench_beside");
  for (int i = 0; i < env.n_devices; i++) {
    printf("device %s\n", tst_device_name(&env, env.devices[i]));
    run_device(&env, env.devices[i]);
  }
  tst_close_env(&env);
  return check_finish("test_bench_beside");
}
