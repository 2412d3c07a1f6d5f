/* clspeech public API, device layer: the engine object (OpenCL platforms and devices, device
 * selection, per-device kernel builds with a binary cache, applying the stored GEMM tuning when a
 * device is prepared) and the device self-test. Status codes and the log callback's types are in base.h;
 * the stored tuning's own types are internal (clspeech/internal/device.h, not installed).
 * The engine returns cls_status codes, never exits and never prints: detail goes to the engine's
 * error text (cls_engine_error) and to the optional log callback. */
#ifndef CLSPEECH_H
#define CLSPEECH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

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
  uint64_t global_mem_cache_bytes; /* CL_DEVICE_GLOBAL_MEM_CACHE_SIZE (PoCL: the last-level cache); 0 if unknown */
  size_t max_work_group_size;
  bool fp16;
  bool fp64;
  unsigned vector_width_float; /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT (8: AVX2, 16: AVX-512); 0 if unknown */
  size_t preferred_work_group_multiple; /* from a built kernel; 0 until the device's kernels are built */
  int sub_index, sub_count;  /* k of N for a sub-device made by a ":split=N" selection; 0, 0 for a whole device */
} cls_device_info;

/* How an engine is set up. The engine reads no environment variable itself: the fields below the log
 * are what the CLSPEECH_* variables say, and cls_engine_options_from_environment() fills them from
 * those variables. A zeroed struct is an engine that touches no file: no binary cache, no
 * extra build options, the default device selection, no stored GEMM tuning. */
typedef struct cls_engine_options {
  cls_log_fn log;            /* optional: receives notices, warnings and errors */
  void *log_user;
  cls_log_level log_level;   /* messages below this level are not sent (0 = everything) */
  bool kernel_cache;         /* keep built kernel binaries (and GEMM tuning files) in kernel_cache_dir */
  char kernel_cache_dir[1024]; /* the cache folder, made when first written; "" (or a path longer than
                                  943 bytes, which leaves no room for entry names) turns the cache off */
  const char *kernel_options;  /* extra build options per device, "SEL=OPTIONS;SEL=OPTIONS" (SEL a selection
                                  item, applied after the per-device table's); NULL or "" for none */
  const char *default_devices; /* the selection cls_engine_select uses for a NULL or "" spec; NULL or "": every
                                  GPU, else every CPU device */
  bool gemm_tuning;          /* apply the stored GEMM tuning when a device is prepared */
  char pocl_cache_dir[1024]; /* PoCL's own kernel cache folder, "" when unknown. Processes that build kernels
                                for PoCL devices into the binary cache take turns under a lock file there
                                (".clspeech-build-lock"), since PoCL can hand out a broken binary when two
                                of them build the same program into its cache at once */
} cls_engine_options;

/* The options as the environment sets them (log: none, every level), reading exactly these variables:
 *   CLSPEECH_KERNEL_CACHE      0, off, OFF, no or false: kernel_cache false (anything else, or unset: true)
 *   CLSPEECH_KERNEL_CACHE_DIR  kernel_cache_dir; when unset or empty $XDG_CACHE_HOME/clspeech/kernels, and
 *   XDG_CACHE_HOME, HOME       when that is unset or empty $HOME/.cache/clspeech/kernels ("" without HOME)
 *   CLSPEECH_KERNEL_OPTIONS    kernel_options
 *   CLSPEECH_DEVICES           default_devices
 *   CLSPEECH_GEMM_TUNING       0, off, OFF, no or false: gemm_tuning false (anything else, or unset: true)
 *   POCL_CACHE_DIR             pocl_cache_dir; when unset or empty PoCL's default, $XDG_CACHE_HOME/pocl/kcache,
 *                              else $HOME/.cache/pocl/kcache (HOME set, even empty), else /tmp/pocl/kcache
 * The two strings point into the environment; cls_engine_create copies them. This is the only place
 * where the engine reads the environment (engine/device/engine_options.c). */
cls_engine_options cls_engine_options_from_environment(void);

/* The most devices one engine lists or one selection holds (sub-devices included). */
#define CLS_MAX_DEVICES 64

typedef struct cls_engine cls_engine;

/* Finds every OpenCL platform and device and reads their capabilities; opens nothing yet. `options`
 * is copied (strings included); NULL means cls_engine_options_from_environment() with no log.
 * On failure *out is still set when memory allowed, so that cls_engine_error() can be read; the
 * caller destroys it either way. CLS_ERR_NO_PLATFORM when no OpenCL driver is installed. */
cls_status cls_engine_create(const cls_engine_options *options, cls_engine **out);
/* The options the engine was created with (its own copies of the strings). Never NULL for an engine. */
const cls_engine_options *cls_engine_get_options(const cls_engine *engine);
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
 * NULL or "" means the engine's default_devices option (the CLSPEECH_DEVICES environment variable
 * for an engine made from the environment), or when that is NULL or empty the default: every GPU, and
 * when there is none, every CPU device (with a notice through the log).
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

/* The OpenCL build options used for the device (from the per-device table and the kernel_options
 * option, CLSPEECH_KERNEL_OPTIONS). */
const char *cls_engine_build_options(cls_engine *engine, int index);

/* Directory of the on-disk kernel binary cache, or NULL when it is off (the kernel_cache option false,
 * CLSPEECH_KERNEL_CACHE=0, or no folder). */
const char *cls_engine_cache_dir(const cls_engine *engine);

const char *cls_version(void);

#ifdef __cplusplus
}
#endif
#endif
