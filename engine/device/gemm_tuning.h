/* CLBlast GEMM tuning per device, the device layer's part: the stored winners (the search that finds
 * them is engine/bench/gemm_search.c; the types are public, in clspeech/clspeech.h): one
 * text file per device and driver in the kernel cache folder, written atomically, checked by a
 * SHA-256 line, and applied with CLBlastOverrideParameters when the engine prepares a device (so
 * that training uses them), and our own GEMM kernels' measured build options (the own search of
 * engine/bench/own_search.c), which a device's build options take (cls_gemm_own_options_load). A
 * missing file changes nothing; a bad one is ignored with a warning.
 * The engine's gemm_tuning option (CLSPEECH_GEMM_TUNING=0, off, no or false) turns loading off. */
#ifndef CLS_GEMM_TUNING_H
#define CLS_GEMM_TUNING_H

#include <stdbool.h>
#include <stddef.h>

#include "clspeech/clspeech.h"
#include "clspeech/internal/device.h"

/* The file's header lines for a device (the same text is written and compared). */
void cls_gemm_tuning_header(const cls_device_info *device, const char *shapes, char *out, size_t cap);

/* Appends the checksum line ("sha256 <hex of text[0..len)>\n") to the `len` bytes of `text` (room for
 * `cap`, with the terminating NUL): the file's length, or 0 when it does not fit. */
size_t cls_gemm_tuning_seal(char *text, size_t len, size_t cap);

/* Parses a tuning file's text for `device`: the checksum line, the header (this device's, byte for
 * byte), the kernel and backend lines. false with `why` (may be NULL) saying what is wrong when the file
 * is bad (CLS_ERR_IO; CLS_ERR_OUT_OF_MEMORY when its copy cannot be had). */
bool cls_gemm_tuning_parse(const char *text, size_t len, const cls_device_info *device, cls_gemm_tuning *out,
                           cls_error *why);

/* Whether -D<macro>=<value> ("CLS_GEMM_MR", "CLS_LSTM_SEQ_NV") is one of the own kernels' tunables
 * (kernels/own_tunables.h) in its range. */
bool cls_gemm_own_tunable(const char *macro, int value);
/* Whether `options` is a space-separated list of such -DMACRO=VALUE items only (and shorter than
 * CLS_GEMM_OWN_CAP); false with `why` naming the first item that is not. */
bool cls_gemm_own_options_check(const char *options, cls_error *why);

/* The 16 hex digits of the SHA-256 of the tuned own kernels' sources (kernels/gemm.cl, then lstm_seq.cl,
 * their headers resolved): stored own options were measured on the kernels with this digest, and apply to
 * no other. */
void cls_gemm_own_kernels_digest(char out[17]);

/* The device's stored own-kernel options (cls_gemm_tuning.own) for its build options, into `out` ("" when
 * none apply): nothing when the gemm_tuning option is off or the device is prepared untuned, when there
 * is no file, or when it is bad (cls_gemm_tuning_load warns of that); a notice when they are loaded, and
 * one when they were measured on other kernels (an older clspeech: its digest differs), which are ignored. */
void cls_gemm_own_options_load(cls_engine *engine, int device, char *out, size_t cap);

/* The stored backend per class as " big=own packed=clblast" ("" when none), and as the file's
 * "backend CLASS NAME" lines. */
void cls_gemm_tuning_format_backends(const cls_gemm_tuning *t, char *out, size_t cap);
void cls_gemm_tuning_backend_lines(const cls_gemm_tuning *t, char *out, size_t cap);

/* Whether one kernel's stored values meet what CLBlast's kernels need (Xgemm: KWG a multiple of KWI,
 * MWG of MDIMC*VWM and MDIMA*VWM, NWG of NDIMC*VWN and NDIMB*VWN, KWG of MDIMC*NDIMC/MDIMA and /NDIMB,
 * vector widths 1..16 powers of two, flags 0 or 1, sizes 1..1024, the work group and local memory
 * within the device's; XgemmDirect likewise around WGD). A value 0 would make CLBlast divide by zero,
 * others compute garbage. false with `why` (may be NULL; CLS_ERR_INVALID_ARGUMENT) naming the first broken
 * rule. */
bool cls_gemm_params_check(const cls_gemm_params *p, const cls_device_info *device, cls_error *why);

/* CLBlastOverrideParameters for the device; CLS_ERR_BLAS (with the CLBlast status) when refused. */
cls_status cls_gemm_params_apply(cls_engine *engine, int device, const cls_gemm_params *p);

/* The device's tuning file: <kernel cache folder>/gemm-tuning/<16 hex digits of the SHA-256 of the
 * device name, vendor, driver version and platform>.txt. CLS_ERR_IO when the cache is off. */
cls_status cls_gemm_tuning_path(cls_engine *engine, int device, char *out, size_t cap);

/* Writes the device's file atomically (creating the folder); `path` receives where. Once written, the
 * device takes its backend per shape class (cls_gemm_backend_of), as a load would. */
cls_status cls_gemm_tuning_store(cls_engine *engine, int device, const cls_gemm_tuning *t, char *path, size_t path_cap);

/* Loads the device's stored winners and applies them, logging a notice naming the file and the
 * parameters, and keeps the stored backend per shape class in the device (cls_device.gemm_backend);
 * a bad file, parameters that fail cls_gemm_params_check, or parameters CLBlast refuses
 * give a warning and change nothing (for that kernel: CLBlast's defaults stay). Never
 * fails: *applied says whether anything was applied. Does nothing when the gemm_tuning option is off. */
void cls_gemm_tuning_load(cls_engine *engine, int device, bool *applied);

#endif
