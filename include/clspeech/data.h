/* clspeech public API, data layer: the label alphabet, DeepSpeech CSV data sets (validation,
 * order, batches, skip reports) and the utterances the trainer takes. Host-only: no OpenCL. */
#ifndef CLSPEECH_DATA_H
#define CLSPEECH_DATA_H

#include <stddef.h>
#include <stdint.h>
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- alphabet ---- */
/* The label alphabet (DeepSpeech's alphabet.txt): parsing the file, mapping transcripts to label
 * sequences and back, and naming the characters an alphabet lacks. Labels are 0 .. size-1 in file
 * order; the CTC blank is the extra class `size` (classes = size + 1), as in DeepSpeech. */



typedef struct cls_alphabet cls_alphabet;

/* Reads an alphabet file. UTF-8 (a leading byte-order mark is ignored), one label per line, LF, CRLF
 * or CR line ends; a line starting with '#' is a comment, the line "\#" is the label '#', empty lines
 * are skipped, a line holding one space is the space label. Every label must be exactly one Unicode
 * codepoint and appear once. On error (CLS_ERR_IO: cannot read; CLS_ERR_INVALID_ARGUMENT: bad
 * content) `err` names the file and line, and *out is NULL. A file (or device, or pipe) past
 * CLS_ALPHABET_MAX_BYTES is refused unread beyond that. */
#define CLS_ALPHABET_MAX_BYTES ((size_t)1 << 20)
cls_status cls_alphabet_load(const char *path, cls_alphabet **out, cls_error *err);

/* The same from text in memory (`len` bytes); `name` stands for the file in messages. */
cls_status cls_alphabet_parse(const char *text, size_t len, const char *name, cls_alphabet **out, cls_error *err);

void cls_alphabet_destroy(cls_alphabet *a);

/* DeepSpeech's UTF-8 bytes alphabet (--bytes_output_mode, its UTF8Alphabet): 255 labels, label i is
 * the byte i+1 (i = 0..254), so 256 classes and the blank 255; no alphabet file. Encoding gives one
 * label per byte of the transcript's UTF-8 (byte b is label b-1; a NUL byte cannot occur in a C
 * string); text that is not valid UTF-8 is refused as with any alphabet. cls_alphabet_label(a, i) is
 * the one byte i+1 (not UTF-8 text on its own from 0x80 up), cls_alphabet_index(a, b) the label of
 * byte b. Decoding assembles the bytes and keeps only whole, valid UTF-8 characters (below).
 * On disk (a checkpoint folder's alphabet.txt, a package's alphabet) this alphabet is the text
 * CLS_ALPHABET_BYTES_TEXT: a comment line that cls_alphabet_parse reads back as this alphabet (an
 * ordinary file holding only comments is an error, so the two never meet). */
#define CLS_ALPHABET_BYTES_LINE "# clspeech --bytes_output_mode: 255 UTF-8 byte labels (label i = byte i+1), blank 255"
#define CLS_ALPHABET_BYTES_TEXT CLS_ALPHABET_BYTES_LINE "\n"
cls_status cls_alphabet_bytes(cls_alphabet **out, cls_error *err);
/* true for the bytes alphabet (cls_alphabet_bytes, or a file of CLS_ALPHABET_BYTES_TEXT). */
bool cls_alphabet_is_bytes(const cls_alphabet *a);

/* Number of labels, without the CTC blank: the model has size + 1 classes, the blank is label `size`. */
int cls_alphabet_size(const cls_alphabet *a);

/* Label i as a NUL-terminated UTF-8 string (one codepoint; the bytes alphabet: one byte), NULL when i
 * is outside 0 .. size-1. */
const char *cls_alphabet_label(const cls_alphabet *a, int i);

/* The label of a Unicode codepoint, -1 when the alphabet lacks it. */
int cls_alphabet_index(const cls_alphabet *a, uint32_t codepoint);

/* false when a and b hold the same labels in the same order; else true, and `why` (may be NULL) receives
 * CLS_ERR_INVALID_ARGUMENT with the first difference: "28 labels against 30" or "label 3 is \"c\" against
 * \"x\"". */
bool cls_alphabet_differs(const cls_alphabet *a, const cls_alphabet *b, cls_error *why);

/* Encodes UTF-8 text, one label per codepoint (no normalization, no case folding, as DeepSpeech).
 * *n receives the number of codepoints (the labels needed; a text of k bytes needs at most k) and the
 * labels are written when they fit in `cap` (`labels` may be NULL with cap 0 to count).
 * Characters the alphabet lacks: every distinct one, in order of first appearance, goes to `missing`
 * (up to `missing_cap`, may be NULL) and *n_missing (may be NULL) receives how many distinct ones
 * there are. A value >= 0 in `missing` is a codepoint; a negative value -b is a byte b (0x80..0xFF)
 * that is not valid UTF-8. The labels of missing characters are written as -1.
 * CLS_OK when every character is in the alphabet and the labels fit; CLS_ERR_INVALID_ARGUMENT when a
 * character is missing or cap is too small; CLS_ERR_OUT_OF_MEMORY. */
