/* clspeech public API, base layer: the status codes every engine function returns, the error value
 * that carries a failure's status and text to the caller, the log callback's types, and the small
 * services the frontends share with the engine (an atomic file write, making a folder with its
 * parents, and a monotonic clock). Nothing here touches OpenCL. */
#ifndef CLSPEECH_BASE_H
#define CLSPEECH_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cls_status {
  CLS_OK = 0,
  CLS_ERR_INVALID_ARGUMENT = 1, /* a caller error: bad value, bad selection string */
  CLS_ERR_OUT_OF_MEMORY = 2,    /* host allocation failed */
  CLS_ERR_NO_PLATFORM = 3,      /* no OpenCL platform (no driver installed) */
  CLS_ERR_NO_DEVICE = 4,        /* platforms exist, but no usable device is left */
  CLS_ERR_OPENCL = 5,           /* an OpenCL call failed; the text names the call, code and device */
  CLS_ERR_BUILD = 6,            /* a kernel program failed to build; the text holds the build log */
  CLS_ERR_SELFTEST = 7,         /* a device computed a wrong result */
  CLS_ERR_IO = 8,               /* a file could not be read or written */
  CLS_ERR_BLAS = 9,             /* CLBlast returned an error */
  CLS_ERR_DIVERGED = 10,        /* model replicas on different towers no longer hold the same parameters */
  CLS_ERR_WORLD = 11,           /* a --horovod run's MPI call failed, or another process of the run did */
  CLS_ERR_NO_STEP = 12,         /* a training run applied no step: every step's loss was infinite or NaN */
  CLS_ERR_DEVICE_OUT_OF_MEMORY = 13 /* a device's memory or resources are exhausted (CL_MEM_OBJECT_ALLOCATION_FAILURE,
                                       CL_OUT_OF_RESOURCES); the text names the device */
} cls_status;

/* A fixed English name for a status ("CLS_ERR_BUILD: kernel build failed"). Never NULL. */
const char *cls_status_string(cls_status status);

#if defined(__GNUC__)
#define CLS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLS_PRINTF(a, b)
#endif

/* The size of a path buffer, its NUL included: a folder path as long as Linux takes (PATH_MAX, 4096
 * bytes with its NUL), a slash and a file name (NAME_MAX, 255 bytes). Every path the engine and the
 * clspeech command compose goes into a buffer of this size. */
#define CLS_PATH_CAP (4096 + 256)

/* The size of an error text, the terminating NUL included: room for a path of PATH_MAX bytes with its
 * context, or the first errors of a kernel build log (a longer log keeps its head and is marked). */
#define CLS_ERROR_CAP 4096

/* What went wrong, owned by the caller: a function that takes a `cls_error *` and fails fills it
 * (the status it returns, and a text naming the file, line, tensor or device concerned) and leaves
 * it alone on success. One value per call context or thread; text that does not fit is cut with
 * a "... (truncated)" marker. A NULL `cls_error *` is accepted everywhere and receives nothing. */
typedef struct cls_error {
  cls_status status;
  char text[CLS_ERROR_CAP];
} cls_error;

/* Sets the status and the text (printf-style) and returns `status`, so that a failure reads
 * `return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));`. */
cls_status cls_error_set(cls_error *err, cls_status status, const char *fmt, ...) CLS_PRINTF(3, 4);
/* Back to CLS_OK with an empty text. */
void cls_error_clear(cls_error *err);
/* Adds text (printf-style) after the current text, keeping the status. */
void cls_error_add(cls_error *err, const char *fmt, ...) CLS_PRINTF(2, 3);
/* cls_error_add with a va_list, for functions that take a format of their own. */
void cls_error_vadd(cls_error *err, const char *fmt, va_list ap) CLS_PRINTF(2, 0);
/* Passes an inner failure up with context, keeping its status: `status` is what the inner call returned,
 * `inner` the cls_error it filled. `err` receives `status` and the context (printf-style) followed by
 * inner's text, and `status` comes back:
 *   cls_status st = cls_loader_start(..., &inner);
 *   if (st != CLS_OK) return cls_error_wrap(err, st, &inner, "%s: ", what);
 * No call relabels an inner status; a new status is for a new failure, set with cls_error_set.
 * `fmt` NULL adds no context (the inner error passed up as it is); `inner` NULL, or one without text,
 * leaves the status's name (cls_status_string) in its place; `inner` may be `err` itself (the context
 * goes in front of its text). CLS_OK leaves `err` alone and returns CLS_OK, so that
 * `return cls_error_wrap(err, step(&inner), &inner, "step %d: ", i);` reads as one line. */
