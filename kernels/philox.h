/* Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
 * counter-based generator, so that a random number is a pure function of (key, counter) and the
 * same on every device and for any split of the work. Written in the common subset of C99 and
 * OpenCL C: the kernels include it and so does the host (engine, tests). */
#ifndef CLS_PHILOX_H
#define CLS_PHILOX_H

#ifdef __OPENCL_VERSION__
typedef uint cls_u32;
/* hi, lo = the high and low 32 bits of M * c (T: uint or a vector of uint, M a constant). */
#define CLS_PHILOX_MULHILO(T, M, c, hi, lo) \
  do {                                      \
    hi = mul_hi((T)(M), (c));               \
    lo = (T)(M) * (c);                      \
  } while (0)
#else
#include <stdint.h>
typedef uint32_t cls_u32;
#define CLS_PHILOX_MULHILO(T, M, c, hi, lo)     \
  do {                                          \
    const uint64_t p_ = (uint64_t)(M) * (c);    \
    hi = (cls_u32)(p_ >> 32);                   \
    lo = (cls_u32)p_;                           \
  } while (0)
#endif

typedef struct cls_philox4 {
  cls_u32 v[4];
} cls_philox4;

/* The ten rounds on counter words c0..c3 (lvalues of type T: cls_u32, or in OpenCL C a vector of uint, one
 * generator per lane, or of ulong with the words in the lanes' low halves where MULHILO masks the high
 * halves off) with keys k0, k1 (cls_u32 lvalues, advanced). MULHILO(T, M, c, hi, lo) sets hi and lo to the
 * high and low 32 bits of the product M * c: CLS_PHILOX_MULHILO, or a kernel's own form (dropout_keep.h). */
#define CLS_PHILOX_10_ROUNDS(T, MULHILO, c0, c1, c2, c3, k0, k1) \
  for (int round_ = 0; round_ < 10; round_++) {                  \
    T hi0_, lo0_, hi1_, lo1_;                                    \
    MULHILO(T, 0xD2511F53u, c0, hi0_, lo0_);                     \
    MULHILO(T, 0xCD9E8D57u, c2, hi1_, lo1_);                     \
    c0 = hi1_ ^ c1 ^ (T)(k0);                                    \
    c1 = lo1_;                                                   \
    c2 = hi0_ ^ c3 ^ (T)(k1);                                    \
    c3 = lo0_;                                                   \
    k0 += (cls_u32)0x9E3779B9u;                                  \
    k1 += (cls_u32)0xBB67AE85u;                                  \
  }

static inline cls_philox4 cls_philox4x32_10(cls_philox4 ctr, cls_u32 k0, cls_u32 k1) {
  CLS_PHILOX_10_ROUNDS(cls_u32, CLS_PHILOX_MULHILO, ctr.v[0], ctr.v[1], ctr.v[2], ctr.v[3], k0, k1)
  return ctr;
}

/* A dropout draw's 24 random bits of a Philox word, and their scale to [0, 1). */
#define CLS_DROPOUT_BITS(word) ((word) >> 8)
#define CLS_DROPOUT_UNIT (1.0f / 16777216.0f)

/* The dropout draw of one activation: uniform in [0, 1) with 24 random bits, keyed by the run's
 * seed and the training step, and counted by (layer, utterance, time step, unit). The utterance is
 * its index in the global batch, so the draw does not depend on how the batch is split. */
static inline float cls_dropout_uniform(cls_u32 seed, cls_u32 step, cls_u32 layer, cls_u32 utterance, cls_u32 t,
                                        cls_u32 unit) {
  cls_philox4 ctr;
  ctr.v[0] = unit >> 2;
  ctr.v[1] = t;
  ctr.v[2] = utterance;
  ctr.v[3] = layer;
  cls_philox4 r = cls_philox4x32_10(ctr, seed, step);
  return (float)CLS_DROPOUT_BITS(r.v[unit & 3]) * CLS_DROPOUT_UNIT;
}

#endif
