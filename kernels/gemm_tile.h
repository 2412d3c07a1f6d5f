/* One tile geometry's kernels, gemm_geometry, gemm_pack_b and gemm_tile (described in gemm.cl), for tiles
 * of TILE_MR rows x TILE_NV vectors of GEMM_W floats (TILE_NR = TILE_NV x GEMM_W columns), named through
 * TILE_NAME. gemm.cl includes this file once per geometry: the device's (CLS_GEMM_MR x CLS_GEMM_NV:
 * gemm_geometry, gemm_pack_b, gemm_tile), the thin one for narrow C (CLS_GEMM_MR_NARROW rows, half the
 * vectors: ..._narrow) and the one for few rows (..._few); the file undefines TILE_MR, TILE_NV, TILE_NAME
 * and its own TILE_NR, TILE_K_STEP and TILE_K_LOOP at its end. No include guard, on purpose: each inclusion
 * defines a further set. */
#define TILE_NR (TILE_NV * GEMM_W)

/* Never launched: its required work-group size (MR, NR, 1) tells the host the tile geometry. */
__kernel __attribute__((reqd_work_group_size(TILE_MR, TILE_NR, 1))) void TILE_NAME(gemm_geometry)(
    __global float *unused) {
  (void)unused;
}

/* gemm_pack_b: the panels of the n tiles t0 <= t < t0 + tiles: panel t - t0 starts at
 * packed[p_off + (t - t0) * k * NR] and holds op(B)[kk][t * NR + c] at [kk * w + c], w its width: NR
 * when `pad` (0 past n), else min(NR, n - t * NR). op(B)[kk][j] is b[kk*ldb + j], or b[j*ldb + kk] when
 * trans. */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void TILE_NAME(gemm_pack_b)(
    const int k, const int n, const int t0, const int tiles, __global const float *b, const int b_off, const int ldb,
    const int trans, __global float *packed, const int p_off, const int pad, const int kb) {
  const int tile = (int)get_global_id(0), k0 = (int)get_global_id(1) * kb;
  if (tile >= tiles || k0 >= k) return;
  const int rows = min(kb, k - k0);
  const int j0 = (t0 + tile) * TILE_NR, cols = min(TILE_NR, n - j0), w = pad ? TILE_NR : cols;
  __global float *dst = packed + p_off + (size_t)tile * (size_t)k * TILE_NR + (size_t)k0 * (size_t)w;
  if (!trans) {
    __global const float *src = b + b_off + (size_t)k0 * (size_t)ldb + (size_t)j0;
    if (cols == TILE_NR) {
      for (int kk = 0; kk < rows; kk++, src += ldb, dst += TILE_NR) {
#pragma unroll
        for (int v = 0; v < TILE_NV; v++) GEMM_VSTORE(GEMM_VLOAD(v, src), v, dst);
      }
    } else {
      for (int kk = 0; kk < rows; kk++, src += ldb, dst += w)
        for (int c = 0; c < w; c++) dst[c] = c < cols ? src[c] : 0.0f;
    }
  } else {
    __global const float *src = b + b_off + (size_t)j0 * (size_t)ldb + (size_t)k0;
    if (cols == TILE_NR) {
      for (int kk = 0; kk < rows; kk++, dst += TILE_NR) {
#pragma unroll
        for (int c = 0; c < TILE_NR; c++) dst[c] = src[(size_t)c * (size_t)ldb + (size_t)kk];
      }
    } else {
      for (int kk = 0; kk < rows; kk++, dst += w)
        for (int c = 0; c < w; c++) dst[c] = c < cols ? src[(size_t)c * (size_t)ldb + (size_t)kk] : 0.0f;
    }
  }
}

