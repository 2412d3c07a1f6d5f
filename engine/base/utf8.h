/* Strict UTF-8 (RFC 3629), the one decoder and encoder of the engine: the alphabet, the scorer's
 * word spelling and WER/CER all read text through it, so they agree on what is a character. A
 * sequence is refused when its lead byte is a continuation byte, 0xC0, 0xC1 or 0xF5..0xFF, when a
 * continuation byte is missing or the text ends inside it, when it is overlong, when it encodes a
 * UTF-16 surrogate (U+D800..U+DFFF), or when it passes U+10FFFF. */
#ifndef CLSPEECH_BASE_UTF8_H
#define CLSPEECH_BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clspeech/base.h"

/* The longest sequence, and the size of an encoded character with its terminating NUL. */
#define CLS_UTF8_MAX 4
#define CLS_UTF8_CHAR_CAP (CLS_UTF8_MAX + 1)

/* Decodes the sequence at s[0..len): returns its length (1..4) with *cp set, or 0 (and *cp untouched)
 * when the bytes do not start a valid sequence or len is 0. */
int cls_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

/* Whether s[0..len) is valid UTF-8 throughout: CLS_OK, or CLS_ERR_INVALID_ARGUMENT with `err` naming the
 * first byte that does not start a valid sequence ("byte 3 (0xC3) is not valid UTF-8"). */
cls_status cls_utf8_check(const unsigned char *s, size_t len, cls_error *err);

/* Encodes a codepoint (<= U+10FFFF, no surrogate) into out, NUL-terminated; returns its length, or 0
 * (out[0] = NUL) for a value that is not a character. */
int cls_utf8_encode(uint32_t cp, char out[CLS_UTF8_CHAR_CAP]);

/* Text assembled a byte at a time (the decoders of --bytes_output_mode): the state of a valid UTF-8
 * prefix is how many continuation bytes its last character still needs (0: it is whole) and the
 * range the next byte must lie in then (narrower after E0, ED, F0 and F4, so that no overlong form,
 * surrogate or value past U+10FFFF gets through). `have` counts the unfinished character's bytes. */
typedef struct cls_utf8_state {
  uint8_t need, have, lo, hi;
} cls_utf8_state;

/* The empty prefix's state (whole). */
cls_utf8_state cls_utf8_state_start(void);
/* Whether byte b may follow a prefix in state s and leave a valid UTF-8 prefix. */
bool cls_utf8_state_accepts(cls_utf8_state s, unsigned b);
/* The state after byte b, which s must accept. */
cls_utf8_state cls_utf8_state_push(cls_utf8_state s, unsigned b);
/* The state of a valid UTF-8 prefix from its last n bytes (tail[0..n), oldest first; 3 suffice). */
cls_utf8_state cls_utf8_state_of_tail(const unsigned char *tail, int n);

#endif
