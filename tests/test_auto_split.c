/* --auto_input_dataset's split (engine/data/auto_split.c): the validation and test set sizes against
 * Coqui STT's formula (tests/ref/auto_split_sizes.py), and a CSV split by a seed: every row in exactly one
 * output, byte-identical outputs for the same seed, another order for another seed, quoted fields kept,
 * other columns left out, and the refusals (too few rows, a missing column, an output that is the input). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "clspeech/data.h"
#include "data_files.h"

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char bufs[6][8192];
  static int next;
  char *b = bufs[next++ % 6];
  size_t n = fread(b, 1, sizeof bufs[0] - 1, f);
  b[n] = '\0';
  fclose(f);
  return b;
}

/* Lines of text after the header, counted, and whether `line` is among them. */
static int rows_of(const char *text, const char *line) {
  const char *body = text ? strchr(text, '\n') : NULL;
  if (!body) return line ? 0 : -1;
  int n = 0;
  for (const char *p = body + 1; *p; p = strchr(p, '\n') + 1) {
    const char *end = strchr(p, '\n');
    if (!end) break;
    if (!line) n++;
    else if ((size_t)(end - p) == strlen(line) && !strncmp(p, line, strlen(line))) n++;
  }
  return n;
}

int main(void) {
  static const int sizes[][2] = {{0, 0},     {1, 0},      {2, 1},       {3, 1},       {10, 3},
                                 {100, 33},  {1000, 331}, {4000, 1296}, {10000, 3097}, {100000, 13548}};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    CHECK(cls_auto_split_size(sizes[i][0]) == sizes[i][1], "%d rows: %d each, Coqui's formula %d", sizes[i][0],
          cls_auto_split_size(sizes[i][0]), sizes[i][1]);

  if (!data_files_open("test_auto_split")) return 1; /* no folder: no split tested, a failure */
  char csv[4096] = "transcript,wav_filesize,speaker,wav_filename\n";
  for (int i = 0; i < 10; i++) {
    char row[128];
    snprintf(row, sizeof row, i == 4 ? "\"a, quoted \"\"row\"\" %d\",%d,s%d,clip%d.wav\n" : "row %d,%d,s%d,clip%d.wav\n",
             i, 1000 + i, i, i);
    strcat(csv, row);
  }
  write_text("all.csv", csv);
  const char *out_a[3] = {tmp_path("train.csv"), tmp_path("dev.csv"), tmp_path("test.csv")};
  char keep[3][640];
  for (int k = 0; k < 3; k++) {
    snprintf(keep[k], sizeof keep[k], "%s", out_a[k]);
    out_a[k] = keep[k];
  }
  int n[3];
  cls_error err;
  CHECK(cls_auto_split_csv(tmp_path("all.csv"), 4568, out_a, n, NULL, &err) == CLS_OK, "split: %s", err.text);
  CHECK(n[0] == 4 && n[1] == 3 && n[2] == 3, "10 rows into %d, %d, %d (expected 4, 3, 3)", n[0], n[1], n[2]);
  char first[3][8192];
  for (int k = 0; k < 3; k++) {
    const char *t = slurp(out_a[k]);
    snprintf(first[k], sizeof first[k], "%s", t ? t : "");
    CHECK(!strncmp(first[k], "wav_filename,wav_filesize,transcript\n", 37), "%s's header: %.60s", out_a[k], first[k]);
    CHECK_INT(rows_of(first[k], NULL), n[k]);
  }
  for (int i = 0; i < 10; i++) {
    char row[128];
    snprintf(row, sizeof row, i == 4 ? "clip%d.wav,%d,\"a, quoted \"\"row\"\" %d\"" : "clip%d.wav,%d,row %d", i, 1000 + i,
             i);
    int found = 0;
    for (int k = 0; k < 3; k++) found += rows_of(first[k], row);
    CHECK(found == 1, "row %d (%s) is in %d outputs", i, row, found);
  }
  /* the same seed: the same bytes; another seed: another split */
  CHECK_INT(cls_auto_split_csv(tmp_path("all.csv"), 4568, out_a, n, NULL, &err), CLS_OK);
  int same = 1;
  for (int k = 0; k < 3; k++) same &= !strcmp(first[k], slurp(out_a[k]));
  CHECK(same, "the same seed wrote different outputs");
  CHECK_INT(cls_auto_split_csv(tmp_path("all.csv"), 1, out_a, n, NULL, &err), CLS_OK);
  int differs = 0;
  for (int k = 0; k < 3; k++) differs |= strcmp(first[k], slurp(out_a[k])) != 0;
  CHECK(differs, "seeds 4568 and 1 split alike");

  /* counted while splitting: the same counts as cls_auto_split_count's */
  cls_alphabet_counts *during = NULL, *alone = NULL;
  CHECK_INT(cls_alphabet_counts_create(&during, &err), CLS_OK);
  CHECK_INT(cls_alphabet_counts_create(&alone, &err), CLS_OK);
  CHECK_INT(cls_auto_split_csv(tmp_path("all.csv"), 4568, out_a, n, during, &err), CLS_OK);
  CHECK_INT(cls_auto_split_count(tmp_path("all.csv"), alone, &err), CLS_OK);
  const int size = cls_alphabet_counts_size(during);
  CHECK(size > 10 && size == cls_alphabet_counts_size(alone), "%d characters counted while splitting, %d alone", size,
        cls_alphabet_counts_size(alone));
  for (int i = 0; i < size && i < cls_alphabet_counts_size(alone); i++)
    CHECK(cls_alphabet_counts_codepoint(during, i) == cls_alphabet_counts_codepoint(alone, i) &&
              cls_alphabet_counts_count(during, i) == cls_alphabet_counts_count(alone, i),
          "character %d counted differently", i);
  cls_alphabet_counts_destroy(during);
  cls_alphabet_counts_destroy(alone);

  /* refusals */
  write_text("two.csv", "wav_filename,wav_filesize,transcript\na.wav,1,a\nb.wav,2,b\n");
  CHECK_INT(cls_auto_split_csv(tmp_path("two.csv"), 1, out_a, n, NULL, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "too few to split");
  write_text("nocol.csv", "wav_filename,transcript\na.wav,a\nb.wav,b\nc.wav,c\n");
  CHECK_INT(cls_auto_split_csv(tmp_path("nocol.csv"), 1, out_a, n, NULL, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "no wav_filesize column");
  write_text("short.csv", "wav_filename,wav_filesize,transcript\na.wav,1,a\nb.wav,2\nc.wav,3,c\n");
  CHECK_INT(cls_auto_split_csv(tmp_path("short.csv"), 1, out_a, n, NULL, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "short.csv:3: the row has 2 fields");
  const char *onto_input[3] = {out_a[0], tmp_path("all.csv"), out_a[2]};
  CHECK_INT(cls_auto_split_csv(tmp_path("all.csv"), 1, onto_input, n, NULL, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "is its input");
  CHECK(strstr(slurp(tmp_path("all.csv")), "speaker") != NULL, "the input was changed");
  for (int k = 0; k < 3; k++) remove(keep[k]); /* the split's outputs */
  data_files_close();
  return check_finish("test_auto_split");
}
