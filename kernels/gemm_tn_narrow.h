/* gemm_tn_narrow: C [m, n] = alpha * A^T * B + beta * C for a narrow C (n <= CLS_GEMM_NARROW_TILES x MR) and a long
 * k, A stored [k, m] and B [k, n], neither packed by a pass of its own: the output layer's weight gradient x^T dy
 * (m = H, n = 29, k = B*T), where gemm_tile would first pack x^T, a pass over all of x as long as the product
 * itself (form 1 below copies blocks of A's rows within the kernel). gemm.cl includes this file once, after its
 * shared macros. A work-item computes the transpose of NARROW_STRIPS strips of NR rows of C: NR of m, vector loads
 * from A's rows, against the n columns of C in tiles of MR, broadcasts from B's rows, so that n pads to a multiple
 * of MR rather than of NR (29 to 30, not 32), and a last tile of MR - 1 columns computes only those (29: four tiles
 * of 6 and one of 5; form 0's partial last strip, past m, computes MR). The tiles' accumulators wait in private
 * memory between blocks of k. Rows past m and columns past n are read clamped or as zeros and never stored; beta
 * == 0 never reads C. Two forms, chosen by CLS_GEMM_NARROW_COPY:
 *
 * 0, A in place (the default; measured on AVX-512). Strip after strip, the work-item walks k in blocks of
 * CLS_GEMM_NARROW_KB steps, and each tile of C runs over the whole block: the first tile's pass reads the strip's
 * piece of A from memory, prefetching the row CLS_GEMM_NARROW_AHEAD steps ahead into L2 (A is read down its
 * columns, one row per page at H = 2048, which the hardware prefetchers do not follow), the others read it from L2
 * (not L1: A's rows, lda apart and lda a power of two for H a power of two, compete for a few L1 sets). Measured
 * (bench_gemm --versus, AVX-512) against the first forms, which prefetched a whole block ahead in one burst and ran
 * every tile over 16 or 32 steps: into L2 rather than L1 1.18-1.30x, A read in place rather than copied into
 * private memory 1.12x, blocks of 32 rather than 16 1.05-1.10x, then blocks of 256 run tile by tile with the
 * prefetch in the first pass 1.04-1.12x (the short passes' own cost, more than reading A, held the arithmetic at
 * about 70 % of peak; 128 and 512 alike). A work-item sweeping whole rows of A over a chunk of k (partial sums
 * added by a second kernel) measured 0.67-0.74x.
 *
 * 1, copied blocks (the options table's AVX2 row; sized for NR = 16: 17 KiB of private memory with 4 strips, twice
 * that with AVX-512's NR = 64, past a 32 KiB L1). The work-item walks k in blocks of CLS_GEMM_NARROW_COPY_KB steps,
 * all its strips per block: it first copies the block's rows of A (its run of strips x NR columns of each row) into
 * private memory as [strip][step][NR], then runs every (strip, tile) pass over the copy, contiguous and in L1,
 * where the rows in place, lda apart, all fall in the same L1 sets (at H = 2048, 8 of a strip's rows fit). While
 * the passes run, each prefetches its share of the next block's rows into L2 (strip s's lines of rows t, t + tiles,
 * ... in tile t's pass), so that the next copy reads from cache. Against form 0 on 2 Zen 3 cores (bench_gemm
 * --shapes out_dw --versus "cpu=-DCLS_GEMM_NARROW_COPY=0", 2 rounds of 31 runs): 1.15-1.16x at H = 512 (0.50
 * against 0.57-0.59 ms, 71 against 61 % of the FMA peak) and 1.82-1.83x at H = 2048 (2.04 against 3.72 ms, 70
 * against 38.5 %). Without the copy (wrong results, as a bound) the passes ran at 86 % of the peak, 77-81 % with
 * the prefetches: the copy costs about a tenth. Then its copy moved whole vectors (CLS_GEMM_NARROW_COPY_VEC) and
 * its tiles read B through one row pointer (CLS_GEMM_NARROW_B_ROW): 1.08-1.12x together (--versus
 * "cpu=-DCLS_GEMM_NARROW_B_ROW=0 -DCLS_GEMM_NARROW_COPY_VEC=0", 4 rounds), 74-79 % of the peak at H = 512 and
 * 73-77 % at 2048. Tried and not kept (docs/lab-notes/gemm-kernels.md): the copy within the first tile's pass,
 * the prefetch in one burst in the first pass, in row order, on every step or two blocks ahead, the next block
 * copied during this one's passes or strip by strip between them, blocks of 16, 48, 64 or 128 steps, 1, 2 or 8 to
 * 32 strips per work-item, the pass loop unrolled. */

