/* The monotonic wall clock (cls_now_ms, clspeech/base.h): out of line, so that the public header
 * needs no POSIX feature macro from the program that includes it. */
#include <time.h>

#include "clspeech/base.h"

double cls_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
