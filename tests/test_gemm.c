/* cls_gemm on every device: the own backend (kernels/gemm.cl) against a double-precision host GEMM over
 * odd shapes (m, n, k each of 1, 5, 6, 7, 15, 16, 17, 63, 64, 65) in every transpose, with offsets and
 * leading dimensions wider than the matrix, alpha and beta (beta 0 over a C of NaN), the packed-B path,
 * small chunks and bands (several launches per call, partial ones at the edges), A packed or read in
 * place, k = 0, the step's own shapes (sampled rows) and the edges of the narrow A^T B kernel; then the CLBlast backend through the same
 * entry points on some of them, and argument errors.
 * Tolerance per element: |C - ref| <= 2^-20 * (|alpha| * sum_k |a_ik b_kj| + |beta c_ij|) + 1e-12, i.e.
 * 16 ulp of the magnitudes summed (a float32 sum of k terms in any order is within k * 2^-24 of that
 * magnitude; random signs keep it near sqrt(k) * 2^-24, 2^-18.5 for the longest sum here, k = 2400).
 * Padding around and between the rows holds NaN (A, B) or a guard value (C): it must be neither read
 * nor written. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clspeech/base.h"
#include "clspeech/ops.h"
#include "ops/gemm.h"
#include "ops_test.h"

static const float C_GUARD = 777.0f;

static uint32_t rng = 12345u;
static float uniform(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)(rng >> 8) / 8388608.0f - 1.0f;
}

typedef struct gemm_case {
  bool ta, tb, packed;
  int m, n, k;
  float alpha, beta;
  size_t off, pad; /* view offset of every operand; leading dimension = width + pad */
  int sample;      /* rows of C checked: 0 all, else this many spread over m (first and last included) */
} gemm_case;

typedef struct stats {
  int cases, bad;
  double worst; /* largest |C - ref| / bound */
} stats;

/* A stored rows x cols matrix at `off`, leading dimension cols + pad, NaN around and between the rows. */
static float *host_matrix(int rows, int cols, size_t off, size_t pad, size_t *total, float fill_nan_or) {
  size_t ld = (size_t)cols + pad;
  *total = off + (size_t)rows * ld + 7;
  float *h = malloc(*total * sizeof(float));
  for (size_t i = 0; i < *total; i++) h[i] = fill_nan_or;
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) h[off + (size_t)r * ld + (size_t)c] = uniform();
  return h;
}

