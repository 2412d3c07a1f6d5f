/* The engine's internal state: the device table (one record per OpenCL device, with its context,
 * queue and built programs once opened) and the error text. Shared by the engine's own files only;
 * users see the opaque cls_engine of clspeech.h. */
#ifndef CLS_ENGINE_H
#define CLS_ENGINE_H

#include <CL/cl.h>

#include "clspeech/clspeech.h"
#include "clspeech/internal/device.h"

typedef struct cls_device {
  cls_device_info info;
  cl_platform_id platform;
  cl_device_id id;
  cl_context context;       /* own context: devices of different platforms cannot share one */
  cl_command_queue queue;   /* in-order */
  cl_program *programs;     /* [cls_kernel_source_count], NULL until built */
  bool built;               /* every program built */
  char *build_options;      /* NULL until first asked for */
  bool sub_device;          /* made by clCreateSubDevices: released with clReleaseDevice */
  bool untuned;             /* prepared without stored tuning (cls_engine_prepare_untuned): the kernels' defaults */
  int gemm_backend[CLS_GEMM_N_CLASSES]; /* the stored faster GEMM backend per shape class (gemm_tuning.h; 0: none) */
  struct cls_tuning_file *tuning_file;  /* the tuning file as read once for preparing the device (gemm_tuning.c) */
} cls_device;

struct cls_engine {
  cls_engine_options options; /* as created; its two strings point to the engine's copies below */
  char *kernel_options;       /* copies of options.kernel_options and default_devices (NULL when none) */
  char *default_devices;
  cls_device *devices;      /* [n_devices], in platform order then device order */
  int n_devices;
  int n_platforms;
  bool cache_enabled;       /* options.kernel_cache with a usable options.kernel_cache_dir */
  double build_lock_stalled_ms; /* time waited for build locks (kernel_cache.h) since the last sign of progress */
  bool build_lock_given_up;     /* that time ran past CLS_KERNEL_CACHE_LOCK_WAIT_MS: no more waiting */
  bool build_lock_told;         /* a wait was reported (once per engine) */
  cls_error error;              /* the engine's error: what its single-threaded callers read (cls_engine_error) */
};

/* Divides device `index` into `parts` sub-devices of equal compute units, appended to the device
 * table from *first on. */
cls_status cls_device_split(cls_engine *engine, int index, int parts, int *first);

/* Opens the device's context and queue if not yet open. */
cls_status cls_device_open(cls_engine *engine, cls_device *device);

#endif