#define NARROW_STRIPS CLS_GEMM_NARROW_STRIPS(GEMM_NR)
#ifndef CLS_GEMM_NARROW_KB
#define CLS_GEMM_NARROW_KB 256 /* form 0's steps of k per block: one pass of each tile */
#endif
#ifndef CLS_GEMM_NARROW_AHEAD
#define CLS_GEMM_NARROW_AHEAD CLS_GEMM_NARROW_AHEAD_DEFAULT /* rows of A form 0's first tile's pass prefetches ahead */
#endif
/* 1: a last tile of MR - 1 columns of C (29 = 4 x 6 + 5) runs MR - 1 broadcasts per step instead of MR with the
   last column read twice and never stored: 1.01-1.03x with form 1 and 1.01-1.04x with form 0 at both H (bench_gemm
   --shapes out_dw --versus "cpu=-DCLS_GEMM_NARROW_SHORT_TILE=0", AVX2, 2 rounds of 31 runs, the same commit), a
   thirtieth of the multiply-adds. 0: every tile MR wide, to measure against. */
#ifndef CLS_GEMM_NARROW_SHORT_TILE
#define CLS_GEMM_NARROW_SHORT_TILE 1
#endif
#if CLS_GEMM_NARROW_KB < 1 || CLS_GEMM_NARROW_AHEAD < CLS_GEMM_NARROW_AHEAD_MIN || \
    CLS_GEMM_NARROW_AHEAD > CLS_GEMM_NARROW_AHEAD_MAX
#error "CLS_GEMM_NARROW_KB must be positive, CLS_GEMM_NARROW_AHEAD in its range (own_tunables.h)"
#endif
#ifndef CLS_GEMM_NARROW_COPY
#define CLS_GEMM_NARROW_COPY CLS_GEMM_NARROW_COPY_DEFAULT /* 1: the copied-blocks form (the options table's AVX2 row) */
#endif
#if CLS_GEMM_NARROW_COPY < CLS_GEMM_NARROW_COPY_MIN || CLS_GEMM_NARROW_COPY > CLS_GEMM_NARROW_COPY_MAX
#error "CLS_GEMM_NARROW_COPY must be 0 or 1"
#endif
/* 1: a tile of MR columns, or of MR - 1 with CLS_GEMM_NARROW_SHORT_TILE, reads B's row through one pointer at
   constant offsets (the tile's columns all exist), instead of MR pointers clamped to the last column (kept for
   a narrower last tile), which held six index registers and pushed the step's other pointers onto the stack.
   Form 1 on 2 Zen 3 cores (bench_gemm --shapes out_dw --versus "cpu=-DCLS_GEMM_NARROW_B_ROW=0", 2 rounds of 31
   runs, docs/lab-notes/gemm-kernels.md): 1.09-1.13x (alone, with the vstoreN copy on both sides, 1.02-1.05x; the
   whole-vector copy alone 0.95-0.98x); form 0 there 0.98-0.99x, and it is not measured on AVX-512, whose row
   takes form 0: the default follows the form (0: the clamped pointers for every tile). */
#ifndef CLS_GEMM_NARROW_B_ROW
#define CLS_GEMM_NARROW_B_ROW CLS_GEMM_NARROW_COPY
#endif
#ifndef CLS_GEMM_NARROW_COPY_KB
#define CLS_GEMM_NARROW_COPY_KB 32 /* the copied form's steps of k per block */
#endif
/* 1: form 1's copy of a whole item's run moves whole vectors, one unaligned load from A and one aligned store
   into the block each, the strips unrolled; 0: through vloadN / vstoreN in a loop over the strips, which PoCL's
   compiler split into 16-byte halves (objdump of the cached kernel). With B_ROW 1.03-1.04x at H = 2048,
   0.98-1.00x at 512 (--versus "cpu=-DCLS_GEMM_NARROW_COPY_VEC=0", 2 rounds of 31 runs); without, 0.95-0.98x. */