static void run_case(tst_env *env, int dev, cls_gemm_plan *plan, const gemm_case *g, stats *s) {
  cls_engine *e = env->engine;
  const int m = g->m, n = g->n, k = g->k;
  const int ar = g->ta ? k : m, ac = g->ta ? m : k, br = g->tb ? n : k, bc = g->tb ? k : n;
  size_t na = 0, nb = 0, nc = 0;
  float *a = host_matrix(ar, ac, g->off, g->pad, &na, NAN), *b = host_matrix(br, bc, g->off, g->pad, &nb, NAN);
  float *c0 = host_matrix(m, n, g->off, g->pad, &nc, C_GUARD);
  const size_t lda = (size_t)ac + g->pad, ldb = (size_t)bc + g->pad, ldc = (size_t)n + g->pad;
  if (g->beta == 0.0f)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) c0[g->off + (size_t)i * ldc + (size_t)j] = NAN; /* must not be read */
  cl_mem da = tst_buffer(env, dev, a, na * sizeof(float)), db = tst_buffer(env, dev, b, nb * sizeof(float));
  cl_mem dc = tst_buffer(env, dev, c0, nc * sizeof(float)), dp = NULL;
  cl_command_queue q = tst_queue(env, dev);
  cls_status st;
  if (g->packed) {
    size_t pf = cls_gemm_packed_b_floats(plan, (size_t)k, (size_t)n);
    dp = tst_buffer(env, dev, NULL, (g->off + pf + 1) * sizeof(float));
    st = cls_gemm_pack_b(plan, q, g->tb, (size_t)m, (size_t)k, (size_t)n, cls_buf_at(db, g->off), ldb,
                         cls_buf_at(dp, g->off));
    if (st == CLS_OK)
      st = cls_gemm_packed(plan, q, g->ta, (size_t)m, (size_t)n, (size_t)k, g->alpha, cls_buf_at(da, g->off), lda,
                           cls_buf_at(dp, g->off), g->beta, cls_buf_at(dc, g->off), ldc, NULL);
  } else {
    st = cls_gemm(plan, q, g->ta, g->tb, (size_t)m, (size_t)n, (size_t)k, g->alpha, cls_buf_at(da, g->off), lda,
                  cls_buf_at(db, g->off), ldb, g->beta, cls_buf_at(dc, g->off), ldc, NULL);
  }
  char what[160];
  snprintf(what, sizeof what, "%s %s%c%c m %d n %d k %d alpha %g beta %g offset %zu pad %zu",
           cls_gemm_backend_name(cls_gemm_get_backend(plan)), g->packed ? "packed " : "", g->ta ? 'T' : 'N',
           g->tb ? 'T' : 'N', m, n, k, (double)g->alpha, (double)g->beta, g->off, g->pad);
  CHECK(st == CLS_OK, "%s: %s", what, cls_engine_error(e));
  float *c = malloc(nc * sizeof(float));
  if (st == CLS_OK) tst_read(env, dev, dc, c, nc * sizeof(float));
  int bad = 0, guards = 0;
  double worst = 0;
  if (st == CLS_OK) {
    for (size_t i = 0; i < nc; i++) { /* everything outside C's m x n elements is untouched */
      size_t rel = i - g->off;
      bool inside = i >= g->off && rel / ldc < (size_t)m && rel % ldc < (size_t)n;
      if (!inside && c[i] != C_GUARD) guards++;
    }
    int rows = g->sample && g->sample < m ? g->sample : m;
    double *ref = malloc((size_t)n * sizeof(double)), *mag = malloc((size_t)n * sizeof(double));
    for (int ri = 0; ri < rows; ri++) {
      int i = rows == m ? ri : (int)((long long)ri * (m - 1) / (rows - 1));
      for (int j = 0; j < n; j++) ref[j] = mag[j] = 0;
      for (int p = 0; p < k; p++) {
        const double x = g->ta ? a[g->off + (size_t)p * lda + (size_t)i] : a[g->off + (size_t)i * lda + (size_t)p];
        for (int j = 0; j < n; j++) {
          const double y = g->tb ? b[g->off + (size_t)j * ldb + (size_t)p] : b[g->off + (size_t)p * ldb + (size_t)j];
          ref[j] += x * y;
          mag[j] += fabs(x * y);
        }
      }
      for (int j = 0; j < n; j++) {
        const double cij = c0[g->off + (size_t)i * ldc + (size_t)j];
        double want = g->alpha * ref[j], size = fabs(g->alpha) * mag[j];
        if (g->beta != 0.0f) {
          want += g->beta * cij;
          size += fabs(g->beta * cij);
        }
        const double got = c[g->off + (size_t)i * ldc + (size_t)j], bound = 0x1p-20 * size + 1e-12;
        double ratio = fabs(got - want) / bound;
        if (isnan(ratio)) ratio = INFINITY;
        if (ratio > worst) worst = ratio;
        if (!(ratio <= 1.0) && bad++ < 3)
          fprintf(stderr, "    %s: C[%d][%d] = %.9g, expected %.9g (bound %.3g)\n", what, i, j, got, want, bound);
      }
    }
    free(ref);
    free(mag);
  }
  CHECK(st != CLS_OK || bad == 0, "%s: %d elements outside the tolerance (worst %.3g of the bound)", what, bad, worst);
  CHECK(st != CLS_OK || guards == 0, "%s: %d elements outside C changed", what, guards);
  s->cases++;
  s->bad += bad > 0 || guards > 0 || st != CLS_OK;
  if (worst > s->worst) s->worst = worst;
  free(a);
  free(b);
  free(c0);
  free(c);
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  if (dp) clReleaseMemObject(dp);
}

static const int SIZES[] = {1, 5, 6, 7, 15, 16, 17, 63, 64, 65};
#define N_SIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

/* Every transpose over every (m, n, k) of SIZES, alpha, beta, offsets and padding varying with the case. */
static void odd_shapes(tst_env *env, int dev, cls_gemm_plan *plan, bool packed, const int *sizes, int n_sizes,
                       stats *s) {
  static const float alphas[] = {1.0f, -0.5f, 2.0f}, betas[] = {0.0f, 1.0f, 0.25f, 0.0f};
  int index = 0;
  for (int t = 0; t < 4; t++)
    for (int im = 0; im < n_sizes; im++)
      for (int in = 0; in < n_sizes; in++)
        for (int ik = 0; ik < n_sizes; ik++, index++) {
          gemm_case g = {t & 1, (t >> 1) & 1, packed, sizes[im], sizes[in], sizes[ik], alphas[index % 3],
                         betas[index % 4], (size_t)(index % 2) * 3, (size_t)(index % 5 == 0 ? 0 : index % 5 + 2), 0};
          run_case(env, dev, plan, &g, s);
        }
}

