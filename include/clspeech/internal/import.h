/* clspeech internal API, data layer: `clspeech import` — the rows of a public corpus's layout
 * (Common Voice, LibriSpeech, Multilingual LibriSpeech, a plain folder) read into one list, their
 * transcripts normalised as DeepSpeech's importers do, and every row checked as training checks it,
 * in parallel, with the audio headers kept in a cache keyed by path, size and mtime. Host-only. */
#ifndef CLSPEECH_INTERNAL_IMPORT_H
#define CLSPEECH_INTERNAL_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clspeech/base.h"
#include "clspeech/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The splits a corpus defines; every layout maps its own names onto these. */
typedef enum cls_import_split { CLS_IMPORT_TRAIN = 0, CLS_IMPORT_DEV = 1, CLS_IMPORT_TEST = 2, CLS_IMPORT_SPLITS = 3 } cls_import_split;
/* "train", "dev", "test". */
const char *cls_import_split_name(cls_import_split split);

/* Why a row is left out. */
typedef enum cls_import_reason {
  CLS_IMPORT_KEPT = 0,
  CLS_IMPORT_MALFORMED,       /* a transcript file's row lacks the audio's field (path: that file) */
  CLS_IMPORT_NO_TRANSCRIPT,   /* the corpus names audio without a transcript */
  CLS_IMPORT_DUPLICATE,       /* the audio file of an earlier row */
  CLS_IMPORT_BAD_TEXT,        /* the transcript is not valid UTF-8 */
  CLS_IMPORT_EMPTY_TRANSCRIPT, /* nothing left after normalisation */
  CLS_IMPORT_DIGITS,          /* a decimal digit (numbers must be spelled out) */
  CLS_IMPORT_NOT_IN_ALPHABET, /* characters the --alphabet lacks */
  CLS_IMPORT_AUDIO_MISSING,   /* the audio file cannot be opened */
  CLS_IMPORT_AUDIO_UNREADABLE, /* not audio, no samples, truncated, an implausible header */
  CLS_IMPORT_TOO_SHORT,       /* fewer feature frames than CTC needs for the transcript */
  CLS_IMPORT_TOO_LONG,        /* more than --max_seconds of audio */
  CLS_IMPORT_TOO_SLOW,        /* fewer than --min_chars_per_second characters per second */
  CLS_IMPORT_REASONS
} cls_import_reason;
/* A short English name ("audio file missing"); the excluded.csv's reason column is the key ("audio_missing"). */
const char *cls_import_reason_name(cls_import_reason reason);
const char *cls_import_reason_key(cls_import_reason reason);

typedef struct cls_import_row {
  char *path;        /* the audio file, absolute */
  char *transcript;  /* as the corpus gives it, then (cls_import_check) normalised; NULL: none */
  int split;         /* cls_import_split */
  int source;        /* index into the list's sources: the file that names the row */
  int line;          /* its line there (1-based; 0: the row comes from a folder walk) */
  /* Filled by cls_import_check: */
  int reason;        /* cls_import_reason */
  char detail[200];  /* a whole sentence when left out */
  int64_t filesize;
  double seconds;
} cls_import_row;

typedef struct cls_import_list {
  cls_import_row *rows;
  int n, cap;
  char **sources;
  int n_sources;
} cls_import_list;

void cls_import_list_free(cls_import_list *list);
/* Appends a row (copies of `path` and `transcript`, which may be NULL) from source `source`. */
cls_status cls_import_list_add(cls_import_list *list, const char *path, const char *transcript, int split, int source,
                               int line, cls_error *err);
/* Adds a source file name, returning its index in *index. */
cls_status cls_import_list_source(cls_import_list *list, const char *name, int *index, cls_error *err);

/* ---- the text readers (tests/fuzz reads them) ---- */
/* A row of a transcript file: its 1-based line and two fields (NUL-terminated, the reader's memory). */
typedef cls_status (*cls_import_row_fn)(void *user, int line, const char *key, const char *text, cls_error *err);

/* A Common Voice TSV: a header row naming the columns (`path` and `sentence` found by name, others
 * ignored), tab-separated fields, a field that starts with '"' quoted (a doubled "" is one quote; tabs
 * and line ends inside; text after the closing quote is kept as it is), LF or CRLF, a leading UTF-8
 * BOM skipped, empty lines skipped. A row too short to reach the sentence's field gets text NULL, one
 * too short to reach the path's key NULL too (`fn` decides). An unterminated quote, a NUL byte, a header
 * without either column: CLS_ERR_INVALID_ARGUMENT naming `name` and the line. */
cls_status cls_import_parse_tsv(const char *text, size_t len, const char *name, cls_import_row_fn fn, void *user,
                                cls_error *err);
