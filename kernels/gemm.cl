/* The own GEMM (engine/ops/gemm.c chooses it per device and shape class: by default on CPU devices,
 * CLBlast elsewhere, or whichever `clspeech bench --tune` measured faster): row-major
 * C [m, n] = alpha * op(A) [m, k] * op(B) [k, n] + beta * C, op a transpose or not.
 *
 * B is packed first into panels of NR = NV x W columns, [n_tile][k][NR], by gemm_pack_b (which absorbs
 * B's transpose); the last panel is either padded with zeros to NR columns (the scratch of one call)
 * or holds only the n % NR columns left ([k][n % NR]), so that a B packed for many calls is exactly
 * k x n floats. gemm_tile then computes MR x NR tiles of C, several per work-item, with work-groups of
 * one: a CPU driver (PoCL) compiles the work-item as a plain loop, the MR x NV float-W accumulators stay
 * in vector registers (every index below is a compile-time constant), and each step
 * of k is NV vector loads of the B panel, MR broadcasts of A and MR x NV fused multiply-adds. A is read
 * through a tile, a row and a k stride, which covers it in place (either layout) and packed by
 * gemm_pack_a into [m_tile][k][MR] (the host packs a transposed A that many B panels will read); the
 * rows of the last tile past m read row m-1 again and are not stored. The grid walks C along rows (an
 * M tile against several B panels) or down columns in bands (see gemm_tile). The pair gemm_pack_b and
 * gemm_tile is built three times (gemm_tile.h): for the device's tile; as gemm_pack_b_narrow and
 * gemm_tile_narrow for a thin one (CLS_GEMM_MR_NARROW x NR/2) that a C of at most NR/2 columns takes; and as
 * gemm_pack_b_few and gemm_tile_few for products of few rows on a packed B (CLS_GEMM_MR_FEW x
 * CLS_GEMM_NV_FEW, below).
 *
 * Tunables (-D, per device from engine/device/kernel_options.c): CLS_GEMM_W the vector width (2, 4, 8
 * or 16; the device's preferred float width), CLS_GEMM_MR rows per tile, CLS_GEMM_NV vectors per
 * tile row. MR x NV accumulators plus NV loads and a broadcast should fit the register file: 6 x 2 of
 * float8 on AVX2 (16 registers), 6 x 4 of float16 on AVX-512 (32 registers). The host reads MR and NR
 * back from gemm_geometry's reqd_work_group_size, so host and kernels always agree. */
#include "common.h"
#include "work_items.h"

#include "gemm_shape.h"

/* 1: every tile adds one to its first element: a deliberately wrong build, for the tests of the tuner's result
 * check (`clspeech bench --tune_try -DCLS_GEMM_FAULT=1` must be rejected, never stored). */
#ifndef CLS_GEMM_FAULT
#define CLS_GEMM_FAULT 0
#endif

/* 1: gemm_tile's k loop has its own forms for A's two common strides (gemm_tile.h); 0: the general one only,
 * to measure them against. */
#ifndef CLS_GEMM_A_STRIDES
#define CLS_GEMM_A_STRIDES 1
#endif
/* 1: the steps left over by the unrolled loop run before it, not in a remainder loop after it (gemm_tile.h);
 * 0: the loop under GEMM_K_UNROLL_PRAGMA and the compiler's remainder loop, to measure against. */
#ifndef CLS_GEMM_K_PEEL
#define CLS_GEMM_K_PEEL 1
#endif
/* A whole row of a tile into C: NV vectors X[0..NV) to the (unaligned) row at ROW, as alpha * X + beta * C, C
   never read when beta == 0 and no multiply when alpha is 1 as well (the short-k products' stores weigh:
   1.01-1.03x on out_dx, docs/lab-notes/gemm-kernels.md). gemm_tile and gemm_few_chunks store through it. */
#define GEMM_STORE_ROW(ROW, X, NV)                                                    \
  do {                                                                                \
    __global gemm_uvec *rv_ = (__global gemm_uvec *)(ROW);                            \
    if (beta == 0.0f && alpha == 1.0f) {                                              \
      _Pragma("unroll") for (int v_ = 0; v_ < (NV); v_++) rv_[v_] = (X)[v_];         \
    } else if (beta == 0.0f) {                                                        \
      _Pragma("unroll") for (int v_ = 0; v_ < (NV); v_++) rv_[v_] = alpha * (X)[v_]; \
    } else {                                                                          \
      _Pragma("unroll") for (int v_ = 0; v_ < (NV); v_++)                             \
          rv_[v_] = alpha * (X)[v_] + beta * rv_[v_];                                 \
    }                                                                                 \
  } while (0)

