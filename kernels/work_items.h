/* How much one work-item of the element-wise kernels takes, shared by the kernels and the host code that
 * sizes their grids (engine/ops/adam.c, dense.c, lstm.c), so that the two cannot drift apart. Plain
 * #defines, valid C99 and OpenCL C. */
#ifndef CLS_KERNELS_WORK_ITEMS_H
#define CLS_KERNELS_WORK_ITEMS_H

#define CLS_ADAM_PER_ITEM 8 /* adam.cl: parameters, one float8 */
#define CLS_DENSE_RUN 64    /* dense.cl: neighbouring units of a row (16 Philox blocks of 4) */
#define CLS_LSTM_V 8        /* lstm.cl: neighbouring units of an utterance, one float8 */
#define CLS_COLSUM_W 16     /* colsum.h: neighbouring columns of a bias gradient */
#define CLS_COLSUM_LOCAL 4  /* the column sums' work-group size: few work-items, small groups, every core some */
#define CLS_GEMM_NARROW_TILES 6 /* gemm_tn_narrow.h's kernel: at most this many tiles of MR columns of C, */
#define CLS_GEMM_NARROW_STRIPS(nr) ((nr) >= 64 ? 2 : 64 / (nr)) /* and strips of NR rows per item (256-512 B) */

#endif
