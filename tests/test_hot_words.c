/* The beam search's hot-words (cls_beam_options.hot_words, DeepSpeech 0.9.3's hot_boost): with a
 * scorer, a space that scores a word adds the boost of every hot word among that n-gram's words (the
 * word and the words before it) to ln P before lm_alpha, so that a transcript's score moves by exactly
 * lm_alpha times the boosts its n-grams hold; a boost can change which spelling wins; bad hot-words are
 * refused. Host only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "clspeech/decode.h"
#include "clspeech/lm.h"
#include "clspeech/scorer.h"

#define C 4 /* " ", "a", "b", blank */

static const char *const labels[3] = {" ", "a", "b"};

static const char arpa[] =
    "\\data\\\nngram 1=5\nngram 2=2\n\n\\1-grams:\n-1.0\t<unk>\t0\n-99\t<s>\t-0.3\n-1.0\t</s>\t0\n"
    "-0.5\tab\t-0.2\n-0.6\tbb\t-0.2\n\n\\2-grams:\n-0.3\t<s> ab\n-0.4\tab bb\n\n\\end\\\n";

/* Frames of one class each (log-probabilities 0 and -30): the path spells `text` (blank = '_'). */
static int frames_of(const char *text, float *logits) {
  int T = 0;
  for (const char *c = text; *c; c++, T++)
    for (int k = 0; k < C; k++) {
      const int want = *c == ' ' ? 0 : *c == 'a' ? 1 : *c == 'b' ? 2 : 3;
      logits[T * C + k] = k == want ? 0.0f : -30.0f;
    }
  return T;
}

static double best(const float *logits, int T, const cls_beam_options *o, char *text) {
  cls_beam_result r[1];
  int n = 0;
  CHECK_INT(cls_ctc_beam_search(logits, T, C, C, o, r, 1, &n), CLS_OK);
  if (n < 1) return NAN;
  for (int i = 0; i < r[0].length; i++) text[i] = labels[r[0].labels[i]][0];
  text[r[0].length] = '\0';
  const double lp = r[0].log_prob;
  cls_beam_results_free(r, n);
  return lp;
}

int main(void) {
  cls_error err;
  cls_lm *lm = NULL;
  CHECK_INT(cls_lm_parse_arpa(arpa, sizeof arpa - 1, "hot.arpa", &lm, &err), CLS_OK);
  cls_scorer *sc = NULL;
  CHECK_INT(cls_scorer_create(lm, labels, 3, &sc, NULL, &err), CLS_OK);
  if (!sc) return check_finish("test_hot_words");
  const int32_t ab = cls_lm_word_id(lm, "ab", 2), bb = cls_lm_word_id(lm, "bb", 2);
  CHECK(ab >= 0 && bb >= 0, "word ids %d %d", ab, bb);
  cls_beam_options o = cls_beam_options_default();
  o.beam_width = 16;
  o.scorer = sc;
  o.delay_expansion = 0;

  /* "ab bb ": both words scored at their spaces; "ab" is in both n-grams ("<s> ab", "ab bb"). */
  float logits[64 * C];
  const int T = frames_of("ab_ b_b ", logits);
  char text[64], hot_text[64];
  const double plain = best(logits, T, &o, text);
  CHECK(strcmp(text, "ab bb ") == 0, "plain: \"%s\"", text);
  const int32_t words[2] = {ab, bb};
  const double boosts[2] = {2.0, 1.5};
  o.hot_words = words;
  o.hot_boosts = boosts;
  o.n_hot_words = 1; /* ab: +2 in each of the two n-grams */
  double hot = best(logits, T, &o, hot_text);
  CHECK(strcmp(hot_text, text) == 0, "ab hot: \"%s\"", hot_text);
  CHECK(fabs((hot - plain) - o.lm_alpha * 4.0) < 1e-9, "ab hot: %.12f - %.12f, expected alpha * 4 = %.12f", hot,
        plain, o.lm_alpha * 4.0);
  o.hot_words = words + 1; /* bb: +1.5 in the second n-gram only */
  o.hot_boosts = boosts + 1;
  hot = best(logits, T, &o, hot_text);
  CHECK(fabs((hot - plain) - o.lm_alpha * 1.5) < 1e-9, "bb hot: %.12f - %.12f, expected alpha * 1.5", hot, plain);
  o.n_hot_words = 0;

  /* The first letter a little likelier as "a" (0.55 against 0.45): "ab " wins, unless "bb" is boosted by
   * more than ln(0.55/0.45)/alpha plus the language model's own preference for "ab" (a boost of 3). */
  float amb[8 * C];
  const int Ta = frames_of("_b ", amb + C) + 1;
  for (int k = 0; k < C; k++) amb[k] = -30.0f;
  amb[1] = logf(0.55f);
  amb[2] = logf(0.45f);
  best(amb, Ta, &o, text);
  CHECK(strcmp(text, "ab ") == 0, "ambiguous, plain: \"%s\"", text);
  const double three = 3.0;
  o.hot_words = &bb;
  o.hot_boosts = &three;
  o.n_hot_words = 1;
  best(amb, Ta, &o, text);
  CHECK(strcmp(text, "bb ") == 0, "ambiguous, bb boosted: \"%s\"", text);
  const double minus = -3.0;
  o.hot_words = &ab;
  o.hot_boosts = &minus;
  best(amb, Ta, &o, text);
  CHECK(strcmp(text, "bb ") == 0, "ambiguous, ab boosted down: \"%s\"", text);

  /* Refused: an id outside the vocabulary, a boost that is not finite, words without boosts. */
  cls_beam_result r[1];
  int n = 0;
  const int32_t bad_id = cls_lm_vocab_size(lm);
  const double inf = INFINITY;
  o.hot_words = &bad_id;
  o.hot_boosts = &three;
  CHECK_INT(cls_ctc_beam_search(amb, Ta, C, C, &o, r, 1, &n), CLS_ERR_INVALID_ARGUMENT);
  o.hot_words = &ab;
  o.hot_boosts = &inf;
  CHECK_INT(cls_ctc_beam_search(amb, Ta, C, C, &o, r, 1, &n), CLS_ERR_INVALID_ARGUMENT);
  o.hot_boosts = NULL;
  CHECK_INT(cls_ctc_beam_search(amb, Ta, C, C, &o, r, 1, &n), CLS_ERR_INVALID_ARGUMENT);
  cls_scorer_destroy(sc);
  cls_lm_destroy(lm);
  return check_finish("test_hot_words");
}
