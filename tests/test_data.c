/* DeepSpeech CSV data sets: RFC 4180, columns, paths, order, reverse, limit, merging, sample
 * validation with the skip report and strict mode, CTC's fewest frames, and batch ranges. Needs data; writes
 * its own files under a mkdtemp folder and removes them. */
#include <math.h>

#include "check.h"
#include "data_present.h"
#include "clspeech/data.h"
#include "data/csv.h"
#include "data_files.h"

/* ---- datasets ---- */

static cls_dataset *load(const char *files, const cls_dataset_options *o) {
  cls_error err = {0};
  cls_dataset *ds = NULL;
  cls_status st = cls_dataset_load(files, o, &ds, &err);
  CHECK(st == CLS_OK && ds, "loading %s: %s", files, err.text);
  return ds;
}

/* Loads and expects failure with exactly `msg`, in which each "@" stands for the temporary folder. */
static void expect_load_error(const char *files, const cls_dataset_options *o, cls_status want, const char *msg) {
  cls_error err = {0};
  cls_dataset *ds = (cls_dataset *)&err; /* must be reset to NULL */
  cls_status st = cls_dataset_load(files, o, &ds, &err);
  CHECK_INT(st, want);
  if (want != CLS_OK) CHECK_INT(err.status, want); /* the status travels with the text */
  CHECK(ds == NULL, "dataset set on failure");
  char full[2048] = "";
  size_t o_len = 0;
  for (const char *p = msg; *p && o_len + strlen(tmp) + 2 < sizeof full; p++) {
    if (*p == '@') {
      memcpy(full + o_len, tmp, strlen(tmp));
      o_len += strlen(tmp);
    } else {
      full[o_len++] = *p;
    }
  }
  full[o_len] = '\0';
  CHECK(strcmp(err.text, full) == 0, "message\n      %s\n    expected\n      %s", err.text, full);
  if (st == CLS_OK) cls_dataset_destroy(ds);
}

static void check_transcripts(const cls_dataset *ds, const char *const *want, int n) {
  CHECK_INT(cls_dataset_size(ds), n);
  for (int i = 0; i < n && i < cls_dataset_size(ds); i++) {
    const char *got = cls_dataset_sample(ds, i)->transcript;
    CHECK(strcmp(got, want[i]) == 0, "sample %d is \"%s\", expected \"%s\"", i, got, want[i]);
  }
}

static void test_ldc93s1(const cls_alphabet *a) {
  cls_dataset_options o = {.alphabet = a, .sample_rate = 16000};
  cls_dataset *ds = load(SMOKE "/ldc93s1.csv", &o);
  if (!ds) return;
  CHECK_INT(cls_dataset_size(ds), 1);
  const cls_sample *s = cls_dataset_sample(ds, 0);
  CHECK(cls_dataset_sample(ds, 1) == NULL, "sample 1 exists");
  CHECK(cls_dataset_sample(ds, -1) == NULL, "sample -1 exists");
  if (s) {
    CHECK(strcmp(s->path, SMOKE "/LDC93S1.wav") == 0, "path %s", s->path);
    CHECK(strcmp(s->transcript, LDC_TEXT) == 0, "transcript %s", s->transcript);
    CHECK(strcmp(s->source, SMOKE "/ldc93s1.csv") == 0, "source %s", s->source);
    CHECK_INT(s->line, 2);
    CHECK_INT(s->filesize, 93638);
    CHECK_INT(s->n_labels, 52);
    CHECK_INT(s->repeats, 1);
    CHECK_INT(s->labels[0], 19);
    CHECK_INT(s->labels[3], 0);
    CHECK_INT(s->labels[51], 18);
    CHECK_INT(s->n_samples, 46797);
    CHECK_INT(s->frames, 145);
    CHECK_INT(s->source_rate, 16000);
    CHECK_INT(s->source_channels, 1);
    CHECK(s->seconds > 2.9248 && s->seconds < 2.9249, "seconds %f", s->seconds);
  }
  const cls_dataset_report *r = cls_dataset_get_report(ds);
  CHECK_INT(r->rows, 1);
  CHECK_INT(r->considered, 1);
  CHECK_INT(r->kept, 1);
  CHECK_INT(r->skipped, 0);
  CHECK(cls_dataset_seconds(ds) > 2.9248 && cls_dataset_seconds(ds) < 2.9249, "seconds %f", cls_dataset_seconds(ds));
  char text[512];
  size_t len = cls_dataset_format_report(ds, text, sizeof text);
  CHECK(strcmp(text, "1 sample (2.9 s of audio)\n") == 0, "report %s", text);
  CHECK_INT(len, strlen("1 sample (2.9 s of audio)\n"));
  CHECK_INT(cls_dataset_format_report(ds, text, 5), len);
  CHECK(strcmp(text, "1 sa") == 0, "truncated report %s", text);
  cls_dataset_destroy(ds);

  /* The 8 kHz copy at 16 kHz: its header's 23399 frames count as 46798 samples, 145 frames. */
  ds = load(SMOKE "/ldc93s1_8k.csv", &o);
  if (ds && cls_dataset_size(ds) == 1) {
    s = cls_dataset_sample(ds, 0);
    CHECK_INT(s->source_rate, 8000);
    CHECK_INT(s->n_samples, 46798);
    CHECK_INT(s->frames, 145);
  }
  cls_dataset_destroy(ds);
  /* ... and at 8 kHz: the window and step default to 32 ms and 20 ms of that rate. */
  cls_dataset_options o8 = {.alphabet = a, .sample_rate = 8000};
  ds = load(SMOKE "/ldc93s1_8k.csv", &o8);
  if (ds && cls_dataset_size(ds) == 1) {
    CHECK_INT(cls_dataset_sample(ds, 0)->n_samples, 23399);
    CHECK_INT(cls_dataset_sample(ds, 0)->frames, 145);
  }
  cls_dataset_destroy(ds);
  /* Window and step given in samples. */
  cls_dataset_options ow = {.alphabet = a, .sample_rate = 16000, .window = 400, .step = 160};
  ds = load(SMOKE "/ldc93s1.csv", &ow);
  if (ds && cls_dataset_size(ds) == 1) CHECK_INT(cls_dataset_sample(ds, 0)->frames, 290); /* 1 + 46397/160 */
  cls_dataset_destroy(ds);

  /* The 44.1 kHz stereo copy, by absolute path: 128985 frames -> 46797 samples at 16 kHz. */
  char csv[1024];
  snprintf(csv, sizeof csv, "wav_filename,wav_filesize,transcript\n%s,516018,%s\n",
           SMOKE "/LDC93S1_pcms16le_2_44100.wav", LDC_TEXT);
  write_text("stereo.csv", csv);
  ds = load(tmp_path("stereo.csv"), &o);
  if (ds && cls_dataset_size(ds) == 1) {
    s = cls_dataset_sample(ds, 0);
    CHECK(strcmp(s->path, SMOKE "/LDC93S1_pcms16le_2_44100.wav") == 0, "absolute path kept: %s", s->path);
    CHECK_INT(s->source_rate, 44100);
    CHECK_INT(s->source_channels, 2);
    CHECK_INT(s->n_samples, 46797);
    CHECK_INT(s->frames, 145);
  }
  cls_dataset_destroy(ds);

  /* exact_rate (DeepSpeech's --normalize_sample_rate false): the 8 kHz file at 16 kHz is an error naming
     the CSV line and the file, even without strict; at its own rate it loads. */
  cls_dataset_options exact = {.alphabet = a, .sample_rate = 16000, .exact_rate = 1};
  cls_error err;
  cls_error_clear(&err);
  ds = NULL;
  cls_status st = cls_dataset_load(SMOKE "/ldc93s1_8k.csv", &exact, &ds, &err);
  CHECK_INT(st, CLS_ERR_INVALID_ARGUMENT);
  CHECK(ds == NULL, "no set on the error");
  CHECK(strstr(err.text, "ldc93s1_8k.csv:2: ") && strstr(err.text, "LDC93S1_pcms16le_1_8000.wav: the audio is at 8000 Hz, not 16000 Hz"),
        "exact_rate names the line and the file: %s", err.text);
  exact.sample_rate = 8000;
  ds = load(SMOKE "/ldc93s1_8k.csv", &exact);
  CHECK(ds && cls_dataset_size(ds) == 1, "exact_rate at the file's own rate loads it");
  cls_dataset_destroy(ds);
}

