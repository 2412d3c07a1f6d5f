/* Stored GEMM tuning per device (see gemm_tuning.h): the file's path, reading, atomic writing, applying
 * its CLBlast parameters through CLBlastOverrideParameters once they pass the kernels' constraints, and
 * keeping its backend per shape class on the device (for cls_gemm_backend_of); the text's format,
 * parsing and those constraints: gemm_tuning_file.c. Prints nothing.
 *
 * File (text, one item per line):
 *   clspeech-gemm-tuning 1
 *   device <CL_DEVICE_NAME>
 *   vendor <CL_DEVICE_VENDOR>
 *   driver <CL_DRIVER_VERSION>
 *   platform <CL_PLATFORM_NAME> | <CL_PLATFORM_VERSION>
 *   shapes <what it was tuned for>
 *   kernel <Xgemm|XgemmDirect|GemmRoutine> NAME=VALUE ...      (zero to three lines)
 *   backend <big|thin|packed> <own|clblast>                     (zero to three lines, one per class)
 *   own <16 hex: the own kernels' digest> -DCLS_GEMM_NAME=VALUE ...  (zero or one line)
 *   sha256 <hex SHA-256 of every byte before this line> */
#include "device/gemm_tuning.h"

#include <clblast_c.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "base/sha256.h"
#include "device/engine.h"
#include "device/kernel_sources.h"
#include "device/log.h"

#define DEVICE_FMT "device %d:%d (%s)"
#define DEVICE_ARGS(d) (d)->info.platform_index, (d)->info.device_index, (d)->info.name

cls_status cls_gemm_params_apply(cls_engine *e, int device, const cls_gemm_params *p) {
  if (!e || device < 0 || device >= e->n_devices) return CLS_ERR_INVALID_ARGUMENT;
  cls_device *d = &e->devices[device];
  const char *names[CLS_GEMM_MAX_PARAMS];
  for (int i = 0; i < p->n; i++) names[i] = p->names[i];
  CLBlastStatusCode s = CLBlastOverrideParameters(d->id, p->kernel, CLBlastPrecisionSingle, (size_t)p->n, names, p->values);
  if (s != CLBlastSuccess)
    return cls_fail(e, CLS_ERR_BLAS, DEVICE_FMT ": CLBlastOverrideParameters(%s) refused the parameters (status %d)",
                    DEVICE_ARGS(d), p->kernel, (int)s);
  return CLS_OK;
}

cls_status cls_gemm_tuning_path(cls_engine *e, int device, char *out, size_t cap) {
  if (cap) out[0] = '\0';
  if (!e || device < 0 || device >= e->n_devices) return CLS_ERR_INVALID_ARGUMENT;
  const char *dir = cls_engine_cache_dir(e);
  if (!dir)
    return cls_fail(e, CLS_ERR_IO, "GEMM tuning: the kernel cache is off (CLSPEECH_KERNEL_CACHE=0), so there is no "
                                   "folder to keep tuning in");
  const cls_device_info *d = &e->devices[device].info;
  cls_sha256 h;
  cls_sha256_init(&h);
  const char *fields[] = {d->name, d->vendor, d->driver_version, d->platform_name, d->platform_version};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) cls_sha256_update(&h, fields[i], strlen(fields[i]) + 1);
  uint8_t digest[32];
  char hex[65];
  cls_sha256_final(&h, digest);
  cls_sha256_hex(digest, hex);
  hex[16] = '\0';
  int n = snprintf(out, cap, "%s/gemm-tuning/%s.txt", dir, hex);
  if (n < 0 || (size_t)n >= cap) return cls_fail(e, CLS_ERR_IO, "GEMM tuning: path too long under %s", dir);
  return CLS_OK;
}

/* The device's backend per shape class from a tuning (0: the class default). */
static void set_backends(cls_device *d, const cls_gemm_tuning *t) {
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) d->gemm_backend[c] = t->backend[c];
}

