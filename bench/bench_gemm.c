/* The GEMM entry point's backends side by side on each OpenCL device: every GEMM shape of a training
 * step (cls_bench_gemm_shapes: dense, LSTM input and recurrent products, weight gradients) timed through
 * cls_gemm with the own kernels and with CLBlast, in GFLOP/s and % of the measured FMA peak. The
 * backends take turns run by run (so that a busy machine slows both alike); each figure is the median
 * of --runs, after one warm-up each. The recurrent products run on a B packed beforehand, as the LSTM
 * does. --check compares each backend's result with a double host GEMM first (sampled rows).
 *   bench_gemm [--n_hidden 512,2048] [--batch 16] [--time 150] [--runs 5] [--devices SEL]
 *              [--backends own,clblast] [--shapes NAME,NAME] [--check] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/bench.h"

#define MAX_RUNS 64

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, compare_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void usage(void) {
  fprintf(stderr, "usage: bench_gemm [--n_hidden 512,2048] [--batch 16] [--time 150] [--runs 5] [--devices SEL]\n"
                  "                  [--backends own,clblast] [--shapes NAME,NAME] [--check]\n");
}

static double gflops(const cls_gemm_shape *s, double ms) { return ms > 0 ? cls_gemm_flops(s) / (ms * 1e6) : 0; }

/* Whether `name` is one of the comma-separated `list` (NULL: every name). */
static int listed(const char *list, const char *name) {
  if (!list) return 1;
  size_t len = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += len)
    if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return 1;
  return 0;
}

static int bench_model(cls_engine *e, int dev, int H, int B, int T, int runs, const cls_gemm_backend *backends,
                       int n_backends, int check, double peak, const char *only) {
  cls_gemm_shape all[CLS_BENCH_MAX_SHAPES], shapes[CLS_BENCH_MAX_SHAPES];
  const int n_all = cls_bench_gemm_shapes(H, B, T, all);
  int n = 0;
  for (int i = 0; i < n_all; i++)
    if (listed(only, all[i].name)) shapes[n++] = all[i];
  if (n == 0) return 0;
  cl_command_queue q = NULL;
  cls_gemm_cases *cases = NULL;
  cls_status st = cls_bench_queue(e, dev, &q);
  if (st == CLS_OK) st = cls_gemm_cases_create(e, dev, q, shapes, n, &cases);
  if (st != CLS_OK) {
    fprintf(stderr, "bench_gemm: %s\n", cls_engine_error(e));
    if (q) clReleaseCommandQueue(q);
    return 1;
  }
  printf("\n  H=%d, B=%d, T=%d; %% of the measured FMA peak (%.1f GFLOP/s)\n", H, B, T, peak);
  printf("  %-13s %-20s %5s", "shape", "m x n x k", "calls");
  for (int b = 0; b < n_backends; b++)
    printf(" | %-7s %9s %8s %6s", cls_gemm_backend_name(backends[b]), "ms", "GFLOP/s", "%");
  printf("%s\n", n_backends == 2 ? " | speed-up" : "");
  double step_ms[2] = {0, 0}, step_flops = 0;
  int failed = 0;
  for (int i = 0; i < n && st == CLS_OK; i++) {
    const cls_gemm_shape *s = &shapes[i];
    double t[2][MAX_RUNS], ms[2] = {0, 0};
    for (int b = 0; b < n_backends && st == CLS_OK && check; b++) {
      bool ok = false;
      char detail[256];
      st = cls_gemm_cases_set_backend(cases, backends[b]);
      if (st == CLS_OK) st = cls_gemm_cases_check(cases, i, &ok, detail, sizeof detail);
      if (st == CLS_OK && !ok) {
        fprintf(stderr, "bench_gemm: %s on %s: wrong result: %s\n", s->name, cls_gemm_backend_name(backends[b]),
                detail);
        failed = 1;
      }
    }
    for (int r = 0; r < runs && st == CLS_OK; r++)
      for (int b = 0; b < n_backends && st == CLS_OK; b++) {
        st = cls_gemm_cases_set_backend(cases, backends[b]);
        if (st == CLS_OK) st = cls_gemm_cases_time(cases, i, r == 0 ? 1 : 0, 1, &t[b][r], NULL);
      }
    if (st != CLS_OK) break;
    char mnk[48];
    snprintf(mnk, sizeof mnk, "%d x %d x %d%s%s", s->m, s->n, s->k, s->trans_a ? " At" : s->trans_b ? " Bt" : "",
             s->packed_b ? " P" : "");
    printf("  %-13s %-20s %5d", s->name, mnk, s->calls);
    for (int b = 0; b < n_backends; b++) {
      ms[b] = median(t[b], runs);
      step_ms[b] += s->calls * ms[b];
      printf(" | %-7s %9.3f %8.1f %6.1f", "", ms[b], gflops(s, ms[b]), peak > 0 ? 100 * gflops(s, ms[b]) / peak : 0);
    }
    if (n_backends == 2) printf(" | %7.2fx", ms[0] > 0 ? ms[1] / ms[0] : 0);
    printf("\n");
    fflush(stdout);
    step_flops += s->calls * cls_gemm_flops(s);
  }
  if (st == CLS_OK) {
    printf("  %-13s %-20s %5s", "whole step", "sum of calls x ms", "");
    for (int b = 0; b < n_backends; b++) {
      double g = step_ms[b] > 0 ? step_flops / (step_ms[b] * 1e6) : 0;
      printf(" | %-7s %9.1f %8.1f %6.1f", "", step_ms[b], g, peak > 0 ? 100 * g / peak : 0);
    }
    if (n_backends == 2) printf(" | %7.2fx", step_ms[0] > 0 ? step_ms[1] / step_ms[0] : 0);
    printf("\n");
  } else {
    fprintf(stderr, "bench_gemm: %s\n", cls_engine_error(e));
  }
  cls_gemm_cases_destroy(cases);
  clReleaseCommandQueue(q);
  return st != CLS_OK || failed;
}

