/* Coqui STT's --auto_input_dataset split (see clspeech/data.h): the sizes of the dev and test sets of one
 * DeepSpeech CSV, the CSV's rows shuffled by a seed and written as train, dev and test CSVs, and its
 * transcripts counted for the alphabet made from them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "clspeech/data.h"
#include "data/csv.h"

int cls_auto_split_size(int n_rows) {
  if (n_rows < 2) return 0;
  /* The sample size for a 99 % confidence (z = 2.58) and a 1 % margin of error at p = 0.5, for a
     population of the training set's size: the largest training set that leaves two such sets. */
  const double z = 2.58, p = 0.5, e = 0.01, n0 = z * z * p * (1 - p) / (e * e);
  int size = 0;
  for (int train = n_rows; train > 0; train--) {
    size = (int)(n0 / (1 + n0 / train));
    if (2 * (long long)size + train <= n_rows) break;
  }
  return size > 0 ? size : 1;
}

/* SplitMix64: the shuffle's generator (a fixed sequence for each seed). */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

typedef struct split_rows {
  char **fields; /* [n * 3]: wav_filename, wav_filesize, transcript of each row */
  int *line;     /* [n] the row's line in the input */
  int n, cap;
} split_rows;

static void rows_free(split_rows *r) {
  for (int i = 0; i < r->n * 3; i++) free(r->fields[i]);
  free(r->fields);
  free(r->line);
}

static cls_status rows_read(const char *csv, split_rows *r, cls_error *err) {
  char *text = NULL;
  size_t len = 0;
  cls_status st = cls_read_file_max(csv, CLS_CSV_MAX_BYTES, true, &text, &len, err);
  if (st != CLS_OK) return st;
  cls_csv c;
  st = cls_csv_open(&c, csv, text, len, err);
  int col[3] = {-1, -1, -1}, n_header = 0, line = 0;
  bool have = false;
  if (st == CLS_OK) st = cls_csv_record(&c, &have, &line, err);
  if (st == CLS_OK && !have) st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: the file is empty", csv);
  if (st == CLS_OK) {
    static const char *const names[3] = {"wav_filename", "wav_filesize", "transcript"};
    n_header = cls_csv_fields(&c);
    for (int i = 0; i < n_header; i++)
      for (int k = 0; k < 3; k++)
        if (!strcmp(cls_csv_field(&c, i), names[k]) && col[k] < 0) col[k] = i;
    for (int k = 0; st == CLS_OK && k < 3; k++)
      if (col[k] < 0)
        st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the header has no %s column (it needs wav_filename, "
                           "wav_filesize and transcript)", csv, line, names[k]);
  }
  while (st == CLS_OK) {
    st = cls_csv_record(&c, &have, &line, err);
    if (st != CLS_OK || !have) break;
    if (cls_csv_fields(&c) != n_header) {
      st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the row has %d fields, the header %d", csv, line,
                         cls_csv_fields(&c), n_header);
      break;
    }
    if (r->n == r->cap) {
      int cap = r->cap ? r->cap * 2 : 256;
      char **fields = cap < INT32_MAX / 3 ? realloc(r->fields, (size_t)cap * 3 * sizeof *fields) : NULL;
      if (fields) r->fields = fields;
      int *lines = fields ? realloc(r->line, (size_t)cap * sizeof *lines) : NULL;
      if (lines) r->line = lines;
      if (!fields || !lines) {
        st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of host memory at line %d", csv, line);
        break;
      }
      r->cap = cap;
    }
    bool copied = true;
    for (int k = 0; k < 3; k++) {
      r->fields[r->n * 3 + k] = strdup(cls_csv_field(&c, col[k]));
      copied &= r->fields[r->n * 3 + k] != NULL;
    }
    r->line[r->n++] = line;
    if (!copied) st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of host memory at line %d", csv, line);
  }
  cls_csv_close(&c);
  free(text);
  return st;
}

/* Rows order[first .. first+n) of r to `path` with the header, by the output rule. */
static cls_status write_rows(const char *path, const split_rows *r, const int *order, int first, int n,
                             cls_error *err) {
  cls_output *out = NULL;
  cls_status st = cls_output_open(path, &out, err);
  if (st != CLS_OK) return st;
  FILE *f = cls_output_file(out);
  fputs(CLS_DEEPSPEECH_CSV_HEADER "\n", f);
  for (int i = first; i < first + n; i++) {
    const int row = order[i];
    for (int k = 0; k < 3; k++) {
      if (k) fputc(',', f);
      cls_csv_write_field(f, r->fields[row * 3 + k]);
    }
    fputc('\n', f);
  }
  return cls_output_commit(out, path, err);
}

/* Every row's transcript into counts. */
static cls_status count_rows(const char *csv, const split_rows *r, cls_alphabet_counts *counts, cls_error *err) {
  cls_status st = CLS_OK;
  for (int i = 0; st == CLS_OK && i < r->n; i++) {
    const char *t = r->fields[i * 3 + 2];
    cls_error why;
    st = cls_alphabet_counts_add(counts, t, strlen(t), &why);
    if (st != CLS_OK) cls_error_wrap(err, st, &why, "%s:%d: the transcript: ", csv, r->line[i]);
  }
  return st;
}

cls_status cls_auto_split_csv(const char *csv, uint64_t seed, const char *const out[3], int sizes[3],
                              cls_alphabet_counts *counts, cls_error *err) {
  sizes[0] = sizes[1] = sizes[2] = 0;
  for (int k = 0; k < 3; k++)
    if (cls_same_file(csv, out[k]))
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: the split's output %s is its input", csv, out[k]);
  split_rows r = {0};
  cls_status st = rows_read(csv, &r, err);
  const int each = st == CLS_OK ? cls_auto_split_size(r.n) : 0;
  if (st == CLS_OK && r.n - 2 * each < 1)
    st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                       "%s: %d row%s: too few to split into training, validation and test sets (3 or more)", csv, r.n,
                       r.n == 1 ? "" : "s");
  if (st == CLS_OK && counts) st = count_rows(csv, &r, counts, err);
  int *order = st == CLS_OK ? malloc((size_t)r.n * sizeof *order) : NULL;
  if (st == CLS_OK && !order) st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of host memory", csv);
  if (st == CLS_OK) {
    for (int i = 0; i < r.n; i++) order[i] = i;
    uint64_t state = seed;
    for (int i = r.n - 1; i > 0; i--) { /* Fisher-Yates */
      const int j = (int)(splitmix64(&state) % (uint64_t)(i + 1));
      const int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    const int n_train = r.n - 2 * each;
    const int first[3] = {0, n_train, n_train + each}, count[3] = {n_train, each, each};
    for (int k = 0; st == CLS_OK && k < 3; k++) {
      st = write_rows(out[k], &r, order, first[k], count[k], err);
      if (st == CLS_OK) sizes[k] = count[k];
    }
  }
  free(order);
  rows_free(&r);
  return st;
}

cls_status cls_auto_split_count(const char *csv, cls_alphabet_counts *counts, cls_error *err) {
  split_rows r = {0};
  cls_status st = rows_read(csv, &r, err);
  if (st == CLS_OK) st = count_rows(csv, &r, counts, err);
  rows_free(&r);
  return st;
}