#ifndef CLS_GEMM_NARROW_COPY_VEC
#define CLS_GEMM_NARROW_COPY_VEC 1
#endif
#if CLS_GEMM_NARROW_COPY_KB < 1
#error "CLS_GEMM_NARROW_COPY_KB must be positive"
#endif
#define NARROW_COPY_KB CLS_GEMM_NARROW_COPY_KB
/* one step of k of a strip's tile: ROWS columns of B's row (broadcasts, through the pointers br clamped to the
   tile's last column) times the strip's vectors av */
#define TN_NARROW_STEP_ROWS(av, ROWS)                                                                     \
  do {                                                                                                    \
    _Pragma("unroll") for (int r = 0; r < (ROWS); r++) {                                                  \
      const gemm_vec bv = (gemm_vec)(*br[r]);                                                             \
      br[r] += ldb;                                                                                       \
      _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++) acc[r][v] = GEMM_FMA(bv, (av)[v], acc[r][v]);  \
    }                                                                                                     \
  } while (0)

/* The same step with B's row read through the one pointer bp at offsets 0 .. ROWS - 1 (all of them columns of
   the tile), bp then moved to the next row */
#define TN_NARROW_STEP_B_ROW(av, ROWS)                                                                    \
  do {                                                                                                    \
    _Pragma("unroll") for (int r = 0; r < (ROWS); r++) {                                                  \
      const gemm_vec bv = (gemm_vec)(bp[r]);                                                              \
      _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++) acc[r][v] = GEMM_FMA(bv, (av)[v], acc[r][v]);  \
    }                                                                                                     \
    bp += ldb;                                                                                            \
  } while (0)

/* A tile's pass PASS(ROWS, STEP) with ROWS its broadcasts per step and STEP how it reads B: a tile of MR columns,
   or MR - 1 (the tile's cols) when that is the last, through bp; a narrower last tile through the clamped br,
   and every tile so with CLS_GEMM_NARROW_B_ROW 0 */
#define TN_NARROW_BY_WIDTH(PASS)                                                                     \
  if (CLS_GEMM_NARROW_B_ROW && cols == GEMM_MR) {                                                    \
    PASS(GEMM_MR, TN_NARROW_STEP_B_ROW)                                                              \
  } else if (CLS_GEMM_NARROW_SHORT_TILE && GEMM_MR > 1 && cols == GEMM_MR - 1) {                    \
    if (CLS_GEMM_NARROW_B_ROW) {                                                                     \
      PASS(GEMM_MR - 1, TN_NARROW_STEP_B_ROW)                                                        \
    } else {                                                                                         \
      PASS(GEMM_MR - 1, TN_NARROW_STEP_ROWS)                                                         \
    }                                                                                                \
  } else {                                                                                           \
    PASS(GEMM_MR, TN_NARROW_STEP_ROWS)                                                               \
  }

/* The kernel's arguments, and the work-item's strips (both forms): s_n strips of NR rows of C from row
   `first`, against n_tiles tiles of MR columns. */
#define TN_NARROW_ARGS                                                                                           \
  const int m, const int n, const int k, const int strips, const float alpha, __global const float *a,          \
      const int a_off, const int lda, __global const float *b, const int b_off, const int ldb, const float beta, \
      __global float *c, const int c_off, const int ldc
#define TN_NARROW_ITEM                                                         \
  const int s_count = min(strips, NARROW_STRIPS);                              \
  const int first = (int)get_global_id(0) * s_count * GEMM_NR;                 \
  if (first >= m) return;                                                      \
  const int n_tiles = min((n + GEMM_MR - 1) / GEMM_MR, CLS_GEMM_NARROW_TILES); \
  const int s_n = min(s_count, (m - first + GEMM_NR - 1) / GEMM_NR)
/* A tile's accumulators P ([MR][NV]) set to zero; tile t's pass over the block from step k0: its columns of
   C (j0, cols), its accumulators from P and B's row pointers, and at its end the accumulators back into P */
#define TN_NARROW_ZERO(P)                                                                                  \
  _Pragma("unroll") for (int r = 0; r < GEMM_MR; r++) _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++) \
      (P)[r][v] = (gemm_vec)(0.0f)
