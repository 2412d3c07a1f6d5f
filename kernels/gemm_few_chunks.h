/* gemm_few_chunks: C [m, n] = alpha * A * B + beta * C for an A of a few rows (the LSTM's recurrent products: m = the
 * batch) read in place, rows lda apart, against a B packed in whole panels of the few-rows tile's NR columns
 * ([panel][k][NR], gemm_pack_b_few). The host (cls_gemm_packed, engine/ops/gemm.c) takes it on CPU devices for an A
 * of at most FEW_CHUNK_TILES few-rows tiles whose packed B is more than a quarter of the device's cache, so that B
 * comes from memory at every call. gemm.cl includes this file once, after the few-rows tile's kernels.
 *
 * gemm_tile_few gives such a product one MR_FEW x NR tile per work-group, every m tile of a panel in turn, so that
 * the first of them streams the panel from memory with a tile's arithmetic only (the recurrent products at
 * H = 2048 stream a 64 MiB W_h at every time step: each panel's first pass waits on memory, the others read it
 * again from L2). Here a work-item takes one panel and every m tile of it, and walks k in chunks of
 * CLS_GEMM_FEW_CHUNK steps: each m tile runs over the chunk in turn (its accumulators wait in private memory
 * between chunks), so that the chunk, read from memory once, serves all the rows while it is in L1, and the
 * passes prefetch the next chunk of the panel into L2 as they go, spread over all of them (AVX2, 16 rows: a line
 * every other step), so that the stream overlaps the arithmetic. Rows past m read row m - 1 again and are never
 * stored; beta == 0 never reads C. */

#ifndef CLS_GEMM_FEW_CHUNK
#define CLS_GEMM_FEW_CHUNK CLS_GEMM_FEW_CHUNK_DEFAULT /* 128 steps of k per chunk: 12 KiB of a 24-column panel, with A's 16 rows 8 KiB */
#endif
#if CLS_GEMM_FEW_CHUNK < CLS_GEMM_FEW_CHUNK_MIN || CLS_GEMM_FEW_CHUNK > CLS_GEMM_FEW_CHUNK_MAX
#error "CLS_GEMM_FEW_CHUNK must be 0 (gemm_few_chunks unused) or 1..1023 (its geometry kernel's work-group size)"
#endif
#define FEW_CHUNK_TILES 4 /* the most m tiles a work-item takes (the host reads it from the geometry kernel) */
#define FC_MR CLS_GEMM_MR_FEW
#define FC_NV CLS_GEMM_NV_FEW
#define FC_NR (CLS_GEMM_NV_FEW * GEMM_W)

/* Never launched: its required work-group size tells the host whether to use gemm_few_chunks
   (CLS_GEMM_FEW_CHUNK + 1: 1 for not, to measure gemm_tile_few against it) and for at most how many m tiles
   (FEW_CHUNK_TILES). */
__kernel __attribute__((reqd_work_group_size(CLS_GEMM_FEW_CHUNK + 1, FEW_CHUNK_TILES, 1)))
void gemm_few_chunks_geometry(
    __global float *unused) {
  (void)unused;
}

/* The panels 0 <= t < get_global_size(0), each whole (NR columns); the host takes a narrower last panel to
   gemm_tile_few. */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void gemm_few_chunks(
    const int m, const int n, const int k, const float alpha, __global const float *a, const int a_off, const int lda,
    __global const float *bp, const int bp_off, const float beta, __global float *c, const int c_off, const int ldc) {
  const int panel = (int)get_group_id(0), j0 = panel * FC_NR;
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
    /* the next chunk's lines, prefetched `per` at a time every `every` steps of this chunk's passes: spread over
       all of them (AVX2, 4 tiles of 4 rows: 192 lines over 512 steps, one every other step) */
    __global const float *pf = b + (size_t)(k0 + steps) * FC_NR;
    __global const float *const pf_end = b + (size_t)min(k0 + steps + chunk, k) * FC_NR;
    const int lines = (int)((pf_end - pf + 15) / 16), slots = m_tiles * steps;
    const int every = lines > 0 ? max(1, slots / lines) : slots + 1;
    const int per = lines > slots ? (lines + slots - 1) / slots : 1;
    int countdown = every;
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
        if (--countdown == 0) {
          countdown = every;
          for (int q = 0; q < per && pf < pf_end; q++, pf += 16) GEMM_PREFETCH(pf);
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
    for (int r = 0; r < FC_MR; r++)
      if (i0 + r < m) GEMM_STORE_ROW(c + c_off + (size_t)(i0 + r) * (size_t)ldc + (size_t)j0, part[mt][r], FC_NV);
  }
}

#undef FC_MR
#undef FC_NV
#undef FC_NR
