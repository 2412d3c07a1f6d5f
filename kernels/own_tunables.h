/* Our own kernels' storable tunables: the GEMM's (gemm.cl) and the product tile of the LSTM's one-kernel
 * recurrence (lstm_seq.cl), each one's default and range, the one source that the kernels' #ifndef
 * defaults and #error checks (gemm_shape.h, gemm.cl, gemm_few_chunks.h, gemm_tn_narrow.h, lstm_seq.cl),
 * the tuning file's parser (engine/device/gemm_tuning_file.c) and the own search
 * (engine/bench/own_search.c) read. Plain #defines, valid C99 and OpenCL C. CLS_OWN_TUNABLES(X) names
 * every macro a stored `own` line may set, X(MACRO) once each. MR_FEW and NV_FEW have no default of
 * their own: they default to the build's MR and NV. */
#ifndef CLS_KERNELS_OWN_TUNABLES_H
#define CLS_KERNELS_OWN_TUNABLES_H

#define CLS_GEMM_W_DEFAULT 8           /* the vector width (set per device, never stored: not in the list) */
#define CLS_GEMM_MR_DEFAULT 6          /* rows per tile */
#define CLS_GEMM_MR_MIN 1
#define CLS_GEMM_MR_MAX 16
#define CLS_GEMM_NV_DEFAULT 2          /* vectors of W floats per tile row */
#define CLS_GEMM_NV_MIN 1
#define CLS_GEMM_NV_MAX 8
#define CLS_GEMM_MR_FEW_MIN 1          /* the few-rows tile (products on a packed B) */
#define CLS_GEMM_MR_FEW_MAX 16
#define CLS_GEMM_NV_FEW_MIN 1
#define CLS_GEMM_NV_FEW_MAX 8
#define CLS_GEMM_K_UNROLL_DEFAULT 1    /* steps of k per pass of the tile's k loop */
#define CLS_GEMM_K_UNROLL_MIN 1
#define CLS_GEMM_K_UNROLL_MAX 16
#define CLS_GEMM_MR_NARROW_DEFAULT 8   /* rows of the thin tile (a C of at most NR/2 columns) */
#define CLS_GEMM_MR_NARROW_MIN 1
#define CLS_GEMM_MR_NARROW_MAX 16
#define CLS_GEMM_NARROW_AHEAD_DEFAULT 32 /* rows of A gemm_tn_narrow's first tile prefetches ahead */
#define CLS_GEMM_NARROW_AHEAD_MIN 1
#define CLS_GEMM_NARROW_AHEAD_MAX 1024
#define CLS_GEMM_NARROW_COPY_DEFAULT 0 /* 1: gemm_tn_narrow's copied-blocks form */
#define CLS_GEMM_NARROW_COPY_MIN 0
#define CLS_GEMM_NARROW_COPY_MAX 1
#define CLS_GEMM_FEW_CHUNK_DEFAULT 128 /* gemm_few_chunks' steps of k per chunk (0: unused) */
#define CLS_GEMM_FEW_CHUNK_MIN 0
#define CLS_GEMM_FEW_CHUNK_MAX 1023

#define CLS_LSTM_SEQ_MR_DEFAULT 4      /* lstm_seq.cl's product tile: rows of the batch */
#define CLS_LSTM_SEQ_MR_MIN 1
#define CLS_LSTM_SEQ_MR_MAX 16
#define CLS_LSTM_SEQ_NV_DEFAULT 2      /* and vectors of W floats per row */
#define CLS_LSTM_SEQ_NV_MIN 1
#define CLS_LSTM_SEQ_NV_MAX 8

#define CLS_OWN_TUNABLES(X)                                                                                 \
  X(CLS_GEMM_MR) X(CLS_GEMM_NV) X(CLS_GEMM_MR_FEW) X(CLS_GEMM_NV_FEW) X(CLS_GEMM_K_UNROLL) X(CLS_GEMM_MR_NARROW) \
  X(CLS_GEMM_NARROW_AHEAD) X(CLS_GEMM_NARROW_COPY) X(CLS_GEMM_FEW_CHUNK) X(CLS_LSTM_SEQ_MR) X(CLS_LSTM_SEQ_NV)

#endif
