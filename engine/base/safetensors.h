/* Safetensors files (the format of checkpoints and of the tests' reference fixtures): reading a
 * whole file with its tensor table and string metadata, and writing one atomically (temporary file,
 * fsync, rename). Format: 8-byte little-endian header length, a JSON header
 * {"NAME": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
 * then the tensor bytes, little-endian, row-major. */
#ifndef CLS_SAFETENSORS_H
#define CLS_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/base.h"

typedef enum cls_dtype { CLS_F32 = 0, CLS_F64 = 1, CLS_I32 = 2, CLS_I64 = 3, CLS_U8 = 4 } cls_dtype;

#define CLS_MAX_DIMS 8

typedef struct cls_tensor_info {
  char *name;
  cls_dtype dtype;
  int ndim;
  int64_t shape[CLS_MAX_DIMS];
  size_t offset;  /* into the data section */
  size_t nbytes;
} cls_tensor_info;

typedef struct cls_safetensors {
  unsigned char *file;      /* the whole file (cls_safetensors_read_header: the length and header only) */
  size_t file_size;
  const unsigned char *data; /* start of the data section (NULL after cls_safetensors_read_header) */
  cls_tensor_info *tensors;
  int n_tensors;
  char **meta;              /* key, value, key, value, ... */
  int n_meta;
} cls_safetensors;

size_t cls_dtype_size(cls_dtype dtype);
/* The dtype's name in a safetensors header ("F32", ...). */
const char *cls_dtype_name(cls_dtype dtype);
/* The product of the shape; -1 when a dimension is negative or the product passes INT64_MAX. */
int64_t cls_tensor_elements(const cls_tensor_info *t);

/* Reads and validates the file (offsets inside the data, sizes agree with dtype and shape). On an
 * error, `err` names the file and says what is wrong; CLS_ERR_IO for a missing or malformed file. */
cls_status cls_safetensors_read(const char *path, cls_safetensors **out, cls_error *err);
/* The same checks, reading only the header (tensor index and metadata) and not the tensors' data,
 * e.g. to learn a checkpoint's geometry; cls_safetensors_tensor_data must not be called on it. */
cls_status cls_safetensors_read_header(const char *path, cls_safetensors **out, cls_error *err);
/* The same checks on a file's bytes already in memory (copied); `name` is used in messages. */
cls_status cls_safetensors_parse(const void *bytes, size_t len, const char *name, cls_safetensors **out,
                                 cls_error *err);
void cls_safetensors_free(cls_safetensors *st);
const cls_tensor_info *cls_safetensors_find(const cls_safetensors *st, const char *name);
const void *cls_safetensors_tensor_data(const cls_safetensors *st, const cls_tensor_info *t);
const char *cls_safetensors_meta(const cls_safetensors *st, const char *key);

typedef struct cls_tensor_desc {
  const char *name;
  cls_dtype dtype;
  int ndim;
  int64_t shape[CLS_MAX_DIMS];
  const void *data;
} cls_tensor_desc;

/* Writes `path` atomically: a crash leaves either the old file or the new one, never a broken one.
 * `meta` holds n_meta key/value pairs (2*n_meta strings). */
cls_status cls_safetensors_write(const char *path, const cls_tensor_desc *tensors, int n, const char *const *meta,
                                 int n_meta, cls_error *err);
/* cls_safetensors_write that also gives the SHA-256 of the file's bytes in digest[32] (may be NULL),
 * hashed from the bytes written, so that nothing is read back. */
cls_status cls_safetensors_write_hashed(const char *path, const cls_tensor_desc *tensors, int n,
                                        const char *const *meta, int n_meta, uint8_t digest[32], cls_error *err);

#endif
