/* Training and evaluation sets from DeepSpeech CSV files (wav_filename, wav_filesize, transcript):
 * RFC 4180 parsing, merging several files, DeepSpeech's order (ascending wav_filesize, stable),
 * reverse and limit, validation of every sample (transcript against the alphabet, audio header,
 * enough frames for CTC) with a report of what was skipped and why, and consecutive batches. */
#ifndef CLS_DATASET_H
#define CLS_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "alphabet.h"
#include "clspeech.h"

typedef struct cls_sample {
  const char *path;        /* the audio file: absolute, or relative resolved against the CSV's folder */
  int64_t filesize;        /* wav_filesize (0 without the column); only the order uses it */
  const char *transcript;  /* as in the CSV (UTF-8, no normalization) */
  const int32_t *labels;   /* [n_labels] the transcript's labels */
  int n_labels;
  int repeats;             /* adjacent equal labels: CTC needs frames >= n_labels + repeats */
  int64_t n_samples;       /* samples at the options' sample rate, from the audio header (when the file's
                              rate differs: frames * rate / file rate, rounded down; the resampler may
                              give one more or less) */
  int frames;              /* feature frames for n_samples: 1 + (n_samples - window) / step */
  int source_rate;         /* the audio file's rate and channels */
  int source_channels;
  double seconds;          /* the audio's duration */
  const char *source;      /* the CSV file, as named in the list */
  int line;                /* the CSV line where its row starts (the header is line 1) */
} cls_sample;

typedef struct cls_dataset_options {
  const cls_alphabet *alphabet; /* required */
  int sample_rate;              /* the model's rate in Hz; 0: 16000 */
  int window, step;             /* feature window and step in samples; 0: DeepSpeech's 32 ms and 20 ms */
  int reverse;                  /* descending wav_filesize (ties stay in file order, as Python's
                                   sort(reverse=True) that DeepSpeech uses) */
  int limit;                    /* > 0: keep only the first `limit` rows of the sorted order; they are
                                   validated afterwards, so fewer may remain (as DeepSpeech's limit_*) */
  int strict;                   /* any bad sample is a fatal error naming it, instead of a skip */
} cls_dataset_options;

typedef enum cls_skip_reason {
  CLS_SKIP_EMPTY_TRANSCRIPT = 0,
  CLS_SKIP_MISSING_CHARACTERS = 1, /* characters the alphabet lacks (or bytes that are not UTF-8) */
  CLS_SKIP_AUDIO_MISSING = 2,      /* the audio file cannot be opened */
  CLS_SKIP_AUDIO_UNREADABLE = 3,   /* not audio libsndfile reads, no samples, or truncated */
  CLS_SKIP_TOO_LONG = 4,           /* the transcript needs more frames than the audio gives */
  CLS_SKIP_REASONS = 5
} cls_skip_reason;

/* A short English name for a reason ("characters not in the alphabet"). */
const char *cls_skip_reason_name(cls_skip_reason reason);

enum { CLS_SKIP_EXAMPLES = 5 };

typedef struct cls_skip_example {
  const char *source;  /* CSV file and line of the row */
  int line;
  const char *path;    /* the resolved audio path */
  char detail[256];    /* a whole sentence: "transcript has characters not in the alphabet: '1' (U+0031)" */
} cls_skip_example;

typedef struct cls_dataset_report {
  int rows;                  /* data rows in all the CSV files */
  int considered;            /* rows left after `limit` */
  int kept;                  /* samples in the set */
  int skipped;               /* considered - kept */
  int count[CLS_SKIP_REASONS];
  int n_examples[CLS_SKIP_REASONS];           /* min(count, CLS_SKIP_EXAMPLES) */
  cls_skip_example examples[CLS_SKIP_REASONS][CLS_SKIP_EXAMPLES]; /* the first ones in CSV order */
  const int32_t *missing_chars;               /* every distinct missing character over the whole set, in
                                                 cls_alphabet_encode's form (format with
                                                 cls_alphabet_describe_chars) */
  int n_missing_chars;
  double seconds;                             /* audio in the kept samples */
} cls_dataset_report;

typedef struct cls_dataset cls_dataset;

/* Loads `csv_files`, one CSV path or several separated by commas (as DeepSpeech's --train_files),
 * merged into one set in DeepSpeech's order. Each CSV needs a header naming wav_filename and
 * transcript, and optionally wav_filesize, in any order; other columns are ignored.
 * Errors (*out NULL, `err` names the file and line): a CSV that cannot be read (CLS_ERR_IO); malformed
 * CSV: a missing column, a row with another number of fields than the header, an unterminated quote,
 * text after a closing quote, an empty wav_filename, a wav_filesize that is not an integer, a NUL
 * byte (CLS_ERR_INVALID_ARGUMENT); in strict mode the first bad sample in CSV order, as
 * "file.csv:LINE: AUDIO: DETAIL" (CLS_ERR_IO for audio problems, CLS_ERR_INVALID_ARGUMENT for the
 * transcript ones). Without strict, bad samples are skipped and counted in the report; a set may
 * end up empty, which the caller decides about. */
cls_status cls_dataset_load(const char *csv_files, const cls_dataset_options *options, cls_dataset **out, char *err,
                            size_t err_cap);
void cls_dataset_destroy(cls_dataset *ds);

int cls_dataset_size(const cls_dataset *ds);
/* Sample i in the set's order, NULL outside 0 .. size-1. */
const cls_sample *cls_dataset_sample(const cls_dataset *ds, int i);
const cls_dataset_report *cls_dataset_get_report(const cls_dataset *ds);
/* Seconds of audio in the set. */
double cls_dataset_seconds(const cls_dataset *ds);

/* The report for people, one line a reason with its first examples, e.g.
 *   "2 of 10 samples skipped, 8 kept (25.3 s of audio)\n"
 *   "  1 characters not in the alphabet: '1' (U+0031)\n"
 *   "    train.csv:4: /data/a.wav: transcript has characters not in the alphabet: '1' (U+0031)\n"
 *   "  1 audio file missing\n" ...
 * or "10 samples (25.3 s of audio)\n" when nothing was skipped. Truncated to cap; returns the length
 * the whole text needs (as snprintf). */
size_t cls_dataset_format_report(const cls_dataset *ds, char *out, size_t cap);

/* Batches of `batch_size` consecutive samples in the set's order (DeepSpeech's padded_batch over the
 * sorted list); the last one is short unless drop_remainder, which drops it. 0 when batch_size < 1. */
int cls_dataset_batches(const cls_dataset *ds, int batch_size, int drop_remainder);
/* Batch k: samples *first .. *first + count - 1; returns count, 0 (and *first 0) when there is no batch k. */
int cls_dataset_batch(const cls_dataset *ds, int batch_size, int drop_remainder, int k, int *first);
/* The largest frames and label count among samples first .. first + count - 1 (the padded shapes). */
void cls_dataset_batch_max(const cls_dataset *ds, int first, int count, int *max_frames, int *max_labels);

#endif