/* The MR x NR tiles of C over the n tiles t0 <= t < t0 + tiles, in one of two walks over a 1-D grid:
 * - span > 0, along rows: a work-group computes `span` tiles side by side (one M tile against `span`
 *   consecutive B panels), so that its MR rows of A stay in L1 while the panels stream, and C is written
 *   row band after row band; the grid is m_tiles x ceil(tiles / span), n fastest. The walk for a short k
 *   (A's rows fit in L1).
 * - span == 0, down columns: `per` tiles one under the other (the same B panel, from L1 or L2 for all of
 *   them), over a grid of m_groups x tiles, m_groups = ceil(m_tiles / per), walking bands of `band` m
 *   groups: within a band every n tile in turn, and within an n tile the band's m groups, so that the
 *   band's rows of A stay in cache across the n tiles and each B panel across the band. The walk for a
 *   long k, and for an A of a few tiles (the recurrent products: all of them in one group).
 * A element (i0 + r, kk) of op(A), i0 the tile's first row, is a[a_off + mt*a_ts + r*a_rs + kk*a_ks]
 * (in place: a_ts = MR*a_rs; packed: a_ts = MR*k, a_rs = 1, a_ks = MR); the packed B panels start at
 * bp[bp_off] with panel 0 holding tile t0, the last one padded to NR columns when `padded`. beta == 0
 * never reads C (NaN there does not propagate). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void TILE_NAME(gemm_tile)(
    const int m, const int n, const int k, const int t0, const int tiles, const int span, const int band,
    const int per, const float alpha, __global const float *a, const int a_off, const int a_ts, const int a_rs,
    const int a_ks, __global const float *bp, const int bp_off, const int padded, const float beta, __global float *c,
    const int c_off, const int ldc) {
  const int m_tiles = (m + TILE_MR - 1) / TILE_MR, g = (int)get_group_id(0);
  int mt0, panel0, count;
  if (span > 0) {
    const int n_groups = (tiles + span - 1) / span;
    mt0 = g / n_groups;
    panel0 = (g - mt0 * n_groups) * span;
    count = min(tiles - panel0, span);
  } else {
    const int m_groups = (m_tiles + per - 1) / per, per_band = band * tiles;
    const int b0 = g / per_band * band, in_band = min(band, m_groups - b0), rest = g - b0 * tiles;
    panel0 = rest / in_band;
    const int mg = b0 + (rest - panel0 * in_band);
    mt0 = mg * per;
    count = min(m_tiles, (mg + 1) * per) - mt0;
  }
  for (int it = 0; it < count; it++) {
    const int mt = span > 0 ? mt0 : mt0 + it, panel = span > 0 ? panel0 + it : panel0;
    const int j0 = (t0 + panel) * TILE_NR, cols = min(TILE_NR, n - j0);
    const int i0 = mt * TILE_MR;
    const int rows = min(TILE_MR, m - i0);
    __global const float *ar[TILE_MR];
#pragma unroll
    for (int r = 0; r < TILE_MR; r++)
      ar[r] = a + a_off + (size_t)mt * (size_t)a_ts + (size_t)min(r, rows - 1) * (size_t)a_rs;
    __global const float *b = bp + bp_off + (size_t)panel * (size_t)k * TILE_NR;
    if (k <= CLS_GEMM_C_PREFETCH_K) { /* a short k (out_dx: 29) is bound by writing C: own its lines early */
      __global float *cq = c + c_off + (size_t)i0 * (size_t)ldc + (size_t)j0;
#pragma unroll
      for (int r = 0; r < TILE_MR; r++)
#pragma unroll
        for (int l = 0; l < TILE_NR; l += 16) GEMM_PREFETCH_W(cq + (size_t)min(r, rows - 1) * (size_t)ldc + l);
    }

    gemm_vec acc[TILE_MR][TILE_NV];
#pragma unroll
    for (int r = 0; r < TILE_MR; r++)
#pragma unroll
      for (int v = 0; v < TILE_NV; v++) acc[r][v] = (gemm_vec)(0.0f);

    /* The whole panel's k loop, A read through the expression A_RK (row r, step kk) and advanced by
       A_ROW_STEP after each row and A_STEP after each step. A's two common strides get loops of their own,
       where the MR row pointers and their MR additions per step (a_ks unknown to the compiler) become one
       index (a_ks == 1: A in place, rows lda apart) or one pointer with constant offsets (a_rs == 1: A
       packed, or transposed in place, a whole tile of rows): 23-24 instructions per step of the 6 x 2 float8
       tile instead of 29 (the general loop stays for the last, short tile of a transposed A in place).
       Measured 1.00-1.13x at the large shapes, 1.04-1.08x over the step's GEMMs (bench_gemm --versus
       "cpu=-DCLS_GEMM_A_STRIDES=0", AVX2, H = 512 and 2048; docs/lab-notes/gemm-kernels.md). The loop is unrolled by
       CLS_GEMM_K_UNROLL (gemm.cl): by 4 on AVX2, 21 instructions per step. With CLS_GEMM_K_PEEL (the
       default) the k % CLS_GEMM_K_UNROLL steps left over run first, as straight code, and then each pass of
       the loop is CLS_GEMM_K_UNROLL steps written out (the inner unrolled loop), a whole number of passes
       (with it 0: GEMM_K_UNROLL_PRAGMA on the plain loop): the remainder loop clang appends otherwise kept
       one accumulator in memory (a load and a store around each of its FMAs, and around the loop), which
       the output layer's dx (k = 29: one step left over per tile) paid on every tile. The steps are summed in
       the same order, so results are bit for bit the same. Measured 1.00x at H = 512 and 1.03x at H = 2048
       on that product, alike elsewhere (bench_gemm --versus "cpu=-DCLS_GEMM_K_PEEL=0", AVX2). */
