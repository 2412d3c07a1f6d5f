/* A structural check of PoCL's program binaries (the "poclbin" format that PoCL's
 * clGetProgramInfo(CL_PROGRAM_BINARIES) returns), made before clspeech caches such a binary and
 * before it hands a cached one back to PoCL.
 *
 * Why: PoCL builds a binary by reading back the files of its own kernel cache, and it writes those
 * files by removing the old one before renaming the new one in. When two processes build the same
 * kernels into one PoCL cache at once, one of them can read a file in that gap and return a binary
 * whose program.bc is missing; PoCL then asserts, aborting the whole process, on every later load of
 * that binary ("pocl_binary_get_kernels_metadata: Assertion `len > 0' failed"). The checksum in our
 * cache entry cannot catch it: the binary was written exactly as PoCL gave it.
 *
 * The check reads the layout of format versions 9 to 12 (PoCL 3.x to 7.x): the header, the root
 * entries (program.bc and other program-wide files, each group with its byte count) and one record
 * per kernel (its size, its files' size, its name, its files). Other versions and other vendors'
 * binaries are not checked. Pure: no OpenCL, no files, so that a fuzz target runs it. */
#ifndef CLS_POCL_BINARY_CHECK_H
#define CLS_POCL_BINARY_CHECK_H

#include <stddef.h>

#include "clspeech/base.h"

typedef enum cls_pocl_binary_verdict {
  CLS_POCL_BINARY_SOUND = 0,     /* a PoCL binary of a known version, whole */
  CLS_POCL_BINARY_UNCHECKED = 1, /* not a PoCL binary, or a version this check does not know */
  CLS_POCL_BINARY_BROKEN = 2     /* a PoCL binary that PoCL would abort on or cannot run */
} cls_pocl_binary_verdict;

/* Checks `binary` [size]. For CLS_POCL_BINARY_BROKEN, `why` (when not NULL) receives CLS_ERR_IO and what
 * is wrong ("root entry 1 is empty: program.bc was missing when PoCL read its cache", ...); otherwise it
 * is cleared. */
cls_pocl_binary_verdict cls_pocl_binary_check(const unsigned char *binary, size_t size, cls_error *why);

#endif
