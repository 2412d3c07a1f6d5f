/* The word n-gram model (engine/decode/lm_*.c): scores of tests/fixtures/lm_small.arpa against KenLM's
 * full_scores (tests/fixtures/lm_small_kenlm.txt, from tests/ref/make_lm_fixture.py), to 1e-5 log10
 * per word; the vocabulary and counts; backoff computed by hand; and each kind of bad ARPA input
 * refused with the file and line named (a positive log10 probability and a NUL byte among them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clspeech/lm.h"

#define ARPA CLS_FIXTURE_DIR "/lm_small.arpa"
#define TOL 1e-5

static void check_kenlm(const cls_lm *lm) {
  FILE *f = fopen(CLS_FIXTURE_DIR "/lm_small_kenlm.txt", "r");
  CHECK(f != NULL, "cannot open the KenLM fixture");
  if (!f) return;
  char line[4096], sentence[4096] = "";
  int bos = 0, eos = 0, sentences = 0, words_checked = 0;
  float scores[256];
  int n_scores = 0, n_oov = 0;
  double total = 0.0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == 'S') {
      int used = 0;
      CHECK(sscanf(line, "S %d %d %n", &bos, &eos, &used) == 2, "bad fixture line %s", line);
      snprintf(sentence, sizeof sentence, "%s", line + used);
      total = cls_lm_score_sentence(lm, sentence, bos, eos, scores, 256, &n_scores, &n_oov);
      sentences++;
    } else if (line[0] == 'P') {
      char *p = line + 1, *end;
      int i = 0;
      double sum = 0.0;
      for (double v = strtod(p, &end); end != p; p = end, v = strtod(p, &end), i++) {
        CHECK(i < n_scores && fabs(scores[i] - v) <= TOL, "\"%s\" word %d: %.7f, KenLM %.7f", sentence, i,
              i < n_scores ? scores[i] : NAN, v);
        sum += v;
        words_checked++;
      }
      CHECK_INT(n_scores, i);
      CHECK(fabs(total - sum) <= TOL * (i + 1), "\"%s\": total %.7f, KenLM %.7f", sentence, total, sum);
    } else if (line[0] == 'O') {
      int oov = 0;
      for (const char *c = line + 1; *c; c++) oov += *c == '1';
      CHECK(oov == n_oov, "\"%s\": %d OOV words, KenLM %d", sentence, n_oov, oov);
    }
  }
  fclose(f);
  CHECK(sentences == 12 && words_checked >= 60, "%d sentences, %d words checked", sentences, words_checked);
  printf("test_lm: %d sentences, %d words agree with KenLM to %g\n", sentences, words_checked, TOL);
}

static void check_model(const cls_lm *lm) {
  CHECK_INT(cls_lm_order(lm), 3);
  CHECK_INT(cls_lm_count(lm, 1), 11);
  CHECK_INT(cls_lm_count(lm, 2), 16);
  CHECK_INT(cls_lm_count(lm, 3), 13);
  CHECK_INT(cls_lm_count(lm, 4), 0);
  CHECK_INT(cls_lm_vocab_size(lm), 11);
  CHECK(cls_lm_memory_bytes(lm) > 0, "memory");
  int32_t cat = cls_lm_word_id(lm, "cat", 3), sat = cls_lm_word_id(lm, "sat", 3);
  CHECK(cat >= 0 && sat >= 0 && cat != sat, "ids %d %d", cat, sat);
  CHECK(strcmp(cls_lm_word(lm, cat), "cat") == 0, "word of id");
  CHECK(cls_lm_word(lm, 11) == NULL && cls_lm_word(lm, -1) == NULL, "ids out of range");
  CHECK_INT(cls_lm_word_id(lm, "zebra", 5), -1);
  CHECK_INT(cls_lm_word_id(lm, "ca", 2), -1);
  bool oov = false;
  CHECK_INT(cls_lm_lookup(lm, "zebra", 5, &oov), cls_lm_unk(lm));
  CHECK(oov, "zebra is out of the vocabulary");
  CHECK_INT(cls_lm_lookup(lm, "cat", 3, &oov), cat);
  CHECK(!oov, "cat is in the vocabulary");
  CHECK(strcmp(cls_lm_word(lm, cls_lm_bos(lm)), "<s>") == 0 && strcmp(cls_lm_word(lm, cls_lm_eos(lm)), "</s>") == 0,
        "<s> </s>");
  /* By hand: p(dog | <s> a) = bo(<s> a) + bo(a) + p(dog) = -0.1 - 0.25 - 1.7 (two levels of backoff);
   * p(sat | the cat) = -0.3 (the trigram); only the last order-1 words of a long history count. */
  const char *h1[] = {"<s>", "a"}, *h2[] = {"mat", "on", "the", "cat"};
  CHECK(fabsf(cls_lm_score_words(lm, h1, 2, "dog", &oov) - (-2.05f)) < 1e-6f, "p(dog | <s> a)");
  CHECK(fabsf(cls_lm_score_words(lm, h2, 4, "sat", &oov) - (-0.3f)) < 1e-6f, "p(sat | the cat)");
  CHECK(fabsf(cls_lm_score_words(lm, h2, 0, "zebra", &oov) - (-1.2041f)) < 1e-6f && oov, "p(<unk>)");
  int32_t hist[2] = {cls_lm_bos(lm), 12345}; /* an id out of range is <unk>: p(sat | <s> <unk>) */
  CHECK(fabsf(cls_lm_score(lm, hist, 2, sat) - (-0.4f)) < 1e-6f, "p(sat | <s> <unk>)");
}