#define TN_NARROW_PASS_BEGIN(P)                                                                            \
  const int j0 = t * GEMM_MR, cols = min(GEMM_MR, n - j0);                                                 \
  gemm_vec acc[GEMM_MR][GEMM_NV];                                                                          \
  _Pragma("unroll") for (int r = 0; r < GEMM_MR; r++) _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++) \
      acc[r][v] = (P)[r][v];                                                                               \
  __global const float *bp = b + b_off + (size_t)k0 * (size_t)ldb + (size_t)j0, *br[GEMM_MR];             \
  _Pragma("unroll") for (int r = 0; r < GEMM_MR; r++) br[r] = bp + min(r, cols - 1)
#define TN_NARROW_PASS_END(P)                                                                              \
  _Pragma("unroll") for (int r = 0; r < GEMM_MR; r++) _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++) \
      (P)[r][v] = acc[r][v]
/* Tile t's accumulators P into C's rows i0.. (`rows` of them): element (i0 + i, j0 + r) is lane i of row r */
#define TN_NARROW_STORE(P)                                                                                       \
  do {                                                                                                           \
    const int j0 = t * GEMM_MR, cols = min(GEMM_MR, n - j0);                                                     \
    for (int r = 0; r < cols; r++) {                                                                             \
      float tmp[GEMM_NR];                                                                                        \
      _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++) GEMM_VSTORE((P)[r][v], v, tmp);                        \
      __global float *cp = c + c_off + (size_t)i0 * (size_t)ldc + (size_t)(j0 + r);                             \
      for (int i = 0; i < rows; i++, cp += ldc) *cp = beta != 0.0f ? alpha * tmp[i] + beta * *cp : alpha * tmp[i]; \
    }                                                                                                            \
  } while (0)

