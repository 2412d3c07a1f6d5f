/* Device buffers of one benchmark, made from seeded data and released together: bench_model.c's op
 * benchmarks and lstm_seq_cases.c's LSTM cases. */
#ifndef CLS_BENCH_BUFFERS_H
#define CLS_BENCH_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/internal/bench.h"

#define CLS_BENCH_MAX_BUFFERS 24

typedef struct cls_bench_buffers {
  cls_engine *e; /* where failures are reported */
  cl_context ctx;
  cl_mem mem[CLS_BENCH_MAX_BUFFERS];
  int n;
} cls_bench_buffers;

/* A buffer of n floats (at least one) in b: uniform in [-scale, scale) from `seed`, or `fill` everywhere when
 * scale is 0. */
cls_status cls_bench_floats(cls_bench_buffers *b, size_t n, unsigned seed, float scale, float fill, cl_mem *out);
/* A buffer in b holding the n ints of v. */
cls_status cls_bench_ints(cls_bench_buffers *b, const int32_t *v, size_t n, cl_mem *out);
/* Releases every buffer of b (b stays usable). */
void cls_bench_buffers_release(cls_bench_buffers *b);

#endif