typedef struct bad_case {
  const char *what, *text, *needle;
} bad_case;

#define HEAD "\\data\\\nngram 1=3\nngram 2=1\n\n\\1-grams:\n-1\t<s>\t-0.5\n-1\t</s>\n-0.5\ta\t-0.1\n\n"
static const bad_case BAD[] = {
    {"no \\data\\", "ngram 1=1\n\\1-grams:\n-1 a\n\\end\\\n", "bad.arpa:4: no \\data\\ line"},
    {"empty", "", "bad.arpa:0: no \\data\\ line"},
    {"truncated in a section", HEAD "\\2-grams:\n", "bad.arpa:10: the file ends in the 2-grams section (begun at line 10) after 0 of its 1"},
    {"truncated mid-line", HEAD "\\2-grams:\n-0.2\ta", "bad.arpa:11: a line of the 2-grams section holds 1 words, not 2"},
    {"no \\end\\", HEAD "\\2-grams:\n-0.2\ta </s>\n\n", "bad.arpa:12: the file ends without \\end\\"},
    {"something else than \\end\\", HEAD "\\2-grams:\n-0.2\ta </s>\n\n\\3-grams:\n", "bad.arpa:13: expected \\end\\"},
    {"fewer n-grams than declared", HEAD "\\2-grams:\n\n\\end\\\n",
     "bad.arpa:11: the 2-grams section (begun at line 10) ends after 0 n-grams, but \\data\\ declares 1"},
    {"more n-grams than declared", HEAD "\\2-grams:\n-0.2\ta </s>\n-0.2\t<s> a\n\n\\end\\\n",
     "bad.arpa:12: more 2-grams than the 1 \\data\\ declares"},
    {"a count past the file", "\\data\\\nngram 1=100000\n\n\\1-grams:\n-1 a\n\n\\end\\\n",
     "bad.arpa:2: ngram 1=100000: more n-grams than the rest of the file can hold"},
    {"wrong order in a section", HEAD "\\2-grams:\n-0.2\ta </s> a\n\n\\end\\\n",
     "bad.arpa:11: a line of the 2-grams section holds 3 words, not 2"},
    {"unigram with two words", "\\data\\\nngram 1=1\n\n\\1-grams:\n-1\ta b\t-0.5 x\n\n\\end\\\n",
     "bad.arpa:5: a line of the 1-grams section holds more than 2 words, not 1"},
    {"infinite probability", HEAD "\\2-grams:\ninf\ta </s>\n\n\\end\\\n", "bad.arpa:11: the log10 probability is not finite"},
    {"NaN backoff", "\\data\\\nngram 1=1\nngram 2=0\n\n\\1-grams:\n-1\ta\tnan\n\n\\2-grams:\n\n\\end\\\n",
     "bad.arpa:6: the log10 backoff is not finite"},
    {"overflowing float", HEAD "\\2-grams:\n-1e300\ta </s>\n\n\\end\\\n", "bad.arpa:11: the log10 probability is not finite"},
    {"not a number", HEAD "\\2-grams:\nx\ta </s>\n\n\\end\\\n", "bad.arpa:11: a 2-gram line must start with a log10"},
    {"unknown word", HEAD "\\2-grams:\n-0.2\ta b\n\n\\end\\\n", "bad.arpa:11: the word 'b' is not among the unigrams"},
    {"duplicate unigram", "\\data\\\nngram 1=2\n\n\\1-grams:\n-1 a\n-1 a\n\n\\end\\\n",
     "bad.arpa:6: the unigram 'a' appears twice"},
    {"duplicate bigram", "\\data\\\nngram 1=1\nngram 2=2\n\n\\1-grams:\n-1 a\n\n\\2-grams:\n-1 a a\n-1 a a\n\n\\end\\\n",
     "bad.arpa:10: a 2-gram appears twice"},
    {"orders out of turn", "\\data\\\nngram 1=1\nngram 3=1\n", "bad.arpa:3: ngram 3 follows ngram 1"},
    {"order 7", "\\data\\\nngram 1=1\nngram 2=1\nngram 3=1\nngram 4=1\nngram 5=1\nngram 6=1\nngram 7=1\n"
     "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
     "bad.arpa:8: order 7: at most 6"},
    {"bad count line", "\\data\\\nngram one=1\n", "bad.arpa:2: expected \"ngram N=COUNT\""},
    {"no counts", "\\data\\\n\n\n", "bad.arpa:3: the file ends in the \\data\\ section"},
    {"wrong section header", HEAD "\\3-grams:\n", "bad.arpa:10: expected the \\2-grams: section header"},
    /* issue 45: a probability above 1, refused as KenLM refuses it ("Positive log probability") */
    {"positive unigram", "\\data\\\nngram 1=2\n\n\\1-grams:\n-1\t<s>\n5.0\ta\n\n\\end\\\n",
     "bad.arpa:6: the 1-gram 'a' has log10 probability 5, above 0"},
    {"positive bigram", HEAD "\\2-grams:\n0.25\ta </s>\n\n\\end\\\n",
     "bad.arpa:11: the 2-gram 'a </s>' has log10 probability 0.25, above 0"},
    {"NUL byte", "\\data\\\nngram 1=1\n\0\n", "bad.arpa:3: a NUL byte: binary data, not ARPA text"},
};

