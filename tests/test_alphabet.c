/* Alphabet files (DeepSpeech's rules: comments, \\#, line ends, UTF-8 labels, bad lines) and
 * transcript encoding and decoding with the report of missing characters. Needs data;
 * writes its own files under a mkdtemp folder and removes them. */
#include "check.h"
#include "data_present.h"
#include "clspeech/data.h"
#include "data_files.h"

/* Loads and expects failure with exactly `msg`. */
static void expect_alphabet_error(const char *text, cls_status want, const char *msg) {
  write_text("bad-alphabet.txt", text);
  cls_error err = {0};
  cls_alphabet *a = (cls_alphabet *)&err; /* must be reset to NULL */
  cls_status st = cls_alphabet_load(tmp_path("bad-alphabet.txt"), &a, &err);
  CHECK_INT(st, want);
  if (want != CLS_OK) CHECK_INT(err.status, want); /* the status travels with the text */
  CHECK(a == NULL, "alphabet set on failure");
  char full[800];
  snprintf(full, sizeof full, "%s/bad-alphabet.txt%s", tmp, msg);
  CHECK(strcmp(err.text, full) == 0, "message\n      %s\n    expected\n      %s", err.text, full);
  if (st == CLS_OK) cls_alphabet_destroy(a);
}

/* ---- alphabets ---- */