cls_status cls_gemm_tuning_store(cls_engine *e, int device, const cls_gemm_tuning *t, char *path, size_t path_cap) {
  cls_status st = cls_gemm_tuning_path(e, device, path, path_cap);
  if (st != CLS_OK) return st;
  char text[8192];
  cls_gemm_tuning_header(&e->devices[device].info, t->shapes, text, sizeof text);
  size_t used = strlen(text);
  for (int k = 0; k < t->n && used < sizeof text; k++) {
    char params[1024];
    cls_gemm_params_format(&t->kernels[k], params, sizeof params);
    int w = snprintf(text + used, sizeof text - used, "kernel %s %s\n", t->kernels[k].kernel, params);
    if (w > 0) used += (size_t)w;
  }
  if (used < sizeof text) {
    cls_gemm_tuning_backend_lines(t, text + used, sizeof text - used);
    used += strlen(text + used);
  }
  if (t->own[0] && used < sizeof text) {
    int w = snprintf(text + used, sizeof text - used, "own %s %s\n", t->own_kernels, t->own);
    if (w > 0) used += (size_t)w;
  }
  if (used >= sizeof text || !cls_gemm_tuning_seal(text, used, sizeof text))
    return cls_fail(e, CLS_ERR_IO, "GEMM tuning: the file would be too long");
  char dir[1200];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  if (cls_make_dirs(dir) != CLS_OK) return cls_fail(e, CLS_ERR_IO, "GEMM tuning: cannot create folder %s: %s", dir, strerror(errno));
  const void *chunks[1] = {text};
  size_t sizes[1] = {strlen(text)};
  cls_error err;
  if (cls_write_atomic(path, chunks, sizes, 1, &err) != CLS_OK)
    return cls_fail(e, CLS_ERR_IO, "GEMM tuning: %s", err.text);
  set_backends(&e->devices[device], t);
  free(e->devices[device].tuning_file); /* the next read sees the new file */
  e->devices[device].tuning_file = NULL;
  return CLS_OK;
}

cls_tuning_read cls_gemm_tuning_read(cls_engine *e, int device, cls_gemm_tuning *out, char *path, size_t path_cap,
                                     cls_error *why) {
  memset(out, 0, sizeof *out);
  cls_error_clear(why);
  char local[1200];
  if (!path) {
    path = local;
    path_cap = sizeof local;
  }
  char saved[CLS_ERROR_CAP];
  memcpy(saved, e->error.text, sizeof saved);
  cls_status st = cls_gemm_tuning_path(e, device, path, path_cap);
  memcpy(e->error.text, saved, sizeof saved);
  if (st != CLS_OK) return CLS_TUNING_NONE;
  char *text = NULL;
  cls_error err;
  size_t len = 0;
  FILE *probe = fopen(path, "rb");
  if (!probe) return CLS_TUNING_NONE;
  fclose(probe);
  st = cls_read_file_max(path, 1 << 16, false, &text, &len, &err);
  if (st != CLS_OK) {
    cls_error_wrap(why, st, &err, NULL);
    return CLS_TUNING_BAD;
  }
  cls_tuning_read result = cls_gemm_tuning_parse(text, len, &e->devices[device].info, out, why)
                               ? CLS_TUNING_OK
                               : CLS_TUNING_BAD;
  free(text);
  return result;
}

/* The device's file as preparing it reads it: once, on the first call (the own kernels' options for its build
   options, then CLBlast's parameters and the backends after the build), kept on the device until the engine
   goes or a search stores a new file. NULL when out of memory. */
struct cls_tuning_file {
  cls_tuning_read state;
  cls_gemm_tuning t;
  char path[1200];
  cls_error why;
};

static const struct cls_tuning_file *tuning_file(cls_engine *e, int device) {
  cls_device *d = &e->devices[device];
  if (!d->tuning_file) {
    struct cls_tuning_file *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->state = cls_gemm_tuning_read(e, device, &f->t, f->path, sizeof f->path, &f->why);
    d->tuning_file = f;
  }
  return d->tuning_file;
}

