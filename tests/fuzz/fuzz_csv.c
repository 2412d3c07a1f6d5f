/* libFuzzer target: the CSV reader (every record and field), then DeepSpeech data set loading of the
 * same text as a CSV file (columns, sizes, transcripts against an alphabet, the audio each row names).
 * Every '/' becomes '_' first, so a row can only name files in the target's own temporary folder
 * (never /dev/stdin, which would block). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clspeech/data.h"
#include "data/csv.h"
#include "fuzz_files.h"

static char dir[64];
static char csv_path[64];
static cls_alphabet *alphabet;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cleanup(void) {
  unlink(csv_path);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_make_dir(dir, sizeof dir, "csv");
  atexit(cleanup);
  snprintf(csv_path, sizeof csv_path, "%s/in.csv", dir);
  const char letters[] = " \na\nb\nc\nd\ne\nh\ni\nl\nr\ns\nt\n'\n";
  cls_error err;
  if (cls_alphabet_parse(letters, sizeof letters - 1, "fuzz alphabet", &alphabet, &err) != CLS_OK) abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cls_error err;
  cls_csv c;
  if (cls_csv_open(&c, "fuzz.csv", (const char *)data, size, &err) == CLS_OK) {
    int line = 0, last_line = 0;
    bool have = false;
    size_t total = 0;
    cls_status st;
    while ((st = cls_csv_record(&c, &have, &line, &err)) == CLS_OK && have) {
      if (line <= last_line) abort(); /* records come in line order */
      last_line = line;
      for (int i = 0; i < cls_csv_fields(&c); i++) total += strlen(cls_csv_field(&c, i));
    }
    (void)total;
    /* A failure leaves its status and a text naming the file in err; the end leaves have false. */
    if (have || (st != CLS_OK && (err.status != st || strncmp(err.text, "fuzz.csv:", 9) != 0))) abort();
    cls_csv_close(&c);
  }
  if (size > 8192) return 0; /* data set loading: short texts suffice */
  char *text = malloc(size ? size : 1);
  if (!text) return 0;
  for (size_t i = 0; i < size; i++) text[i] = data[i] == '/' ? '_' : (char)data[i];
  const int written = fuzz_write_file(csv_path, (const uint8_t *)text, size);
  free(text);
  if (!written) return 0;
  const int strict = size > 0 && (data[0] & 1);
  cls_dataset_options o = {alphabet, 16000, 512, 320, size > 1 && (data[1] & 1), size > 2 ? data[2] % 4 : 0, strict,
                           size > 3 && (data[3] & 1)};
  cls_dataset *ds = NULL;
  if (cls_dataset_load(csv_path, &o, &ds, &err) == CLS_OK) {
    char report[4096];
    cls_dataset_format_report(ds, report, sizeof report);
    for (int i = 0; i < cls_dataset_size(ds); i++) (void)cls_dataset_sample(ds, i);
    cls_dataset_destroy(ds);
  }
  unlink(csv_path);
  return 0;
}