static void test_smoke_alphabet(void) {
  cls_alphabet *a = smoke_alphabet();
  if (!a) return;
  CHECK_INT(cls_alphabet_size(a), 28);
  CHECK(strcmp(cls_alphabet_label(a, 0), " ") == 0, "label 0 is \"%s\"", cls_alphabet_label(a, 0));
  CHECK(strcmp(cls_alphabet_label(a, 1), "a") == 0, "label 1 is \"%s\"", cls_alphabet_label(a, 1));
  CHECK(strcmp(cls_alphabet_label(a, 26), "z") == 0, "label 26 is \"%s\"", cls_alphabet_label(a, 26));
  CHECK(strcmp(cls_alphabet_label(a, 27), "'") == 0, "label 27 is \"%s\"", cls_alphabet_label(a, 27));
  CHECK(cls_alphabet_label(a, 28) == NULL, "the blank has no text");
  CHECK(cls_alphabet_label(a, -1) == NULL, "label -1 has text");
  CHECK_INT(cls_alphabet_index(a, ' '), 0);
  CHECK_INT(cls_alphabet_index(a, 'q'), 17);
  CHECK_INT(cls_alphabet_index(a, '\''), 27);
  CHECK_INT(cls_alphabet_index(a, 'A'), -1);
  CHECK_INT(cls_alphabet_index(a, '#'), -1);

  int32_t labels[64];
  int n = -1, n_missing = -1;
  CHECK_INT(cls_alphabet_encode(a, LDC_TEXT, labels, 64, &n, NULL, 0, &n_missing), CLS_OK);
  CHECK_INT(n, 52);
  CHECK_INT(n_missing, 0);
  const int32_t head[] = {19, 8, 5, 0, 8, 1, 4, 0, 25, 15, 21, 18};
  for (int i = 0; i < 12; i++) CHECK(labels[i] == head[i], "label %d is %d, expected %d", i, labels[i], head[i]);
  CHECK_INT(labels[51], 18);
  int spaces = 0;
  for (int i = 0; i < n; i++) spaces += labels[i] == 0;
  CHECK_INT(spaces, 10);
  char text[128];
  CHECK_INT(cls_alphabet_decode(a, labels, n, text, sizeof text), CLS_OK);
  CHECK(strcmp(text, LDC_TEXT) == 0, "decoded \"%s\"", text);
  CHECK_INT(cls_alphabet_encode(a, "don't", labels, 64, &n, NULL, 0, NULL), CLS_OK);
  CHECK_INT(labels[3], 27);

  /* Missing characters: every distinct one, in order of first appearance. */
  int32_t missing[8];
  for (int i = 0; i < 8; i++) missing[i] = 12345;
  CHECK_INT(cls_alphabet_encode(a, "Hello, w\xC3\xB6rld 1!!, H", labels, 64, &n, missing, 8, &n_missing),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(n, 19);
  CHECK_INT(n_missing, 5);
  CHECK_INT(missing[0], 'H');
  CHECK_INT(missing[1], ',');
  CHECK_INT(missing[2], 0xF6);
  CHECK_INT(missing[3], '1');
  CHECK_INT(missing[4], '!');
  CHECK_INT(missing[5], 12345);
  CHECK_INT(labels[0], -1);
  CHECK_INT(labels[1], 5);
  char desc[256];
  size_t dl = cls_alphabet_describe_chars(missing, n_missing, desc, sizeof desc);
  const char *want = "'H' (U+0048), ',' (U+002C), '\xC3\xB6' (U+00F6), '1' (U+0031), '!' (U+0021)";
  CHECK(strcmp(desc, want) == 0, "described as %s", desc);
  CHECK_INT(dl, strlen(want));
  /* Too small a buffer keeps whole items and says there is more. */
  cls_alphabet_describe_chars(missing, n_missing, desc, 30);
  CHECK(strcmp(desc, "'H' (U+0048), ...") == 0, "truncated to %s", desc);
  cls_alphabet_describe_chars(missing, n_missing, desc, 8);
  CHECK(strcmp(desc, "...") == 0, "truncated to %s", desc);
  /* A short `missing` still counts them all. */
  for (int i = 0; i < 8; i++) missing[i] = 12345;
  cls_alphabet_encode(a, "ABCD", labels, 64, &n, missing, 2, &n_missing);
  CHECK_INT(n_missing, 4);
  CHECK_INT(missing[1], 'B');
  CHECK_INT(missing[2], 12345);
  /* Bytes that are not UTF-8, an overlong form, a control character. */
  CHECK_INT(cls_alphabet_encode(a, "a\xFF" "b\xC0\x80\t", labels, 64, &n, missing, 8, &n_missing),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(n, 6);
  CHECK_INT(n_missing, 4);
  CHECK_INT(missing[0], -0xFF);
  CHECK_INT(missing[1], -0xC0);
  cls_alphabet_describe_chars(missing, n_missing, desc, sizeof desc);
  CHECK(strcmp(desc, "invalid UTF-8 byte 0xFF, invalid UTF-8 byte 0xC0, invalid UTF-8 byte 0x80, U+0009") == 0,
        "described as %s", desc);
  /* Invisible characters by code only. */
  CHECK_INT(cls_alphabet_encode(a, "a\xC2\xA0" "b\xE2\x80\x8B", labels, 64, &n, missing, 8, &n_missing),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(n, 4);
  cls_alphabet_describe_chars(missing, n_missing, desc, sizeof desc);
  CHECK(strcmp(desc, "U+00A0, U+200B") == 0, "described as %s", desc);
  /* An overlong form of '/' and a UTF-16 surrogate are bytes, not characters. */
  CHECK_INT(cls_alphabet_encode(a, "\xE0\x80\xAF\xED\xA0\x80", labels, 64, &n, missing, 8, &n_missing),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(n, 6);
  CHECK_INT(n_missing, 5);
  CHECK_INT(missing[0], -0xE0);
  CHECK_INT(missing[3], -0xED);
  CHECK_INT(missing[4], -0xA0);
  /* The labels must fit. */
  labels[2] = 777;
  CHECK_INT(cls_alphabet_encode(a, "abc", labels, 2, &n, missing, 8, &n_missing), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(n, 3);
  CHECK_INT(n_missing, 0);
  CHECK_INT(labels[1], 2);
  CHECK_INT(labels[2], 777);
  CHECK_INT(cls_alphabet_encode(a, "abc", NULL, 0, &n, NULL, 0, NULL), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(n, 3);
  CHECK_INT(cls_alphabet_encode(a, "", labels, 2, &n, NULL, 0, &n_missing), CLS_OK);
  CHECK_INT(n, 0);

  /* Decoding: the blank and other labels outside the alphabet, and a short buffer. */
  const int32_t abc[] = {1, 2, 3}, with_blank[] = {1, 28, 2}, negative[] = {-1};
  CHECK_INT(cls_alphabet_decode(a, with_blank, 3, text, sizeof text), CLS_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(text, "a") == 0, "decoded up to the blank as \"%s\"", text);
  CHECK_INT(cls_alphabet_decode(a, negative, 1, text, sizeof text), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_alphabet_decode(a, abc, 3, text, 3), CLS_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(text, "ab") == 0, "truncated to \"%s\"", text);
  CHECK_INT(cls_alphabet_decode(a, abc, 3, text, 4), CLS_OK);
  CHECK(strcmp(text, "abc") == 0, "decoded \"%s\"", text);
  CHECK_INT(cls_alphabet_decode(a, abc, 0, text, 4), CLS_OK);
  CHECK(text[0] == '\0', "decoded nothing as \"%s\"", text);
  cls_alphabet_destroy(a);
}

static void test_handmade_alphabet(void) {
  /* A byte-order mark, comments, "\#", CRLF, CR and LF line ends, empty lines, multibyte labels, no
     final newline. */
  const char *text = "\xEF\xBB\xBF# comment\r\n"          /* 1 */
                     "\r\n"                               /* 2 */
                     "\xD0\xB0\r\n"                       /* 3: Cyrillic a -> 0 */
                     "\\#\r"                              /* 4: '#' -> 1 */
                     "\xC3\xA9\r"                         /* 5: e acute -> 2 */
                     " \n"                                /* 6: space -> 3 */
                     "\n"                                 /* 7 */
                     "#\xC3\xA9 not a label\n"            /* 8 */
                     "\xE2\x82\xAC\n"                     /* 9: euro -> 4 */
                     "\xF0\x9F\x98\x80\n"                 /* 10: emoji -> 5 */
                     "\\\n"                               /* 11: backslash -> 6 */
                     "z";                                 /* 12: z -> 7 */
  write_text("hand.txt", text);
  cls_error err = {0};
  cls_alphabet *a = NULL;
  CHECK_INT(cls_alphabet_load(tmp_path("hand.txt"), &a, &err), CLS_OK);
  if (!a) return;
  CHECK_INT(cls_alphabet_size(a), 8);
  CHECK_INT(cls_alphabet_index(a, 0x430), 0);
  CHECK_INT(cls_alphabet_index(a, '#'), 1);
  CHECK_INT(cls_alphabet_index(a, 0xE9), 2);
  CHECK_INT(cls_alphabet_index(a, ' '), 3);
  CHECK_INT(cls_alphabet_index(a, 0x20AC), 4);
  CHECK_INT(cls_alphabet_index(a, 0x1F600), 5);
  CHECK_INT(cls_alphabet_index(a, '\\'), 6);
  CHECK_INT(cls_alphabet_index(a, 'z'), 7);
  CHECK_INT(cls_alphabet_index(a, 0xFEFF), -1);
  CHECK(strcmp(cls_alphabet_label(a, 2), "\xC3\xA9") == 0, "label 2 is \"%s\"", cls_alphabet_label(a, 2));
  CHECK(strcmp(cls_alphabet_label(a, 5), "\xF0\x9F\x98\x80") == 0, "label 5 is \"%s\"", cls_alphabet_label(a, 5));
  int32_t labels[16];
  int n = 0;
  const char *s = "z#\xC3\xA9 \xE2\x82\xAC\xF0\x9F\x98\x80\xD0\xB0\\";
  CHECK_INT(cls_alphabet_encode(a, s, labels, 16, &n, NULL, 0, NULL), CLS_OK);
  CHECK_INT(n, 8);
  const int32_t want[] = {7, 1, 2, 3, 4, 5, 0, 6};
  for (int i = 0; i < 8; i++) CHECK(labels[i] == want[i], "label %d is %d, expected %d", i, labels[i], want[i]);
  char back[64];
  CHECK_INT(cls_alphabet_decode(a, labels, n, back, sizeof back), CLS_OK);
  CHECK(strcmp(back, s) == 0, "decoded \"%s\"", back);
  CHECK_INT(cls_alphabet_decode(a, labels, n, back, 4), CLS_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(back, "z#") == 0, "cut inside a character: \"%s\"", back);
  cls_alphabet_destroy(a);

  /* The same text from memory. */
  a = NULL;
  CHECK_INT(cls_alphabet_parse(text, strlen(text), "mem", &a, &err), CLS_OK);
  CHECK_INT(cls_alphabet_size(a), 8);
  cls_alphabet_destroy(a);

  /* The Russian sample's alphabet: 33 Cyrillic letters and the space. */
  a = NULL;
  CHECK_INT(cls_alphabet_load(SMOKE "/russian_sample_data/alphabet.ru", &a, &err), CLS_OK);
  if (a) {
    CHECK_INT(cls_alphabet_size(a), 34);
    CHECK_INT(cls_alphabet_index(a, ' '), 0);
    CHECK_INT(cls_alphabet_index(a, 0x43E), 1);   /* о */
    CHECK_INT(cls_alphabet_index(a, 0x44A), 33);  /* ъ */
    CHECK_INT(cls_alphabet_index(a, 'a'), -1);
    const char *ru = "\xD0\xB1\xD0\xB5\xD0\xB4\xD0\xBD\xD1\x8F\xD0\xB3\xD0\xB0";  /* бедняга */
    CHECK_INT(cls_alphabet_encode(a, ru, labels, 16, &n, NULL, 0, NULL), CLS_OK);
    CHECK_INT(n, 7);
    CHECK_INT(cls_alphabet_decode(a, labels, n, back, sizeof back), CLS_OK);
    CHECK(strcmp(back, ru) == 0, "decoded \"%s\"", back);
    cls_dataset_options o = {.alphabet = a};
    cls_dataset *ds = NULL;
    CHECK_INT(cls_dataset_load(SMOKE "/russian_sample_data/ru.csv", &o, &ds, &err), CLS_OK);
    CHECK_INT(cls_dataset_size(ds), 1);
    const cls_sample *smp = cls_dataset_sample(ds, 0);
    if (smp) {
      CHECK_INT(smp->n_labels, 44);
      CHECK_INT(smp->n_samples, 90664);
      CHECK_INT(smp->frames, 282);
      CHECK_INT(smp->labels[0], cls_alphabet_index(a, 0x431));
    }
    cls_dataset_destroy(ds);
    cls_alphabet_destroy(a);
  }

  /* Bad alphabets, each naming the file and line. */
  expect_alphabet_error("a\nab\n", CLS_ERR_INVALID_ARGUMENT,
                        ":2: the line \"ab\" holds 2 characters; each label must be exactly one Unicode codepoint "
                        "(check for stray spaces)");
  expect_alphabet_error("# x\r\na \r\n", CLS_ERR_INVALID_ARGUMENT,
                        ":2: the line \"a \" holds 2 characters; each label must be exactly one Unicode codepoint "
                        "(check for stray spaces)");
  expect_alphabet_error("b\re\xCC\x81\r", CLS_ERR_INVALID_ARGUMENT,
                        ":2: the line \"e\xCC\x81\" holds 2 characters; each label must be exactly one Unicode "
                        "codepoint (check for stray spaces)");
  expect_alphabet_error("a\nb\n\na\n", CLS_ERR_INVALID_ARGUMENT,
                        ":4: 'a' (U+0061) is already label 0 (line 1); each character may appear once");
  expect_alphabet_error("a\n\xFF\n", CLS_ERR_INVALID_ARGUMENT, ":2: the line \"\xFF\" is not valid UTF-8 text");
  expect_alphabet_error("a\n\xC3\n", CLS_ERR_INVALID_ARGUMENT, ":2: the line \"\xC3\" is not valid UTF-8 text");
  expect_alphabet_error("# only\n\n#comments\n", CLS_ERR_INVALID_ARGUMENT,
                        ": holds no labels (every line is empty or a comment)");
  expect_alphabet_error("", CLS_ERR_INVALID_ARGUMENT, ": holds no labels (every line is empty or a comment)");
  cls_alphabet *none = NULL;
  CHECK_INT(cls_alphabet_load(tmp_path("no-such-alphabet.txt"), &none, &err), CLS_ERR_IO);
  char full[800];
  snprintf(full, sizeof full, "%s/no-such-alphabet.txt: cannot open: No such file or directory", tmp);
  CHECK(strcmp(err.text, full) == 0, "message %s", err.text);
}

/* cls_alphabet_differs: the same labels in order, another size, the first differing label. */
static void test_alphabet_differs(void) {
  cls_alphabet *a = NULL, *same = NULL, *longer = NULL, *swapped = NULL;
  cls_error err;
  CHECK_INT(cls_alphabet_parse("a\nb\nc\n", 6, "a", &a, &err), CLS_OK);
  CHECK_INT(cls_alphabet_parse("# same\na\r\nb\nc", 13, "same", &same, &err), CLS_OK);
  CHECK_INT(cls_alphabet_parse("a\nb\nc\nd\n", 8, "longer", &longer, &err), CLS_OK);
  CHECK_INT(cls_alphabet_parse("a\nc\nb\n", 6, "swapped", &swapped, &err), CLS_OK);
  cls_error why = {CLS_OK, "untouched"};
  CHECK_INT(cls_alphabet_differs(a, same, &why), 0);
  CHECK(why.status == CLS_OK && !strcmp(why.text, "untouched"), "why written for equal alphabets: %s", why.text);
  CHECK_INT(cls_alphabet_differs(a, longer, &why), 1);
  CHECK(why.status == CLS_ERR_INVALID_ARGUMENT && !strcmp(why.text, "3 labels against 4"), "why: %s", why.text);
  CHECK_INT(cls_alphabet_differs(a, swapped, &why), 1);
  CHECK(!strcmp(why.text, "label 1 is \"b\" against \"c\""), "why: %s", why.text);
  CHECK_INT(cls_alphabet_differs(swapped, a, NULL), 1);
  cls_alphabet_destroy(a);
  cls_alphabet_destroy(same);
  cls_alphabet_destroy(longer);
  cls_alphabet_destroy(swapped);
}

int main(void) {
  if (!data_present()) return check_finish("test_alphabet");
  if (!data_files_open("clspeech-alphabet")) return 1;
  test_smoke_alphabet();
  test_handmade_alphabet();
  test_alphabet_differs();
  data_files_close();
  return check_finish("test_alphabet");
}