/* A LibriSpeech trans.txt (sep ' ': "ID TRANSCRIPT") or an MLS transcripts.txt (sep '\t'): the key up
 * to the first `sep`, the text after it ("" for a line without `sep`); LF or CRLF; empty lines
 * skipped. A line that starts with `sep`, a NUL byte: CLS_ERR_INVALID_ARGUMENT naming `name` and the line. */
cls_status cls_import_parse_keyed(const char *text, size_t len, const char *name, char sep, cls_import_row_fn fn,
                                  void *user, cls_error *err);
/* The most bytes one transcript file may hold. */
#define CLS_IMPORT_TEXT_MAX_BYTES ((size_t)1 << 30)

/* ---- the layouts ---- */
/* Each appends the corpus's rows at `src` (a folder) to `list`. Rows whose transcript is missing get
 * transcript NULL (left out by the check). CLS_ERR_IO when the folder or a file it needs cannot be read,
 * CLS_ERR_INVALID_ARGUMENT for malformed text; `err` names the file (and line). */
/* clips/ and train.tsv, dev.tsv, test.tsv (at least one of them). */
cls_status cls_import_read_commonvoice(const char *src, cls_import_list *list, cls_error *err);
/* SUBSET/SPEAKER/CHAPTER/SPEAKER-CHAPTER.trans.txt and *.flac; SRC itself may be one subset folder.
 * A subset folder's name gives its split by its prefix (train-, dev-, test-). */
cls_status cls_import_read_librispeech(const char *src, cls_import_list *list, cls_error *err);
/* {train,dev,test}/transcripts.txt with audio at SPLIT/audio/SPEAKER/BOOK/ID.flac or .opus. */
cls_status cls_import_read_mls(const char *src, cls_import_list *list, cls_error *err);
/* Every audio file (.wav .flac .mp3 .ogg .opus) under `src` with a same-named .txt beside it, into train. */
cls_status cls_import_read_folder(const char *src, cls_import_list *list, cls_error *err);

/* ---- normalisation ---- */
typedef struct cls_import_text_options {
  bool keep_case;        /* no lower-casing */
  bool keep_punctuation; /* no punctuation or symbols dropped */
  bool keep_digits;      /* rows with digits are kept (else CLS_IMPORT_DIGITS) */
  bool strip_marks;      /* --normalize: letters to their base letters (combining marks dropped after NFKD) */
} cls_import_text_options;

/* The transcript as docs/import.md states: NFKC, lower case, U+2019 and U+02BC to U+0027, dashes
 * and connector punctuation (Pd, Pc) to a space, other punctuation and symbols (P*, S*) but the
 * apostrophe U+0027 dropped, every whitespace or control character a space, spaces collapsed and
 * trimmed, format characters (Cf) dropped; with strip_marks, every combining mark (Mn, Mc, Me) of the
 * compatibility decomposition dropped before it is composed again (é to e). *out malloc'ed; *digit (may be NULL) receives the first
 * decimal digit (Unicode Nd) of the result, 0 for none. CLS_ERR_INVALID_ARGUMENT for text that is not
 * valid UTF-8 (`err` names the byte). */
cls_status cls_import_normalize(const char *text, const cls_import_text_options *o, char **out, uint32_t *digit,
                                cls_error *err);

/* ---- the check ---- */
typedef void (*cls_import_progress_fn)(void *user, int done, int total);

typedef struct cls_import_check_options {
  cls_import_text_options text;
  const cls_alphabet *alphabet; /* NULL: any character is kept */
  int sample_rate;              /* 0: 16000 */
  int window, step;             /* samples; 0: DeepSpeech's 32 ms and 20 ms */
  double max_seconds;           /* > 0: longer audio is left out */
  double min_chars_per_second;  /* > 0: fewer characters per second of audio is left out */
  int threads;                  /* 0: the online processors */
  const char *cache_path;       /* NULL: none; else read before and written after (output rule) */
  cls_import_progress_fn progress;
  void *progress_user;
} cls_import_check_options;

typedef struct cls_import_check_report {
  int cached;   /* rows whose audio header came from the cache */
  int probed;   /* rows whose audio was opened */
} cls_import_check_report;

/* Normalises and checks every row (reason, detail, filesize, seconds set): duplicates first (the
 * later rows of one path), then the transcript, then the audio header (cls_audio_probe, from the
 * cache when path, size and mtime match), frames for CTC (cls_ctc_min_frames over the transcript's
 * codepoints or labels) and the limits. Fails only for memory, threads or the cache's write. */
cls_status cls_import_check(cls_import_list *list, const cls_import_check_options *o, cls_import_check_report *report,
                            cls_error *err);

#ifdef __cplusplus
}
#endif
#endif