static void test_formats(const cls_alphabet *a) {
  cls_dataset_options o = {.alphabet = a};
  cls_dataset *ds = load(CLS_TEST_DATA "/formats/formats.csv", &o);
  if (!ds) return;
  CHECK_INT(cls_dataset_size(ds), 6);
  const char *names[] = {"digits-1.ogg", "digits-2.ogg", "digits-1.flac", "digits-2.flac", "digits-1.wav",
                         "digits-2.wav"};
  const int64_t sizes[] = {5960, 9412, 11034, 24071, 29112, 51998};
  const int lines[] = {4, 7, 3, 6, 2, 5};
  for (int i = 0; i < 6 && i < cls_dataset_size(ds); i++) {
    const cls_sample *s = cls_dataset_sample(ds, i);
    char want[512];
    snprintf(want, sizeof want, "%s/formats/%s", CLS_TEST_DATA, names[i]);
    CHECK(strcmp(s->path, want) == 0, "sample %d is %s, expected %s", i, s->path, want);
    CHECK_INT(s->filesize, sizes[i]);
    CHECK_INT(s->line, lines[i]);
    const int one = strstr(names[i], "-1.") != NULL;
    CHECK_INT(s->n_samples, one ? 14534 : 25977);
    CHECK_INT(s->frames, one ? 44 : 80);
    CHECK_INT(s->n_labels, one ? 9 : 21);
  }
  /* Batches of 4 in this order, the last short unless dropped. */
  CHECK_INT(cls_dataset_batches(ds, 4, 0), 2);
  CHECK_INT(cls_dataset_batches(ds, 4, 1), 1);
  CHECK_INT(cls_dataset_batches(ds, 6, 1), 1);
  CHECK_INT(cls_dataset_batches(ds, 7, 1), 0);
  CHECK_INT(cls_dataset_batches(ds, 1, 0), 6);
  CHECK_INT(cls_dataset_batches(ds, 0, 0), 0);
  int first = -1;
  CHECK_INT(cls_dataset_batch(ds, 4, 0, 0, &first), 4);
  CHECK_INT(first, 0);
  CHECK_INT(cls_dataset_batch(ds, 4, 0, 1, &first), 2);
  CHECK_INT(first, 4);
  CHECK_INT(cls_dataset_batch(ds, 4, 1, 1, &first), 0);
  CHECK_INT(first, 0);
  CHECK_INT(cls_dataset_batch(ds, 4, 0, 2, &first), 0);
  CHECK_INT(cls_dataset_batch(ds, 4, 0, -1, &first), 0);
  int mf = -1, ml = -1;
  cls_dataset_batch_max(ds, 0, 3, &mf, &ml);
  CHECK_INT(mf, 80);
  CHECK_INT(ml, 21);
  cls_dataset_batch_max(ds, 4, 1, &mf, &ml);
  CHECK_INT(mf, 44);
  CHECK_INT(ml, 9);
  const cls_dataset_report *r = cls_dataset_get_report(ds);
  const double secs = 3 * (14534 + 25977) / 16000.0;
  CHECK(r->seconds > secs - 1e-9 && r->seconds < secs + 1e-9, "seconds %f, expected %f", r->seconds, secs);
  cls_dataset_destroy(ds);
}

