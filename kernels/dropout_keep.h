/* Dropout's keep bits for a run of neighbouring units of one row, shared by the dense and layer-norm kernels
 * (OpenCL C only; the draw itself is philox.h's cls_dropout_uniform, which the host and tests compute). One
 * Philox-4x32-10 block gives the draws of 4 units, and N blocks run side by side, one per 64-bit lane of a
 * ulongN, the 32-bit words in the lanes' low halves: each round's two products M * c are one 32 x 32 -> 64-bit
 * multiply per lane, the high half shifted down and the low half kept as it is (the high halves of the words
 * are don't-care: the next product masks them off). On AVX-512 a round of 16 blocks is 17 vector
 * instructions, where 8 blocks in uint8 lanes (mul_hi through 64-bit lanes and a separate multiply) took 20
 * (docs/lab-notes/step-small-kernels.md). A unit is kept when its 24 bits, as a fraction of 2^24, are at
 * least the rate: bits >= ceil(rate 2^24), exactly cls_dropout_uniform's float comparison (rate scaled by a
 * power of two is exact, and so is a 24-bit integer times 2^-24). */
#ifndef CLS_KERNELS_DROPOUT_KEEP_H
#define CLS_KERNELS_DROPOUT_KEEP_H

#include "philox.h"

/* The integer threshold of a rate in (0, 1). */
static inline uint cls_dropout_threshold(const float rate) { return (uint)ceil(rate * 16777216.0f); }

#define CLS_DROPOUT_MULHILO(T, M, c, hi, lo)                  \
  do {                                                        \
    const T p_ = ((c) & (T)(0xFFFFFFFFul)) * (T)((ulong)(M)); \
    hi = p_ >> 32;                                            \
    lo = p_;                                                  \
  } while (0)

static inline ulong cls_or_lanes4(const ulong4 m) {
  const ulong2 m2 = m.lo | m.hi;
  return m2.lo | m2.hi;
}
static inline ulong cls_or_lanes16(const ulong16 m) {
  const ulong8 m8 = m.lo | m.hi;
  return cls_or_lanes4(m8.lo | m8.hi);
}
#define CLS_LANES4 (ulong4)(0, 1, 2, 3)
#define CLS_LANES16 (ulong16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

/* cls_dropout_keep16 (N = 4 blocks) and cls_dropout_keep64 (N = 16): bit u of the result is unit j0 + u of the
 * row kept (j0 a multiple of 4), for the row's time step t and global utterance utt; units past the row's end
 * included (each draw is a function of its unit alone). Word c of block g is unit j0 + 4g + c. */
#define CLS_DROPOUT_KEEP(N, UNITS)                                                                                 \
  static inline ulong cls_dropout_keep##UNITS(const uint thr, const uint seed, const uint step, const uint layer, \
                                              const uint utt, const uint t, const int j0) {                      \
    const ulong##N g = CLS_LANES##N;                                                                             \
    ulong##N w0 = (ulong##N)((ulong)((uint)j0 >> 2)) + g, w1 = (ulong##N)((ulong)t);                            \
    ulong##N w2 = (ulong##N)((ulong)utt), w3 = (ulong##N)((ulong)layer);                                         \
    uint k0_ = seed, k1_ = step;                                                                                 \
    CLS_PHILOX_10_ROUNDS(ulong##N, CLS_DROPOUT_MULHILO, w0, w1, w2, w3, k0_, k1_)                                \
    const ulong##N lo = (ulong##N)(0xFFFFFFFFul), th = (ulong##N)((ulong)thr), one = (ulong##N)(1ul);            \
    const ulong##N bit = 4 * g;                                                                                  \
    return cls_or_lanes##N((as_ulong##N(CLS_DROPOUT_BITS(w0 & lo) >= th) & (one << bit)) |                      \
                           (as_ulong##N(CLS_DROPOUT_BITS(w1 & lo) >= th) & (one << (bit + 1))) |                \
                           (as_ulong##N(CLS_DROPOUT_BITS(w2 & lo) >= th) & (one << (bit + 2))) |                \
                           (as_ulong##N(CLS_DROPOUT_BITS(w3 & lo) >= th) & (one << (bit + 3))));                \
  }
CLS_DROPOUT_KEEP(4, 16)
CLS_DROPOUT_KEEP(16, 64)
#undef CLS_DROPOUT_KEEP

/* v through the dropout where `drop` is set: v * scale where bit u of `keep` is set, else 0 (cls_dropout8 and
 * cls_dropout16: the 8 or 16 units from bit u); v itself where it is not. */
static inline float cls_dropout1(const float v, const int drop, const ulong keep, const int u, const float scale) {
  return !drop ? v : (keep >> u) & 1ul ? v * scale : 0.0f;
}
static inline float8 cls_dropout8(const float8 v, const int drop, const ulong keep, const int u, const float scale) {
  if (!drop) return v;
  const uint8 bit = (uint8)(1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u);
  return select((float8)(0.0f), v * scale, ((uint8)((uint)(keep >> u) & 0xFFu) & bit) != 0);
}
static inline float16 cls_dropout16(const float16 v, const int drop, const ulong keep, const int u, const float scale) {
  if (!drop) return v;
  const uint16 bit = (uint16)(1u) << (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  return select((float16)(0.0f), v * scale, ((uint16)((uint)(keep >> u) & 0xFFFFu) & bit) != 0);
}

#endif
