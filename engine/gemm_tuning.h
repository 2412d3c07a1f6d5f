/* CLBlast GEMM tuning per device: the search (gemm_search.c) over CLBlast's Xgemm, XgemmDirect
 * and GemmRoutine parameters at the model's shapes, and the stored winners (gemm_tuning.c): one
 * text file per device and driver in the kernel cache folder, written atomically, checked by a
 * SHA-256 line, and applied with CLBlastOverrideParameters when the engine prepares a device (so
 * that training uses them). A missing file changes nothing; a bad one is ignored with a warning.
 * CLSPEECH_GEMM_TUNING=0 (or off/no/false) turns loading off. */
#ifndef CLS_GEMM_TUNING_H
#define CLS_GEMM_TUNING_H

#include <stdbool.h>
#include <stddef.h>

#include "bench.h"

#define CLS_GEMM_MAX_PARAMS 16

/* One CLBlast kernel's parameters, as CLBlastOverrideParameters takes them. */
typedef struct cls_gemm_params {
  char kernel[16];                         /* "Xgemm", "XgemmDirect" or "GemmRoutine" */
  int n;
  char names[CLS_GEMM_MAX_PARAMS][24];
  size_t values[CLS_GEMM_MAX_PARAMS];
} cls_gemm_params;

/* What a tuning file holds: up to one parameter set per kernel (none: CLBlast's defaults were
 * fastest and are kept). */
typedef struct cls_gemm_tuning {
  int n;
  cls_gemm_params kernels[3];
  char shapes[128];                        /* what it was tuned for: "H=512 B=16 T=150" */
} cls_gemm_tuning;

/* "MWG=64 NWG=64 ..." */
void cls_gemm_params_format(const cls_gemm_params *p, char *out, size_t cap);
/* "Xgemm MWG=64 ...; XgemmDirect WGD=32 ...; GemmRoutine XGEMM_MIN_INDIRECT_SIZE=200", or
 * "CLBlast defaults" for an empty tuning. */
void cls_gemm_tuning_format(const cls_gemm_tuning *t, char *out, size_t cap);

/* CLBlastOverrideParameters for the device; CLS_ERR_BLAS (with the CLBlast status) when refused. */
cls_status cls_gemm_params_apply(cls_engine *engine, int device, const cls_gemm_params *p);

/* The device's tuning file: <kernel cache folder>/gemm-tuning/<16 hex digits of the SHA-256 of the
 * device name, vendor, driver version and platform>.txt. CLS_ERR_IO when the cache is off. */
cls_status cls_gemm_tuning_path(cls_engine *engine, int device, char *out, size_t cap);

typedef enum cls_tuning_read { CLS_TUNING_NONE = 0, CLS_TUNING_OK = 1, CLS_TUNING_BAD = 2 } cls_tuning_read;

/* Reads and checks the device's file. CLS_TUNING_BAD: `why` says what is wrong (bad checksum,
 * another device or driver, a malformed line). `path` (may be NULL) receives the file's path. */
cls_tuning_read cls_gemm_tuning_read(cls_engine *engine, int device, cls_gemm_tuning *out, char *path, size_t path_cap,
                                     char *why, size_t why_cap);

/* Writes the device's file atomically (creating the folder); `path` receives where. */
cls_status cls_gemm_tuning_store(cls_engine *engine, int device, const cls_gemm_tuning *t, char *path, size_t path_cap);

/* false when CLSPEECH_GEMM_TUNING turns loading off. */
bool cls_gemm_tuning_enabled(void);

/* Loads the device's stored winners and applies them, logging a notice naming the file and the
 * parameters; a bad file, or parameters CLBlast refuses, give a warning and change nothing. Never
 * fails: *applied says whether anything was applied. Does nothing when CLSPEECH_GEMM_TUNING is off. */
void cls_gemm_tuning_load(cls_engine *engine, int device, bool *applied);

/* cls_engine_prepare without loading the stored tuning (what `clspeech bench --tune` measures its
 * "before" with); defined in program.c. */
cls_status cls_engine_prepare_untuned(cls_engine *engine, int *sel, int *count);

/* ---- the search (gemm_search.c) ---- */

typedef struct cls_gemm_tune_options {
  int runs;             /* timed runs (median) of "before" and "after"; candidates get min(runs, 3) */
  int max_candidates;   /* candidate pairs (Xgemm + XgemmDirect) to try, 1..8; 0: all 8 of the device's list */
  cls_bench_progress_fn progress;
  void *user;
} cls_gemm_tune_options;

/* What became of one configuration of a candidate pair. */
typedef enum cls_tune_state {
  CLS_TUNE_SKIPPED = 0,  /* no shape of its kernel (or the search stopped first) */
  CLS_TUNE_TIMED = 1,    /* checked and timed on every shape of its kernel */
  CLS_TUNE_DROPPED = 2,  /* its partial sum already exceeded the best total: slower, not finished */
  CLS_TUNE_REJECTED = 3, /* a wrong result, a CLBlast error, or parameters CLBlast refused */
  CLS_TUNE_MISFIT = 4    /* breaks CLBlast's constraints or the device's work-group size or local memory */
} cls_tune_state;
/* "skipped", "timed", "dropped", "rejected", "misfit" */
const char *cls_tune_state_name(cls_tune_state state);

#define CLS_GEMM_MAX_CANDIDATES 8

typedef struct cls_gemm_candidate {
  cls_gemm_params xgemm, direct;
  cls_tune_state xgemm_state, direct_state;
  double xgemm_ms, direct_ms;  /* sum of calls x ms over the shapes of its kernel (partial when dropped) */
} cls_gemm_candidate;

typedef struct cls_gemm_tune_result {
  int n_shapes;
  double before_ms[CLS_BENCH_MAX_SHAPES * 4]; /* per shape, as given or measured */
  double after_ms[CLS_BENCH_MAX_SHAPES * 4];  /* with the winners (= before when the defaults are kept) */
  double before_step_ms, after_step_ms;       /* sum over shapes of calls x ms */
  cls_gemm_tuning winners;                    /* what was stored (n == 0: the defaults were kept) */
  int candidates;                             /* pairs tried */
  cls_gemm_candidate candidate[CLS_GEMM_MAX_CANDIDATES];
  int best_xgemm, best_direct;                /* indices into candidate[], -1: none */
  int split;                                  /* the search's own XGEMM_MIN_INDIRECT_SIZE for the pairs */
  int rejected;                               /* rejections, in every stage (see last_rejection) */
  char last_rejection[256];
  double seconds;
  bool stored;
  char path[1200];
} cls_gemm_tune_result;

/* Searches the device's candidate list for the shapes (at most CLS_BENCH_MAX_SHAPES * 4), checking
 * every candidate's result against the host reference (cls_gemm_cases_check) and timing it,
 * then chooses the GemmRoutine threshold between the direct and the indirect kernel from the
 * measured times, measures the winners ("after") and stores them when they beat `before_ms`
 * (NULL: measured first with whatever parameters are in force). The device keeps the winners
 * applied (or, when the defaults were kept, the last parameters tried; re-run to compare). */
cls_status cls_gemm_tune(cls_engine *engine, int device, const cls_gemm_shape *shapes, int n_shapes,
                         const double *before_ms, const cls_gemm_tune_options *options, cls_gemm_tune_result *out);

#endif
