/* The own GEMM's tile tunables (their defaults and range checks) and its vector types, for gemm.cl, whose
 * build gets every -DCLS_GEMM_* option, and lstm_seq.cl (the LSTM's recurrence in one kernel), whose build
 * gets the width alone and so the rest at their defaults (cls_kernel_options_of_family): it takes the
 * vector types, with a tile of its own. */
#ifndef CLS_KERNELS_GEMM_SHAPE_H
#define CLS_KERNELS_GEMM_SHAPE_H

#include "own_tunables.h"

#ifndef CLS_GEMM_W
#define CLS_GEMM_W CLS_GEMM_W_DEFAULT
#endif
#ifndef CLS_GEMM_MR
#define CLS_GEMM_MR CLS_GEMM_MR_DEFAULT
#endif
#ifndef CLS_GEMM_NV
#define CLS_GEMM_NV CLS_GEMM_NV_DEFAULT
#endif
#if CLS_GEMM_W != 2 && CLS_GEMM_W != 4 && CLS_GEMM_W != 8 && CLS_GEMM_W != 16
#error "CLS_GEMM_W must be 2, 4, 8 or 16"
#endif
#if CLS_GEMM_MR < CLS_GEMM_MR_MIN || CLS_GEMM_MR > CLS_GEMM_MR_MAX || CLS_GEMM_NV < CLS_GEMM_NV_MIN || \
    CLS_GEMM_NV > CLS_GEMM_NV_MAX
#error "CLS_GEMM_MR or CLS_GEMM_NV out of its range (own_tunables.h)"
#endif
/* The tile for products of few rows on a packed B (the LSTM's recurrent products, m = the batch): the
 * device's own unless the options table sets another (AVX-512: 8 x 2 vectors, AVX2: 4 x 3, so that 16
 * rows are two or four whole tiles where 6-row tiles compute 18). */
#ifndef CLS_GEMM_MR_FEW
#define CLS_GEMM_MR_FEW CLS_GEMM_MR
#endif
#ifndef CLS_GEMM_NV_FEW
#define CLS_GEMM_NV_FEW CLS_GEMM_NV
#endif
#if CLS_GEMM_MR_FEW < CLS_GEMM_MR_FEW_MIN || CLS_GEMM_MR_FEW > CLS_GEMM_MR_FEW_MAX || \
    CLS_GEMM_NV_FEW < CLS_GEMM_NV_FEW_MIN || CLS_GEMM_NV_FEW > CLS_GEMM_NV_FEW_MAX
#error "CLS_GEMM_MR_FEW or CLS_GEMM_NV_FEW out of its range (own_tunables.h)"
#endif

/* Steps of k per pass of the tile's k loop (gemm_tile.h): above 1 each pass is that many steps unrolled, the
 * k % CLS_GEMM_K_UNROLL steps left over run before the loop (CLS_GEMM_K_PEEL, below; with it 0, after it in the
 * compiler's remainder loop); 1, the default, leaves the loop as written (clang does not unroll it by itself).
 * The options table sets 4 for AVX2, where it is measured (engine/device/kernel_options.c,
 * docs/lab-notes/gemm-kernels.md). */
#ifndef CLS_GEMM_K_UNROLL
#define CLS_GEMM_K_UNROLL CLS_GEMM_K_UNROLL_DEFAULT
#endif
#if CLS_GEMM_K_UNROLL < CLS_GEMM_K_UNROLL_MIN || CLS_GEMM_K_UNROLL > CLS_GEMM_K_UNROLL_MAX
#error "CLS_GEMM_K_UNROLL out of its range (own_tunables.h)"
#endif
#if CLS_GEMM_K_UNROLL > 1
#define GEMM_PRAGMA_(x) _Pragma(#x)
#define GEMM_PRAGMA(x) GEMM_PRAGMA_(x)
#define GEMM_K_UNROLL_PRAGMA GEMM_PRAGMA(unroll CLS_GEMM_K_UNROLL)
#else
#define GEMM_K_UNROLL_PRAGMA
#endif
#define GEMM_MR CLS_GEMM_MR
#define GEMM_NV CLS_GEMM_NV
#define GEMM_W CLS_GEMM_W
#define GEMM_NR (CLS_GEMM_NV * CLS_GEMM_W)

#define GEMM_CAT_(a, b) a##b
#define GEMM_CAT(a, b) GEMM_CAT_(a, b)
typedef GEMM_CAT(float, CLS_GEMM_W) gemm_vec;
/* Vectors at any float offset, for stores through a pointer: one unaligned vector store each (PoCL split
   vstoreN into three stores). A typedef's aligned attribute may lower the alignment (OpenCL C, as GCC and
   clang); written in the cast itself, it crashed PoCL 3.1's compiler. gemm_uvec: the tile's width W. */
typedef float2 __attribute__((aligned(4))) gemm_u2;
typedef float4 __attribute__((aligned(4))) gemm_u4;
typedef float8 __attribute__((aligned(4))) gemm_u8;
typedef float16 __attribute__((aligned(4))) gemm_u16;
typedef GEMM_CAT(gemm_u, CLS_GEMM_W) gemm_uvec;
#define GEMM_VLOAD GEMM_CAT(vload, CLS_GEMM_W)
#define GEMM_VSTORE GEMM_CAT(vstore, CLS_GEMM_W)
#endif
