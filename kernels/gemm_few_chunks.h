/* gemm_few_chunks: C [m, n] = alpha * A * B + beta * C for an A of a few rows (the LSTM's recurrent products: m = the
 * batch) read in place, rows lda apart, against a B packed in whole panels of the few-rows tile's NR columns
 * ([panel][k][NR], gemm_pack_b_few), when a panel is too long for L1 (k x NR floats past PANEL_L1_BYTES,
 * engine/ops/gemm.c). gemm.cl includes this file once, after the few-rows tile's kernels.
 *
 * gemm_tile_few gives such a product one MR_FEW x NR tile per work-group, every m tile of a panel in turn, so that
 * the first of them streams the panel from memory with a tile's arithmetic only (the recurrent products at
 * H = 2048 stream a 64 MiB W_h at every time step: each panel's first pass waits on memory, the others read it
 * again from L2). Here a work-item takes one panel and every m tile of it (at most FEW_CHUNK_TILES), and walks k in
 * chunks of CLS_GEMM_FEW_CHUNK steps: each m tile runs over the chunk in turn (its accumulators wait in private
 * memory between chunks), so that the chunk, read from memory once, serves all the rows while it is in L1, and
 * the passes prefetch the next chunk of the panel into L2 as they go (one line every other step), so that the
 * stream overlaps the arithmetic. Rows past m read row m - 1 again and are never stored; beta == 0 never reads C. */

#ifndef CLS_GEMM_FEW_CHUNK
#define CLS_GEMM_FEW_CHUNK 128 /* steps of k per chunk: 12 KiB of a 24-column panel, with A's 16 rows 8 KiB */
#endif
#if CLS_GEMM_FEW_CHUNK < 0
#error "CLS_GEMM_FEW_CHUNK must be 0 (gemm_few_chunks unused) or positive"
#endif
#define FEW_CHUNK_TILES 4 /* the most m tiles a work-item takes (the host's MAX_PER_TILES, engine/ops/gemm.c) */
#define FC_MR CLS_GEMM_MR_FEW
#define FC_NV CLS_GEMM_NV_FEW
#define FC_NR (CLS_GEMM_NV_FEW * GEMM_W)

/* Never launched: its required work-group size (CLS_GEMM_FEW_CHUNK + 1) tells the host whether to use
   gemm_few_chunks (0: not; to measure gemm_tile_few against it). */
__kernel __attribute__((reqd_work_group_size(CLS_GEMM_FEW_CHUNK + 1, 1, 1))) void gemm_few_chunks_geometry(
    __global float *unused) {
  (void)unused;
}

/* The panels t0 <= t < t0 + get_global_size(0), each whole (NR columns); the host takes a narrower last panel to
   gemm_tile_few. */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void gemm_few_chunks(
    const int m, const int n, const int k, const int t0, const float alpha, __global const float *a, const int a_off,
    const int lda, __global const float *bp, const int bp_off, const float beta, __global float *c, const int c_off,
    const int ldc) {
  const int panel = t0 + (int)get_group_id(0), j0 = panel * FC_NR;
  const int m_tiles = min((m + FC_MR - 1) / FC_MR, FEW_CHUNK_TILES);
  if (j0 + FC_NR > n || m < 1) return;
  __global const float *b = bp + bp_off + (size_t)panel * (size_t)k * FC_NR;
  gemm_vec part[FEW_CHUNK_TILES][FC_MR][FC_NV];
  for (int mt = 0; mt < m_tiles; mt++)
#pragma unroll
    for (int r = 0; r < FC_MR; r++)
#pragma unroll
      for (int v = 0; v < FC_NV; v++) part[mt][r][v] = (gemm_vec)(0.0f);
  const int chunk = max(CLS_GEMM_FEW_CHUNK, 1);
  for (int k0 = 0; k0 < k; k0 += chunk) {
    const int steps = min(chunk, k - k0);
    /* the next chunk's lines, prefetched one every other step of this chunk's passes */
    __global const float *pf = b + (size_t)(k0 + steps) * FC_NR;
    __global const float *const pf_end = b + (size_t)min(k0 + steps + chunk, k) * FC_NR;
    for (int mt = 0; mt < m_tiles; mt++) {
      const int rows = min(FC_MR, m - mt * FC_MR);
      __global const float *ar[FC_MR];
#pragma unroll
      for (int r = 0; r < FC_MR; r++)
        ar[r] = a + a_off + (size_t)(mt * FC_MR + min(r, rows - 1)) * (size_t)lda + (size_t)k0;
      gemm_vec acc[FC_MR][FC_NV];
#pragma unroll
      for (int r = 0; r < FC_MR; r++)
#pragma unroll
        for (int v = 0; v < FC_NV; v++) acc[r][v] = part[mt][r][v];
      __global const float *bq = b + (size_t)k0 * FC_NR;
      for (int kk = 0; kk < steps; kk++, bq += FC_NR) {
        if ((kk & 1) == 0 && pf < pf_end) {
          GEMM_PREFETCH(pf);
          pf += 16;
        }
        gemm_vec bv[FC_NV];
#pragma unroll
        for (int v = 0; v < FC_NV; v++) bv[v] = GEMM_VLOAD(v, bq);
#pragma unroll
        for (int r = 0; r < FC_MR; r++) {
          const gemm_vec av = (gemm_vec)(ar[r][kk]);
#pragma unroll
          for (int v = 0; v < FC_NV; v++) acc[r][v] = GEMM_FMA(av, bv[v], acc[r][v]);
        }
      }
#pragma unroll
      for (int r = 0; r < FC_MR; r++)
#pragma unroll
        for (int v = 0; v < FC_NV; v++) part[mt][r][v] = acc[r][v];
    }
  }
  for (int mt = 0; mt < m_tiles; mt++) {
    const int i0 = mt * FC_MR;
#pragma unroll
    for (int r = 0; r < FC_MR; r++) {
      if (i0 + r < m) {
        __global gemm_uvec *rv = (__global gemm_uvec *)(c + c_off + (size_t)(i0 + r) * (size_t)ldc + (size_t)j0);
        if (beta == 0.0f) {
#pragma unroll
          for (int v = 0; v < FC_NV; v++) rv[v] = alpha * part[mt][r][v];
        } else {
#pragma unroll
          for (int v = 0; v < FC_NV; v++) rv[v] = alpha * part[mt][r][v] + beta * rv[v];
        }
      }
    }
  }
}

#undef FC_MR
#undef FC_NV
#undef FC_NR
