/* The tests' assertion helper: CHECK prints the failing expression with the expected and actual
 * values and counts; check_finish prints "NAME: N passed, N failed" and gives the exit status (a failure
 * when a check failed or none ran). */
#ifndef CLS_TEST_CHECK_H
#define CLS_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (cond) {                                                            \
      check_passed++;                                                      \
    } else {                                                               \
      check_failed++;                                                      \
      fprintf(stderr, "FAIL %s:%d: %s\n    ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
    }                                                                      \
  } while (0)

#define CHECK_INT(actual, expected)                                                                  \
  do {                                                                                               \
    long long a_ = (long long)(actual), e_ = (long long)(expected);                                   \
    CHECK(a_ == e_, "%s = %lld, expected %lld", #actual, a_, e_);                                    \
  } while (0)

#define CHECK_CONTAINS(text, needle)                                                                 \
  do {                                                                                               \
    const char *t_ = (text), *n_ = (needle);                                                         \
    CHECK(t_ && strstr(t_, n_), "expected \"%s\" in:\n%s", n_, t_ ? t_ : "(null)");                  \
  } while (0)

/* A test that checked nothing fails too (a loop that ran no case, a fixture list left empty). */
static inline int check_finish(const char *name) {
  printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
  if (check_passed + check_failed == 0) printf("%s: FAIL: no check ran\n", name);
  return check_failed || check_passed == 0 ? 1 : 0;
}

#endif
