/* CLBlast GEMM tuning per device, the device layer's part: the stored winners (the search that finds
 * them is engine/bench/gemm_search.c; the types are public, in clspeech/clspeech.h): one
 * text file per device and driver in the kernel cache folder, written atomically, checked by a
 * SHA-256 line, and applied with CLBlastOverrideParameters when the engine prepares a device (so
 * that training uses them). A missing file changes nothing; a bad one is ignored with a warning.
 * The engine's gemm_tuning option (CLSPEECH_GEMM_TUNING=0, off, no or false) turns loading off. */
#ifndef CLS_GEMM_TUNING_H
#define CLS_GEMM_TUNING_H

#include <stdbool.h>
#include <stddef.h>

#include "clspeech/clspeech.h"

/* CLBlastOverrideParameters for the device; CLS_ERR_BLAS (with the CLBlast status) when refused. */
cls_status cls_gemm_params_apply(cls_engine *engine, int device, const cls_gemm_params *p);

/* The device's tuning file: <kernel cache folder>/gemm-tuning/<16 hex digits of the SHA-256 of the
 * device name, vendor, driver version and platform>.txt. CLS_ERR_IO when the cache is off. */
cls_status cls_gemm_tuning_path(cls_engine *engine, int device, char *out, size_t cap);

/* Writes the device's file atomically (creating the folder); `path` receives where. */
cls_status cls_gemm_tuning_store(cls_engine *engine, int device, const cls_gemm_tuning *t, char *path, size_t path_cap);

/* Loads the device's stored winners and applies them, logging a notice naming the file and the
 * parameters, and keeps the stored backend per shape class in the device (cls_device.gemm_backend);
 * a bad file, or parameters CLBlast refuses, give a warning and change nothing. Never fails: *applied
 * says whether any CLBlast parameters were applied. Does nothing when the gemm_tuning option is off. */
void cls_gemm_tuning_load(cls_engine *engine, int device, bool *applied);

#endif
