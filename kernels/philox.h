/* Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
 * counter-based generator, so that a random number is a pure function of (key, counter) and the
 * same on every device and for any split of the work. Written in the common subset of C99 and
 * OpenCL C: the kernels include it and so does the host (engine, tests). */
#ifndef CLS_PHILOX_H
#define CLS_PHILOX_H

#ifdef __OPENCL_VERSION__
typedef uint cls_u32;
#define CLS_PHILOX_MULHI(a, b) mul_hi((a), (b))
#else
#include <stdint.h>
typedef uint32_t cls_u32;
#define CLS_PHILOX_MULHI(a, b) ((cls_u32)(((uint64_t)(a) * (uint64_t)(b)) >> 32))
#endif

typedef struct cls_philox4 {
  cls_u32 v[4];
} cls_philox4;

static inline cls_philox4 cls_philox4x32_10(cls_philox4 ctr, cls_u32 k0, cls_u32 k1) {
  for (int round = 0; round < 10; round++) {
    cls_u32 hi0 = CLS_PHILOX_MULHI((cls_u32)0xD2511F53u, ctr.v[0]);
    cls_u32 lo0 = (cls_u32)0xD2511F53u * ctr.v[0];
    cls_u32 hi1 = CLS_PHILOX_MULHI((cls_u32)0xCD9E8D57u, ctr.v[2]);
    cls_u32 lo1 = (cls_u32)0xCD9E8D57u * ctr.v[2];
    cls_philox4 next;
    next.v[0] = hi1 ^ ctr.v[1] ^ k0;
    next.v[1] = lo1;
    next.v[2] = hi0 ^ ctr.v[3] ^ k1;
    next.v[3] = lo0;
    ctr = next;
    k0 += (cls_u32)0x9E3779B9u;
    k1 += (cls_u32)0xBB67AE85u;
  }
  return ctr;
}

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
  return (float)(r.v[unit & 3] >> 8) * (1.0f / 16777216.0f);
}

#endif
