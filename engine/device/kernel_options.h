/* Per-device OpenCL build options: the tunables (-D macros) every kernel reads with #ifndef
 * defaults, chosen from a small table by device kind, vendor and name, plus user overrides from
 * CLSPEECH_KERNEL_OPTIONS. */
#ifndef CLS_KERNEL_OPTIONS_H
#define CLS_KERNEL_OPTIONS_H

#include "clspeech/clspeech.h"

/* Newly allocated option string for the device (free() it), or NULL when out of memory.
 * `overrides` is the engine's kernel_options option, CLSPEECH_KERNEL_OPTIONS (may be NULL): "SEL=OPTIONS;SEL=OPTIONS",
 * each SEL a device selection item (`gpu`, `0:2`, a name substring); the options of every entry
 * whose item matches the device are appended, so they win over the table; a -DCLS_GEMM_W=N among them
 * also picks the CPU GEMM's table row for width N instead of the device's own. A malformed entry
 * (no '=') is reported in *bad_entry (points into `overrides`) and skipped. */
char *cls_kernel_options_for(const cls_device_info *device, const char *overrides, const char **bad_entry);

#endif