cls_status cls_alphabet_encode(const cls_alphabet *a, const char *utf8, int32_t *labels, int cap, int *n,
                               int32_t *missing, int missing_cap, int *n_missing);

/* Writes characters as encode reports them, for people: "'1' (U+0031), 'é' (U+00E9), U+000A,
 * invalid UTF-8 byte 0xFF" (control and invisible characters by code only). Whole items only: when
 * `out` is too small the list ends with ", ..." (or is "..."). Returns the length written. */
size_t cls_alphabet_describe_chars(const int32_t *chars, int n, char *out, size_t cap);

/* Decodes labels to NUL-terminated UTF-8 in `out`. CLS_ERR_INVALID_ARGUMENT when a label is outside
 * 0 .. size-1 (the blank included) or the text does not fit; `out` then holds the text up to there
 * (whole characters). The bytes alphabet: the labels' bytes, of which only whole valid UTF-8
 * characters are kept: a byte that cannot start a character, a character cut short by the next
 * byte that does not continue it, and an unfinished character at the end are dropped (the
 * following byte is read afresh), so `out` is always valid UTF-8. */
cls_status cls_alphabet_decode(const cls_alphabet *a, const int32_t *labels, int n, char *out, size_t cap);

/* ---- alphabet from transcripts ---- */
/* An alphabet made from the data (`clspeech import --make_alphabet`, `train --auto_input_dataset`):
 * the distinct codepoints of a set of transcripts with a count each, sorted by codepoint, written as
 * an alphabet.txt that cls_alphabet_load reads back with the same labels in the same order. */
typedef struct cls_alphabet_counts cls_alphabet_counts;

cls_status cls_alphabet_counts_create(cls_alphabet_counts **out, cls_error *err);
void cls_alphabet_counts_destroy(cls_alphabet_counts *c);

/* Counts every codepoint of `len` bytes of transcript (strict UTF-8). CLS_ERR_INVALID_ARGUMENT, with
 * nothing counted and `err` saying where, when the text is not valid UTF-8 or holds a character no
 * alphabet.txt line can hold as a label: NUL, LF or CR (U+0000, U+000A, U+000D). */
cls_status cls_alphabet_counts_add(cls_alphabet_counts *c, const char *utf8, size_t len, cls_error *err);

/* Distinct codepoints counted; codepoint i (0 .. size-1, ascending) and how often it appeared. */
int cls_alphabet_counts_size(const cls_alphabet_counts *c);
uint32_t cls_alphabet_counts_codepoint(const cls_alphabet_counts *c, int i);
int64_t cls_alphabet_counts_count(const cls_alphabet_counts *c, int i);

/* The alphabet.txt text (malloc'ed, NUL-terminated, *len bytes without the NUL): a header of comment
 * lines, then per codepoint in ascending order a comment "# U+XXXX count N" and the label's line (the
 * space label is a line of one space, '#' is written "\#"), and a closing comment. CLS_ERR_INVALID_ARGUMENT
 * when nothing was counted. */
cls_status cls_alphabet_counts_format(const cls_alphabet_counts *c, char **text, size_t *len, cls_error *err);

/* The same text written to `path` by the output rule (cls_output_open). */
cls_status cls_alphabet_counts_write(const cls_alphabet_counts *c, const char *path, cls_error *err);

/* One call: the alphabet of n NUL-terminated transcripts written to `path` (the errors above, the
 * transcript's index named). */
cls_status cls_alphabet_make(const char *const *transcripts, int n, const char *path, cls_error *err);

/* ---- dataset ---- */
/* Training and evaluation sets from DeepSpeech CSV files (wav_filename, wav_filesize, transcript):
 * RFC 4180 parsing, merging several files, DeepSpeech's order (ascending wav_filesize, stable),
 * reverse and limit, validation of every sample (transcript against the alphabet, audio header,
 * enough frames for CTC) with a report of what was skipped and why, and consecutive batches. */



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

/* The fewest frames CTC can align `n` labels to: one per label and one more per adjacent repeat (a
 * blank must separate two equal labels), so "all" needs 4. The one rule of the data sets' check
 * (CLS_SKIP_TOO_LONG) and of --augment tempo's floor. */
int cls_ctc_min_frames(const int32_t *labels, int n);

typedef struct cls_dataset_options {
  const cls_alphabet *alphabet; /* required */
  int sample_rate;              /* the model's rate in Hz; 0: 16000 */
  int window, step;             /* feature window and step in samples; 0: DeepSpeech's 32 ms and 20 ms */
  int reverse;                  /* descending wav_filesize (ties stay in file order, as Python's
                                   sort(reverse=True) that DeepSpeech uses) */
  int limit;                    /* > 0: keep only the first `limit` rows of the sorted order; they are
                                   validated afterwards, so fewer may remain (as DeepSpeech's limit_*) */
  int strict;                   /* any bad sample is a fatal error naming it, instead of a skip */
  int exact_rate;               /* a file at another rate than sample_rate is a fatal error naming it
                                   (CLS_ERR_INVALID_ARGUMENT), instead of being resampled (DeepSpeech's
                                   --normalize_sample_rate false) */
} cls_dataset_options;

