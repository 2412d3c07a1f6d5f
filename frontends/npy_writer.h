/* Writes a float32 matrix as a NumPy .npy file (format 1.0), atomically: temporary file, fsync,
 * rename, so an interrupted write never leaves a broken file. */
#ifndef CLS_NPY_WRITER_H
#define CLS_NPY_WRITER_H

#include <stddef.h>

#include "clspeech/base.h"

/* 0 on success; otherwise -1 with the status and errno-style text in err. */
int npy_write_f32(const char *path, const float *data, size_t rows, size_t cols, cls_error *err);

#endif