/* The own plan again with chunks of 2 panels, A read in place, packed when transposed, or always packed,
 * and C walked along rows (where an M tile's rows of A fit) or down columns in bands of 2 m tiles
 * (for an A of more than 8 tiles; partial ones at the edges), by case. */
static void small_chunks(tst_env *env, int dev, cls_gemm_plan *plan, stats *s) {
  int mr = 0, nr = 0, index = 0;
  cls_gemm_geometry(plan, &mr, &nr);
  static const int sizes[] = {1, 7, 17, 40, 65};
  for (int t = 0; t < 4; t++)
    for (int im = 0; im < 5; im++)
      for (int in = 0; in < 5; in++)
        for (int ik = 0; ik < 5; ik++, index++) {
          gemm_case g = {t & 1, (t >> 1) & 1, false, sizes[im], sizes[in], sizes[ik], 1.0f, index % 2 ? 1.0f : 0.0f,
                         1, 2, 0};
          cls_gemm_set_chunk_floats(plan, 2 * (size_t)g.k * (size_t)nr + 1);
          cls_gemm_set_band_bytes(plan, 2 * (size_t)mr * (size_t)g.k * sizeof(float));
          cls_gemm_set_pack_a(plan, (cls_gemm_pack_a)(index % 3));
          cls_gemm_set_row_walk_bytes(plan, (index / 3) % 2 ? 0 : (size_t)24 << 10);
          run_case(env, dev, plan, &g, s);
        }
  cls_gemm_set_row_walk_bytes(plan, (size_t)24 << 10);
}

/* gemm_few_chunks (the packed products on the few-rows tile whose B is past a quarter of the cache) on every
 * packed product it can take, its threshold at 0 bytes: the odd shapes (on AVX2's 4 x 24 tile, m of 1, 7, 15 and
 * 16: 1, 2 and 4 tiles, n of 63-65: whole panels and a narrower last one, which gemm_tile_few takes after it),
 * then k across its chunks of 128 steps (one short chunk, one whole, several with a partial last one) for 1, 2,
 * 4 and 5 tiles (5: past the most it takes, all to gemm_tile_few), a transposed A (not taken), m that the
 * device's tile pads less (not taken), and the recurrent products' shapes. A CPU device's plan must have it,
 * unless CLSPEECH_KERNEL_OPTIONS sets CLS_GEMM_FEW_CHUNK (0 turns it off, to measure against); otherwise the stage
 * is skipped, with a line. */
