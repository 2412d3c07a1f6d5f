/* The commands' JSON output (devices --json, bench --json, train --test_output_file), built as
 * jansson values and dumped. A few helpers on top of jansson: setters that carry a failed
 * allocation up to the root (one NULL check at the end sees any failure, and nothing leaks), values
 * for what jansson refuses (a NULL string, text that is not UTF-8, a non-finite number), and the dump
 * in the layout the commands have always printed: two-space indent, "key": value, keys in the order
 * they were set, numbers with six significant digits. */
#ifndef CLS_JSON_OUT_H
#define CLS_JSON_OUT_H

#include <jansson.h>
#include <stdio.h>

/* A string; NULL gives null. Bytes of text that is not valid UTF-8 are written as '?'. */
json_t *jo_text(const char *s);

/* A real number (dumped with six significant digits); a non-finite value gives null. */
json_t *jo_real(double v);

/* object[key] = value, taking the reference to value. Returns object, or NULL when object or value
 * is NULL or the set fails; object and value are then both released, so that a failure anywhere
 * in a tree makes its root NULL. */
json_t *jo_set(json_t *object, const char *key, json_t *value);

/* Appends value to array (taking the reference), with jo_set's failure rule. */
json_t *jo_push(json_t *array, json_t *value);

/* Writes root and a newline to out and releases root. 0, or -1 when root is NULL (an allocation
 * failed while building it) or the write failed. */
int jo_dump(json_t *root, FILE *out);

#endif
