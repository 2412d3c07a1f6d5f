/* Column sums of a row-major [rows, cols] matrix, shared by the dense and LSTM bias gradients; resolved
 * into each .cl when the kernels are embedded. One work-item sums CLS_COLSUM_W = 16 neighbouring columns
 * in two float8 (a whole 64-byte line of a row, a CPU device's vector lanes), reading the rows in order: the
 * same additions, per column, as one scalar work-item per column, so the result does not depend on the
 * vector width. `lanes` partial sums (1 or 4) interleaved over the rows keep long sums' rounding down. */
#ifndef CLS_KERNELS_COLSUM_H
#define CLS_KERNELS_COLSUM_H

#include "work_items.h" /* CLS_COLSUM_W */

/* db[j] (=|+=) sum over rows of m[r, j], for the columns j0 .. j0+15 (those below cols): two runs of 8
 * in float8 side by side, so that a work-item reads whole 64-byte lines of a row. */
static inline void cls_colsum16(const int rows, const int cols, const int j0, __global const float *m, const int m_off,
                                __global float *db, const int db_off, const int accumulate, const int lanes) {
  if (j0 >= cols) return;
  __global const float *p = m + m_off + j0;
  if (j0 + CLS_COLSUM_W <= cols) {
    float8 s0 = (float8)(0.0f), s1 = (float8)(0.0f), s2 = (float8)(0.0f), s3 = (float8)(0.0f);
    float8 u0 = (float8)(0.0f), u1 = (float8)(0.0f), u2 = (float8)(0.0f), u3 = (float8)(0.0f);
    int r = 0;
    if (lanes == 4)
      for (; r + 4 <= rows; r += 4) {
        __global const float *q = p + (size_t)r * cols;
        s0 += vload8(0, q);
        u0 += vload8(1, q);
        q += cols;
        s1 += vload8(0, q);
        u1 += vload8(1, q);
        q += cols;
        s2 += vload8(0, q);
        u2 += vload8(1, q);
        q += cols;
        s3 += vload8(0, q);
        u3 += vload8(1, q);
      }
    for (; r < rows; r++) {
      s0 += vload8(0, p + (size_t)r * cols);
      u0 += vload8(1, p + (size_t)r * cols);
    }
    const float8 s = lanes == 4 ? (s0 + s1) + (s2 + s3) : s0, u = lanes == 4 ? (u0 + u1) + (u2 + u3) : u0;
    __global float *d = db + db_off + j0;
    vstore8(accumulate ? vload8(0, d) + s : s, 0, d);
    vstore8(accumulate ? vload8(1, d) + u : u, 1, d);
    return;
  }
  for (int j = j0; j < cols; j++) {
    __global const float *q = m + m_off + j;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    int r = 0;
    if (lanes == 4)
      for (; r + 4 <= rows; r += 4) {
        s0 += q[(size_t)r * cols];
        s1 += q[(size_t)(r + 1) * cols];
        s2 += q[(size_t)(r + 2) * cols];
        s3 += q[(size_t)(r + 3) * cols];
      }
    for (; r < rows; r++) s0 += q[(size_t)r * cols];
    const float s = lanes == 4 ? (s0 + s1) + (s2 + s3) : s0;
    db[db_off + j] = accumulate ? db[db_off + j] + s : s;
  }
}

#endif