cls_status cls_error_wrap(cls_error *err, cls_status status, const cls_error *inner, const char *fmt, ...)
    CLS_PRINTF(4, 5);
/* cls_error_wrap with a va_list. */
cls_status cls_error_vwrap(cls_error *err, cls_status status, const cls_error *inner, const char *fmt, va_list ap)
    CLS_PRINTF(4, 0);

typedef enum cls_log_level { CLS_LOG_DEBUG = 0, CLS_LOG_INFO = 1, CLS_LOG_NOTICE = 2, CLS_LOG_WARNING = 3, CLS_LOG_ERROR = 4 } cls_log_level;
typedef void (*cls_log_fn)(void *user, cls_log_level level, const char *message);

/* The output rule, which every file clspeech writes follows (docs/train.md#outputs):
 * - a new path or an existing regular file is written atomically: a temporary file in the same folder
 *   (NAME.tmp.PID.N), fsync, renamed over it (it keeps the replaced file's mode); on failure nothing at the
 *   path changes and the temporary file is removed;
 * - a symlink is followed (every link in a chain; the last target need not exist) and its target written
 *   so, in the target's folder: the link stays a link;
 * - an existing character device or FIFO (/dev/null, /dev/stdout, a shell's >(...)) is opened and written
 *   in place, streamed, never replaced;
 * - anything else (a folder, a socket, a block device) is CLS_ERR_IO naming the path and what it is.
 * cls_output_open opens `path` so (a FIFO waits for its reader); write to cls_output_file's stream, then
 * cls_output_commit (CLS_ERR_IO naming `path` when a write, the sync or the rename failed; the temporary
 * file is gone either way) or cls_output_abort (a regular target untouched). Both free the output. */
typedef struct cls_output cls_output;
cls_status cls_output_open(const char *path, cls_output **out, cls_error *err);
FILE *cls_output_file(cls_output *output);
cls_status cls_output_commit(cls_output *output, const char *path, cls_error *err);
void cls_output_abort(cls_output *output);

/* Writes the n chunks one after the other to `path` by the output rule (cls_output_open). */
cls_status cls_write_atomic(const char *path, const void *const *chunks, const size_t *sizes, int n, cls_error *err);

/* Whether `a` and `b` both exist and are one file (device and inode, symlinks followed): how a command
 * refuses an output that is also one of its inputs. */
bool cls_same_file(const char *a, const char *b);

/* Creates the folder and every missing parent (mode 0755); an existing folder is fine. CLS_ERR_IO
 * with errno saying why when one cannot be made (ENAMETOOLONG for a path past 4095 bytes). */
cls_status cls_make_dirs(const char *path);

/* Opens a folder for writing: makes it (cls_make_dirs), removes the temporary files cls_write_atomic
 * left behind by processes that died mid-write (NAME.tmp.PID.N whose PID no longer runs and which
 * have not changed for 10 s; a live process's are never touched), then proves the folder writable
 * by creating, writing and removing a probe file. CLS_ERR_IO with `err` naming the folder and the
 * reason ("Not a directory", "Read-only file system") otherwise. *removed (may be NULL) receives
 * the number of stale files removed. */
cls_status cls_dir_prepare_for_writing(const char *dir, int *removed, cls_error *err);

/* Monotonic wall clock in milliseconds, for timings and progress (engine/base/clock.c). */
double cls_now_ms(void);

#ifdef __cplusplus
}
#endif
#endif
