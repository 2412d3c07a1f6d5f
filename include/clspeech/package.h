/* clspeech public API, model layer: model packages (".clsm"), one file holding what inference needs
 * and nothing else: the weights (no Adam slots), the alphabet, the feature settings, the network's
 * geometry, where it came from, and optionally a scorer (the binary language-model form, clspeech/lm.h)
 * with its default lm_alpha and lm_beta.
 *
 * Format, version CLS_PACKAGE_VERSION, every integer little-endian:
 *   bytes 0..63   header: magic "\x89CLSM\r\n\x1a", u32 version, u32 header bytes (64), u32 number of
 *                 sections, u32 table entry bytes (128), u64 file size, then the SHA-256 of the whole
 *                 file computed with these last 32 bytes zeroed
 *   64..          the section table, one 128-byte entry per section: name (80 bytes, NUL-padded),
 *                 u32 dtype (0 bytes, 1 float32), u32 ndim (0..2), i64 shape[2], u64 offset, u64 size
 *   then          the sections, each at a multiple of 64 bytes, in table order, zero-padded between:
 *                 "meta" (text, "key=value" lines: clspeech_version, source_checkpoint, global_step,
 *                 n_hidden, n_classes, n_input, n_context, relu_clip, audio_sample_rate,
 *                 feature_win_len, feature_win_step, and with a scorer lm_alpha, lm_beta), "alphabet"
 *                 (the alphabet file's bytes), the 12 parameter tensors under DeepSpeech's variable
 *                 names (float32, row-major, cls_model_layout's shapes) and optionally "scorer".
 * The same checkpoint and inputs always give the same bytes (no time stamp). The scorer section is the
 * binary language-model form as is, which is the writing machine's (byte order, size_t). */
#ifndef CLSPEECH_PACKAGE_H
#define CLSPEECH_PACKAGE_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLS_PACKAGE_VERSION 1
/* The largest package, in bytes, that is read (whole, into memory) or written: 256 GiB holds the
 * weights at n_hidden CLS_MODEL_MAX_WIDTH with DeepSpeech's input (26 features, 9 frames of context
 * each side: about 176 GiB) and a scorer at CLS_LM_BINARY_MAX_READ_BYTES. A pipe or device is read
 * no further than its first 8 bytes when they are not the package's magic (so /dev/zero is refused
 * at once), else to this cap: "FILE: larger than N bytes (256 GiB), the most this reader takes". */
#define CLS_PACKAGE_MAX_BYTES ((uint64_t)256 << 30)

/* What goes into a package. */
typedef struct cls_package_source {
  const char *checkpoint_path;  /* a clspeech checkpoint (safetensors); its Adam slots are not read */
  const char *alphabet_path;    /* the alphabet file, stored byte for byte; its size + 1 must be n_classes */
  int audio_sample_rate;        /* the feature settings the model was trained with */
  int feature_win_len, feature_win_step; /* milliseconds */
  const char *scorer_path;      /* NULL or "": none; else a binary language model (`clspeech lm --out X.clm`) */
  double lm_alpha, lm_beta;     /* the scorer's default weights (stored only with a scorer) */
} cls_package_source;

/* What a write stored. */
typedef struct cls_package_summary {
  uint64_t file_bytes;
  int n_tensors;        /* parameter tensors: CLS_MODEL_N_TENSORS, CLS_MODEL_MAX_TENSORS with --layer_norm */
  size_t n_params;      /* floats */
  int64_t global_step;  /* the checkpoint's */
  uint64_t scorer_bytes; /* 0 without a scorer */
} cls_package_summary;

/* Writes the package `path` atomically (a temporary file, then a rename: on failure nothing at `path`
 * changes) from `src`: the checkpoint loaded and validated as cls_checkpoint_load does, the alphabet
 * parsed and checked against the model's classes, the feature settings in range, the scorer file
 * checked to be the binary form. Errors name the file concerned. summary may be NULL. */
cls_status cls_package_write(const char *path, const cls_package_source *src, cls_package_summary *summary,
                             cls_error *err);

/* The same from a checkpoint folder as `clspeech train` leaves it: the checkpoint `mode` (auto, best or
 * last) chooses (cls_checkpoint_choose), DIR/alphabet.txt and DIR/features.txt (a folder without them
 * is an error naming the missing file). */
cls_status cls_package_write_from_dir(const char *path, const char *dir, cls_load_mode mode, const char *scorer_path,
                                      double lm_alpha, double lm_beta, cls_package_summary *summary, cls_error *err);

typedef struct cls_package cls_package;

/* What an opened package holds. The pointers stay valid until cls_package_close. */
typedef struct cls_package_info {
  int version;
  cls_model_config model;
  int audio_sample_rate, feature_win_len, feature_win_step;
  const char *alphabet;         /* the alphabet file's bytes (not NUL-terminated: cls_alphabet_parse) */
  size_t alphabet_bytes;
  const char *clspeech_version; /* of the clspeech that wrote it */
  const char *source_checkpoint; /* the checkpoint file's name */
  int64_t global_step;
  const void *scorer;           /* the binary language model (cls_lm_parse_binary), or NULL */
  size_t scorer_bytes;
  double lm_alpha, lm_beta;     /* its default weights (0 without a scorer) */
  int n_sections, n_tensors;
  size_t n_params;              /* floats in cls_model_layout order */
  uint64_t file_bytes;
} cls_package_info;

/* Reads and validates a package: the magic, the version ("FILE: model package format version N, this
 * clspeech reads version M"), the size against the header ("FILE: truncated: ..."), the checksum
 * ("FILE: checksum mismatch (file corrupt or truncated)"), every section inside the file, 64-byte
 * aligned, in order and known, the metadata's numbers whole and in range, the alphabet parseable and of
 * n_classes - 1 labels, every parameter tensor present once with the geometry's shape and finite
 * values, and a scorer section starting with the binary language model's magic (the decode layer
 * checks the rest when it parses it). CLS_ERR_IO when the file cannot be read, CLS_ERR_INVALID_ARGUMENT
 * for bad content; *out stays NULL and `err` names the file. */
cls_status cls_package_open(const char *path, cls_package **out, cls_error *err);
/* The same from `size` bytes in memory (copied); `name` stands for the file in error texts. */
cls_status cls_package_parse(const void *data, size_t size, const char *name, cls_package **out, cls_error *err);
/* NULL is a no-op. */
void cls_package_close(cls_package *pkg);

const cls_package_info *cls_package_get_info(const cls_package *pkg);
/* Section i's name (0 .. n_sections-1; NULL outside). */
const char *cls_package_section_name(const cls_package *pkg, int i);
/* The weights into params[n] in cls_model_layout order; n must be info->n_params
 * (CLS_ERR_INVALID_ARGUMENT otherwise). */
cls_status cls_package_params(const cls_package *pkg, float *params, size_t n, cls_error *err);

/* Loads a package's weights into a forward-only replica made for its model (info->model; a replica of
 * another geometry is refused naming the package). */
cls_status cls_infer_load_package(cls_infer *infer, const cls_package *pkg);

#ifdef __cplusplus
}
#endif
#endif
