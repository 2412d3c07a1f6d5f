/* The file helpers of `clspeech import`'s layout readers: a transcript file read bounded, paths joined
 * and made absolute, a folder's entries listed in name order. */
#ifndef CLS_DATA_IMPORT_FILES_H
#define CLS_DATA_IMPORT_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "clspeech/base.h"

/* dir + "/" + name into out[CLS_PATH_CAP]; false when it does not fit. */
bool cls_import_join(char *out, const char *dir, const char *name);

/* `src` as an absolute path without a trailing slash into out[CLS_PATH_CAP] (realpath: it must exist). */
cls_status cls_import_absolute(const char *src, char *out, cls_error *err);

/* The names in `dir` but "." and "..", sorted (strcmp), as a malloc'ed array of malloc'ed strings in
 * *names (*n of them; free with cls_import_names_free). `dirs_only` keeps the folders alone. CLS_ERR_IO
 * naming the folder when it cannot be read. */
cls_status cls_import_list_dir(const char *dir, bool dirs_only, char ***names, int *n, cls_error *err);
void cls_import_names_free(char **names, int n);

/* true when `path` is a folder (a symlink to one counts). */
bool cls_import_is_dir(const char *path);
bool cls_import_exists(const char *path);

/* A transcript file, whole, NUL-terminated, at most CLS_IMPORT_TEXT_MAX_BYTES (cls_read_file_max). */
cls_status cls_import_read_text(const char *path, char **text, size_t *len, cls_error *err);

#endif