int main(int argc, char **argv) {
  const char *hidden = "512,2048", *devices = NULL, *backend_list = "own,clblast", *only = NULL;
  int B = 16, T = 150, runs = 5, check = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--check")) {
      check = 1;
      continue;
    }
    if (!v) {
      usage();
      return 2;
    }
    if (!strcmp(a, "--n_hidden")) hidden = v;
    else if (!strcmp(a, "--batch")) B = atoi(v);
    else if (!strcmp(a, "--time")) T = atoi(v);
    else if (!strcmp(a, "--runs")) runs = atoi(v);
    else if (!strcmp(a, "--devices")) devices = v;
    else if (!strcmp(a, "--backends")) backend_list = v;
    else if (!strcmp(a, "--shapes")) only = v;
    else {
      usage();
      return 2;
    }
    i++;
  }
  if (B < 1 || T < 1 || runs < 1 || runs > MAX_RUNS) {
    usage();
    return 2;
  }
  cls_gemm_backend backends[2];
  int n_backends = 0;
  if (strstr(backend_list, "own")) backends[n_backends++] = CLS_GEMM_BACKEND_OWN;
  if (strstr(backend_list, "clblast")) backends[n_backends++] = CLS_GEMM_BACKEND_CLBLAST;
  if (n_backends == 0) {
    usage();
    return 2;
  }
  cls_engine *e = NULL;
  if (cls_engine_create(NULL, &e) != CLS_OK) {
    fprintf(stderr, "bench_gemm: %s\n", cls_engine_error(e));
    return 1;
  }
  int sel[64], n_sel = 0;
  cls_status st = cls_engine_select(e, devices, sel, 64, &n_sel);
  if (st == CLS_OK) st = cls_engine_prepare(e, sel, &n_sel);
  if (st != CLS_OK) {
    fprintf(stderr, "bench_gemm: %s\n", cls_engine_error(e));
    cls_engine_destroy(e);
    return 1;
  }
  int rc = 0;
  for (int d = 0; d < n_sel; d++) {
    const cls_device_info *info = cls_engine_device(e, sel[d]);
    cls_bench_config cfg = {512, B, T, runs, NULL, NULL};
    cls_bench_peak peak;
    if (cls_bench_peak_run(e, sel[d], &cfg, &peak) != CLS_OK) {
      fprintf(stderr, "bench_gemm: %s\n", cls_engine_error(e));
      rc = 1;
      continue;
    }
    printf("device %d:%d %s (%s): FMA peak %.1f GFLOP/s, device copy %.1f GB/s; build options %s\n",
           info->platform_index, info->device_index, info->name, info->platform_version, peak.fma_gflops, peak.copy_gbs,
           cls_engine_build_options(e, sel[d]));
    for (const char *h = hidden; *h;) {
      int H = atoi(h);
      if (H > 0) rc |= bench_model(e, sel[d], H, B, T, runs, backends, n_backends, check, peak.fma_gflops, only);
      const char *comma = strchr(h, ',');
      h = comma ? comma + 1 : h + strlen(h);
    }
  }
  cls_engine_destroy(e);
  return rc;
}