static void test_order(const cls_alphabet *a) {
  write_text("a.csv", "wav_filename,wav_filesize,transcript\n"
                      "ldc.wav,300,c one\n"
                      "ldc.wav,100,a one\n"
                      "ldc.wav,200,b one\n"
                      "ldc.wav,100,a two\n"
                      "ldc.wav,300,c two\n");
  write_text("b.csv", "wav_filename,wav_filesize,transcript\r\n"
                      "ldc.wav,100,a three\r\n"
                      "ldc.wav,250,b two\r\n");
  cls_dataset_options o = {.alphabet = a};
  char files[1400];
  cls_dataset *ds = load(tmp_path("a.csv"), &o);
  if (ds) {
    const char *want[] = {"a one", "a two", "b one", "c one", "c two"};
    check_transcripts(ds, want, 5);
    const int lines[] = {3, 5, 4, 2, 6};
    for (int i = 0; i < 5 && i < cls_dataset_size(ds); i++) CHECK_INT(cls_dataset_sample(ds, i)->line, lines[i]);
    if (cls_dataset_size(ds) > 0)
      CHECK(strcmp(cls_dataset_sample(ds, 0)->path, tmp_path("ldc.wav")) == 0, "relative path resolved to %s",
            cls_dataset_sample(ds, 0)->path);
    cls_dataset_destroy(ds);
  }
  /* Reverse: descending sizes, ties in file order (Python's sort(reverse=True)). */
  o.reverse = 1;
  if ((ds = load(tmp_path("a.csv"), &o))) {
    const char *want[] = {"c one", "c two", "b one", "a one", "a two"};
    check_transcripts(ds, want, 5);
    cls_dataset_destroy(ds);
  }
  /* Limit: the first rows of the sorted order. */
  o.reverse = 0;
  o.limit = 2;
  if ((ds = load(tmp_path("a.csv"), &o))) {
    const char *want[] = {"a one", "a two"};
    check_transcripts(ds, want, 2);
    const cls_dataset_report *r = cls_dataset_get_report(ds);
    CHECK_INT(r->rows, 5);
    CHECK_INT(r->considered, 2);
    CHECK_INT(r->kept, 2);
    char text[512];
    cls_dataset_format_report(ds, text, sizeof text);
    CHECK(strcmp(text, "2 samples (5.8 s of audio); limited to the first 2 of 5 rows\n") == 0, "report %s", text);
    cls_dataset_destroy(ds);
  }
  o.reverse = 1;
  if ((ds = load(tmp_path("a.csv"), &o))) {
    const char *want[] = {"c one", "c two"};
    check_transcripts(ds, want, 2);
    cls_dataset_destroy(ds);
  }
  o.limit = 9;
  o.reverse = 0;
  if ((ds = load(tmp_path("a.csv"), &o))) {
    CHECK_INT(cls_dataset_size(ds), 5);
    cls_dataset_destroy(ds);
  }
  o.limit = 0;
  /* Two files merged by size, ties in the order the files are given. */
  snprintf(files, sizeof files, "%s,%s", tmp_path("a.csv"), tmp_path("b.csv"));
  if ((ds = load(files, &o))) {
    const char *want[] = {"a one", "a two", "a three", "b one", "b two", "c one", "c two"};
    check_transcripts(ds, want, 7);
    if (cls_dataset_size(ds) == 7) {
      CHECK(strcmp(cls_dataset_sample(ds, 2)->source, tmp_path("b.csv")) == 0, "source %s",
            cls_dataset_sample(ds, 2)->source);
      CHECK_INT(cls_dataset_sample(ds, 2)->line, 2);
      CHECK(strcmp(cls_dataset_sample(ds, 3)->source, tmp_path("a.csv")) == 0, "source %s",
            cls_dataset_sample(ds, 3)->source);
    }
    CHECK_INT(cls_dataset_batches(ds, 3, 0), 3);
    CHECK_INT(cls_dataset_batches(ds, 3, 1), 2);
    int first = -1;
    CHECK_INT(cls_dataset_batch(ds, 3, 0, 2, &first), 1);
    CHECK_INT(first, 6);
    cls_dataset_destroy(ds);
  }
  snprintf(files, sizeof files, "%s,%s", tmp_path("b.csv"), tmp_path("a.csv"));
  if ((ds = load(files, &o))) {
    const char *want[] = {"a three", "a one", "a two", "b one", "b two", "c one", "c two"};
    check_transcripts(ds, want, 7);
    cls_dataset_destroy(ds);
  }
  o.reverse = 1;
  snprintf(files, sizeof files, "%s,%s", tmp_path("a.csv"), tmp_path("b.csv"));
  if ((ds = load(files, &o))) {
    const char *want[] = {"c one", "c two", "b two", "b one", "a one", "a two", "a three"};
    check_transcripts(ds, want, 7);
    cls_dataset_destroy(ds);
  }
  o.reverse = 0;

  /* A byte-order mark before the header. */
  write_text("bom.csv", "\xEF\xBB\xBFwav_filename,wav_filesize,transcript\nldc.wav,1,bom\n");
  if ((ds = load(tmp_path("bom.csv"), &o))) {
    const char *want[] = {"bom"};
    check_transcripts(ds, want, 1);
    cls_dataset_destroy(ds);
  }

  /* Columns in another order, an extra column, no wav_filesize: every size 0, so file order. */
  write_text("c.csv", "transcript,speaker,wav_filename\nsecond,x,ldc.wav\nfirst,y,ldc.wav\n");
  if ((ds = load(tmp_path("c.csv"), &o))) {
    const char *want[] = {"second", "first"};
    check_transcripts(ds, want, 2);
    if (cls_dataset_size(ds) == 2) CHECK_INT(cls_dataset_sample(ds, 1)->filesize, 0);
    cls_dataset_destroy(ds);
  }

  /* Paths: relative to a CSV in a subfolder, absolute, and a CSV named without a folder. */
  make_dir("sub");
  char csv[1024];
  snprintf(csv, sizeof csv, "wav_filename,wav_filesize,transcript\n../ldc.wav,1,relative\n%s,2,absolute\n",
           SMOKE "/LDC93S1.wav");
  write_text("sub/d.csv", csv);
  if ((ds = load(tmp_path("sub/d.csv"), &o))) {
    CHECK_INT(cls_dataset_size(ds), 2);
    if (cls_dataset_size(ds) == 2) {
      CHECK(strcmp(cls_dataset_sample(ds, 0)->path, tmp_path("sub/../ldc.wav")) == 0, "path %s",
            cls_dataset_sample(ds, 0)->path);
      CHECK(strcmp(cls_dataset_sample(ds, 1)->path, SMOKE "/LDC93S1.wav") == 0, "path %s",
            cls_dataset_sample(ds, 1)->path);
      CHECK_INT(cls_dataset_sample(ds, 0)->frames, 145);
    }
    cls_dataset_destroy(ds);
  }
  char cwd[1024];
  if (getcwd(cwd, sizeof cwd) && chdir(tmp) == 0) {
    if ((ds = load("b.csv", &o))) {
      CHECK_INT(cls_dataset_size(ds), 2);
      if (cls_dataset_size(ds) == 2) {
        CHECK(strcmp(cls_dataset_sample(ds, 0)->path, "ldc.wav") == 0, "path %s", cls_dataset_sample(ds, 0)->path);
        CHECK(strcmp(cls_dataset_sample(ds, 0)->source, "b.csv") == 0, "source %s", cls_dataset_sample(ds, 0)->source);
      }
      cls_dataset_destroy(ds);
    }
    CHECK(chdir(cwd) == 0, "cannot return to %s", cwd);
  }
}

