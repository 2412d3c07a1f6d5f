/* TensorFlow's tensor bundles, the checkpoints tf.compat.v1.train.Saver writes: PREFIX.index, a
 * leveldb-format table (data blocks of prefix-compressed keys with restart points, each block
 * followed by a type byte and the masked CRC-32C of block and type; an index block; an empty
 * metaindex block; a 48-byte footer of the two block handles and the magic 0xdb4775248b80fb57)
 * whose key "" holds a BundleHeaderProto and every other key, a tensor's name in byte order, a
 * BundleEntryProto (dtype, shape, shard, offset, size, masked CRC-32C of the bytes); and
 * PREFIX.data-00000-of-00001, the tensors' little-endian bytes. Also the folder's text index
 * `checkpoint` (model_checkpoint_path: "NAME"). Protobuf's wire format is read and written here by
 * hand. Reading checks every length, offset, varint, shape and CRC; snappy-compressed blocks and
 * bundles of several shards are refused. Generic: nothing here knows DeepSpeech. Host only. */
#ifndef CLS_TF_BUNDLE_H
#define CLS_TF_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/base.h"

/* TensorFlow's DataType values this reader handles. */
enum {
  CLS_TF_FLOAT = 1,
  CLS_TF_DOUBLE = 2,
  CLS_TF_INT32 = 3,
  CLS_TF_UINT8 = 4,
  CLS_TF_INT16 = 5,
  CLS_TF_INT8 = 6,
  CLS_TF_INT64 = 9,
  CLS_TF_BOOL = 10
};
#define CLS_TF_MAX_DIMS 8
/* The longest tensor name a bundle may hold, and the most entries. */
#define CLS_TF_MAX_NAME 1024
#define CLS_TF_MAX_ENTRIES 100000

/* A DataType's size in bytes; 0 for one this reader does not handle. */
size_t cls_tf_dtype_size(int dtype);

typedef struct cls_tf_entry {
  char *name;
  int dtype;
  int ndim;                        /* 0: a scalar */
  int64_t shape[CLS_TF_MAX_DIMS];
  const unsigned char *data;       /* NULL when read without the data file */
  size_t nbytes;
} cls_tf_entry;

typedef struct cls_tf_bundle {
  cls_tf_entry *entries; /* in the index's (byte) order of names */
  int n_entries;
  unsigned char *data_file;
  size_t data_size;
} cls_tf_bundle;

/* The paths of a bundle's two files: PREFIX.index and PREFIX.data-00000-of-00001. 0 when too long. */
int cls_tf_bundle_index_path(const char *prefix, char *path, size_t cap);
int cls_tf_bundle_data_path(const char *prefix, char *path, size_t cap);

/* Reads and checks the bundle at `prefix`; with_data 0 reads the index only (the entries' data NULL).
 * CLS_ERR_IO naming the file and what is wrong. */
cls_status cls_tf_bundle_read(const char *prefix, int with_data, cls_tf_bundle **out, cls_error *err);
/* The same on bytes in memory (copied); data NULL: the index only. `name` is used in messages. */
cls_status cls_tf_bundle_parse(const void *index, size_t index_len, const void *data, size_t data_len,
                               const char *name, cls_tf_bundle **out, cls_error *err);
void cls_tf_bundle_free(cls_tf_bundle *b);
const cls_tf_entry *cls_tf_bundle_find(const cls_tf_bundle *b, const char *name);

typedef struct cls_tf_tensor {
  const char *name;
  int dtype;
  int ndim;
  int64_t shape[CLS_TF_MAX_DIMS];
  const void *data; /* elements x cls_tf_dtype_size(dtype) bytes, little-endian */
} cls_tf_tensor;

/* Writes the bundle `prefix` (both files, each atomically): the tensors in the data file in the
 * given order, the index sorted by name. Names distinct, non-empty. */
cls_status cls_tf_bundle_write(const char *prefix, const cls_tf_tensor *tensors, int n, cls_error *err);

/* The folder's `checkpoint` file. Writes DIR/checkpoint naming `name` (a file name in DIR) as the
 * latest and only checkpoint. */
cls_status cls_tf_checkpoint_index_write(const char *dir, const char *name, cls_error *err);
/* Whether `text` (a `checkpoint` file's bytes) is TensorFlow's index: 1 with the file name of its
 * model_checkpoint_path (its last path component) in name[cap], else 0. */
int cls_tf_checkpoint_index_parse(const char *text, char *name, size_t cap);

#endif
