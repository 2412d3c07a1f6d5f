/* The label alphabet (DeepSpeech's alphabet.txt): parsing the file, mapping transcripts to label
 * sequences and back, and naming the characters an alphabet lacks. Labels are 0 .. size-1 in file
 * order; the CTC blank is the extra class `size` (classes = size + 1), as in DeepSpeech. */
#ifndef CLS_ALPHABET_H
#define CLS_ALPHABET_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech.h"

typedef struct cls_alphabet cls_alphabet;

/* Reads an alphabet file. UTF-8 (a leading byte-order mark is ignored), one label per line, LF, CRLF
 * or CR line ends; a line starting with '#' is a comment, the line "\#" is the label '#', empty lines
 * are skipped, a line holding one space is the space label. Every label must be exactly one Unicode
 * codepoint and appear once. On error (CLS_ERR_IO: cannot read; CLS_ERR_INVALID_ARGUMENT: bad
 * content) `err` names the file and line, and *out is NULL. */
cls_status cls_alphabet_load(const char *path, cls_alphabet **out, char *err, size_t err_cap);

/* The same from text in memory (`len` bytes); `name` stands for the file in messages. */
cls_status cls_alphabet_parse(const char *text, size_t len, const char *name, cls_alphabet **out, char *err,
                              size_t err_cap);

void cls_alphabet_destroy(cls_alphabet *a);

/* Number of labels, without the CTC blank: the model has size + 1 classes, the blank is label `size`. */
int cls_alphabet_size(const cls_alphabet *a);

/* Label i as a NUL-terminated UTF-8 string (one codepoint), NULL when i is outside 0 .. size-1. */
const char *cls_alphabet_label(const cls_alphabet *a, int i);

/* The label of a Unicode codepoint, -1 when the alphabet lacks it. */
int cls_alphabet_index(const cls_alphabet *a, uint32_t codepoint);

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
 * (whole characters). */
cls_status cls_alphabet_decode(const cls_alphabet *a, const int32_t *labels, int n, char *out, size_t cap);

#endif