void cls_gemm_tuning_load(cls_engine *e, int device, bool *applied) {
  if (applied) *applied = false;
  if (!e || device < 0 || device >= e->n_devices || !e->options.gemm_tuning) return;
  cls_device *d = &e->devices[device];
  const struct cls_tuning_file *f = tuning_file(e, device);
  if (!f || f->state == CLS_TUNING_NONE) return;
  const char *path = f->path;
  if (f->state == CLS_TUNING_BAD) {
    cls_log(e, CLS_LOG_WARNING, DEVICE_FMT ": GEMM tuning file %s ignored: %s (run `clspeech bench --tune` to redo it)",
            DEVICE_ARGS(d), path, f->why.text);
    return;
  }
  const cls_gemm_tuning *t = &f->t;
  set_backends(d, t);
  char saved[CLS_ERROR_CAP];
  memcpy(saved, e->error.text, sizeof saved);
  int ok = 0;
  for (int k = 0; k < t->n; k++) {
    cls_error bad;
    if (!cls_gemm_params_check(&t->kernels[k], &d->info, &bad)) {
      cls_log(e, CLS_LOG_WARNING,
              DEVICE_FMT ": GEMM tuning file %s: %s parameters ignored (CLBlast's defaults kept): %s", DEVICE_ARGS(d),
              path, t->kernels[k].kernel, bad.text);
    } else if (cls_gemm_params_apply(e, device, &t->kernels[k]) == CLS_OK) {
      ok++;
    } else {
      cls_log(e, CLS_LOG_WARNING, "%s; that part of GEMM tuning file %s is ignored", e->error.text, path);
    }
  }
  memcpy(e->error.text, saved, sizeof saved);
  char text[1024];
  cls_gemm_tuning_format(t, text, sizeof text);
  cls_log(e, CLS_LOG_NOTICE, DEVICE_FMT ": GEMM tuning loaded from %s (tuned at %s): %s", DEVICE_ARGS(d), path,
          t->shapes, text);
  char backends[128];
  cls_gemm_tuning_format_backends(t, backends, sizeof backends);
  if (backends[0])
    cls_log(e, CLS_LOG_NOTICE, DEVICE_FMT ": GEMM backend by shape class, measured (%s):%s", DEVICE_ARGS(d), path,
            backends);
  if (applied) *applied = ok > 0;
}

void cls_gemm_own_kernels_digest(char out[17]) {
  /* the families the own line tunes, in this order (the table itself, not program.c's lookup, which would
     make a circle with its call of this file) */
  static const char *const tuned[] = {"gemm", "lstm_seq"};
  cls_sha256 h;
  uint8_t digest[32];
  char hex[65];
  cls_sha256_init(&h);
  for (size_t f = 0; f < sizeof tuned / sizeof *tuned; f++)
    for (int i = 0; i < cls_kernel_source_count; i++)
      if (!strcmp(cls_kernel_sources[i].family, tuned[f]))
        cls_sha256_update(&h, cls_kernel_sources[i].source, cls_kernel_sources[i].length);
  cls_sha256_final(&h, digest);
  cls_sha256_hex(digest, hex);
  memcpy(out, hex, 16);
  out[16] = '\0';
}

void cls_gemm_own_options_load(cls_engine *e, int device, char *out, size_t cap) {
  if (cap) out[0] = '\0';
  if (!e || device < 0 || device >= e->n_devices || !e->options.gemm_tuning || e->devices[device].untuned) return;
  cls_device *d = &e->devices[device];
  const struct cls_tuning_file *f = tuning_file(e, device);
  if (!f || f->state != CLS_TUNING_OK || !f->t.own[0]) return;
  const cls_gemm_tuning *t = &f->t;
  const char *path = f->path;
  char digest[17];
  cls_gemm_own_kernels_digest(digest);
  if (strcmp(digest, t->own_kernels) != 0) {
    cls_log(e, CLS_LOG_NOTICE,
            DEVICE_FMT ": GEMM tuning file %s: the own kernels' options were measured on other kernels (digest %s, "
            "these are %s: another clspeech version); ignored, the defaults kept (`clspeech bench --tune` measures "
            "them again)", DEVICE_ARGS(d), path, t->own_kernels, digest);
    return;
  }
  snprintf(out, cap, "%s", t->own);
  cls_log(e, CLS_LOG_NOTICE, DEVICE_FMT ": own kernels' tuning loaded from %s (tuned at %s): %s", DEVICE_ARGS(d),
          path, t->shapes, t->own);
}
