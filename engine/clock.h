/* Monotonic wall clock in milliseconds, for build timings and progress. */
#ifndef CLS_CLOCK_H
#define CLS_CLOCK_H

#include <time.h>

static inline double cls_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#endif
