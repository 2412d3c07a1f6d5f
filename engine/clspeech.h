/* clspeech public API: the engine's status codes, the engine object (OpenCL platforms and devices,
 * device selection, per-device kernel builds with a binary cache) and the device self-test.
 * The engine returns cls_status codes, never exits and never prints: detail goes to the engine's
 * error text (cls_engine_error) and to the optional log callback. */
#ifndef CLSPEECH_H
#define CLSPEECH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
  CLS_ERR_DIVERGED = 10         /* model replicas on different towers no longer hold the same parameters */
} cls_status;

/* A fixed English name for a status ("CLS_ERR_BUILD: kernel build failed"). Never NULL. */
const char *cls_status_string(cls_status status);

typedef enum cls_log_level { CLS_LOG_DEBUG = 0, CLS_LOG_INFO = 1, CLS_LOG_NOTICE = 2, CLS_LOG_WARNING = 3, CLS_LOG_ERROR = 4 } cls_log_level;
typedef void (*cls_log_fn)(void *user, cls_log_level level, const char *message);

typedef enum cls_device_kind { CLS_DEVICE_GPU = 0, CLS_DEVICE_CPU = 1, CLS_DEVICE_ACCELERATOR = 2, CLS_DEVICE_OTHER = 3 } cls_device_kind;
const char *cls_device_kind_name(cls_device_kind kind); /* "gpu", "cpu", "accelerator", "other" */

/* What a device is and can do, read once when the engine is created. */
typedef struct cls_device_info {
  int platform_index;        /* position of the platform in clGetPlatformIDs */
  int device_index;          /* position of the device within its platform */
  cls_device_kind kind;
  char platform_name[128];
  char platform_version[128];
  char name[256];
  char vendor[128];
  char driver_version[128];
  char device_version[128];   /* "OpenCL 3.0 ..." */
  char opencl_c_version[128]; /* "OpenCL C 1.2 ..." */
  unsigned compute_units;
  unsigned clock_mhz;
  uint64_t global_mem_bytes;
  uint64_t local_mem_bytes;
  uint64_t max_alloc_bytes;
  size_t max_work_group_size;
  bool fp16;
  bool fp64;
  size_t preferred_work_group_multiple; /* from a built kernel; 0 until the device's kernels are built */
  int sub_index, sub_count;  /* k of N for a sub-device made by a ":split=N" selection; 0, 0 for a whole device */
} cls_device_info;

typedef struct cls_engine_options {
  cls_log_fn log;            /* optional: receives notices, warnings and errors */
  void *log_user;
  cls_log_level log_level;   /* messages below this level are not sent (0 = everything) */
} cls_engine_options;

typedef struct cls_engine cls_engine;

/* Finds every OpenCL platform and device and reads their capabilities; opens nothing yet.
 * On failure *out is still set when memory allowed, so that cls_engine_error() can be read; the
 * caller destroys it either way. CLS_ERR_NO_PLATFORM when no OpenCL driver is installed. */
cls_status cls_engine_create(const cls_engine_options *options, cls_engine **out);
void cls_engine_destroy(cls_engine *engine);
/* The text of the last error: what failed, on which device or file, and what to do. Never NULL. */
const char *cls_engine_error(const cls_engine *engine);

int cls_engine_device_count(const cls_engine *engine);
const cls_device_info *cls_engine_device(const cls_engine *engine, int index);

/* Device selection. `spec` is a comma-separated list of items, each one of
 *   all | gpu | cpu | accelerator   every device of that kind (all: every device)
 *   P:D                             platform P, device D (indices as `clspeech devices` lists them)
 *   any other text                  every device whose name, vendor or platform name contains it
 *                                   (case-insensitive)
 * NULL or "" means the CLSPEECH_DEVICES environment variable, or when that is unset or empty the
 * default: every GPU, and when there is none, every CPU device (with a notice through the log).
 * Indices into the engine's device list are written to `out` (capacity `cap`) in enumeration order,
 * each at most once; an item that matches nothing is an error naming the item. */
cls_status cls_engine_select(cls_engine *engine, const char *spec, int *out, int cap, int *count);

/* Selection items may end in ":split=N" ("cpu:split=2"): each device the item matches is divided
 * into N sub-devices of equal compute units (clCreateSubDevices), which are added to the device
 * list (their names end in " [sub-device k/N]") and selected instead of it. Adding devices may move
 * the device records: take cls_engine_device pointers after selecting. */

/* Per-program build record, filled by cls_engine_build_device. */
typedef struct cls_build_record {
  const char *program;   /* kernel family, e.g. "selftest" (kernels/selftest.cl) */
  cls_status status;
  bool cache_hit;        /* loaded from the on-disk binary cache */
  double ms;             /* wall time of the build or cache load */
} cls_build_record;

/* Opens the device (its own context and in-order queue) and builds every embedded kernel program for
 * it with that device's build options, using the binary cache. Records go to `records` (capacity
 * `cap`, may be NULL); the number of programs is returned in *count. On CLS_ERR_BUILD the error text
 * names the device and program and holds the options and the build log. Idempotent. */
cls_status cls_engine_build_device(cls_engine *engine, int index, cls_build_record *records, int cap, int *count);

/* Builds every device in `sel` and removes from it those that fail, each with a warning through the
 * log that names the device and holds the build log; the others go on. CLS_ERR_NO_DEVICE when none is
 * left. */
cls_status cls_engine_prepare(cls_engine *engine, int *sel, int *count);

/* Builds the device's kernels and runs a small numeric check (a kernel using local memory and
 * barriers, and a CLBlast SGEMM) whose result is compared on the host. CLS_OK on PASS; otherwise the
 * error text says what failed. */
cls_status cls_engine_selftest(cls_engine *engine, int index);

/* The OpenCL build options used for the device (from the per-device table and CLSPEECH_KERNEL_OPTIONS). */
const char *cls_engine_build_options(cls_engine *engine, int index);

/* Directory of the on-disk kernel binary cache, or NULL when it is off (CLSPEECH_KERNEL_CACHE=0). */
const char *cls_engine_cache_dir(const cls_engine *engine);

const char *cls_version(void);

#ifdef __cplusplus
}
#endif
#endif