/* a * b + c contracted: one fused multiply-add where the device has them (mad() is a multiply and an
 * add on PoCL, and fma() would be emulated where there is no hardware FMA). */
#pragma OPENCL FP_CONTRACT ON
#define GEMM_FMA(a, b, c) ((a) * (b) + (c))

/* The narrow geometry (gemm_tile_narrow): half the vectors of a row (at least one) and CLS_GEMM_MR_NARROW
 * rows, 8 unless the options set it: for the output layer's forward product (n = 29, A read in place) on
 * AVX-512, 6, 8 and 10 rows measured alike and 12 rows 1.27-1.53x slower at k = 2048 (more rows of A
 * streaming at once; alike at k = 512): bench_gemm --versus, docs/lab-notes/gemm-kernels.md. */
#ifndef CLS_GEMM_MR_NARROW
#define CLS_GEMM_MR_NARROW CLS_GEMM_MR_NARROW_DEFAULT
#endif
#if CLS_GEMM_MR_NARROW < CLS_GEMM_MR_NARROW_MIN || CLS_GEMM_MR_NARROW > CLS_GEMM_MR_NARROW_MAX
#error "CLS_GEMM_MR_NARROW out of its range (own_tunables.h)"
#endif
#define GEMM_MR_NARROW CLS_GEMM_MR_NARROW
#define GEMM_NV_NARROW (GEMM_NV > 1 ? GEMM_NV / 2 : 1)


/* The pack kernels (but gemm_pack_a's transposed case, below): one work-item (work-groups of one) per
 * (tile, block of kb steps of k), so that each writes kb x NR (or kb x MR) consecutive floats of its panel
 * and reads whole runs of its source; tiles are the fast grid dimension, so that work-items run one after
 * the other read neighbouring columns of the same rows. (A work-item per single k step spent more on
 * work-group dispatch than on copying: twice the time at the weight-gradient shapes.) gemm_pack_b is in
 * gemm_tile.h, included below. */

/* gemm_pack_a: packed [(mt * k + kk) * MR + r] = op(A)[mt * MR + r][kk] (0 past m); op(A)[i][kk] is
 * a[i*lda + kk], or a[kk*lda + i] when trans. A transposed A (stored [k][m], the weight gradients' x^T) is
 * packed a block of kb rows per work-item, each row read whole and every tile's MR floats of it written
 * with vector stores (GEMM_PACK_MR): against a work-item per (tile, block of 256 rows), which read 24
 * bytes of each row with scalar copies, dense_dw 1.05-1.12x and dense1_dw 1.06-1.07x at H = 512, alike at
 * H = 2048 (bench_gemm --versus, AVX-512, the two kernels in one engine; 4 and 16 rows per block alike, 64
 * slower). Otherwise (A packed though not transposed: only when the host forces it) a work-item per (tile,
 * block of kb steps of k). */