#if CLS_GEMM_NARROW_COPY
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void gemm_tn_narrow(TN_NARROW_ARGS) {
  TN_NARROW_ITEM;
  const int span = min(s_n * GEMM_NR, m - first), whole = span == s_n * GEMM_NR; /* the item's columns of A */
  gemm_vec part[NARROW_STRIPS][CLS_GEMM_NARROW_TILES][GEMM_MR][GEMM_NV];
  float blk[NARROW_STRIPS * NARROW_COPY_KB * GEMM_NR] __attribute__((aligned(64))); /* [strip][step][NR] */
  for (int s = 0; s < s_n; s++)
    for (int t = 0; t < n_tiles; t++) TN_NARROW_ZERO(part[s][t]);
  for (int k0 = 0; k0 < k; k0 += NARROW_COPY_KB) {
    const int steps = min(NARROW_COPY_KB, k - k0);
    const int next = min(NARROW_COPY_KB, k - k0 - steps); /* rows in the next block (0 after the last) */
    /* the copy: row after row, the item's run of each (prefetched while the previous block ran; the first
       block's from memory). Columns past m are zeros. */
    __global const float *ap = a + a_off + (size_t)k0 * (size_t)lda + (size_t)first;
    for (int kk = 0; kk < steps; kk++, ap += lda) {
      if (CLS_GEMM_NARROW_COPY_VEC && whole) {
#pragma unroll
        for (int s = 0; s < NARROW_STRIPS; s++)
          if (s < s_n)
#pragma unroll
            for (int v = 0; v < GEMM_NV; v++)
              *(gemm_vec *)(blk + (s * NARROW_COPY_KB + kk) * GEMM_NR + v * GEMM_W) =
                  *(__global const gemm_uvec *)(ap + s * GEMM_NR + v * GEMM_W);
      } else if (whole) {
        for (int s = 0; s < s_n; s++)
#pragma unroll
          for (int v = 0; v < GEMM_NV; v++)
            GEMM_VSTORE(GEMM_VLOAD(v, ap + s * GEMM_NR), v, blk + (s * NARROW_COPY_KB + kk) * GEMM_NR);
      } else {
        for (int i = 0; i < s_n * GEMM_NR; i++)
          blk[((i / GEMM_NR) * NARROW_COPY_KB + kk) * GEMM_NR + i % GEMM_NR] = i < span ? ap[i] : 0.0f;
      }
    }
    for (int s = 0; s < s_n; s++) {
      /* this strip's lines of the next block's rows, prefetched a share per tile's pass: rows t, t + tiles, ... */
      __global const float *an = a + a_off + (size_t)(k0 + steps) * (size_t)lda + (size_t)(first + s * GEMM_NR);
      for (int t = 0; t < n_tiles; t++) {
        TN_NARROW_PASS_BEGIN(part[s][t]);
        const float *ab = blk + s * NARROW_COPY_KB * GEMM_NR;
        int ahead = t; /* the next row this pass prefetches */
#define TN_NARROW_COPY_PASS(ROWS, STEP)                                                                          \
  for (int kk = 0; kk < steps; kk++, ab += GEMM_NR) {                                                      \
    if (kk == ahead && ahead < next) {                                                                     \
      _Pragma("unroll") for (int l = 0; l < GEMM_NR; l += 16) GEMM_PREFETCH(an + (size_t)kk * (size_t)lda + l); \
      ahead += n_tiles;                                                                                    \
    }                                                                                                      \
    gemm_vec av[GEMM_NV];                                                                                  \
    _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++) av[v] = GEMM_VLOAD(v, ab);                        \
    STEP(av, ROWS);                                                                                        \
  }
        TN_NARROW_BY_WIDTH(TN_NARROW_COPY_PASS)
#undef TN_NARROW_COPY_PASS
        TN_NARROW_PASS_END(part[s][t]);
      }
    }
  }
  for (int s = 0; s < s_n; s++) {
    const int i0 = first + s * GEMM_NR, rows = min(GEMM_NR, m - i0);
    for (int t = 0; t < n_tiles; t++) TN_NARROW_STORE(part[s][t]);
  }
}
#else
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void gemm_tn_narrow(TN_NARROW_ARGS) {
  TN_NARROW_ITEM;
  for (int s = 0; s < s_n; s++) {
    const int i0 = first + s * GEMM_NR, rows = min(GEMM_NR, m - i0);
    gemm_vec part[CLS_GEMM_NARROW_TILES][GEMM_MR][GEMM_NV];
    for (int t = 0; t < n_tiles; t++) TN_NARROW_ZERO(part[t]);
    for (int k0 = 0; k0 < k; k0 += CLS_GEMM_NARROW_KB) {
      const int steps = min(CLS_GEMM_NARROW_KB, k - k0);
      for (int t = 0; t < n_tiles; t++) {
        TN_NARROW_PASS_BEGIN(part[t]);
        __global const float *ap = a + a_off + (size_t)k0 * (size_t)lda + (size_t)i0;
        if (rows == GEMM_NR) { /* the first tile's pass reads the block from memory, prefetching every line of
                                  the rows AHEAD on; the others read it again from L2 */
          const int ahead = t == 0 ? k - k0 - CLS_GEMM_NARROW_AHEAD : 0; /* steps whose row AHEAD on exists */
#define TN_NARROW_IN_PLACE_PASS(ROWS, STEP)                                                                      \
  for (int kk = 0; kk < steps; kk++, ap += lda) {                                                          \
    if (kk < ahead)                                                                                        \
      _Pragma("unroll") for (int l = 0; l < GEMM_NR; l += 16)                                              \
          GEMM_PREFETCH(ap + (size_t)CLS_GEMM_NARROW_AHEAD * (size_t)lda + l);                             \
    gemm_vec av[GEMM_NV];                                                                                  \
    _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++) av[v] = GEMM_VLOAD(v, ap);                        \
    STEP(av, ROWS);                                                                                        \
  }
          TN_NARROW_BY_WIDTH(TN_NARROW_IN_PLACE_PASS)
#undef TN_NARROW_IN_PLACE_PASS
        } else { /* the last strip, past m: its rows of A^T (columns of A) read as zeros, never stored */
          for (int kk = 0; kk < steps; kk++, ap += lda) {
            float row[GEMM_NR];
            for (int i = 0; i < GEMM_NR; i++) row[i] = i < rows ? ap[i] : 0.0f;
            gemm_vec av[GEMM_NV];
#pragma unroll
            for (int v = 0; v < GEMM_NV; v++) av[v] = GEMM_VLOAD(v, row);
            TN_NARROW_STEP_ROWS(av, GEMM_MR);
          }
        }
        TN_NARROW_PASS_END(part[t]);
      }
    }
    for (int t = 0; t < n_tiles; t++) TN_NARROW_STORE(part[t]);
  }
}
#endif
