/* Philox-4x32-10 against the known-answer vectors published with Random123 (kat_vectors), and the
 * dropout draw's range and uniformity. The kernels compile the same header. */
#include <math.h>

#include "check.h"
#include "philox.h"

static void kat(cls_u32 c0, cls_u32 c1, cls_u32 c2, cls_u32 c3, cls_u32 k0, cls_u32 k1, cls_u32 e0, cls_u32 e1,
                cls_u32 e2, cls_u32 e3) {
  cls_philox4 ctr = {{c0, c1, c2, c3}};
  cls_philox4 r = cls_philox4x32_10(ctr, k0, k1);
  CHECK(r.v[0] == e0 && r.v[1] == e1 && r.v[2] == e2 && r.v[3] == e3,
        "philox4x32_10(%08x %08x %08x %08x; %08x %08x) = %08x %08x %08x %08x, expected %08x %08x %08x %08x", c0, c1,
        c2, c3, k0, k1, r.v[0], r.v[1], r.v[2], r.v[3], e0, e1, e2, e3);
}

int main(void) {
  kat(0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8);
  kat(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
      0x6d5451fd);
  kat(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
      0x24126ea1);

  /* Dropout draws: in [0, 1), mean 1/2 and variance 1/12 within 5 standard errors over 2^18 draws,
     and different for neighbouring units, steps and utterances. */
  double sum = 0, sum2 = 0;
  int n = 1 << 18, out_of_range = 0;
  for (int i = 0; i < n; i++) {
    float u = cls_dropout_uniform(4568, 7, 1, (cls_u32)(i >> 11), (cls_u32)((i >> 5) & 63), (cls_u32)(i & 31));
    out_of_range += !(u >= 0.0f && u < 1.0f);
    sum += u;
    sum2 += (double)u * u;
  }
  double mean = sum / n, var = sum2 / n - mean * mean;
  CHECK_INT(out_of_range, 0);
  CHECK(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12 / n), "mean %.6f", mean);
  CHECK(fabs(var - 1.0 / 12) < 5 * sqrt(1.0 / 180 / n), "variance %.6f", var);
  float a = cls_dropout_uniform(1, 2, 3, 4, 5, 6);
  CHECK(a == cls_dropout_uniform(1, 2, 3, 4, 5, 6), "deterministic");
  CHECK(a != cls_dropout_uniform(1, 3, 3, 4, 5, 6), "step changes the draw");
  CHECK(a != cls_dropout_uniform(1, 2, 3, 5, 5, 6), "utterance changes the draw");
  CHECK(a != cls_dropout_uniform(1, 2, 3, 4, 5, 7), "unit changes the draw");
  return check_finish("test_philox");
}
