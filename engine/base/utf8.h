/* Strict UTF-8 (RFC 3629), the one decoder and encoder of the engine: the alphabet, the scorer's
 * word spelling and WER/CER all read text through it, so they agree on what is a character. A
 * sequence is refused when its lead byte is a continuation byte, 0xC0, 0xC1 or 0xF5..0xFF, when a
 * continuation byte is missing or the text ends inside it, when it is overlong, when it encodes a
 * UTF-16 surrogate (U+D800..U+DFFF), or when it passes U+10FFFF. */
#ifndef CLSPEECH_BASE_UTF8_H
#define CLSPEECH_BASE_UTF8_H

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

#endif
