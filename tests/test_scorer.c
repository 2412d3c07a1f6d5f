/* The language-model scorer in the prefix beam search (include/clspeech/scorer.h): making a scorer
 * (the vocabulary trie, words outside the alphabet skipped and named, bad alphabets), the scorer's
 * terms of a transcript against the model's sentence scores, the beam search against every alignment
 * enumerated on tiny cases with the language-model terms added by hand, an acoustic non-word turned
 * into the right word, a choice between two vocabulary words made by the model, a scorer from the
 * binary form decoding as one from ARPA, streaming in chunks, and argument checks. The model's own scores are checked against KenLM by test_lm.c. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "ctc_reference.h"
#include "clspeech/decode.h"
#include "clspeech/lm.h"
#include "clspeech/scorer.h"
#include "test_rng.h"

#define LN10 2.30258509299404568402

/* DeepSpeech's English alphabet: space, a..z, apostrophe (28 labels; the blank is class 28). */
static const char *const english[] = {" ", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
                                      "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "'"};
enum { EN = 28 };

static int label_of(char ch) {
  for (int i = 0; i < EN; i++)
    if (english[i][0] == ch) return i;
  return -1;
}

static void to_text(const int32_t *labels, int n, const char *const *alphabet, char *out, size_t cap) {
  size_t k = 0;
  for (int i = 0; i < n && k + 2 < cap; i++) k += (size_t)snprintf(out + k, cap - k, "%s", alphabet[labels[i]]);
  out[k] = '\0';
}

static cls_lm *parse(const char *arpa) {
  cls_lm *lm = NULL;
  cls_error err = {0};
  CHECK_INT(cls_lm_parse_arpa(arpa, strlen(arpa), "test.arpa", &lm, &err), CLS_OK);
  if (!lm) fprintf(stderr, "    %s\n", err.text);
  return lm;
}

/* ---- making a scorer ---- */

static void check_create(void) {
  cls_lm *lm = NULL;
  cls_error err = {0};
  CHECK_INT(cls_lm_load_arpa(CLS_FIXTURE_DIR "/lm_small.arpa", &lm, &err), CLS_OK);
  cls_scorer *sc = NULL;
  cls_scorer_info info;
  CHECK_INT(cls_scorer_create(lm, english, EN, &sc, &info, &err), CLS_OK);
  CHECK_INT(info.words, 8); /* the cat dog sat on mat ran a: <s> </s> <unk> are not spelled */
  CHECK_INT(info.skipped, 0);
  CHECK_INT(info.trie_nodes, 1 + 3 + 1 + 3 * 5 + 2); /* the root, the, a, cat dog sat mat ran, on */
  CHECK_INT(cls_scorer_space_label(sc), 0);
  CHECK(cls_scorer_lm(sc) == lm, "the scorer borrows the model");
  cls_scorer_destroy(sc);

  /* Words with characters the alphabet lacks are skipped, counted and named. */
  cls_lm *odd = parse("\\data\\\nngram 1=6\n\n\\1-grams:\n-1 <unk>\n-1 <s>\n-1 </s>\n-1 cafe\n-1 caf\xc3\xa9\n-1 r2d2\n\n"
                      "\\end\\\n");
  CHECK_INT(cls_scorer_create(odd, english, EN, &sc, &info, &err), CLS_OK);
  CHECK_INT(info.words, 1);
  CHECK_INT(info.skipped, 2);
  CHECK_CONTAINS(info.skipped_examples, "\"caf\xc3\xa9\"");
  CHECK_CONTAINS(info.skipped_examples, "\"r2d2\"");
  cls_scorer_destroy(sc);

  /* An alphabet without a space, a label of two characters, a repeated label, no word spellable. */
  static const char *const no_space[] = {"a", "b"};
  CHECK_INT(cls_scorer_create(lm, no_space, 2, &sc, NULL, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK(sc == NULL, "no scorer on failure");
  CHECK_CONTAINS(err.text, "no space label");
  static const char *const wide[] = {" ", "ab"};
  CHECK_INT(cls_scorer_create(lm, wide, 2, &sc, NULL, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "label 1 (\"ab\") is not one character");
  static const char *const twice[] = {" ", "a", "a"};
  CHECK_INT(cls_scorer_create(lm, twice, 3, &sc, NULL, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "labels 1 and 2 are the same character");
  static const char *const digits[] = {" ", "0", "1"};
  CHECK_INT(cls_scorer_create(lm, digits, 3, &sc, NULL, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "none of the model's 8 words can be spelled");
  CHECK_INT(cls_scorer_load(CLS_FIXTURE_DIR "/no_such.arpa", english, EN, &sc, NULL, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "no_such.arpa");
  cls_lm_destroy(odd);
  cls_lm_destroy(lm);
}

/* ---- a transcript's terms ---- */

static void encode(const char *text, int32_t *labels, int *n) {
  *n = 0;
  for (const char *p = text; *p; p++) labels[(*n)++] = label_of(*p);
}

static void check_transcript_score(void) {
  cls_scorer *sc = NULL;
  cls_error err = {0};
  CHECK_INT(cls_scorer_load(CLS_FIXTURE_DIR "/lm_small.arpa", english, EN, &sc, NULL, &err), CLS_OK);
  const cls_lm *lm = cls_scorer_lm(sc);
  const double a = 0.75, b = 1.5;
  int32_t labels[64];
  int n;
  bool valid = false;
  /* Every word scored from <s> on, without </s> (DeepSpeech's decoder never scores the end). */
  static const char *const sentences[] = {"the cat sat on the mat", "a dog ran", "the mat", "on on on on the"};
  for (int i = 0; i < 4; i++) {
    float per[16];
    int n_scores = 0;
    cls_lm_score_sentence(lm, sentences[i], true, false, per, 16, &n_scores, NULL);
    double want = 0.0;
    for (int w = 0; w < n_scores; w++) want += a * LN10 * per[w] + b;
    encode(sentences[i], labels, &n);
    double got = cls_scorer_transcript_score(sc, labels, n, a, b, &valid);
    CHECK(fabs(got - want) < 1e-12 * fabs(want), "\"%s\": %.15g, from the sentence scores %.15g", sentences[i], got,
          want);
    CHECK(valid, "\"%s\" can be decoded", sentences[i]);
    /* A trailing space changes nothing: the word was scored when the space came. */
    labels[n] = 0;
    CHECK(fabs(cls_scorer_transcript_score(sc, labels, n + 1, a, b, &valid) - got) < 1e-12, "trailing space");
  }
  /* A last word that is only a prefix of a vocabulary word scores DeepSpeech's OOV score. */
  encode("the ca", labels, &n);
  double got = cls_scorer_transcript_score(sc, labels, n, a, b, &valid);
  double want = a * LN10 * cls_lm_score_words(lm, (const char *const[]){"<s>"}, 1, "the", NULL) + b +
                a * CLS_LM_OOV_SCORE + b;
  CHECK(fabs(got - want) < 1e-9, "partial last word: %.15g, want %.15g", got, want);
  CHECK(valid, "a prefix of a word can be decoded");
  static const char *const invalid[] = {"the kat", " the", "the  cat", "cat the x"};
  for (int i = 0; i < 4; i++) {
    encode(invalid[i], labels, &n);
    cls_scorer_transcript_score(sc, labels, n, a, b, &valid);
    CHECK(!valid, "\"%s\" cannot be decoded with the scorer", invalid[i]);
  }
  CHECK(cls_scorer_transcript_score(sc, labels, 0, a, b, &valid) == 0.0 && valid, "empty transcript: 0");
  cls_scorer_destroy(sc);
}

/* ---- against every alignment (tiny cases) ---- */

/* Words over {a, b}: a, ab, ba, bab; a bigram model. Alphabet: space, a, b (blank = 3). */
static const char *const ab_arpa =
    "\\data\\\nngram 1=7\nngram 2=6\n\n\\1-grams:\n-1.0\t<unk>\t0\n-99\t<s>\t-0.3\n-0.9\t</s>\t0\n-0.8\ta\t-0.2\n"
    "-1.1\tab\t-0.25\n-1.3\tba\t-0.15\n-1.6\tbab\t-0.1\n\n\\2-grams:\n-0.4\t<s> a\n-0.7\t<s> ba\n-0.5\ta ab\n"
    "-0.6\tab ba\n-0.3\tba a\n-0.9\tbab </s>\n\n\\end\\\n";
static const char *const ab_alphabet[] = {" ", "a", "b"};

/* The scorer's terms of a transcript computed from its text: words split on spaces, scored by string
 * lookups, validity by string comparison; -INFINITY when the beam search cannot reach it. */
static double reference_terms(const cls_lm *lm, const char *text, double alpha, double beta) {
  static const char *const vocab[] = {"a", "ab", "ba", "bab"};
  char words[8][8];
  int nw = 0;
  size_t len = strlen(text);
  if (len && text[0] == ' ') return -INFINITY;
  for (size_t i = 0; i < len;) {
    size_t j = i;
    while (j < len && text[j] != ' ') j++;
    if (j == i) return -INFINITY; /* two spaces */
    memcpy(words[nw], text + i, j - i);
    words[nw++][j - i] = '\0';
    i = j < len ? j + 1 : j;
  }
  const bool last_partial = len && text[len - 1] != ' ';
  double total = 0.0;
  const char *hist[8] = {"<s>"};
  for (int w = 0; w < nw; w++) {
    bool whole = false, prefix = false;
    for (int v = 0; v < 4; v++) {
      whole |= !strcmp(words[w], vocab[v]);
      prefix |= !strncmp(words[w], vocab[v], strlen(words[w]));
    }
    if (!(w == nw - 1 && last_partial ? prefix : whole)) return -INFINITY;
    double ln_p = whole ? LN10 * cls_lm_score_words(lm, hist + w, 1, words[w], NULL) : CLS_LM_OOV_SCORE;
    total += alpha * ln_p + beta;
    hist[w + 1] = words[w];
  }
  return total;
}

static int brute_cases = 0, brute_prefixes = 0;
static double brute_worst = 0.0;

static void brute_force_case(const cls_scorer *sc, int T, double scale) {
  enum { C = 4, MAXR = 4096 };
  const double alpha = 0.8, beta = 0.6;
  float logits[6 * C];
  for (int i = 0; i < T * C; i++) logits[i] = (float)(normal() * scale);
  double lsm[6][C];
  for (int t = 0; t < T; t++) log_softmax(logits + t * C, C, lsm[t]);
  /* Every alignment: its probability to the transcript it collapses to (texts keyed by a numeral). */
  long n_align = 1;
  for (int t = 0; t < T; t++) n_align *= C;
  double *prob = calloc((size_t)n_align * 2, sizeof *prob);
  for (long it = 0; it < n_align; it++) {
    long v = it, key = 0;
    int prev = -1;
    double lp = 0.0;
    for (int t = 0; t < T; t++) {
      int a = (int)(v % C);
      v /= C;
      lp += lsm[t][a];
      if (a != C - 1 && a != prev) key = key * C + a + 1;
      prev = a;
    }
    prob[key] += exp(lp);
  }
  /* The expected score of every transcript the scorer lets through. */
  double best = -INFINITY;
  long best_key = -1;
  int n_valid = 0;
  double *want = malloc((size_t)n_align * 2 * sizeof *want);
  for (long key = 0; key < n_align * 2; key++) {
    want[key] = -INFINITY;
    if (prob[key] <= 0) continue;
    char text[8];
    int n = 0;
    for (long k = key; k > 0; k /= C) text[n++] = ab_alphabet[(k % C) - 1][0];
    for (int i = 0; i < n / 2; i++) {
      char c = text[i];
      text[i] = text[n - 1 - i];
      text[n - 1 - i] = c;
    }
    text[n] = '\0';
    double terms = reference_terms(cls_scorer_lm(sc), text, alpha, beta);
    if (terms == -INFINITY) continue;
    want[key] = log(prob[key]) + terms;
    n_valid++;
    if (want[key] > best) best = want[key], best_key = key;
  }
  cls_beam_options o = cls_beam_options_default();
  o.beam_width = MAXR; /* wider than the number of transcripts: exact */
  o.delay_expansion = 0;
  o.scorer = sc;
  o.lm_alpha = alpha;
  o.lm_beta = beta;
  cls_beam_result *res = calloc(MAXR, sizeof *res);
  int nres = 0;
  CHECK_INT(cls_ctc_beam_search(logits, T, C, C, &o, res, MAXR, &nres), CLS_OK);
  CHECK(nres == n_valid, "T=%d: %d transcripts from the beam search, %d by enumeration", T, nres, n_valid);
  for (int i = 0; i < nres; i++) {
    long key = 0;
    for (int j = 0; j < res[i].length; j++) key = key * C + res[i].labels[j] + 1;
    double err = fabs(res[i].log_prob - want[key]);
    if (isnan(err)) err = INFINITY;
    brute_worst = fmax(brute_worst, err);
    CHECK(err <= 1e-10 * fmax(1.0, fabs(want[key])), "T=%d result %d: %.15g, enumeration %.15g", T, i,
          res[i].log_prob, want[key]);
    if (i == 0) CHECK(key == best_key, "T=%d: the best transcript differs from the enumeration's", T);
  }
  cls_beam_results_free(res, nres);
  free(res);
  free(want);
  free(prob);
  brute_cases++;
  brute_prefixes += n_valid;
}

static void check_brute_force(void) {
  cls_lm *lm = parse(ab_arpa);
  cls_scorer *sc = NULL;
  cls_error err = {0};
  CHECK_INT(cls_scorer_create(lm, ab_alphabet, 3, &sc, NULL, &err), CLS_OK);
  for (int T = 1; T <= 6; T++)
    for (int rep = 0; rep < 8; rep++) brute_force_case(sc, T, rep < 4 ? 1.0 : 3.0);
  printf("  exhaustive with the scorer: %d cases (T<=6, C=4), %d transcripts, worst |score - enumeration| %.2g\n",
         brute_cases, brute_prefixes, brute_worst);
  cls_scorer_destroy(sc);
  cls_lm_destroy(lm);
}

/* ---- the model fixes what the acoustics got wrong ---- */

/* Logits for a spoken text: per character one frame where `text` has probability p_main, `alt` (when
 * given at that position, else none) p_alt, the rest spread over the other classes; a blank frame
 * after each character. Returns the number of frames. */
static int speak(const char *text, const char *alt, double p_main, double p_alt, float *x) {
  enum { C = EN + 1 };
  int T = 0;
  for (size_t i = 0; text[i]; i++) {
    const bool has_alt = alt[i] != '.';
    double rest = (1.0 - p_main - (has_alt ? p_alt : 0.0)) / (C - 1 - has_alt);
    for (int k = 0; k < C; k++) x[T * C + k] = (float)log(rest);
    x[T * C + label_of(text[i])] = (float)log(p_main);
    if (has_alt) x[T * C + label_of(alt[i])] = (float)log(p_alt);
    T++;
    for (int k = 0; k < C; k++) x[T * C + k] = (float)log(0.02 / (C - 1));
    x[T * C + C - 1] = (float)log(0.98);
    T++;
  }
  return T;
}

static void decode_text(const float *x, int T, const cls_beam_options *o, char *out, size_t cap, double *score) {
  cls_beam_result r[2];
  int n = 0;
  CHECK_INT(cls_ctc_beam_search(x, T, EN + 1, EN + 1, o, r, 2, &n), CLS_OK);
  to_text(r[0].labels, r[0].length, english, out, cap);
  if (score) *score = r[0].log_prob;
  cls_beam_results_free(r, n);
}

static void check_fixes(void) {
  cls_scorer *sc = NULL;
  cls_error err = {0};
  CHECK_INT(cls_scorer_load(CLS_FIXTURE_DIR "/lm_small.arpa", english, EN, &sc, NULL, &err), CLS_OK);
  float *x = malloc(200 * (EN + 1) * sizeof *x);
  cls_beam_options none = cls_beam_options_default(), lm = none;
  lm.scorer = sc;
  char text[128];
  /* "cat" heard as the non-word "kat" (k 0.55, c 0.40): the scorer only lets vocabulary words through. */
  int T = speak("the kat sat on the mat", "....c.................", 0.55, 0.40, x);
  decode_text(x, T, &none, text, sizeof text, NULL);
  CHECK(!strcmp(text, "the kat sat on the mat"), "without a scorer: \"%s\"", text);
  double score = 0.0;
  decode_text(x, T, &lm, text, sizeof text, &score);
  CHECK(!strcmp(text, "the cat sat on the mat"), "with the scorer: \"%s\"", text);
  /* Its score is the acoustic probability of that spelling (the CTC forward sum) plus the scorer's
   * terms; the beam's sum of alignments misses at most 1e-6 of it. */
  int32_t labels[64];
  int n;
  encode("the cat sat on the mat", labels, &n);
  bool valid = false;
  double terms = cls_scorer_transcript_score(sc, labels, n, lm.lm_alpha, lm.lm_beta, &valid);
  double acoustic = ctc_log_prob(x, T, EN + 1, EN + 1, labels, n);
  CHECK(valid && score <= acoustic + terms + 1e-9 && score > acoustic + terms - 1e-6, "score %.6f, acoustic %.6f + terms %.6f", score, acoustic,
        terms);

  /* Two vocabulary words: "mat" slightly ahead acoustically (m 0.50, c 0.45), "the cat sat" far more
   * probable to the model: the model decides. */
  T = speak("the mat sat", "....c......", 0.50, 0.45, x);
  decode_text(x, T, &none, text, sizeof text, NULL);
  CHECK(!strcmp(text, "the mat sat"), "without a scorer: \"%s\"", text);
  decode_text(x, T, &lm, text, sizeof text, NULL);
  CHECK(!strcmp(text, "the cat sat"), "with the scorer: \"%s\"", text);
  /* With lm_alpha 0 only the word bonus and the vocabulary remain: the acoustics decide again. */
  lm.lm_alpha = 0.0;
  decode_text(x, T, &lm, text, sizeof text, NULL);
  CHECK(!strcmp(text, "the mat sat"), "lm_alpha 0: \"%s\"", text);
  free(x);
  cls_scorer_destroy(sc);
}

/* ---- the binary form ---- */

/* A scorer loaded from clspeech's binary form decodes exactly as one loaded from the ARPA file. */
static void check_binary_form(void) {
  cls_lm *lm = NULL;
  cls_error err = {0};
  CHECK_INT(cls_lm_load_arpa(CLS_FIXTURE_DIR "/lm_small.arpa", &lm, &err), CLS_OK);
  char path[256];
  snprintf(path, sizeof path, "%s/test_scorer_%d.clm", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  CHECK_INT(cls_lm_save_binary(lm, path, &err), CLS_OK);
  cls_scorer *from_arpa = NULL, *from_binary = NULL;
  CHECK_INT(cls_scorer_create(lm, english, EN, &from_arpa, NULL, &err), CLS_OK);
  CHECK_INT(cls_scorer_load(path, english, EN, &from_binary, NULL, &err), CLS_OK);
  remove(path);
  float *x = malloc(200 * (EN + 1) * sizeof *x);
  int T = speak("the kat sat on the mat", "....c.................", 0.55, 0.40, x);
  cls_beam_options a = cls_beam_options_default(), b = a;
  a.scorer = from_arpa;
  b.scorer = from_binary;
  char ta[128] = "", tb[128] = "";
  double sa = 0.0, sb = 1.0;
  if (from_arpa && from_binary) {
    decode_text(x, T, &a, ta, sizeof ta, &sa);
    decode_text(x, T, &b, tb, sizeof tb, &sb);
  }
  CHECK(!strcmp(ta, "the cat sat on the mat") && !strcmp(ta, tb) && sa == sb,
        "ARPA: \"%s\" %.17g; binary: \"%s\" %.17g", ta, sa, tb, sb);
  free(x);
  cls_scorer_destroy(from_arpa);
  cls_scorer_destroy(from_binary);
  cls_lm_destroy(lm);
}

/* ---- streaming ---- */

/* Random logits leaning to the letters of the model's words, fed in chunks of 1, 7 and 50 frames:
 * the same results as one pass, compared with == (past 256 frames, so the shared start is committed). */
static void check_streaming(void) {
  enum { T = 700, C = EN + 1, MAXR = 5 };
  cls_scorer *sc = NULL;
  cls_error err = {0};
  CHECK_INT(cls_scorer_load(CLS_FIXTURE_DIR "/lm_small.arpa", english, EN, &sc, NULL, &err), CLS_OK);
  const char *speech = "the cat sat on the mat a dog ran on the mat the cat ran ";
  float *x = malloc((size_t)T * C * sizeof *x);
  for (int t = 0; t < T; t++) {
    int hot = t % 3 ? C - 1 : label_of(speech[(t / 3) % strlen(speech)]);
    for (int k = 0; k < C; k++) x[t * C + k] = (float)(normal() + (k == hot ? 4.0 : 0.0));
  }
  cls_beam_options o = cls_beam_options_default();
  o.beam_width = 48;
  o.scorer = sc;
  cls_beam_result whole[MAXR];
  int n_whole = 0;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &o, whole, MAXR, &n_whole), CLS_OK);
  char text[512];
  to_text(whole[0].labels, whole[0].length, english, text, sizeof text);
  CHECK(whole[0].length > 100 && strstr(text, "the cat sat on the mat"), "decoded: \"%s\"", text);
  static const int chunks[] = {1, 7, 50};
  for (int c = 0; c < 3; c++) {
    cls_ctc_decoder *d = NULL;
    CHECK_INT(cls_ctc_decoder_begin(C, 0, &o, &d), CLS_OK);
    for (int t = 0; t < T; t += chunks[c]) {
      int m = T - t < chunks[c] ? T - t : chunks[c];
      CHECK_INT(cls_ctc_decoder_feed(d, x + (size_t)t * C, m, C), CLS_OK);
    }
    cls_beam_result r[MAXR];
    int n = 0;
    CHECK_INT(cls_ctc_decoder_finish(d, r, MAXR, &n), CLS_OK);
    CHECK_INT(n, n_whole);
    for (int i = 0; i < n && i < n_whole; i++)
      CHECK(r[i].length == whole[i].length && r[i].log_prob == whole[i].log_prob &&
                !memcmp(r[i].labels, whole[i].labels, (size_t)r[i].length * sizeof *r[i].labels) &&
                !memcmp(r[i].frames, whole[i].frames, (size_t)r[i].length * sizeof *r[i].frames),
            "chunks of %d: result %d differs from one pass", chunks[c], i);
    cls_beam_results_free(r, n);
    cls_ctc_decoder_free(d);
  }
  cls_beam_results_free(whole, n_whole);
  free(x);
  cls_scorer_destroy(sc);
}

/* ---- arguments ---- */

static void check_arguments(void) {
  cls_scorer *sc = NULL;
  cls_error err = {0};
  CHECK_INT(cls_scorer_load(CLS_FIXTURE_DIR "/lm_small.arpa", english, EN, &sc, NULL, &err), CLS_OK);
  cls_beam_options o = cls_beam_options_default();
  CHECK(o.scorer == NULL && o.lm_alpha == 0.931289039105002 && o.lm_beta == 1.1834137581510284,
        "DeepSpeech's defaults");
  o.scorer = sc;
  cls_ctc_decoder *d = NULL;
  CHECK_INT(cls_ctc_decoder_begin(EN, 0, &o, &d), CLS_ERR_INVALID_ARGUMENT); /* classes != labels + blank */
  o.lm_alpha = NAN;
  CHECK_INT(cls_ctc_decoder_begin(EN + 1, 0, &o, &d), CLS_ERR_INVALID_ARGUMENT);
  o.lm_alpha = 1.0;
  o.lm_beta = INFINITY;
  CHECK_INT(cls_ctc_decoder_begin(EN + 1, 0, &o, &d), CLS_ERR_INVALID_ARGUMENT);
  CHECK(d == NULL, "no decoder on failure");
  o.lm_beta = 0.0;
  CHECK_INT(cls_ctc_decoder_begin(EN + 1, 0, &o, &d), CLS_OK);
  cls_beam_result r[1];
  int n = 0;
  CHECK_INT(cls_ctc_decoder_finish(d, r, 1, &n), CLS_OK);
  CHECK(n == 1 && r[0].length == 0 && r[0].log_prob == 0.0, "nothing fed: the empty transcript");
  cls_beam_results_free(r, n);
  cls_ctc_decoder_free(d);
  cls_scorer_destroy(sc);
  cls_scorer_destroy(NULL);
}

int main(void) {
  check_create();
  check_transcript_score();
  check_brute_force();
  check_fixes();
  check_binary_form();
  check_streaming();
  check_arguments();
  return check_finish("test_scorer");
}
