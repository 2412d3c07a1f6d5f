/* Internals of the GEMM plan (see clspeech/ops.h) that tests and benchmarks look at: the own
 * backend's tile geometry and its packing choices. Internal to the engine. */
#ifndef CLS_OPS_GEMM_H
#define CLS_OPS_GEMM_H

#include "clspeech/internal/ops.h"
#include "clspeech/ops.h"

/* The own backend's tile: MR rows by NR columns (read from the device's built kernels). */
void cls_gemm_geometry(const cls_gemm_plan *plan, int *mr, int *nr);

/* How the own backend reads A: in place through its strides, or packed first into [m_tile][k][MR]
 * panels when A is stored transposed and B is at least 2 panels wide (the default), or always. */
typedef enum cls_gemm_pack_a {
  CLS_GEMM_PACK_A_NEVER = 0,
  CLS_GEMM_PACK_A_TRANSPOSED = 1,
  CLS_GEMM_PACK_A_ALWAYS = 2
} cls_gemm_pack_a;
void cls_gemm_set_pack_a(cls_gemm_plan *plan, cls_gemm_pack_a mode);

/* The largest packed B chunk, in floats, that one cls_gemm call packs before computing on it (B
 * wider than that is packed and multiplied chunk by chunk; at least one panel of k x NR). */
void cls_gemm_set_chunk_floats(cls_gemm_plan *plan, size_t floats);

/* The tile kernel walks C along rows (a work-group's M tile against several B panels) when an M tile's
 * rows of A (MR x k floats) hold at most this many bytes and A has more than a few tiles (default 24
 * KiB, within L1; 0: never), else down columns. */
void cls_gemm_set_row_walk_bytes(cls_gemm_plan *plan, size_t bytes);

/* The column walk takes C in bands of m groups holding about this many bytes of A (0: one band of
 * every m group, i.e. each B panel once over all of A). */
void cls_gemm_set_band_bytes(cls_gemm_plan *plan, size_t bytes);

/* cls_gemm_packed takes a product on the few-rows tile (A not transposed, at most 4 such tiles) to gemm_few_chunks
 * when its packed B holds more than this many bytes (default a quarter of the device's global memory cache; 0:
 * always); returns the threshold it replaces. cls_gemm_has_few_chunks: whether the plan has that kernel at all
 * (CPU devices whose kernels were built with CLS_GEMM_FEW_CHUNK > 0). */
size_t cls_gemm_set_few_chunks_bytes(cls_gemm_plan *plan, size_t bytes);
bool cls_gemm_has_few_chunks(const cls_gemm_plan *plan);

#endif
