/* clspeech internal API, device layer: the stored GEMM tuning (CLBlast parameters and the faster GEMM
 * backend per shape class, found by `clspeech bench --tune`), as the clspeech command, the bench
 * programs and the tests read and write it. Not installed: a program embedding the engine sees
 * only the public headers of include/clspeech/, and the engine applies the stored tuning itself. */
#ifndef CLSPEECH_INTERNAL_DEVICE_H
#define CLSPEECH_INTERNAL_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "clspeech/clspeech.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- stored GEMM tuning ----
 * CLBlast GEMM parameters found by `clspeech bench --tune` (the search is in clspeech/internal/bench.h), stored per
 * device and driver in the kernel cache folder and applied whenever the engine prepares a device
 * (unless the engine's gemm_tuning option, CLSPEECH_GEMM_TUNING, is off). */
#define CLS_GEMM_MAX_PARAMS 16

/* One CLBlast kernel's parameters, as CLBlastOverrideParameters takes them. */
typedef struct cls_gemm_params {
  char kernel[16];                         /* "Xgemm", "XgemmDirect" or "GemmRoutine" */
  int n;
  char names[CLS_GEMM_MAX_PARAMS][24];
  size_t values[CLS_GEMM_MAX_PARAMS];
} cls_gemm_params;

/* The shape classes a tuning file names the faster GEMM backend for (`clspeech bench --tune` times our
 * own kernels and CLBlast on each): products whose dimensions are all at least CLS_GEMM_THIN_BELOW, those
 * with a smaller one (the output layer's 29 classes), and the products on a B packed once for many calls
 * (cls_gemm_pack_b + cls_gemm_packed: the LSTM's recurrent products). */
typedef enum cls_gemm_class {
  CLS_GEMM_CLASS_BIG = 0,
  CLS_GEMM_CLASS_THIN = 1,
  CLS_GEMM_CLASS_PACKED = 2
} cls_gemm_class;
#define CLS_GEMM_N_CLASSES 3
#define CLS_GEMM_THIN_BELOW 64
/* "big", "thin", "packed" */
const char *cls_gemm_class_name(cls_gemm_class c);
/* The class of an m x n x k product (packed: on a B packed by cls_gemm_pack_b). */
cls_gemm_class cls_gemm_class_of(size_t m, size_t n, size_t k, bool packed);

#define CLS_GEMM_OWN_CAP 320
/* What a tuning file holds: up to one parameter set per kernel (none: CLBlast's defaults were
 * fastest and are kept), and the measured faster backend per shape class. */
typedef struct cls_gemm_tuning {
  int n;
  cls_gemm_params kernels[3];
  char shapes[128];                        /* what it was tuned for: "H=512 B=16 T=150" */
  int backend[CLS_GEMM_N_CLASSES];         /* per cls_gemm_class, as cls_gemm_backend (clspeech/internal/ops.h): 1 our
                                              own kernels, 2 CLBlast; 0 not measured (the class default) */
  char own[CLS_GEMM_OWN_CAP];              /* our own GEMM kernels' measured build options ("-DCLS_GEMM_MR=8 ..."; "":
                                              none stored), each a tunable of cls_gemm_own_tunable */
  char own_kernels[17];                    /* ... measured on these kernels: cls_gemm_own_kernels_digest's 16 hex */
} cls_gemm_tuning;

/* "MWG=64 NWG=64 ..." */
void cls_gemm_params_format(const cls_gemm_params *p, char *out, size_t cap);
/* "Xgemm MWG=64 ...; XgemmDirect WGD=32 ...; GemmRoutine XGEMM_MIN_INDIRECT_SIZE=200", or
 * "CLBlast defaults" for an empty tuning (the CLBlast part only: not the backends). */
void cls_gemm_tuning_format(const cls_gemm_tuning *t, char *out, size_t cap);

typedef enum cls_tuning_read { CLS_TUNING_NONE = 0, CLS_TUNING_OK = 1, CLS_TUNING_BAD = 2 } cls_tuning_read;

/* Reads and checks the device's file. CLS_TUNING_BAD: `why` (may be NULL) says what is wrong (bad
 * checksum, another device or driver, a malformed line: CLS_ERR_IO, or the read's own status); it is
 * cleared otherwise. `path` (may be NULL) receives the file's path. */
cls_tuning_read cls_gemm_tuning_read(cls_engine *engine, int device, cls_gemm_tuning *out, char *path, size_t path_cap,
                                     cls_error *why);

/* cls_engine_prepare without loading the stored tuning (what `clspeech bench --tune` measures its
 * "before" with); engine/device/program.c. */
cls_status cls_engine_prepare_untuned(cls_engine *engine, int *sel, int *count);

#ifdef __cplusplus
}
#endif
#endif
