/* Temporary files for the data-layer tests (test_alphabet, test_data): a mkdtemp folder, files
 * written into it and remembered, removed at the end; a small WAV writer; the smoke-test alphabet;
 * and, for the training tests, the shared data sets loaded with it (shared_dataset) and the removal of
 * the checkpoint folders they make (remove_dir).
 * Include after check.h. */
#ifndef CLS_DATA_FILES_H
#define CLS_DATA_FILES_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "clspeech/data.h"

#ifndef CLS_TEST_DATA
#error "CLS_TEST_DATA must name the repository's data folder"
#endif

#define SMOKE CLS_TEST_DATA "/deepspeech-smoke"
#define LDC_TEXT "she had your dark suit in greasy wash water all year"

static char tmp[512]; /* the test's mkdtemp folder */
static char created[128][640];
static int n_created;

static inline const char *tmp_path(const char *name) {
  static char bufs[8][640];
  static int next;
  char *b = bufs[next++ % 8];
  snprintf(b, sizeof bufs[0], "%s/%s", tmp, name);
  return b;
}

static inline void remember(const char *path) {
  for (int i = 0; i < n_created; i++)
    if (strcmp(created[i], path) == 0) return;
  CHECK(n_created < 128, "too many temporary files to remember %s", path);
  if (n_created < 128) snprintf(created[n_created++], sizeof created[0], "%s", path);
}

static inline void write_bytes(const char *name, const void *data, size_t len) {
  const char *p = tmp_path(name);
  FILE *f = fopen(p, "wb");
  CHECK(f != NULL, "cannot write %s", p);
  if (!f) return;
  fwrite(data, 1, len, f);
  fclose(f);
  remember(p);
}

static inline void write_text(const char *name, const char *text) { write_bytes(name, text, strlen(text)); }

static inline void make_dir(const char *name) {
  const char *p = tmp_path(name);
  CHECK(mkdir(p, 0700) == 0, "cannot create %s", p);
  remember(p);
}

/* A 16-bit PCM WAV of n samples of a quiet tone; `claim` > 0 writes a data size that promises
 * `claim` samples (a truncated file when claim > n). */
static inline void write_wav(const char *name, int n, int rate, int channels, int claim) {
  size_t data = (size_t)n * (size_t)channels * 2, promised = (size_t)(claim > 0 ? claim : n) * (size_t)channels * 2;
  unsigned char *b = calloc(1, 44 + data);
  if (!b) return;
  memcpy(b, "RIFF", 4);
  cls_put_le(b + 4, 36 + promised, 4);
  memcpy(b + 8, "WAVEfmt ", 8);
  cls_put_le(b + 16, 16, 4);
  cls_put_le(b + 20, 1, 2);
  cls_put_le(b + 22, (uint64_t)channels, 2);
  cls_put_le(b + 24, (uint64_t)rate, 4);
  cls_put_le(b + 28, (uint64_t)rate * (uint64_t)channels * 2, 4);
  cls_put_le(b + 32, (uint64_t)channels * 2, 2);
  cls_put_le(b + 34, 16, 2);
  memcpy(b + 36, "data", 4);
  cls_put_le(b + 40, promised, 4);
  for (size_t i = 0; i < data / 2; i++) cls_put_le(b + 44 + 2 * i, (uint16_t)(int16_t)((int)(i % 50) * 40 - 1000), 2);
  write_bytes(name, b, 44 + data);
  free(b);
}

static inline void copy_file(const char *from, const char *name) {
  FILE *f = fopen(from, "rb");
  CHECK(f != NULL, "cannot read %s", from);
  if (!f) return;
  static unsigned char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  write_bytes(name, buf, n);
}

static inline cls_alphabet *smoke_alphabet(void) {
  cls_error err = {0};
  cls_alphabet *a = NULL;
  cls_status st = cls_alphabet_load(SMOKE "/alphabet.txt", &a, &err);
  CHECK(st == CLS_OK && a, "%s", err.text);
  return a;
}

static inline cls_alphabet *parse_alphabet(const char *text) {
  cls_error err = {0};
  cls_alphabet *a = NULL;
  cls_status st = cls_alphabet_parse(text, strlen(text), "mem", &a, &err);
  CHECK(st == CLS_OK && a, "%s", err.text);
  return a;
}

/* The data sets `csv` names (comma-separated paths) read with the smoke-test alphabet (in *alphabet,
 * the caller's to destroy) at the features the training tests use: 16 kHz, 512-sample windows,
 * 320-sample steps. NULL, as a failed check, when either does not load. */
static inline cls_dataset *shared_dataset(const char *csv, cls_alphabet **alphabet) {
  cls_error err = {0};
  cls_dataset *ds = NULL;
  *alphabet = smoke_alphabet();
  if (!*alphabet) return NULL;
  cls_dataset_options dopt = {*alphabet, 16000, 512, 320, 0, 0, 0, 0};
  cls_status st = cls_dataset_load(csv, &dopt, &ds, &err);
  CHECK(st == CLS_OK && ds, "%s", err.text);
  return ds;
}

/* Creates the temporary folder; 0 on failure. */
static inline int data_files_open(const char *prefix) {
  snprintf(tmp, sizeof tmp, "%s/%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", prefix);
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return 0;
  }
  return 1;
}

/* Removes every remembered file and the folder (a failure counts as a failed check). */
static inline void data_files_close(void) {
  for (int i = n_created - 1; i >= 0; i--) remove(created[i]);
  if (rmdir(tmp) != 0) {
    fprintf(stderr, "cannot remove %s (files left behind)\n", tmp);
    check_failed++;
  }
}

/* Removes a folder of plain files (a checkpoint folder a training test made) and the folder. */
static inline void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  char path[1024];
  for (struct dirent *x; d && (x = readdir(d));) {
    if (x->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, x->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

#endif