static void check_bad(void) {
  for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
    cls_error err;
    cls_error_clear(&err);
    cls_lm *lm = (cls_lm *)1;
    const size_t len = strlen(BAD[i].text) + (strstr(BAD[i].what, "NUL") ? 2 : 0); /* the NUL and its line's end */
    cls_status st = cls_lm_parse_arpa(BAD[i].text, len, "bad.arpa", &lm, &err);
    CHECK(st == CLS_ERR_INVALID_ARGUMENT && lm == NULL, "%s: status %d", BAD[i].what, (int)st);
    CHECK(strstr(err.text, BAD[i].needle) != NULL, "%s: expected \"%s\" in \"%s\"", BAD[i].what, BAD[i].needle, err.text);
  }
  /* the good head with its bigram and \end\ loads; without the final newline too */
  const char *good = HEAD "\\2-grams:\n-0.2\ta </s>\n\n\\end\\";
  cls_lm *lm = NULL;
  cls_error err;
  CHECK_INT(cls_lm_parse_arpa(good, strlen(good), "good.arpa", &lm, &err), CLS_OK);
  CHECK(lm && cls_lm_vocab_size(lm) == 4 && cls_lm_count(lm, 1) == 4, "<unk> added"); /* <unk> added at -100 */
  CHECK(lm && fabsf(cls_lm_score_words(lm, NULL, 0, "zzz", NULL) - (-100.0f)) < 1e-6f, "missing <unk> at -100");
  cls_lm_destroy(lm);
  /* a missing file */
  CHECK_INT(cls_lm_load_arpa(CLS_FIXTURE_DIR "/no_such.arpa", &lm, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "no_such.arpa: cannot open");
}

int main(void) {
  cls_lm *lm = NULL;
  cls_error err;
  cls_error_clear(&err);
  cls_status st = cls_lm_load_arpa(ARPA, &lm, &err);
  CHECK(st == CLS_OK && lm != NULL, "loading %s: %s", ARPA, err.text);
  if (lm) {
    check_model(lm);
    check_kenlm(lm);
    cls_lm_destroy(lm);
  }
  check_bad();
  return check_finish("test_lm");
}
