/* The tests' pseudo-random numbers: xorshift64 from a fixed seed (the same numbers on every machine),
 * uniform in (0, 1), and normal by Box-Muller. One generator per test program (test_decode,
 * test_scorer, test_evaluate); a test may set test_rng_state to start elsewhere. */
#ifndef CLS_TEST_RNG_H
#define CLS_TEST_RNG_H

#include <math.h>
#include <stdint.h>

static uint64_t test_rng_state = 0x9e3779b97f4a7c15ULL;

static inline double uniform01(void) {
  test_rng_state ^= test_rng_state << 13;
  test_rng_state ^= test_rng_state >> 7;
  test_rng_state ^= test_rng_state << 17;
  return ((test_rng_state >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static inline double normal(void) { return sqrt(-2.0 * log(uniform01())) * cos(6.283185307179586 * uniform01()); }

#endif
