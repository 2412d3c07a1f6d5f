/* --bytes_output_mode's pieces on the host: the UTF-8 bytes alphabet (its labels, encoding one label
 * per byte, refusing text that is not UTF-8, decoding to whole valid characters only, its file form),
 * the UTF-8 prefix state, greedy and beam decoding over byte labels never giving broken UTF-8 (best
 * paths that end inside a character, start with a continuation byte or spell a surrogate; random
 * logits), and the character-level scorer (`clspeech lm --characters`: the builder's words, the
 * binary form's flag and an unknown flag refused, the scorer over the bytes labels, its terms, and a
 * choice it makes). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/utf8.h"
#include "check.h"
#include "decode/lm_binary.h"
#include "clspeech/data.h"
#include "clspeech/decode.h"
#include "clspeech/lm.h"
#include "clspeech/lm_build.h"
#include "clspeech/scorer.h"

enum { C = 256, BLANK = 255 };

/* ---- the alphabet ---- */

static void check_alphabet(void) {
  cls_alphabet *a = NULL;
  cls_error err = {0};
  CHECK_INT(cls_alphabet_bytes(&a, &err), CLS_OK);
  CHECK_INT(cls_alphabet_size(a), 255);
  CHECK(cls_alphabet_is_bytes(a), "the bytes alphabet says so");
  CHECK(cls_alphabet_label(a, 0)[0] == 1 && cls_alphabet_label(a, 0)[1] == 0, "label 0 is byte 1");
  CHECK((unsigned char)cls_alphabet_label(a, 254)[0] == 255, "label 254 is byte 255");
  CHECK(cls_alphabet_label(a, 255) == NULL, "no label 255 (the blank)");
  CHECK_INT(cls_alphabet_index(a, 'a'), 'a' - 1);

  int32_t labels[16], missing[4];
  int n = 0, n_missing = -1;
  CHECK_INT(cls_alphabet_encode(a, "\xe4\xbd\xa0\xe5\xa5\xbd" "a", labels, 16, &n, missing, 4, &n_missing), CLS_OK);
  CHECK_INT(n, 7);
  CHECK_INT(n_missing, 0);
  const int32_t want[7] = {0xE4 - 1, 0xBD - 1, 0xA0 - 1, 0xE5 - 1, 0xA5 - 1, 0xBD - 1, 'a' - 1};
  CHECK(!memcmp(labels, want, sizeof want), "one label per byte, byte b as label b-1");
  /* not UTF-8: refused as with any alphabet, the bad byte reported as -byte */
  CHECK_INT(cls_alphabet_encode(a, "a\xff" "b\xe4", labels, 16, &n, missing, 4, &n_missing), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(n_missing, 2);
  CHECK_INT(missing[0], -0xFF);
  CHECK_INT(missing[1], -0xE4);
  /* too small a buffer */
  CHECK_INT(cls_alphabet_encode(a, "\xe4\xbd\xa0", labels, 2, &n, NULL, 0, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(n, 3);

  char out[64];
  CHECK_INT(cls_alphabet_decode(a, want, 7, out, sizeof out), CLS_OK);
  CHECK(!strcmp(out, "\xe4\xbd\xa0\xe5\xa5\xbd" "a"), "decode gives the bytes back: %s", out);
  /* broken runs are dropped: an unfinished character at the end, one cut by a byte that does not
   * continue it (that byte read afresh), a lone continuation byte, a surrogate, an overlong form */
  const struct {
    int32_t bytes[8];
    int n;
    const char *text;
  } cases[] = {
      {{0xE4, 0xBD, 0xA0, 0xE5, 0xA5}, 5, "\xe4\xbd\xa0"},
      {{0xE4, 'a', 0xBD}, 3, "a"},
      {{0xE4, 0xBD, 0xE5, 0xA5, 0xBD}, 5, "\xe5\xa5\xbd"},
      {{0x80, 'x'}, 2, "x"},
      {{0xED, 0xA0, 0x80, 'y'}, 4, "y"},
      {{0xC0, 0xAF, 'z'}, 3, "z"},
      {{0xF0, 0x9F, 0x98, 0x80}, 4, "\xf0\x9f\x98\x80"},
      {{0xF4, 0x90, 0x80, 0x80}, 4, ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int32_t l[8];
    for (int k = 0; k < cases[i].n; k++) l[k] = cases[i].bytes[k] - 1;
    CHECK_INT(cls_alphabet_decode(a, l, cases[i].n, out, sizeof out), CLS_OK);
    CHECK(!strcmp(out, cases[i].text), "case %zu decodes to \"%s\", not \"%s\"", i, cases[i].text, out);
    CHECK_INT(cls_utf8_check((const unsigned char *)out, strlen(out), NULL), CLS_OK);
  }
  const int32_t blank = 255;
  CHECK_INT(cls_alphabet_decode(a, &blank, 1, out, sizeof out), CLS_ERR_INVALID_ARGUMENT);

  /* the file form: the marker line reads back as this alphabet; labels after it are refused */
  cls_alphabet *b = NULL;
  CHECK_INT(cls_alphabet_parse(CLS_ALPHABET_BYTES_TEXT, strlen(CLS_ALPHABET_BYTES_TEXT), "x.txt", &b, &err), CLS_OK);
  CHECK(cls_alphabet_is_bytes(b) && !cls_alphabet_differs(a, b, NULL), "the file form is the bytes alphabet");
  cls_alphabet_destroy(b);
  const char with_comment[] = CLS_ALPHABET_BYTES_LINE "\r\n# a comment\n\n";
  CHECK_INT(cls_alphabet_parse(with_comment, strlen(with_comment), "x.txt", &b, &err), CLS_OK);
  CHECK(cls_alphabet_is_bytes(b), "comments may follow");
  cls_alphabet_destroy(b);
  const char with_label[] = CLS_ALPHABET_BYTES_LINE "\na\n";
  CHECK_INT(cls_alphabet_parse(with_label, strlen(with_label), "x.txt", &b, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "x.txt:2:");
  const char english[] = " \na\nb\n";
  CHECK_INT(cls_alphabet_parse(english, strlen(english), "e.txt", &b, &err), CLS_OK);
  CHECK(!cls_alphabet_is_bytes(b), "an ordinary alphabet is not the bytes one");
  CHECK(cls_alphabet_differs(a, b, &err), "the bytes alphabet differs from one of characters");
  CHECK_CONTAINS(err.text, "the UTF-8 bytes alphabet against an alphabet of characters");
  cls_alphabet_destroy(b);
  cls_alphabet_destroy(a);
}

/* ---- the prefix state ---- */

static void check_state(void) {
  cls_utf8_state s = cls_utf8_state_start();
  CHECK(!cls_utf8_state_accepts(s, 0x80) && !cls_utf8_state_accepts(s, 0xC1) && !cls_utf8_state_accepts(s, 0xF5),
        "no continuation, C0/C1 or F5.. byte starts a character");
  CHECK(cls_utf8_state_accepts(s, 'a') && cls_utf8_state_accepts(s, 0xE4), "ASCII and leads start one");
  s = cls_utf8_state_push(s, 0xE0);
  CHECK(!cls_utf8_state_accepts(s, 0x9F) && cls_utf8_state_accepts(s, 0xA0), "E0 takes A0..BF (no overlong form)");
  s = cls_utf8_state_push(cls_utf8_state_start(), 0xED);
  CHECK(!cls_utf8_state_accepts(s, 0xA0), "ED A0 would be a surrogate");
  const unsigned char tail[3] = {'a', 0xF0, 0x9F};
  s = cls_utf8_state_of_tail(tail, 3);
  CHECK_INT(s.need, 2);
  CHECK_INT(s.have, 2);
  const unsigned char whole[3] = {0x9F, 0x98, 0x80};
  CHECK_INT(cls_utf8_state_of_tail(whole, 3).need, 0);
}

/* ---- decoding ---- */

/* Logits of T frames, each frame's class path[t] (a byte, or -1 for blank) at `peak`, the rest flat. */
static void path_logits(const int *path, int T, float peak, float *x) {
  for (int t = 0; t < T; t++) {
    for (int k = 0; k < C; k++) x[t * C + k] = 0.0f;
    x[t * C + (path[t] < 0 ? BLANK : path[t] - 1)] = peak;
  }
}

static bool result_is_utf8(const cls_beam_result *r) {
  unsigned char buf[512];
  if (r->length > (int)sizeof buf) return false;
  for (int i = 0; i < r->length; i++) {
    if (r->labels[i] < 0 || r->labels[i] > 254) return false;
    buf[i] = (unsigned char)(r->labels[i] + 1);
  }
  return cls_utf8_check(buf, (size_t)r->length, NULL) == CLS_OK;
}

static void greedy(const float *x, int T, int utf8, cls_beam_result *r) {
  cls_beam_options o = cls_beam_options_default();
  o.utf8_bytes = utf8;
  cls_ctc_decoder *d = NULL;
  int n = 0;
  CHECK_INT(cls_ctc_decoder_begin(C, 1, &o, &d), CLS_OK);
  CHECK_INT(cls_ctc_decoder_feed(d, x, T, C), CLS_OK);
  CHECK_INT(cls_ctc_decoder_finish(d, r, 1, &n), CLS_OK);
  cls_ctc_decoder_free(d);
}

static void check_decoders(void) {
  /* best path: 你 then the first two bytes of 好 */
  const int unfinished[] = {0xE4, -1, 0xBD, 0xA0, -1, 0xE5, 0xA5, -1};
  float x[64 * C];
  path_logits(unfinished, 8, 8.0f, x);
  cls_beam_result r[4];
  greedy(x, 8, 0, r);
  CHECK_INT(r[0].length, 5); /* without the option: the raw labels, as before */
  cls_beam_results_free(r, 1);
  greedy(x, 8, 1, r);
  CHECK_INT(r[0].length, 3);
  CHECK(result_is_utf8(&r[0]), "greedy keeps whole characters");
  cls_beam_results_free(r, 1);

  cls_beam_options o = cls_beam_options_default();
  o.beam_width = 16;
  o.utf8_bytes = 1;
  int n = 0;
  CHECK_INT(cls_ctc_beam_search(x, 8, C, C, &o, r, 4, &n), CLS_OK);
  CHECK(n >= 1, "results");
  for (int i = 0; i < n; i++) CHECK(result_is_utf8(&r[i]), "beam result %d is valid UTF-8", i);
  CHECK(r[0].length == 3 && r[0].labels[0] == 0xE4 - 1, "the best is 你, the unfinished 好 left out (length %d)",
        r[0].length);
  cls_beam_results_free(r, n);

  /* a best path that starts with a continuation byte: the byte is never taken */
  const int lone[] = {0x80, 'a', -1, 'b'};
  path_logits(lone, 4, 12.0f, x);
  CHECK_INT(cls_ctc_beam_search(x, 4, C, C, &o, r, 4, &n), CLS_OK);
  for (int i = 0; i < n; i++) CHECK(result_is_utf8(&r[i]), "beam result %d is valid UTF-8", i);
  CHECK(r[0].length == 2 && r[0].labels[0] == 'a' - 1 && r[0].labels[1] == 'b' - 1, "the best is \"ab\"");
  cls_beam_results_free(r, n);
  o.utf8_bytes = 0;
  CHECK_INT(cls_ctc_beam_search(x, 4, C, C, &o, r, 4, &n), CLS_OK);
  CHECK(!result_is_utf8(&r[0]), "without the option the search follows the broken bytes");
  cls_beam_results_free(r, n);
  /* one that spells a surrogate (ED A0 80): A0 never follows ED; the unfinished ED 80 is left out */
  const int surrogate[] = {'a', 0xED, 0xA0, 0x80};
  path_logits(surrogate, 4, 12.0f, x);
  o.utf8_bytes = 1;
  CHECK_INT(cls_ctc_beam_search(x, 4, C, C, &o, r, 4, &n), CLS_OK);
  for (int i = 0; i < n; i++) CHECK(result_is_utf8(&r[i]), "beam result %d is valid UTF-8", i);
  CHECK(r[0].length == 1 && r[0].labels[0] == 'a' - 1, "the best is \"a\" (length %d)", r[0].length);
  cls_beam_results_free(r, n);
  greedy(x, 4, 1, r);
  CHECK(r[0].length == 1 && r[0].labels[0] == 'a' - 1, "greedy: \"a\" (length %d)", r[0].length);
  cls_beam_results_free(r, 1);

  /* random peaky logits: every result of both decoders is valid UTF-8, in one feed or in chunks */
  unsigned seed = 12345;
  int checked = 0;
  for (int rep = 0; rep < 40; rep++) {
    const int T = 24;
    for (int i = 0; i < T * C; i++) {
      seed = seed * 1103515245u + 12345u;
      x[i] = (float)((seed >> 16) % 1000) / 1000.0f;
    }
    for (int t = 0; t < T; t++) /* a few high classes per frame, leads and continuations among them */
      for (int j = 0; j < 4; j++) {
        seed = seed * 1103515245u + 12345u;
        const int pick[] = {0xE4 - 1, 0xBD - 1, 0xA0 - 1, 'a' - 1, 0xF0 - 1, 0x9F - 1, 0x80 - 1, BLANK};
        x[t * C + pick[(seed >> 16) % 8]] += 6.0f;
      }
    o.utf8_bytes = 1;
    o.beam_width = 8;
    CHECK_INT(cls_ctc_beam_search(x, T, C, C, &o, r, 4, &n), CLS_OK);
    for (int i = 0; i < n; i++, checked++) CHECK(result_is_utf8(&r[i]), "rep %d result %d valid", rep, i);
    cls_beam_results_free(r, n);
    greedy(x, T, 1, r);
    CHECK(result_is_utf8(&r[0]), "rep %d greedy valid", rep);
    cls_beam_results_free(r, 1);
  }
  CHECK(checked >= 40, "%d random results checked", checked);

  o = cls_beam_options_default();
  o.utf8_bytes = 1;
  cls_ctc_decoder *d = NULL;
  CHECK_INT(cls_ctc_decoder_begin(29, 0, &o, &d), CLS_ERR_INVALID_ARGUMENT); /* bytes need 256 classes */
  CHECK_INT(cls_ctc_decoder_begin(29, 1, &o, &d), CLS_ERR_INVALID_ARGUMENT);
}

/* ---- the character-level scorer ---- */

static const char *bytes_labels[255];

static cls_lm *char_model(const char *text, bool characters) {
  const char *path = "test_bytes_mode.corpus.txt";
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  fputs(text, f);
  fclose(f);
  cls_lm_build_options bo = cls_lm_build_options_default();
  bo.order = 2;
  bo.discount_fallback = 1;
  bo.characters = characters;
  char *arpa = NULL;
  size_t size = 0;
  cls_error err = {0};
  cls_lm *lm = NULL;
  CHECK_INT(cls_lm_build_arpa_text(path, &bo, &arpa, &size, NULL, &err), CLS_OK);
  if (arpa) CHECK_INT(cls_lm_parse_arpa(arpa, size, "built", &lm, &err), CLS_OK);
  free(arpa);
  remove(path);
  if (lm) cls_lm_set_characters(lm, characters);
  return lm;
}

static void check_scorer(void) {
  static char bytes[255][2];
  for (int i = 0; i < 255; i++) {
    bytes[i][0] = (char)(i + 1);
    bytes[i][1] = 0;
    bytes_labels[i] = bytes[i];
  }
  const char *corpus = "\xe4\xbd\xa0\xe5\xa5\xbd\n\xe4\xbd\xa0\xe4\xbb\xac \xe5\xa5\xbd\n"; /* 你好 / 你们 好 */
  cls_lm *lm = char_model(corpus, true);
  if (!lm) return;
  CHECK(cls_lm_word_id(lm, "\xe4\xbd\xa0", 3) >= 0 && cls_lm_word_id(lm, "\xe4\xbb\xac", 3) >= 0,
        "each character is a word");
  CHECK(cls_lm_word_id(lm, "\xe4\xbd\xa0\xe5\xa5\xbd", 6) < 0, "no word of two characters");
  CHECK_INT(cls_lm_vocab_size(lm), 3 + 3);
  /* the binary form records the mode */
  cls_error err = {0};
  CHECK_INT(cls_lm_save_binary(lm, "test_bytes_mode.clm", &err), CLS_OK);
  cls_lm *back = NULL;
  CHECK_INT(cls_lm_load_binary("test_bytes_mode.clm", &back, &err), CLS_OK);
  CHECK(cls_lm_characters(back), "the flag survives the binary form");
  cls_lm_destroy(back);
  /* a flag bit this reader does not know is refused, not ignored */
  FILE *bf = fopen("test_bytes_mode.clm", "rb");
  static unsigned char image[1 << 16];
  const size_t image_bytes = bf ? fread(image, 1, sizeof image, bf) : 0;
  if (bf) fclose(bf);
  CHECK(image_bytes > sizeof(lm_bin_header) && image_bytes < sizeof image, "read the binary form (%zu bytes)", image_bytes);
  lm_bin_header h;
  memcpy(&h, image, sizeof h);
  CHECK_INT(h.flags, LM_BIN_FLAG_CHARACTERS);
  h.flags |= 2u;
  h.checksum = 0;
  memcpy(image, &h, sizeof h);
  h.checksum = lm_bin_checksum(image, image_bytes);
  memcpy(image, &h, sizeof h);
  back = NULL;
  CHECK_INT(cls_lm_parse_binary(image, image_bytes, "flags.clm", &back, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "unknown header flags 0x3");
  cls_lm_destroy(back);
  remove("test_bytes_mode.clm");

  cls_scorer *sc = NULL;
  cls_scorer_info info;
  CHECK_INT(cls_scorer_create(lm, bytes_labels, 255, &sc, &info, &err), CLS_OK);
  CHECK_INT(info.words, 3);
  CHECK(cls_scorer_characters(sc) && cls_scorer_space_label(sc) == -1, "a character scorer, no space");
  /* its terms: each character as it completes */
  const int32_t nihao[] = {0xE4 - 1, 0xBD - 1, 0xA0 - 1, 0xE5 - 1, 0xA5 - 1, 0xBD - 1};
  bool valid = false;
  const double got = cls_scorer_transcript_score(sc, nihao, 6, 0.5, 1.0, &valid);
  const int32_t ni = cls_lm_word_id(lm, "\xe4\xbd\xa0", 3), hao = cls_lm_word_id(lm, "\xe5\xa5\xbd", 3);
  const int32_t h1[] = {cls_lm_bos(lm)}, h2[] = {ni};
  const double want = 0.5 * (cls_lm_score(lm, h1, 1, ni) + cls_lm_score(lm, h2, 1, hao)) * log(10.0) + 2.0;
  CHECK(valid && fabs(got - want) < 1e-9, "terms %.9f, expected %.9f", got, want);
  cls_scorer_transcript_score(sc, nihao, 5, 0.5, 1.0, &valid);
  CHECK(valid, "an unfinished vocabulary character is reachable");
  const int32_t other[] = {0xE4 - 1, 0xBD - 1, 0xA1 - 1}; /* 佡: not in the vocabulary */
  cls_scorer_transcript_score(sc, other, 3, 0.5, 1.0, &valid);
  CHECK(!valid, "a character outside the vocabulary is not");

  /* a choice: the acoustics favour 佡 a little over 你, the scorer turns it into 你好 */
  const int seq_a[] = {0xE4, -1, 0xBD, -1, 0xA1, -1, 0xE5, -1, 0xA5, -1, 0xBD, -1};
  float x[12 * C];
  path_logits(seq_a, 12, 6.0f, x);
  x[4 * C + 0xA0 - 1] = 5.5f; /* 你's last byte, a little below 佡's */
  cls_beam_options o = cls_beam_options_default();
  o.beam_width = 32;
  o.utf8_bytes = 1;
  cls_beam_result r[2];
  int n = 0;
  CHECK_INT(cls_ctc_beam_search(x, 12, C, C, &o, r, 2, &n), CLS_OK);
  CHECK(r[0].length == 6 && r[0].labels[2] == 0xA1 - 1, "without the scorer: 佡好");
  cls_beam_results_free(r, n);
  o.scorer = sc;
  CHECK_INT(cls_ctc_beam_search(x, 12, C, C, &o, r, 2, &n), CLS_OK);
  CHECK(r[0].length == 6 && !memcmp(r[0].labels, nihao, sizeof nihao), "with the scorer: 你好 (length %d)",
        r[0].length);
  for (int i = 0; i < n; i++) CHECK(result_is_utf8(&r[i]), "scored result %d valid", i);
  cls_beam_results_free(r, n);
  o.utf8_bytes = 0;
  cls_ctc_decoder *d = NULL;
  CHECK_INT(cls_ctc_decoder_begin(C, 0, &o, &d), CLS_ERR_INVALID_ARGUMENT); /* a bytes scorer needs the option */
  cls_scorer_destroy(sc);

  /* the bytes labels with a word model are refused, naming the way out */
  cls_lm *words = char_model(corpus, false);
  if (words) {
    CHECK_INT(cls_scorer_create(words, bytes_labels, 255, &sc, NULL, &err), CLS_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.text, "clspeech lm --characters");
  }
  cls_lm_destroy(words);
  /* a character model over an alphabet of characters needs no space label */
  const char *const chars[] = {"\xe4\xbd\xa0", "\xe5\xa5\xbd"};
  CHECK_INT(cls_scorer_create(lm, chars, 2, &sc, &info, &err), CLS_OK);
  CHECK_INT(info.words, 2);
  CHECK_INT(info.skipped, 1); /* 们 has no label */
  const int32_t two[] = {0, 1};
  const double t2 = cls_scorer_transcript_score(sc, two, 2, 0.5, 1.0, &valid);
  CHECK(valid && fabs(t2 - want) < 1e-9, "the same terms over character labels: %.9f", t2);
  cls_scorer_destroy(sc);
  cls_lm_destroy(lm);
}

int main(void) {
  check_alphabet();
  check_state();
  check_decoders();
  check_scorer();
  return check_finish("test_bytes_mode");
}
