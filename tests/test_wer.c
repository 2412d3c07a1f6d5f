/* The evaluation metrics (engine/decode/wer.c): Levenshtein distances, per-sample and corpus WER/CER as
 * DeepSpeech computes them (over UTF-8 codepoints and whitespace-split words), the report's order and its
 * best / median / worst sections. Expected values from DeepSpeech's Python (util/text.py,
 * evaluate_tools.py), as noted at each case. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "clspeech/base.h"
#include "clspeech/decode.h"

static void check_sample(const char *gt, const char *pred, int cd, int cl, int wd, int wl) {
  cls_wer_sample s;
  CHECK_INT(cls_wer_sample_compute(gt, pred, &s), CLS_OK);
  CHECK(s.char_distance == cd && s.char_length == cl && s.word_distance == wd && s.word_length == wl,
        "\"%s\" vs \"%s\": chars %d/%d words %d/%d, expected %d/%d %d/%d", gt, pred, s.char_distance, s.char_length,
        s.word_distance, s.word_length, cd, cl, wd, wl);
  double cer = (double)cd / (cl ? cl : 1), wer = (double)wd / (wl ? wl : 1);
  CHECK(s.cer == cer && s.wer == wer, "\"%s\" vs \"%s\": cer %g wer %g, expected %g %g", gt, pred, s.cer, s.wer, cer,
        wer);
}

static void check_metrics(void) {
  int d = -1;
  const int32_t k1[] = {'k', 'i', 't', 't', 'e', 'n'}, k2[] = {'s', 'i', 't', 't', 'i', 'n', 'g'};
  CHECK_INT(cls_levenshtein(k1, 6, k2, 7, &d), CLS_OK);
  CHECK_INT(d, 3);
  CHECK_INT(cls_levenshtein(k2, 7, k1, 6, &d), CLS_OK);
  CHECK_INT(d, 3);
  CHECK_INT(cls_levenshtein(NULL, 0, k2, 7, &d), CLS_OK);
  CHECK_INT(d, 7);
  CHECK_INT(cls_levenshtein(NULL, 0, NULL, 0, &d), CLS_OK);
  CHECK_INT(d, 0);

  /* The figures DeepSpeech's levenshtein gives (checked with util/text.py's function in Python). */
  check_sample("kitten", "sitting", 3, 6, 1, 1);
  check_sample("the cat sat", "", 11, 11, 3, 3);                          /* empty prediction */
  check_sample("the cat sat", "the bat sat", 1, 11, 1, 3);                /* substitution */
  check_sample("the cat sat", "the sat", 4, 11, 1, 3);                    /* deletion */
  check_sample("the cat sat", "the cat sat on the big mat", 15, 11, 4, 3); /* insertions: rates above 1 */
  check_sample("the the the", "the", 8, 11, 2, 3);
  check_sample("a b c d", "b c d e", 4, 7, 2, 4);
  check_sample("na\xc3\xafve caf\xc3\xa9", "naive cafe", 2, 10, 2, 2);       /* 2-byte UTF-8: codepoints, not bytes */
  check_sample("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "\xe6\x97\xa5\xe6\x9c\xac", 1, 3, 1, 1); /* 3-byte */
  check_sample("a\xf0\x9f\x98\x80" "b", "ab\xf0\x9f\x98\x80", 2, 3, 1, 1);   /* 4-byte */
  check_sample("  hello   world \t", "hello world", 6, 17, 0, 2);          /* runs of whitespace */
  check_sample("a\xc2\xa0" "b", "a b", 1, 3, 0, 2);                          /* NBSP splits words */
  check_sample("x\xe2\x80\x8b" "y", "x y", 1, 3, 2, 1);                      /* zero-width space does not */
  check_sample("", "abc", 3, 0, 1, 0);                                      /* empty ground truth */
  check_sample("", "", 0, 0, 0, 0);
  check_sample("same", "same", 0, 4, 0, 1);

  cls_wer_sample s;
  CHECK_INT(cls_wer_sample_compute("the cat sat", "the cat sat on the big mat", &s), CLS_OK);
  CHECK(fabs(s.wer - 4.0 / 3.0) < 1e-15 && fabs(s.cer - 15.0 / 11.0) < 1e-15, "per-sample rates are not clipped");
  double wer = -1, cer = -1;
  cls_wer_corpus(&s, 1, &wer, &cer);
  CHECK(wer == 1.0 && cer == 1.0, "corpus WER/CER clipped to 1.0: %g %g", wer, cer);

  int n = -1;
  int32_t cp[8];
  CHECK_INT(cls_utf8_codepoints("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", cp, 8, &n), CLS_OK);
  CHECK(n == 4 && cp[0] == 'a' && cp[1] == 0xe9 && cp[2] == 0x20ac && cp[3] == 0x1f600, "codepoints");
  CHECK_INT(cls_utf8_codepoints("abc", NULL, 0, &n), CLS_OK);
  CHECK_INT(n, 3);
  const char *invalid[] = {"\xc3", "ab\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80",
                           "\xff", "\xe2\x82"};
  for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++) {
    CHECK(cls_utf8_codepoints(invalid[i], cp, 8, &n) == CLS_ERR_INVALID_ARGUMENT, "invalid UTF-8 #%zu accepted", i);
    CHECK(cls_wer_sample_compute(invalid[i], "x", &s) == CLS_ERR_INVALID_ARGUMENT, "invalid ground truth #%zu", i);
    CHECK(cls_wer_sample_compute("x", invalid[i], &s) == CLS_ERR_INVALID_ARGUMENT, "invalid prediction #%zu", i);
  }
  CHECK_INT(cls_wer_sample_compute(NULL, "x", &s), CLS_ERR_INVALID_ARGUMENT);
  CHECK(cls_is_space(' ') && cls_is_space('\t') && cls_is_space(0x3000) && cls_is_space(0x1f) &&
            !cls_is_space(0x200b) && !cls_is_space('a'),
        "cls_is_space");

  /* Corpus: sums of distances over sums of lengths, not the mean of the rates. */
  cls_wer_sample c[3];
  CHECK_INT(cls_wer_sample_compute("the cat sat", "the bat sat", &c[0]), CLS_OK); /* 1/3 words, 1/11 chars */
  CHECK_INT(cls_wer_sample_compute("a b c d", "b c d e", &c[1]), CLS_OK);         /* 2/4, 4/7 */
  CHECK_INT(cls_wer_sample_compute("kitten", "sitting", &c[2]), CLS_OK);          /* 1/1, 3/6 */
  cls_wer_corpus(c, 3, &wer, &cer);
  CHECK(fabs(wer - 4.0 / 8.0) < 1e-15 && fabs(cer - 8.0 / 24.0) < 1e-15, "corpus: wer %g (0.5) cer %g (1/3)", wer, cer);
  cls_wer_corpus(NULL, 0, &wer, &cer);
  CHECK(wer == 0.0 && cer == 0.0, "empty corpus");

  /* Report order on a crafted set; the expected permutation is what evaluate_tools.py gives
   * (samples.sort(key=loss, reverse=True); samples.sort(key=wer)), computed in Python. */
  enum { NS = 9 };
  const double rates[NS] = {0.5, 0.0, 0.5, 0.0, 1.0, 0.0, 2.0, 1.0, 0.5};
  const double losses[NS] = {10, 3, 20, 3, 1, 7, 5, 1, 10};
  const int expected[NS] = {5, 1, 3, 2, 0, 8, 4, 7, 6};
  cls_wer_sample rs[NS];
  memset(rs, 0, sizeof rs);
  for (int i = 0; i < NS; i++) {
    rs[i].wer = rates[i];
    rs[i].cer = rates[NS - 1 - i];
  }
  int order[NS];
  CHECK_INT(cls_report_order(rs, losses, NS, false, order), CLS_OK);
  CHECK(!memcmp(order, expected, sizeof order), "report order %d %d %d %d %d %d %d %d %d", order[0], order[1], order[2],
        order[3], order[4], order[5], order[6], order[7], order[8]);
  /* by CER (bytes output mode): cer[i] = rates[8-i]. Python: [5, 3, 7, 0, 8, 6, 1, 4, 2]. */
  const int expected_cer[NS] = {5, 3, 7, 0, 8, 6, 1, 4, 2};
  CHECK_INT(cls_report_order(rs, losses, NS, true, order), CLS_OK);
  CHECK(!memcmp(order, expected_cer, sizeof order), "report order by CER %d %d %d %d %d %d %d %d %d", order[0],
        order[1], order[2], order[3], order[4], order[5], order[6], order[7], order[8]);
  /* A NaN loss comes first among equal WERs, an infinite one next. */
  const double l2[4] = {1.0, NAN, INFINITY, 2.0};
  cls_wer_sample r2[4];
  memset(r2, 0, sizeof r2);
  CHECK_INT(cls_report_order(r2, l2, 4, false, order), CLS_OK);
  CHECK(order[0] == 1 && order[1] == 2 && order[2] == 3 && order[3] == 0, "NaN loss first: %d %d %d %d", order[0],
        order[1], order[2], order[3]);
  CHECK_INT(cls_report_order(r2, l2, -1, false, order), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_report_order(NULL, NULL, 0, false, NULL), CLS_OK);

  /* Sections, as Python's slices give them (printed by Python for each case). */
  struct {
    int n, N, b0, b1, m0, m1, w0, w1;
  } sec[] = {{20, 5, 0, 5, 8, 13, 15, 20}, {2, 5, 0, 2, 1, 2, 0, 2}, {0, 5, 0, 0, 0, 0, 0, 0},
             {7, 0, 0, 0, 3, 3, 0, 7},     {1, 5, 0, 1, 0, 1, 0, 1}, {3, 5, 0, 3, 2, 3, 0, 3},
             {7, 4, 0, 4, 1, 5, 3, 7},     {10, 5, 0, 5, 3, 8, 5, 10}, {11, 5, 0, 5, 3, 8, 6, 11},
             {6, 3, 0, 3, 2, 5, 3, 6}};
  for (size_t i = 0; i < sizeof sec / sizeof *sec; i++) {
    cls_report_sections r;
    CHECK_INT(cls_report_select(sec[i].n, sec[i].N, &r), CLS_OK);
    CHECK(r.best_begin == sec[i].b0 && r.best_end == sec[i].b1 && r.median_begin == sec[i].m0 &&
              r.median_end == sec[i].m1 && r.worst_begin == sec[i].w0 && r.worst_end == sec[i].w1,
          "n=%d N=%d: best [%d,%d) median [%d,%d) worst [%d,%d)", sec[i].n, sec[i].N, r.best_begin, r.best_end,
          r.median_begin, r.median_end, r.worst_begin, r.worst_end);
  }
  cls_report_sections r;
  CHECK_INT(cls_report_select(5, -1, &r), CLS_ERR_INVALID_ARGUMENT);
}

int main(void) {
  check_metrics();
  return check_finish("test_wer");
}