static void few_chunks(tst_env *env, int dev, cls_gemm_plan *plan, stats *s) {
  if (!cls_gemm_has_few_chunks(plan)) {
    const char *opts = getenv("CLSPEECH_KERNEL_OPTIONS");
    const bool cpu = cls_engine_device(env->engine, dev)->kind == CLS_DEVICE_CPU;
    CHECK(!cpu || (opts && strstr(opts, "CLS_GEMM_FEW_CHUNK")), "gemm_few_chunks is loaded on CPU device %d", dev);
    printf("  (no gemm_few_chunks on this device or build: its stage skipped)\n");
    return;
  }
  const size_t threshold = cls_gemm_set_few_chunks_bytes(plan, 0);
  odd_shapes(env, dev, plan, true, SIZES, N_SIZES, s);
  const gemm_case cases[] = {
      {false, false, true, 16, 96, 100, 1.0f, 0.0f, 0, 0, 0},    {false, false, true, 16, 96, 128, 1.0f, 1.0f, 0, 0, 0},
      {false, false, true, 13, 101, 129, -1.0f, 0.5f, 3, 2, 0}, {false, false, true, 8, 48, 300, 0.5f, 0.0f, 1, 0, 0},
      {false, false, true, 1, 24, 513, 1.0f, 0.0f, 0, 1, 0},    {false, false, true, 19, 77, 260, 1.0f, 1.0f, 0, 3, 0},
      {false, false, true, 5, 50, 200, 1.0f, 0.0f, 0, 0, 0},     {true, false, true, 16, 50, 200, 1.0f, 0.0f, 0, 0, 0},
      {false, false, true, 16, 2048, 512, 1.0f, 1.0f, 0, 0, 0},
      {false, false, true, 16, 512, 2048, 1.0f, 0.0f, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(env, dev, plan, &cases[i], s);
  cls_gemm_set_few_chunks_bytes(plan, threshold);
}

/* The shapes of a training step (H = 512 and 2048, B = 16, T = 150), rows of C sampled. */
static void model_shapes(tst_env *env, int dev, cls_gemm_plan *plan, stats *s) {
  const gemm_case cases[] = {
      {false, false, false, 16, 2048, 512, 1.0f, 1.0f, 0, 0, 0},   /* recurrent product, forward */
      {false, false, true, 16, 2048, 512, 1.0f, 1.0f, 5, 0, 0},    /* the same on the packed W_h */
      {false, false, true, 16, 512, 2048, 1.0f, 0.0f, 0, 0, 0},    /* recurrent product, backward */
      {false, false, false, 2400, 2048, 494, 1.0f, 0.0f, 0, 0, 24}, /* input projection (I = 494) */
      {true, false, false, 494, 512, 2400, 1.0f, 1.0f, 0, 0, 24},  /* layer 1 weight gradient */
      {true, false, false, 512, 2048, 2384, 1.0f, 0.0f, 0, 0, 24}, /* dW_h */
      {false, true, false, 2400, 512, 2048, 1.0f, 0.0f, 0, 0, 24}, /* LSTM dx */
      {true, false, false, 512, 29, 2400, 1.0f, 0.0f, 0, 0, 24},   /* output layer dW (gemm_tn_narrow) */
      {true, false, false, 2048, 29, 2400, 1.0f, 1.0f, 3, 0, 24},  /* the same at H = 2048, several strips an item */
      /* gemm_tn_narrow's edges: the widest C it takes (6 tiles) and one column more (gemm_tile), several strips
         per work-item with a partial last strip and item, k in blocks (256 steps on AVX-512) with a partial
         last one and the end of the rows prefetched ahead */
      {true, false, false, 1000, 36, 47, -0.5f, 0.25f, 1, 3, 0},
      {true, false, false, 1000, 37, 47, -0.5f, 0.25f, 1, 3, 0},
      {true, false, false, 1000, 30, 559, 2.0f, 0.0f, 2, 1, 0},
      /* and (AVX2's copied blocks of 32 steps) one short block, one whole block with no next, one step past it,
         two whole blocks, two and one step with a sixth tile of MR - 1 columns (n = 35), and a last tile of 2
         (n = 26). A read of B past a tile's columns feeds only rows of the tile never stored, so these cannot
         catch one: the one-pointer read's bounds rest on the kernel's width dispatch. */
      {true, false, false, 77, 13, 9, 1.0f, 0.5f, 1, 2, 0},
      {true, false, false, 130, 29, 32, 1.0f, 0.0f, 0, 1, 0},
      {true, false, false, 130, 29, 33, -1.0f, 1.0f, 3, 0, 0},
      {true, false, false, 130, 29, 64, 1.0f, 0.0f, 0, 1, 0},
      {true, false, false, 130, 35, 65, -1.0f, 1.0f, 3, 0, 0},
      {true, false, false, 130, 26, 65, 0.5f, 0.25f, 1, 2, 0},
      /* 4 strips per item with a partial last strip; 2 per item, the last item one partial strip; 4 per item,
         the last item 2 whole strips */
      {true, false, false, 507, 29, 70, 1.0f, 0.0f, 1, 0, 0},
      {true, false, false, 300, 29, 100, 1.0f, 0.5f, 0, 2, 0},
      {true, false, false, 992, 29, 65, 1.0f, 0.0f, 0, 0, 0},
      {false, false, false, 2400, 29, 512, 1.0f, 0.0f, 0, 0, 24},  /* output layer forward (gemm_tile_narrow) */
      {false, false, false, 2400, 29, 2048, 1.0f, 0.0f, 0, 0, 24}, /* the same at H = 2048 (column walk) */
      /* gemm_tile_narrow's edges (AVX-512: 8 x 32): its widest C, one column more (gemm_tile), B transposed,
         a last M tile of 5 rows, beta != 0 */
      {false, false, false, 317, 32, 129, 0.5f, -1.0f, 2, 3, 0},
      {false, false, false, 317, 33, 129, 0.5f, -1.0f, 2, 3, 0},
      {false, true, false, 317, 29, 70, 1.0f, 0.5f, 1, 2, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(env, dev, plan, &cases[i], s);
}

static void argument_errors(tst_env *env, int dev, cls_gemm_plan *plan) {
  cls_engine *e = env->engine;
  cl_command_queue q = tst_queue(env, dev);
  cl_mem big = tst_buffer(env, dev, NULL, 1024 * sizeof(float)), small = tst_buffer(env, dev, NULL, 16);
  cls_buf v = cls_buf_of(big);
  CHECK_INT(cls_gemm(plan, q, false, false, 4, 4, 4, 1.0f, v, 3, v, 4, 0.0f, v, 4, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "leading dimension 3");
  CHECK_INT(cls_gemm(plan, q, false, false, 4, 4, 4, 1.0f, v, 4, v, 4, 0.0f, cls_buf_of(small), 4, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "C [4 x 4");
  CHECK_INT(cls_gemm(plan, q, true, false, 4, 4, 4, 1.0f, cls_buf_of(NULL), 4, v, 4, 0.0f, v, 4, NULL),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_gemm_set_backend(plan, (cls_gemm_backend)7), CLS_ERR_INVALID_ARGUMENT);
  /* empty products enqueue nothing but still give an event */
  cl_event ev = NULL;
  CHECK_INT(cls_gemm(plan, q, false, false, 0, 4, 4, 1.0f, v, 4, v, 4, 0.0f, v, 4, &ev), CLS_OK);
  CHECK(ev != NULL, "an empty product gives an event");
  if (ev) {
    CHECK_INT(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
  }
  clReleaseMemObject(big);
  clReleaseMemObject(small);
}

/* k = 0: C = beta * C, with no A or B at all. */
static void empty_k(tst_env *env, int dev, cls_gemm_plan *plan) {
  float c[6] = {1, 2, 3, 4, 5, 6};
  cl_mem dc = tst_buffer(env, dev, c, sizeof c);
  cl_command_queue q = tst_queue(env, dev);
  cls_buf none = {NULL, 0};
  cls_status st = cls_gemm(plan, q, false, false, 2, 3, 0, 1.0f, none, 1, none, 3, 0.5f, cls_buf_of(dc), 3, NULL);
  CHECK(st == CLS_OK, "k = 0: %s", cls_engine_error(env->engine));
  float got[6];
  tst_read(env, dev, dc, got, sizeof got);
  for (int i = 0; i < 6; i++) CHECK(got[i] == 0.5f * c[i], "k = 0: C[%d] = %g, expected %g", i, got[i], 0.5 * c[i]);
  clReleaseMemObject(dc);
}

int main(void) {
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_gemm");
  for (int i = 0; i < env.n_devices; i++) {
    const int dev = env.devices[i];
    cls_gemm_plan *plan = NULL, *tiny = NULL;
    cls_status st = cls_gemm_create(env.engine, dev, &plan);
    if (st == CLS_OK) st = cls_gemm_create(env.engine, dev, &tiny);
    CHECK(st == CLS_OK, "gemm create: %s", cls_engine_error(env.engine));
    if (st != CLS_OK) break;
    int mr = 0, nr = 0;
    cls_gemm_geometry(plan, &mr, &nr);
    printf("device %d (%s): tile %d x %d, default backend %s\n", dev, tst_device_name(&env, dev), mr, nr,
           cls_gemm_backend_name(cls_gemm_get_backend(plan)));
    CHECK_INT(cls_gemm_set_backend(plan, CLS_GEMM_BACKEND_OWN), CLS_OK);
    CHECK_INT(cls_gemm_set_backend(tiny, CLS_GEMM_BACKEND_OWN), CLS_OK);
    stats own = {0, 0, 0}, own_packed = {0, 0, 0}, chunks = {0, 0, 0}, model = {0, 0, 0}, chunked = {0, 0, 0},
          blas = {0, 0, 0};
    odd_shapes(&env, dev, plan, false, SIZES, N_SIZES, &own);
    odd_shapes(&env, dev, plan, true, SIZES, N_SIZES, &own_packed);
    small_chunks(&env, dev, tiny, &chunks);
    model_shapes(&env, dev, plan, &model);
    few_chunks(&env, dev, plan, &chunked);
    empty_k(&env, dev, plan);
    argument_errors(&env, dev, plan);
    static const int few[] = {1, 7, 16, 17, 65};
    CHECK_INT(cls_gemm_set_backend(plan, CLS_GEMM_BACKEND_CLBLAST), CLS_OK);
    odd_shapes(&env, dev, plan, false, few, 5, &blas);
    odd_shapes(&env, dev, plan, true, few, 5, &blas);
    empty_k(&env, dev, plan);
    const stats *all[] = {&own, &own_packed, &chunks, &model, &chunked, &blas};
    const char *names[] = {"own, odd shapes", "own, odd shapes, packed B", "own, small chunks and bands",
                           "own, the step's shapes", "own, packed B in chunks (few_chunks)",
                           "clblast, odd shapes (plain and packed)"};
    for (int j = 0; j < 6; j++) {
      CHECK(all[j]->cases > 0, "%s: no case ran", names[j]);
      printf("  %-40s %5d cases, %d bad, worst %.3f of the bound\n", names[j], all[j]->cases, all[j]->bad,
             all[j]->worst);
    }
    cls_gemm_destroy(plan);
    cls_gemm_destroy(tiny);
  }
  tst_close_env(&env);
  return check_finish("test_gemm");
}