static void test_rfc4180(void) {
  /* An alphabet with the comma and the quote, to see them arrive in transcripts. */
  cls_alphabet *a = parse_alphabet(" \na\nb\nc\nd\ne\nh\ni\nl\nn\no\nr\ns\nt\nw\ny\n,\n\"\n");
  if (!a) return;
  write_text("e.csv", "\"wav_filename\",wav_filesize,\"transcript\"\r\n"  /* 1 */
                      "\"ldc.wav\",10,\"hello, world\"\r\n"                /* 2 */
                      "ldc.wav,20,\"say \"\"hi\"\"\"\r\n"                  /* 3 */
                      "ldc.wav,30,\"two\r\nlines\"\r\n"                    /* 4-5 */
                      "\r\n"                                               /* 6 */
                      "ldc.wav,\"40\",last\r\n"                            /* 7 */
                      "ldc.wav,50,\"\"\r\n"                                /* 8 */
                      "ldc.wav,60,\"\"\"\"\r\n"                            /* 9 */
                      "ldc.wav, 70 ,a\"b");                                /* 10, no final line end */
  cls_dataset_options o = {.alphabet = a};
  cls_dataset *ds = load(tmp_path("e.csv"), &o);
  if (ds) {
    const char *want[] = {"hello, world", "say \"hi\"", "last", "\"", "a\"b"};
    check_transcripts(ds, want, 5);
    const int lines[] = {2, 3, 7, 9, 10};
    for (int i = 0; i < 5 && i < cls_dataset_size(ds); i++) CHECK_INT(cls_dataset_sample(ds, i)->line, lines[i]);
    if (cls_dataset_size(ds) == 5) CHECK_INT(cls_dataset_sample(ds, 4)->filesize, 70);
    const cls_dataset_report *r = cls_dataset_get_report(ds);
    CHECK_INT(r->rows, 7);
    CHECK_INT(r->skipped, 2);
    CHECK_INT(r->count[CLS_SKIP_MISSING_CHARACTERS], 1);
    CHECK_INT(r->count[CLS_SKIP_EMPTY_TRANSCRIPT], 1);
    CHECK_INT(r->examples[CLS_SKIP_MISSING_CHARACTERS][0].line, 4);
    CHECK(strcmp(r->examples[CLS_SKIP_MISSING_CHARACTERS][0].detail,
                 "transcript has characters not in the alphabet: U+000D, U+000A") == 0,
          "detail %s", r->examples[CLS_SKIP_MISSING_CHARACTERS][0].detail);
    CHECK_INT(r->examples[CLS_SKIP_EMPTY_TRANSCRIPT][0].line, 8);
    cls_dataset_destroy(ds);
  }
  cls_alphabet_destroy(a);
}

/* The reader itself: CLS_OK with have set per record (its first line in *line), CLS_OK with have
 * false at the end (and after it), a status with err naming the file and line on a malformed record. */