typedef enum cls_skip_reason {
  CLS_SKIP_EMPTY_TRANSCRIPT = 0,
  CLS_SKIP_MISSING_CHARACTERS = 1, /* characters the alphabet lacks (or bytes that are not UTF-8) */
  CLS_SKIP_AUDIO_MISSING = 2,      /* the audio file cannot be opened */
  CLS_SKIP_AUDIO_UNREADABLE = 3,   /* not audio libsndfile reads, no samples, truncated, or an implausible header */
  CLS_SKIP_TOO_LONG = 4,           /* the transcript needs more frames than the audio gives */
  CLS_SKIP_DEVICE_MEMORY = 5,      /* more frames than a device can train on (cls_dataset_drop_longer) */
  CLS_SKIP_REASONS = 6
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
 * end up empty, which the caller decides about. A CSV past CLS_CSV_MAX_BYTES is refused, and
 * reading stops at the first block holding a NUL byte (so /dev/zero is one block, then an error). */
#define CLS_CSV_MAX_BYTES ((size_t)1 << 30)
cls_status cls_dataset_load(const char *csv_files, const cls_dataset_options *options, cls_dataset **out,
                            cls_error *err);
void cls_dataset_destroy(cls_dataset *ds);

/* Drops the samples of more than max_frames frames (audio too long for a device's memory, which the
 * caller knows: e.g. cls_train_frame_limit), keeping the order of the rest, and counts them in the
 * report (kept, skipped, seconds) as CLS_SKIP_DEVICE_MEMORY with the detail "too long for the device's
 * memory: D s (N frames), the limit is M frames (S s)". Returns how many were dropped, -1 when out of
 * memory (the set is then unchanged). Samples from cls_dataset_sample taken before may move. */
int cls_dataset_drop_longer(cls_dataset *ds, int max_frames);

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

/* ---- --augment overlay's source ---- */
/* The quick check of an overlay source before any work: `csv` is a DeepSpeech CSV (read as the data
 * sets read theirs) with at least one row whose audio file's header libsndfile reads. Otherwise the CSV's
 * error (CLS_ERR_IO for a missing file), or CLS_ERR_INVALID_ARGUMENT for no rows or no readable audio,
 * `err` naming the file. Training decodes the whole source when it starts (and refuses silence only). */
cls_status cls_overlay_source_check(const char *csv, cls_error *err);

/* The header line of a DeepSpeech CSV as clspeech writes it (the columns the data sets read). */
#define CLS_DEEPSPEECH_CSV_HEADER "wav_filename,wav_filesize,transcript"

/* One CSV field written as RFC 4180 writes it (and as the data sets read it): as it is, or in double
 * quotes with each quote doubled when it holds a comma, a quote or a line end. */
void cls_csv_write_field(FILE *f, const char *field);

/* ---- --auto_input_dataset: one CSV split into training, validation and test sets ---- */
/* The size of the validation set and of the test set (each) for a CSV of n_rows rows, as Coqui STT's
 * --auto_input_dataset sizes them: the sample size for a 99 % confidence and a 1 % margin of error
 * (z = 2.58, p = 0.5) given the training set that remains, for the largest training set that leaves two
 * such sets; at least 1 for 2 rows or more (0 below 2). 100 rows: 33 each; 1,000: 331; 4,000: 1,296;
 * 10,000: 3,097 (the figures of Coqui's formula, tests/test_auto_split.c). */
int cls_auto_split_size(int n_rows);
/* Splits the DeepSpeech CSV `csv` (a header naming wav_filename, wav_filesize and transcript; other
 * columns are left out) into out[0] (training), out[1] (validation) and out[2] (test): its rows in the
 * order of a Fisher-Yates shuffle drawn from `seed` by SplitMix64 (the same seed, the same split), the
 * last 2 x cls_auto_split_size rows to validation and test. Each output is written by the output rule
 * with the header and its rows as they were (relative audio paths stay relative, so write the outputs
 * beside the input); sizes[3] receives the rows of each. With `counts` (may be NULL), every row's transcript
 * is counted into it too, as cls_auto_split_count counts them, before anything is written. CLS_ERR_INVALID_ARGUMENT naming the file and
 * line for a malformed CSV or fewer than 3 rows (no training row would be left), or an output that is
 * the input; CLS_ERR_IO for a file
 * that cannot be read or written. */
cls_status cls_auto_split_csv(const char *csv, uint64_t seed, const char *const out[3], int sizes[3],
                              cls_alphabet_counts *counts, cls_error *err);
/* Every transcript of the CSV `csv` (read as cls_auto_split_csv reads it) added to `counts`, for the
 * alphabet made from the data when the sets were split before; the errors of cls_alphabet_counts_add name the file and line. */
cls_status cls_auto_split_count(const char *csv, cls_alphabet_counts *counts, cls_error *err);

/* ---- utterances ---- */
/* What the trainer takes of a sample: its audio file and its labels. */
typedef struct cls_utterance {
  const char *path;
  const int32_t *labels;
  int n_labels;
} cls_utterance;

#ifdef __cplusplus
}
#endif
#endif