#define TILE_K_STEP(A_RK, A_ROW_STEP, A_STEP)                                                       \
  do {                                                                                              \
    gemm_vec bv[TILE_NV];                                                                           \
    _Pragma("unroll") for (int v = 0; v < TILE_NV; v++) bv[v] = GEMM_VLOAD(v, b);                  \
    b += TILE_NR;                                                                                   \
    _Pragma("unroll") for (int r = 0; r < TILE_MR; r++) {                                           \
      const gemm_vec av = (gemm_vec)(A_RK);                                                         \
      A_ROW_STEP;                                                                                   \
      _Pragma("unroll") for (int v = 0; v < TILE_NV; v++) acc[r][v] = GEMM_FMA(av, bv[v], acc[r][v]); \
    }                                                                                               \
    A_STEP;                                                                                         \
  } while (0)
#if CLS_GEMM_K_PEEL
#define TILE_K_LOOP(A_RK, A_ROW_STEP, A_STEP)                                                       \
  {                                                                                                 \
    const int k_rem = k % CLS_GEMM_K_UNROLL;                                                        \
    _Pragma("unroll") for (int u = 0; u < CLS_GEMM_K_UNROLL - 1; u++) if (u < k_rem) {              \
      const int kk = u;                                                                             \
      TILE_K_STEP(A_RK, A_ROW_STEP, A_STEP);                                                        \
    }                                                                                               \
    for (int k0 = k_rem; k0 < k; k0 += CLS_GEMM_K_UNROLL) {                                         \
      _Pragma("unroll") for (int u = 0; u < CLS_GEMM_K_UNROLL; u++) {                               \
        const int kk = k0 + u;                                                                      \
        TILE_K_STEP(A_RK, A_ROW_STEP, A_STEP);                                                      \
      }                                                                                             \
    }                                                                                               \
  }
#else
#define TILE_K_LOOP(A_RK, A_ROW_STEP, A_STEP) \
  GEMM_K_UNROLL_PRAGMA for (int kk = 0; kk < k; kk++) TILE_K_STEP(A_RK, A_ROW_STEP, A_STEP);
#endif
    if (cols == TILE_NR || padded) {
      if (CLS_GEMM_A_STRIDES && a_ks == 1) {
        TILE_K_LOOP(ar[r][kk], (void)0, (void)0)
      } else if (CLS_GEMM_A_STRIDES && a_rs == 1 && rows == TILE_MR) {
        __global const float *ap = ar[0];
        TILE_K_LOOP(ap[r], (void)0, ap += a_ks)
      } else {
        TILE_K_LOOP(*ar[r], ar[r] += a_ks, (void)0)
      }
    } else { /* the narrower last panel, rows of `cols` floats: read element by element, zero past them */
      float row[TILE_NR];
      for (int kk = 0; kk < k; kk++) {
        for (int j = 0; j < TILE_NR; j++) row[j] = j < cols ? b[j] : 0.0f;
        b += cols;
        gemm_vec bv[TILE_NV];
#pragma unroll
        for (int v = 0; v < TILE_NV; v++) bv[v] = GEMM_VLOAD(v, row);
#pragma unroll
        for (int r = 0; r < TILE_MR; r++) {
          const gemm_vec av = (gemm_vec)(*ar[r]);
          ar[r] += a_ks;
#pragma unroll
          for (int v = 0; v < TILE_NV; v++) acc[r][v] = GEMM_FMA(av, bv[v], acc[r][v]);
        }
      }
    }

    /* Every index below is a compile-time constant (r unrolled, no early exit), so that the accumulators stay
       in registers: a loop over r that could break indexed them at run time, which kept them in memory, stored
       and loaded around every tile's k loop (the output layer's dx, k = 29: 1.06-1.15x, bench_gemm --versus). */
    __global float *cp = c + c_off + (size_t)i0 * (size_t)ldc + (size_t)j0;
#if CLS_GEMM_FAULT
    acc[0][0] += (gemm_vec)(1.0f); /* a deliberately wrong build (see gemm.cl) */
#endif
#pragma unroll
    for (int r = 0; r < TILE_MR; r++) {
      if (r < rows) {
        __global float *row = cp + (size_t)r * (size_t)ldc;
        if (cols == TILE_NR) {
          GEMM_STORE_ROW(row, acc[r], TILE_NV);
        } else {
          float tmp[TILE_NR];
#pragma unroll
          for (int v = 0; v < TILE_NV; v++) GEMM_VSTORE(acc[r][v], v, tmp);
          for (int j = 0; j < cols; j++) row[j] = beta != 0.0f ? alpha * tmp[j] + beta * row[j] : alpha * tmp[j];
        }
      }
    }
  }
}

#undef TILE_K_LOOP
#undef TILE_K_STEP
#undef TILE_NR
#undef TILE_MR
#undef TILE_NV
#undef TILE_NAME
