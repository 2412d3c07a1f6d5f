/* The kernel programs embedded into the library at build time (cmake/EmbedKernels.cmake writes the
 * table from kernels/NAME.cl, shared headers already resolved). One entry per kernel family. */
#ifndef CLS_KERNEL_SOURCES_H
#define CLS_KERNEL_SOURCES_H

#include <stddef.h>

typedef struct cls_kernel_source {
  const char *family;  /* file name without .cl: "selftest" */
  const char *source;  /* NUL-terminated OpenCL C 1.2 */
  size_t length;       /* bytes, without the NUL */
} cls_kernel_source;

extern const cls_kernel_source cls_kernel_sources[];
extern const int cls_kernel_source_count;

/* Index of a family in cls_kernel_sources, or -1. */
int cls_kernel_source_find(const char *family);

#endif
