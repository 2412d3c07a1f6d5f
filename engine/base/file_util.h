/* Small file helpers shared by every writer and reader of files (checkpoints, caches, .npy): the
 * atomic write and the folder maker (declared in clspeech/base.h: the write goes to a temporary file
 * in the same folder, fsync, rename, so that a crash leaves either the old file or the new one),
 * whole-file reads, little-endian integer encoding for binary headers, the cache folder's default
 * place and the reading of an on/off setting. Nothing here reads the environment: the caller passes
 * the values in (engine/device/engine_options.c is where they come from). */
#ifndef CLS_FILE_UTIL_H
#define CLS_FILE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clspeech/base.h"

/* Reads the whole file into *out (malloc'ed, not NUL-terminated; *out_len bytes). CLS_ERR_IO with
 * `err` naming the file when it cannot be opened or read. */
cls_status cls_read_file(const char *path, char **out, size_t *out_len, cls_error *err);

/* The same, reading at most `max` bytes: a longer file, or an endless device or pipe (/dev/zero), is
 * CLS_ERR_IO ("FILE: larger than N bytes (G GiB), the most this reader takes; refused") after max + 1
 * bytes. With stop_at_nul the read also ends after the first block holding a NUL byte (the text
 * readers then name that byte's line). Every reader of an untrusted file that is not mapped reads it
 * through this, or through one of the two below, with its format's cap. */
cls_status cls_read_file_max(const char *path, size_t max, bool stop_at_nul, char **out, size_t *out_len,
                             cls_error *err);

/* The bounded read of an open stream `f` (named `name` in errors), as cls_read_file_max reads a file:
 * the head_len bytes at `head` (which the caller has read from `f` already; NULL when 0) come first in
 * *out and count towards `max`, and with stop_at_nul a NUL byte among them ends the read at once. */
cls_status cls_read_stream_max(FILE *f, const char *name, const void *head, size_t head_len, size_t max,
                               bool stop_at_nul, char **out, size_t *out_len, cls_error *err);

/* cls_read_file_max for a binary format that starts with the magic_len (at most 64) bytes at `magic`:
 * when the file is shorter or starts otherwise, the read ends after those first bytes and returns them
 * (CLS_OK; the caller's parser then says what is wrong), so a device of zeros or noise costs one short
 * read. */
cls_status cls_read_file_magic(const char *path, const void *magic, size_t magic_len, size_t max, char **out,
                               size_t *out_len, cls_error *err);
/* The same from an open stream `f` (named `name` in errors): a reader that opened a pipe to look at it
 * (fstat) must read that same descriptor (fdopen), for a pipe's bytes go with it when it is closed. */
cls_status cls_read_stream_magic(FILE *f, const char *name, const void *magic, size_t magic_len, size_t max,
                                 char **out, size_t *out_len, cls_error *err);

/* How long (seconds) a leftover must have been unchanged before it is removed: a dead process's
 * temporary file, or a checkpoint its index does not list when the folder's lock is not held
 * (cls_checkpoint_remove_orphans). */
#define CLS_LEFTOVER_AGE_S 10

/* Removes the temporary files cls_write_atomic left in `dir` when a process died mid-write
 * (NAME.tmp.PID.N whose PID no longer runs, unchanged for CLS_LEFTOVER_AGE_S; a live process's are kept). Returns
 * how many were removed, -1 (errno set) when the folder cannot be read. cls_dir_prepare_for_writing
 * (clspeech/base.h) does this and more. */
int cls_remove_stale_temporaries(const char *dir);

/* true when a setting's value turns something off: "0", "off", "OFF", "no" or "false" (NULL, "" and
 * anything else leave it on). */
bool cls_setting_off(const char *value);

/* The folder of one of clspeech's caches, `leaf` being its name under clspeech/ ("kernels"):
 * `dir` when given (non-empty), else <xdg_cache_home>/clspeech/<leaf>, else <home>/.cache/clspeech/<leaf>
 * (the XDG base-directory rule; each argument may be NULL or ""). false, with `out` empty, when none
 * is given or the path does not fit in `cap` bytes. */
bool cls_cache_dir_resolve(const char *dir, const char *xdg_cache_home, const char *home, const char *leaf,
                           char *out, size_t cap);

static inline void cls_put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t cls_get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

#endif