/* Copy MR floats from s to d: whole vectors of 16, 8, 4, 2, 1 by MR's bits (the stores through gemm_uN). */
#define GEMM_PACK_MR(d, s)                                                                                     \
  do {                                                                                                         \
    if (GEMM_MR & 16) *(__global gemm_u16 *)(d) = vload16(0, (s));                                           \
    if (GEMM_MR & 8) *(__global gemm_u8 *)((d) + (GEMM_MR & 16)) = vload8(0, (s) + (GEMM_MR & 16));           \
    if (GEMM_MR & 4) *(__global gemm_u4 *)((d) + (GEMM_MR & 24)) = vload4(0, (s) + (GEMM_MR & 24));           \
    if (GEMM_MR & 2) *(__global gemm_u2 *)((d) + (GEMM_MR & 28)) = vload2(0, (s) + (GEMM_MR & 28));           \
    if (GEMM_MR & 1) (d)[GEMM_MR & 30] = (s)[GEMM_MR & 30];                                                  \
  } while (0)

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void gemm_pack_a(
    const int m, const int k, __global const float *a, const int a_off, const int lda, const int trans,
    __global float *packed, const int p_off, const int kb) {
  const int m_tiles = (m + GEMM_MR - 1) / GEMM_MR;
  if (trans) { /* the grid: 1 x ceil(k / kb) */
    const int k0 = (int)get_global_id(1) * kb;
    if (get_global_id(0) > 0 || k0 >= k) return;
    const int steps = min(kb, k - k0), full = m / GEMM_MR;
    const size_t panel = (size_t)k * GEMM_MR; /* floats between one tile's panel and the next's */
    __global const float *src = a + a_off + (size_t)k0 * (size_t)lda;
    __global float *dst = packed + p_off + (size_t)k0 * GEMM_MR;
    for (int kk = 0; kk < steps; kk++, src += lda, dst += GEMM_MR) {
      __global float *d = dst;
      for (int mt = 0; mt < full; mt++, d += panel) GEMM_PACK_MR(d, src + mt * GEMM_MR);
      if (full < m_tiles) /* the last tile, past m: zeros */
        for (int r = 0; r < GEMM_MR; r++) d[r] = full * GEMM_MR + r < m ? src[full * GEMM_MR + r] : 0.0f;
    }
    return;
  }
  const int mt = (int)get_global_id(0), k0 = (int)get_global_id(1) * kb;
  if (mt >= m_tiles || k0 >= k) return;
  const int steps = min(kb, k - k0), i0 = mt * GEMM_MR, rows = min(GEMM_MR, m - i0);
  __global float *dst = packed + p_off + ((size_t)mt * (size_t)k + (size_t)k0) * GEMM_MR;
  __global const float *src = a + a_off + (size_t)i0 * (size_t)lda + (size_t)k0;
  for (int kk = 0; kk < steps; kk++, dst += GEMM_MR)
    for (int r = 0; r < GEMM_MR; r++) dst[r] = r < rows ? src[(size_t)r * (size_t)lda + (size_t)kk] : 0.0f;
}

/* A prefetch of one cache line into the L2 cache (not L1: see gemm_tn_narrow.h): clang's builtin where the
 * compiler has it (PoCL: the CPU's prefetcht1), else OpenCL's prefetch(), so that every device builds; none
 * with CLS_PLAIN_BUILTINS, which the engine builds with when a driver cannot create a kernel that holds
 * the builtin (Oclgrind cannot run llvm.prefetch; engine/device/program.c). */
#if defined(CLS_PLAIN_BUILTINS)
#define GEMM_PREFETCH(p) ((void)(p))
#define GEMM_PREFETCH_W(p) ((void)(p))
#elif defined(__has_builtin)
#if __has_builtin(__builtin_prefetch)
#define GEMM_PREFETCH(p) __builtin_prefetch((p), 0, 2)
#define GEMM_PREFETCH_W(p) __builtin_prefetch((p), 1, 3) /* a line about to be written: into L1, owned */
#endif
#endif
#ifndef GEMM_PREFETCH
#define GEMM_PREFETCH(p) prefetch((p), 1)
#define GEMM_PREFETCH_W(p) prefetch((p), 1)
#endif
/* gemm_tile prefetches the lines of each tile of C before a k loop of at most this many steps: a product
 * that short writes C about as fast as it computes it, and waiting for each line's ownership at the store
 * cost the output layer's dx (k = 29) 3-13 % (bench_gemm --versus, AVX-512, both H). */
#ifndef CLS_GEMM_C_PREFETCH_K
#define CLS_GEMM_C_PREFETCH_K 64
#endif

/* The packed-panel kernels, once per tile geometry (gemm_tile.h): the device's; the narrow one for a C of
 * at most NR/2 columns (the output layer's forward product, n = 29: an 8 x 32 tile there wastes 3 of 32
 * columns where 6 x 64 wastes 35 of 64); and the one for few rows on a packed B. */
#define TILE_MR GEMM_MR
#define TILE_NV GEMM_NV
#define TILE_NAME(name) name
#include "gemm_tile.h"
#define TILE_MR GEMM_MR_NARROW
#define TILE_NV GEMM_NV_NARROW
#define TILE_NAME(name) name##_narrow
#include "gemm_tile.h"
#define TILE_MR CLS_GEMM_MR_FEW
#define TILE_NV CLS_GEMM_NV_FEW
#define TILE_NAME(name) name##_few
#include "gemm_tile.h"

/* gemm_tn_narrow, the narrow A^T B product of a long k (the output layer's weight gradient). */
#include "gemm_tn_narrow.h"

/* gemm_few_chunks, the products of few rows on a long packed B panel (the LSTM's recurrent products). */
#include "gemm_few_chunks.h"
