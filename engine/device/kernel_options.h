/* Per-device OpenCL build options: the tunables (-D macros) every kernel reads with #ifndef
 * defaults, chosen from a small table by device kind, vendor and name, then the GEMM tile that
 * `clspeech bench --tune` measured on the device, then user overrides from CLSPEECH_KERNEL_OPTIONS. */
#ifndef CLS_KERNEL_OPTIONS_H
#define CLS_KERNEL_OPTIONS_H

#include "clspeech/clspeech.h"

/* Newly allocated option string for the device (free() it), or NULL when out of memory.
 * `overrides` is the engine's kernel_options option, CLSPEECH_KERNEL_OPTIONS (may be NULL): "SEL=OPTIONS;SEL=OPTIONS",
 * each SEL a device selection item (`gpu`, `0:2`, a name substring); the options of every entry
 * whose item matches the device are appended, so they win over the table; a -DCLS_GEMM_W=N among them
 * also picks the CPU GEMM's table row for width N instead of the device's own. A malformed entry
 * (no '=') is reported in *bad_entry (points into `overrides`) and skipped. `stored` (may be NULL or ""):
 * the own GEMM kernels' measured options from the device's tuning file (cls_gemm_own_options_load),
 * appended after the table and before the overrides. */
char *cls_kernel_options_for(const cls_device_info *device, const char *stored, const char *overrides,
                             const char **bad_entry);

/* The options one kernel family is built with, newly allocated (NULL when out of memory): the device's
 * `options` with the -DCLS_GEMM_* items for "gemm" alone (kernels/gemm.cl, which reads them), the
 * -DCLS_LSTM_SEQ_* items for "lstm_seq" alone, which also keeps -DCLS_GEMM_W= (its vectors' width), and
 * neither for every other family: so that another tile (a tuning candidate, stored tuning) rebuilds its
 * program alone and the others keep their cached binaries. A macro defined more than once (the table's
 * value, then a stored tuning's or an override's) keeps its last definition alone, which is the one the
 * compiler would take, without its warning of the redefinition. */
char *cls_kernel_options_of_family(const char *options, const char *family);

#endif
