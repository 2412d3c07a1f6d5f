/* Alphabets made from transcripts (cls_alphabet_counts, cls_alphabet_make): the counts, the sorted
 * order, the labels DeepSpeech's format treats specially ('#', the space, a tab), the refusal of text
 * that is not UTF-8 or holds a line end, and the written file read back by cls_alphabet_load with the
 * same labels in the same order. Writes its files under a mkdtemp folder and removes them. */
#include "check.h"
#include "data_present.h"
#include "clspeech/data.h"
#include "data_files.h"

static void test_counts(void) {
  cls_error err = {0};
  cls_alphabet_counts *c = NULL;
  CHECK_INT(cls_alphabet_counts_create(&c, &err), CLS_OK);
  if (!c) return;
  const char *texts[] = {"ba ab", "#c\xc3\xa9", "\xf0\x9f\x98\x80 \t"}; /* 'é', U+1F600 */
  for (int i = 0; i < 3; i++) CHECK_INT(cls_alphabet_counts_add(c, texts[i], strlen(texts[i]), &err), CLS_OK);
  /* '\t' ' ' '#' 'a' 'b' 'c' 'é' U+1F600 */
  CHECK_INT(cls_alphabet_counts_size(c), 8);
  const uint32_t want_cp[] = {'\t', ' ', '#', 'a', 'b', 'c', 0xE9, 0x1F600};
  const int64_t want_n[] = {1, 2, 1, 2, 2, 1, 1, 1};
  for (int i = 0; i < 8; i++) {
    CHECK(cls_alphabet_counts_codepoint(c, i) == want_cp[i], "codepoint %d is U+%04X", i,
          (unsigned)cls_alphabet_counts_codepoint(c, i));
    CHECK(cls_alphabet_counts_count(c, i) == want_n[i], "count %d is %lld", i,
          (long long)cls_alphabet_counts_count(c, i));
  }
  CHECK_INT(cls_alphabet_counts_codepoint(c, 8), 0);
  CHECK_INT(cls_alphabet_counts_count(c, -1), 0);

  /* Refused text counts nothing. */
  CHECK_INT(cls_alphabet_counts_add(c, "zz\xff", 3, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "byte 2 (0xFF) is not valid UTF-8");
  CHECK_INT(cls_alphabet_counts_add(c, "z\xed\xa0\x80", 4, &err), CLS_ERR_INVALID_ARGUMENT); /* a surrogate */
  CHECK_INT(cls_alphabet_counts_add(c, "z\nz", 3, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "U+000A");
  CHECK_INT(cls_alphabet_counts_add(c, "z\rz", 3, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_alphabet_counts_add(c, "z\0z", 3, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_alphabet_counts_size(c), 8);

  char *text = NULL;
  size_t len = 0;
  CHECK_INT(cls_alphabet_counts_format(c, &text, &len, &err), CLS_OK);
  if (text) {
    CHECK_INT(strlen(text), len);
    CHECK_CONTAINS(text, "# U+0023 count 1\n\\#\n");
    CHECK_CONTAINS(text, "# U+0020 count 2\n \n");
    CHECK_CONTAINS(text, "# U+0061 count 2\na\n");
    CHECK_CONTAINS(text, "# U+1F600 count 1\n\xf0\x9f\x98\x80\n");
    CHECK(text[len - 1] == '\n', "the text does not end with a newline");
    cls_alphabet *a = NULL;
    CHECK_INT(cls_alphabet_parse(text, len, "made", &a, &err), CLS_OK);
    if (a) {
      CHECK_INT(cls_alphabet_size(a), 8);
      for (int i = 0; i < 8 && i < cls_alphabet_size(a); i++)
        CHECK_INT(cls_alphabet_index(a, want_cp[i]), i);
      cls_alphabet_destroy(a);
    }
    free(text);
  }

  /* Written by the output rule and loaded from the file. */
  const char *path = tmp_path("alphabet.txt");
  CHECK_INT(cls_alphabet_counts_write(c, path, &err), CLS_OK);
  remember(path);
  cls_alphabet *a = NULL;
  CHECK_INT(cls_alphabet_load(path, &a, &err), CLS_OK);
  if (a) {
    CHECK_INT(cls_alphabet_size(a), 8);
    CHECK(strcmp(cls_alphabet_label(a, 2), "#") == 0, "label 2 is \"%s\"", cls_alphabet_label(a, 2));
    CHECK(strcmp(cls_alphabet_label(a, 1), " ") == 0, "label 1 is \"%s\"", cls_alphabet_label(a, 1));
    cls_alphabet_destroy(a);
  }
  /* A folder is no output path. */
  CHECK_INT(cls_alphabet_counts_write(c, tmp, &err), CLS_ERR_IO);
  cls_alphabet_counts_destroy(c);

  /* Nothing counted: no alphabet. */
  CHECK_INT(cls_alphabet_counts_create(&c, &err), CLS_OK);
  CHECK_INT(cls_alphabet_counts_format(c, &text, &len, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK(text == NULL, "text set on failure");
  CHECK_INT(cls_alphabet_counts_add(c, "", 0, &err), CLS_OK);
  CHECK_INT(cls_alphabet_counts_write(c, tmp_path("none.txt"), &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "none.txt: no characters");
  cls_alphabet_counts_destroy(c);
}

/* The smoke corpus's transcript makes an alphabet whose labels encode it. */
static void test_make(void) {
  cls_error err = {0};
  const char *texts[] = {LDC_TEXT, "don't"};
  const char *path = tmp_path("ldc.txt");
  CHECK_INT(cls_alphabet_make(texts, 2, path, &err), CLS_OK);
  remember(path);
  cls_alphabet *a = NULL;
  CHECK_INT(cls_alphabet_load(path, &a, &err), CLS_OK);
  if (a) {
    /* The distinct characters of both texts, sorted: the space, the apostrophe, the letters. */
    int32_t labels[64];
    int n = 0;
    CHECK_INT(cls_alphabet_encode(a, LDC_TEXT, labels, 64, &n, NULL, 0, NULL), CLS_OK);
    CHECK_INT(n, 52);
    CHECK(strcmp(cls_alphabet_label(a, 0), " ") == 0, "label 0 is \"%s\"", cls_alphabet_label(a, 0));
    CHECK(strcmp(cls_alphabet_label(a, 1), "'") == 0, "label 1 is \"%s\"", cls_alphabet_label(a, 1));
    CHECK_INT(cls_alphabet_size(a), 18); /* the space, the apostrophe and 16 letters */
    cls_alphabet_destroy(a);
  }
  const char *bad[] = {"ok", "no\xc0\xaf"};
  CHECK_INT(cls_alphabet_make(bad, 2, tmp_path("bad.txt"), &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "bad.txt: transcript 1: byte 2 (0xC0) is not valid UTF-8");
  struct stat sb;
  CHECK(stat(tmp_path("bad.txt"), &sb) != 0, "a refused alphabet was written");
}

int main(void) {
  if (!data_present()) return check_finish("test_alphabet_make");
  if (!data_files_open("clspeech-alphabet-make")) return 1;
  test_counts();
  test_make();
  data_files_close();
  return check_finish("test_alphabet_make");
}