static void test_csv_reader(void) {
  static const char text[] = "a,b\r\n\n\"x\ny\",z\n\"open";
  cls_csv c;
  cls_error err = {0};
  bool have = false;
  int line = 0;
  CHECK_INT(cls_csv_open(&c, "t.csv", text, sizeof text - 1, &err), CLS_OK);
  CHECK_INT(cls_csv_record(&c, &have, &line, &err), CLS_OK);
  CHECK(have && line == 1 && cls_csv_fields(&c) == 2 && !strcmp(cls_csv_field(&c, 1), "b"), "record 1 (line %d)",
        line);
  CHECK_INT(cls_csv_record(&c, &have, &line, &err), CLS_OK);
  CHECK(have && line == 3 && cls_csv_fields(&c) == 2 && !strcmp(cls_csv_field(&c, 0), "x\ny"), "record 2 (line %d)",
        line);
  have = true;
  CHECK_INT(cls_csv_record(&c, &have, &line, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK(!have, "have set on a failure");
  CHECK_INT(err.status, CLS_ERR_INVALID_ARGUMENT);
  CHECK(!strcmp(err.text, "t.csv:5: unterminated quoted field: the quote opened on this line is never closed"),
        "message %s", err.text);
  cls_csv_close(&c);

  CHECK_INT(cls_csv_open(&c, "u.csv", "k\n", 2, &err), CLS_OK);
  CHECK_INT(cls_csv_record(&c, &have, &line, &err), CLS_OK);
  CHECK(have && line == 1, "one record");
  for (int i = 0; i < 2; i++) {
    have = true;
    CHECK_INT(cls_csv_record(&c, &have, &line, &err), CLS_OK);
    CHECK(!have, "the end reads as no record (call %d)", i + 1);
  }
  cls_csv_close(&c);
  CHECK_INT(cls_csv_open(&c, "n.csv", "a\n\0", 3, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(err.status, CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "n.csv:2: holds a NUL byte");
}

static void test_bad_csv(const cls_alphabet *a) {
  cls_dataset_options o = {.alphabet = a};
  expect_load_error(tmp_path("nope.csv"), &o, CLS_ERR_IO, "@/nope.csv: cannot open: No such file or directory");
  write_text("h1.csv", "wav_filename,wav_filesize,text\nldc.wav,1,a\n");
  expect_load_error(tmp_path("h1.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/h1.csv:1: the header has no transcript column (its columns: \"wav_filename\", "
                    "\"wav_filesize\", \"text\"); DeepSpeech CSVs have the header wav_filename,wav_filesize,transcript");
  write_text("h2.csv", "\n\nfile,transcript\nldc.wav,a\n");
  expect_load_error(tmp_path("h2.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/h2.csv:3: the header has no wav_filename column (its columns: \"file\", \"transcript\"); "
                    "DeepSpeech CSVs have the header wav_filename,wav_filesize,transcript");
  write_text("h3.csv", "wav_filename,transcript,transcript\nldc.wav,a,b\n");
  expect_load_error(tmp_path("h3.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/h3.csv:1: the header names the column transcript twice");
  write_text("empty.csv", "\r\n\n");
  expect_load_error(tmp_path("empty.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/empty.csv: empty file; a CSV needs a header row naming wav_filename, wav_filesize and "
                    "transcript");
  write_text("f1.csv", "wav_filename,wav_filesize,transcript\nldc.wav,1,a\nldc.wav,2\nldc.wav,3,c\n");
  expect_load_error(tmp_path("f1.csv"), &o, CLS_ERR_INVALID_ARGUMENT, "@/f1.csv:3: the row has 2 fields, the header 3");
  write_text("f2.csv", "wav_filename,wav_filesize,transcript\r\nldc.wav,1,\"a\r\nb\"\r\nldc.wav,2,hello, world\r\n");
  expect_load_error(tmp_path("f2.csv"), &o, CLS_ERR_INVALID_ARGUMENT, "@/f2.csv:4: the row has 4 fields, the header 3");
  write_text("f3.csv", "wav_filename,wav_filesize,transcript\nldc.wav\n");
  expect_load_error(tmp_path("f3.csv"), &o, CLS_ERR_INVALID_ARGUMENT, "@/f3.csv:2: the row has 1 field, the header 3");
  write_text("q1.csv", "wav_filename,wav_filesize,transcript\nldc.wav,1,a\nldc.wav,2,\"open\nand on\nand on\n");
  expect_load_error(tmp_path("q1.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/q1.csv:3: unterminated quoted field: the quote opened on this line is never closed");
  write_text("q2.csv", "wav_filename,wav_filesize,transcript\nldc.wav,1,\"a\"b\n");
  expect_load_error(tmp_path("q2.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/q2.csv:2: text after the closing quote of field 3 (a quote inside a quoted field is written "
                    "\"\")");
  write_text("s1.csv", "wav_filename,wav_filesize,transcript\nldc.wav,12kb,a\n");
  expect_load_error(tmp_path("s1.csv"), &o, CLS_ERR_INVALID_ARGUMENT, "@/s1.csv:2: wav_filesize \"12kb\" is not an integer");
  write_text("s2.csv", "wav_filename,wav_filesize,transcript\nldc.wav,1,a\nldc.wav,,b\n");
  expect_load_error(tmp_path("s2.csv"), &o, CLS_ERR_INVALID_ARGUMENT, "@/s2.csv:3: wav_filesize \"\" is not an integer");
  write_text("s3.csv", "wav_filename,wav_filesize,transcript\nldc.wav,1.5,a\n");
  expect_load_error(tmp_path("s3.csv"), &o, CLS_ERR_INVALID_ARGUMENT, "@/s3.csv:2: wav_filesize \"1.5\" is not an integer");
  write_text("s4.csv", "wav_filename,wav_filesize,transcript\nldc.wav,99999999999999999999,a\n");
  expect_load_error(tmp_path("s4.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/s4.csv:2: wav_filesize \"99999999999999999999\" is not an integer");
  write_text("w.csv", "wav_filename,wav_filesize,transcript\n,1,a\n");
  expect_load_error(tmp_path("w.csv"), &o, CLS_ERR_INVALID_ARGUMENT, "@/w.csv:2: the wav_filename field is empty");
  static const char nul_csv[] = "wav_filename,wav_filesize,transcript\r\nldc.wav,1,a\r\nldc\0.wav,2,b\n";
  write_bytes("nul.csv", nul_csv, sizeof nul_csv - 1);
  expect_load_error(tmp_path("nul.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/nul.csv:3: holds a NUL byte; this is not a CSV text file");
  /* A bad file among several is named, after the good one loaded. */
  char files[1400];
  snprintf(files, sizeof files, "%s,%s", tmp_path("a.csv"), tmp_path("s1.csv"));
  expect_load_error(files, &o, CLS_ERR_INVALID_ARGUMENT, "@/s1.csv:2: wav_filesize \"12kb\" is not an integer");
  snprintf(files, sizeof files, "%s,,%s", tmp_path("a.csv"), tmp_path("b.csv"));
  expect_load_error(files, &o, CLS_ERR_INVALID_ARGUMENT, "the CSV list \"@/a.csv,,@/b.csv\" has an empty item (item 2)");
  snprintf(files, sizeof files, "%s,", tmp_path("a.csv"));
  expect_load_error(files, &o, CLS_ERR_INVALID_ARGUMENT, "the CSV list \"@/a.csv,\" has an empty item (item 2)");
  expect_load_error("", &o, CLS_ERR_INVALID_ARGUMENT, "no CSV file given");
  cls_dataset_options none = {0};
  expect_load_error(tmp_path("a.csv"), &none, CLS_ERR_INVALID_ARGUMENT, "loading a dataset needs an alphabet");
  cls_dataset_options neg = {.alphabet = a, .step = -1};
  expect_load_error(tmp_path("a.csv"), &neg, CLS_ERR_INVALID_ARGUMENT,
                    "bad dataset options: sample rate 0 Hz, window 0 and step -1 samples");
}

static void test_validation(const cls_alphabet *a) {
  write_wav("short.wav", 4800, 16000, 1, 0);      /* 0.3 s: 14 frames */
  write_wav("trunc.wav", 1600, 16000, 1, 16000);  /* promises 1 s, holds 0.1 s */
  write_wav("empty.wav", 0, 16000, 1, 0);         /* a valid header, no samples */
  write_text("text.wav", "this is not audio, just text that ends in .wav\n");
  write_text("g.csv", "wav_filename,wav_filesize,transcript\n"
                      "ldc.wav,1,she had your dark suit\n"                             /* 2 kept */
                      "ldc.wav,2,Hello 123\n"                                          /* 3 missing chars */
                      "ldc.wav,3,\n"                                                   /* 4 empty */
                      "nope.wav,4,hello\n"                                             /* 5 no audio */
                      "text.wav,5,hello\n"                                             /* 6 not audio */
                      "short.wav,6,abcdefghijklmnopqrstuvwxyz abcdefghijklm\n"        /* 7 40 labels */
                      "trunc.wav,7,hi\n"                                               /* 8 truncated */
                      "short.wav,8,abcdefghijklmn\n"                                   /* 9 14 labels: kept */
                      "short.wav,9,aabcdefghijklm\n"                                   /* 10 14 + 1 repeat */
                      "short.wav,10,aabcdefghijkl\n"                                   /* 11 13 + 1 repeat: kept */
                      "ldc.wav,11,X\nldc.wav,12,xX\nldc.wav,13,X\nldc.wav,14,X\n"      /* 12-15 missing */
                      "ldc.wav,15,X\nldc.wav,16,\xC3\xA9X\n"                           /* 16-17 missing */
                      "sub,17,hi\n"                                                    /* 18 a folder */
                      "empty.wav,18,hi\n");                                            /* 19 no samples */
  cls_dataset_options o = {.alphabet = a};
  cls_dataset *ds = load(tmp_path("g.csv"), &o);
  if (ds) {
    const char *want[] = {"she had your dark suit", "abcdefghijklmn", "aabcdefghijkl"};
    check_transcripts(ds, want, 3);
    if (cls_dataset_size(ds) == 3) {
      CHECK_INT(cls_dataset_sample(ds, 1)->frames, 14);
      CHECK_INT(cls_dataset_sample(ds, 1)->repeats, 0);
      CHECK_INT(cls_dataset_sample(ds, 2)->repeats, 1);
      CHECK_INT(cls_dataset_sample(ds, 2)->n_labels, 13);
    }
    const cls_dataset_report *r = cls_dataset_get_report(ds);
    CHECK_INT(r->rows, 18);
    CHECK_INT(r->considered, 18);
    CHECK_INT(r->kept, 3);
    CHECK_INT(r->skipped, 15);
    CHECK_INT(r->count[CLS_SKIP_EMPTY_TRANSCRIPT], 1);
    CHECK_INT(r->count[CLS_SKIP_MISSING_CHARACTERS], 7);
    CHECK_INT(r->count[CLS_SKIP_AUDIO_MISSING], 2);
    CHECK_INT(r->count[CLS_SKIP_AUDIO_UNREADABLE], 3);
    CHECK_INT(r->count[CLS_SKIP_TOO_LONG], 2);
    CHECK_INT(r->n_examples[CLS_SKIP_MISSING_CHARACTERS], 5);
    CHECK_INT(r->n_examples[CLS_SKIP_TOO_LONG], 2);
    CHECK_INT(r->n_missing_chars, 6);
    char chars[256];
    cls_alphabet_describe_chars(r->missing_chars, r->n_missing_chars, chars, sizeof chars);
    CHECK(strcmp(chars, "'H' (U+0048), '1' (U+0031), '2' (U+0032), '3' (U+0033), 'X' (U+0058), '\xC3\xA9' (U+00E9)") ==
              0, "all missing: %s", chars);
    const cls_skip_example *ex = &r->examples[CLS_SKIP_MISSING_CHARACTERS][0];
    CHECK_INT(ex->line, 3);
    CHECK(strcmp(ex->source, tmp_path("g.csv")) == 0, "source %s", ex->source);
    CHECK(strcmp(ex->path, tmp_path("ldc.wav")) == 0, "path %s", ex->path);
    CHECK(strcmp(ex->detail,
                 "transcript has characters not in the alphabet: 'H' (U+0048), '1' (U+0031), '2' (U+0032), '3' (U+0033)") ==
              0, "detail %s", ex->detail);
    CHECK_INT(r->examples[CLS_SKIP_MISSING_CHARACTERS][4].line, 15);
    ex = &r->examples[CLS_SKIP_EMPTY_TRANSCRIPT][0];
    CHECK_INT(ex->line, 4);
    CHECK(strcmp(ex->detail, "empty transcript") == 0, "detail %s", ex->detail);
    ex = &r->examples[CLS_SKIP_AUDIO_MISSING][0];
    CHECK_INT(ex->line, 5);
    CHECK(strcmp(ex->path, tmp_path("nope.wav")) == 0, "path %s", ex->path);
    CHECK(strcmp(ex->detail, "cannot open the audio file: No such file or directory") == 0, "detail %s", ex->detail);
    ex = &r->examples[CLS_SKIP_AUDIO_MISSING][1];
    CHECK_INT(ex->line, 18);
    CHECK(strcmp(ex->detail, "cannot open the audio file: Is a directory") == 0, "detail %s", ex->detail);
    ex = &r->examples[CLS_SKIP_AUDIO_UNREADABLE][0];
    CHECK_INT(ex->line, 6);
    CHECK(strncmp(ex->detail, "not a readable audio file (", 27) == 0 && ex->detail[strlen(ex->detail) - 1] == ')',
          "detail %s", ex->detail);
    ex = &r->examples[CLS_SKIP_AUDIO_UNREADABLE][1];
    CHECK_INT(ex->line, 8);
    CHECK(strcmp(ex->detail, "truncated audio file: its header promises more sample data than the file holds") == 0,
          "detail %s", ex->detail);
    ex = &r->examples[CLS_SKIP_AUDIO_UNREADABLE][2];
    CHECK_INT(ex->line, 19);
    CHECK(strcmp(ex->detail, "the audio file holds no samples") == 0, "detail %s", ex->detail);
    ex = &r->examples[CLS_SKIP_TOO_LONG][0];
    CHECK_INT(ex->line, 7);
    CHECK(strcmp(ex->detail, "transcript too long for its audio: 40 labels need 40 frames, the audio gives 14 (0.30 s)") ==
              0, "detail %s", ex->detail);
    ex = &r->examples[CLS_SKIP_TOO_LONG][1];
    CHECK_INT(ex->line, 10);
    CHECK(strcmp(ex->detail, "transcript too long for its audio: 14 labels and 1 adjacent repeat need 15 frames, the "
                             "audio gives 14 (0.30 s)") == 0,
          "detail %s", ex->detail);

    char text[4096];
    size_t len = cls_dataset_format_report(ds, text, sizeof text);
    CHECK_INT(len, strlen(text));
    char line[1024];
    const char *head = "15 of 18 samples skipped, 3 kept (3.5 s of audio)\n  1 empty transcript\n    ";
    CHECK(strncmp(text, head, strlen(head)) == 0, "report:\n%s", text);
    snprintf(line, sizeof line, "    %s:4: %s: empty transcript\n", tmp_path("g.csv"), tmp_path("ldc.wav"));
    CHECK_CONTAINS(text, line);
    CHECK_CONTAINS(text, "\n  7 characters not in the alphabet: 'H' (U+0048), '1' (U+0031), '2' (U+0032), '3' (U+0033), "
                         "'X' (U+0058), '\xC3\xA9' (U+00E9)\n");
    CHECK_CONTAINS(text, "\n    ... and 2 more\n  2 audio file missing\n");
    snprintf(line, sizeof line, "    %s:5: %s: cannot open the audio file: No such file or directory\n", tmp_path("g.csv"),
             tmp_path("nope.wav"));
    CHECK_CONTAINS(text, line);
    CHECK_CONTAINS(text, "\n  3 audio file unreadable\n");
    snprintf(line, sizeof line, "  2 transcript too long for its audio\n    %s:7: %s: transcript too long", tmp_path("g.csv"),
             tmp_path("short.wav"));
    CHECK_CONTAINS(text, line);
    /* Reasons in the enum's order, each once. */
    const char *m = strstr(text, "characters not in"), *t = strstr(text, "  2 transcript too long");
    CHECK(m && t && m < t, "order of reasons in:\n%s", text);
    CHECK_INT(cls_dataset_format_report(ds, NULL, 0), len);
    cls_dataset_destroy(ds);
  }

  /* Strict: the first bad row in CSV order is fatal. */
  o.strict = 1;
  expect_load_error(tmp_path("g.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/g.csv:3: @/ldc.wav: transcript has characters not in the alphabet: 'H' (U+0048), '1' "
                    "(U+0031), '2' (U+0032), '3' (U+0033)");
  write_text("h.csv", "wav_filename,wav_filesize,transcript\nldc.wav,9,Bad one\nnope.wav,1,hello\n");
  expect_load_error(tmp_path("h.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/h.csv:2: @/ldc.wav: transcript has characters not in the alphabet: 'B' (U+0042)");
  /* The limit comes first: only nope.wav (the smallest) is considered. */
  o.limit = 1;
  expect_load_error(tmp_path("h.csv"), &o, CLS_ERR_IO,
                    "@/h.csv:3: @/nope.wav: cannot open the audio file: No such file or directory");
  o.strict = 0;
  if ((ds = load(tmp_path("h.csv"), &o))) {
    const cls_dataset_report *r = cls_dataset_get_report(ds);
    CHECK_INT(cls_dataset_size(ds), 0);
    CHECK_INT(r->considered, 1);
    CHECK_INT(r->count[CLS_SKIP_AUDIO_MISSING], 1);
    CHECK_INT(r->count[CLS_SKIP_MISSING_CHARACTERS], 0);
    CHECK_INT(cls_dataset_batches(ds, 1, 0), 0);
    cls_dataset_destroy(ds);
  }
  o.limit = 0;
  o.strict = 1;
  write_text("i.csv", "wav_filename,wav_filesize,transcript\nldc.wav,1,fine\nshort.wav,2,abcdefghijklmnopqrstuvwxyz abcdefghijklm\n");
  expect_load_error(tmp_path("i.csv"), &o, CLS_ERR_INVALID_ARGUMENT,
                    "@/i.csv:3: @/short.wav: transcript too long for its audio: 40 labels need 40 frames, the audio "
                    "gives 14 (0.30 s)");
  write_text("j.csv", "wav_filename,wav_filesize,transcript\nldc.wav,1,fine\nldc.wav,2,\n");
  expect_load_error(tmp_path("j.csv"), &o, CLS_ERR_INVALID_ARGUMENT, "@/j.csv:3: @/ldc.wav: empty transcript");
  write_text("k.csv", "wav_filename,wav_filesize,transcript\ntrunc.wav,1,hi\n");
  expect_load_error(tmp_path("k.csv"), &o, CLS_ERR_IO,
                    "@/k.csv:2: @/trunc.wav: truncated audio file: its header promises more sample data than the file "
                    "holds");
  write_text("l.csv", "wav_filename,wav_filesize,transcript\ntext.wav,1,hi\n");
  cls_error err = {0};
  ds = NULL;
  CHECK_INT(cls_dataset_load(tmp_path("l.csv"), &o, &ds, &err), CLS_ERR_IO);
  char prefix[1400];
  snprintf(prefix, sizeof prefix, "%s:2: %s: not a readable audio file (", tmp_path("l.csv"), tmp_path("text.wav"));
  CHECK(strncmp(err.text, prefix, strlen(prefix)) == 0, "message %s", err.text);
  /* A good set passes strict. */
  if ((ds = load(SMOKE "/ldc93s1.csv", &o))) {
    CHECK_INT(cls_dataset_size(ds), 1);
    cls_dataset_destroy(ds);
  }
}

/* A header that lies (issue 15): a 1 Hz WAV is skipped at validation, the file and the rate named,
 * instead of failing later on the device without a name. */
static void test_implausible_header(const cls_alphabet *a) {
  write_wav("one-hertz.wav", 2000, 1, 1, 0);
  write_text("h.csv", "wav_filename,wav_filesize,transcript\nldc.wav,1,she had your dark suit\none-hertz.wav,2,hi\n");
  cls_dataset_options o = {.alphabet = a};
  cls_dataset *ds = load(tmp_path("h.csv"), &o);
  if (ds) {
    const cls_dataset_report *r = cls_dataset_get_report(ds);
    CHECK_INT(r->kept, 1);
    CHECK_INT(r->count[CLS_SKIP_AUDIO_UNREADABLE], 1);
    const cls_skip_example *ex = &r->examples[CLS_SKIP_AUDIO_UNREADABLE][0];
    CHECK_INT(ex->line, 3);
    CHECK(strcmp(ex->path, tmp_path("one-hertz.wav")) == 0, "path %s", ex->path);
    CHECK(strcmp(ex->detail, "implausible audio header: its header gives a sample rate of 1 Hz, outside 1000 .. 384000 Hz") ==
              0, "detail %s", ex->detail);
    cls_dataset_destroy(ds);
  }
}

/* Samples past a device's frame limit dropped after loading: the rest kept in order, the report's
 * counts, seconds and examples updated. digits-1 is 0.9 s (44 frames), digits-2 1.6 s (80 frames). */
static void test_drop_longer(const cls_alphabet *a) {
  cls_dataset_options o = {.alphabet = a};
  cls_dataset *ds = load(CLS_TEST_DATA "/formats/formats.csv", &o);
  if (!ds) return;
  const double before = cls_dataset_get_report(ds)->seconds;
  double long_s = 0;
  for (int i = 0; i < cls_dataset_size(ds); i++)
    if (cls_dataset_sample(ds, i)->frames > 60) long_s += cls_dataset_sample(ds, i)->seconds;
  CHECK_INT(cls_dataset_drop_longer(ds, 80), 0);
  CHECK_INT(cls_dataset_drop_longer(ds, 60), 3);
  CHECK_INT(cls_dataset_size(ds), 3);
  const char *names[] = {"digits-1.ogg", "digits-1.flac", "digits-1.wav"};
  for (int i = 0; i < 3 && i < cls_dataset_size(ds); i++)
    CHECK(strstr(cls_dataset_sample(ds, i)->path, names[i]) != NULL, "sample %d is %s, expected %s", i,
          cls_dataset_sample(ds, i)->path, names[i]);
  const cls_dataset_report *r = cls_dataset_get_report(ds);
  CHECK_INT(r->kept, 3);
  CHECK_INT(r->skipped, 3);
  CHECK_INT(r->count[CLS_SKIP_DEVICE_MEMORY], 3);
  CHECK_INT(r->n_examples[CLS_SKIP_DEVICE_MEMORY], 3);
  CHECK(fabs(r->seconds - (before - long_s)) < 1e-9, "seconds %g, expected %g", r->seconds, before - long_s);
  const cls_skip_example *ex = &r->examples[CLS_SKIP_DEVICE_MEMORY][0];
  CHECK(strstr(ex->path, "digits-2.ogg") != NULL && ex->line == 7, "first example %s line %d", ex->path, ex->line);
  CHECK(strcmp(ex->detail, "too long for the device's memory: 1.6 s (80 frames), the limit is 60 frames (1.2 s)") == 0,
        "detail %s", ex->detail);
  char text[2048];
  cls_dataset_format_report(ds, text, sizeof text);
  CHECK(strstr(text, "3 audio too long for the device's memory") != NULL, "report: %s", text);
  cls_dataset_destroy(ds);
}

/* CTC's fewest frames: a label each and one per adjacent repeat ("all": 4), the floor of the data
 * sets' check and of --augment tempo (issue 45: a tempo floor of the label count alone made "all"
 * impossible). */
static void test_ctc_min_frames(void) {
  const int32_t all[] = {0, 11, 11}, aaa[] = {0, 0, 0}, abc[] = {0, 1, 2}, abab[] = {0, 1, 0, 1};
  CHECK_INT(cls_ctc_min_frames(all, 3), 4);
  CHECK_INT(cls_ctc_min_frames(aaa, 3), 5);
  CHECK_INT(cls_ctc_min_frames(abc, 3), 3);
  CHECK_INT(cls_ctc_min_frames(abab, 4), 4);
  CHECK_INT(cls_ctc_min_frames(abc, 0), 0);
}

int main(void) {
  test_ctc_min_frames();
  if (!data_present()) return check_finish("test_data");
  if (!data_files_open("clspeech-data")) return 1;
  copy_file(SMOKE "/LDC93S1.wav", "ldc.wav");
  cls_alphabet *a = smoke_alphabet();
  if (a) {
    test_ldc93s1(a);
    test_formats(a);
    test_order(a);
    test_rfc4180();
    test_csv_reader();
    test_bad_csv(a);
    test_validation(a);
    test_implausible_header(a);
    test_drop_longer(a);
  }
  cls_alphabet_destroy(a);
  data_files_close();
  return check_finish("test_data");
}
