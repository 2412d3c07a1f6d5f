/* Building the embedded kernel programs for a device: per-device options, the binary cache (a
 * rejected or corrupt binary is rebuilt from source, never trusted; a PoCL binary that PoCL would
 * abort on is neither loaded nor stored; processes building at once take turns under the build lock,
 * in PoCL's cache folder for PoCL devices), build logs in the error text,
 * dropping devices that cannot build from a selection, and applying a prepared device's stored GEMM
 * tuning (gemm_tuning.h). */
#include "device/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "device/gemm_tuning.h"
#include "device/kernel_cache.h"
#include "device/kernel_options.h"
#include "device/kernel_sources.h"
#include "device/log.h"
#include "device/pocl_binary_check.h"

int cls_kernel_source_find(const char *family) {
  for (int i = 0; i < cls_kernel_source_count; i++)
    if (!strcmp(cls_kernel_sources[i].family, family)) return i;
  return -1;
}

#define DEVICE_FMT "device %d:%d (%s)"
#define DEVICE_ARGS(d) (d)->info.platform_index, (d)->info.device_index, (d)->info.name

const char *cls_engine_build_options(cls_engine *e, int index) {
  if (!e || index < 0 || index >= e->n_devices) return NULL;
  cls_device *d = &e->devices[index];
  if (!d->build_options) {
    const char *bad = NULL;
    char stored[CLS_GEMM_OWN_CAP];
    cls_gemm_own_options_load(e, index, stored, sizeof stored);
    d->build_options = cls_kernel_options_for(&d->info, stored, e->options.kernel_options, &bad);
    if (bad)
      cls_log(e, CLS_LOG_WARNING, "CLSPEECH_KERNEL_OPTIONS: entry \"%s\" has no '=' (expected DEVICE=OPTIONS); ignored",
              bad);
  }
  return d->build_options;
}

static void append_build_log(cls_engine *e, cls_device *d, cl_program program) {
  size_t n = 0;
  if (clGetProgramBuildInfo(program, d->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0) {
    cls_error_append(e, "(the driver gave no build log)\n");
    return;
  }
  char *log = malloc(n + 1);
  if (!log) return;
  if (clGetProgramBuildInfo(program, d->id, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS) {
    log[n] = '\0';
    cls_error_append(e, "%s", log);
  }
  free(log);
}

/* Builds from the cached binary; NULL when that fails (the caller then builds from source), with a
 * warning when `tell`. */
static cl_program build_from_binary(cls_engine *e, cls_device *d, const char *options, const unsigned char *bin,
                                    size_t size, bool tell) {
  cl_int err = CL_SUCCESS, bin_status = CL_SUCCESS;
  cl_program p = clCreateProgramWithBinary(d->context, 1, &d->id, &size, &bin, &bin_status, &err);
  if (!p || err != CL_SUCCESS || bin_status != CL_SUCCESS) {
    if (p) clReleaseProgram(p);
    if (tell)
      cls_log(e, CLS_LOG_WARNING, DEVICE_FMT ": cached kernel binary rejected (%s); rebuilding from source",
              DEVICE_ARGS(d), cls_cl_error_name(err != CL_SUCCESS ? err : bin_status));
    return NULL;
  }
  err = clBuildProgram(p, 1, &d->id, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    clReleaseProgram(p);
    if (tell)
      cls_log(e, CLS_LOG_WARNING, DEVICE_FMT ": cached kernel binary failed to build (%s); rebuilding from source",
              DEVICE_ARGS(d), cls_cl_error_name(err));
    return NULL;
  }
  return p;
}

/* Stores the built program's binary in the cache; a binary that cannot be stored is a warning, never an
 * error: the program built here is used either way. */
static void store_binary(cls_engine *e, cls_device *d, const cls_kernel_source *src, cl_program p, const char *key) {
  size_t size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0) return;
  unsigned char *bin = malloc(size);
  if (!bin) return;
  cls_error why;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
    free(bin);
    return;
  }
  if (cls_pocl_binary_check(bin, size, &why) == CLS_POCL_BINARY_BROKEN) {
    /* The program built here is sound; only its binary, read back from PoCL's cache, is not. */
    cls_log(e, CLS_LOG_WARNING,
            DEVICE_FMT ": kernels/%s.cl: not cached, because the binary PoCL gave is incomplete (%s); another "
                       "process was probably building the same kernels into PoCL's cache",
            DEVICE_ARGS(d), src->family, why.text);
  } else {
    char saved[CLS_ERROR_CAP];
    memcpy(saved, e->error.text, sizeof saved);
    if (cls_kernel_cache_store(e, key, bin, size) != CLS_OK)
      cls_log(e, CLS_LOG_WARNING, DEVICE_FMT ": %s (continuing without caching)", DEVICE_ARGS(d), e->error.text);
    memcpy(e->error.text, saved, sizeof saved);
  }
  free(bin);
}

/* The program from its cache entry, or NULL: on a miss, a corrupt entry, a PoCL binary that PoCL
 * would abort on, or a binary the driver rejects (each of these logged, unless the file read is
 * `told`, whose fault was logged before). *seen receives which file was read. */
static cl_program from_cache(cls_engine *e, cls_device *d, const char *options, const char *key,
                             const cls_cache_file_id *told, cls_cache_file_id *seen) {
  unsigned char *bin = NULL;
  size_t size = 0;
  cls_cache_result found = cls_kernel_cache_load(e, key, &bin, &size, seen);
  const bool tell = !(told && told->exists && seen->exists && told->dev == seen->dev && told->ino == seen->ino);
  if (found == CLS_CACHE_CORRUPT && tell)
    cls_log(e, CLS_LOG_WARNING, DEVICE_FMT ": kernel cache entry %s/%s.clbin is corrupt; rebuilding it", DEVICE_ARGS(d),
            cls_engine_cache_dir(e), key);
  if (found != CLS_CACHE_HIT) return NULL;
  cls_error why;
  cl_program p = NULL;
  if (cls_pocl_binary_check(bin, size, &why) == CLS_POCL_BINARY_BROKEN) {
    if (tell)
      cls_log(e, CLS_LOG_WARNING,
              DEVICE_FMT ": kernel cache entry %s/%s.clbin holds a PoCL binary that PoCL would abort on (%s); rebuilding it",
              DEVICE_ARGS(d), cls_engine_cache_dir(e), key, why.text);
  } else {
    p = build_from_binary(e, d, options, bin, size, tell);
  }
  free(bin);
  return p;
}

/* Builds from source and stores the binary in the cache. */
static cls_status build_from_source(cls_engine *e, cls_device *d, const cls_kernel_source *src, const char *options,
                                    const char *key, cl_program *out) {
  cl_int err = CL_SUCCESS;
  const char *text = src->source;
  size_t length = src->length;
  cl_program p = clCreateProgramWithSource(d->context, 1, &text, &length, &err);
  if (!p)
    return cls_fail(e, CLS_ERR_OPENCL, DEVICE_FMT ": clCreateProgramWithSource(kernels/%s.cl) failed: %s",
                    DEVICE_ARGS(d), src->family, cls_cl_error_name(err));
  err = clBuildProgram(p, 1, &d->id, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    cls_fail(e, CLS_ERR_BUILD, DEVICE_FMT ": kernels/%s.cl failed to build (%s)\n  options: %s\n  build log:\n",
             DEVICE_ARGS(d), src->family, cls_cl_error_name(err), options);
    append_build_log(e, d, p);
    clReleaseProgram(p);
    return CLS_ERR_BUILD;
  }
  if (cls_engine_cache_dir(e)) store_binary(e, d, src, p, key);
  *out = p;
  return CLS_OK;
}

/* Where processes building this device's programs take turns. PoCL serialises a binary by reading
 * its own cache back, so for PoCL devices the lock is in PoCL's cache folder: every process sharing
 * that folder then takes turns, whichever binary cache it writes to. Other drivers: the binary cache. */
static const char *build_lock_dir(const cls_engine *e, const cls_device *d) {
  if (strstr(d->info.platform_name, "Portable Computing Language") && e->options.pocl_cache_dir[0])
    return e->options.pocl_cache_dir;
  return e->options.kernel_cache_dir;
}

/* The program of `src` built with `options` (the cache keyed by them). */
static cls_status build_with(cls_engine *e, cls_device *d, const cls_kernel_source *src, const char *options,
                             cl_program *out, bool *cache_hit) {
  *out = NULL;
  if (cache_hit) *cache_hit = false;
  char key[65];
  cls_kernel_cache_key(&d->info, src->source, src->length, options, key);
  cls_cache_file_id seen;
  cl_program p = from_cache(e, d, options, key, NULL, &seen);
  int lock = -1;
  if (!p && cls_engine_cache_dir(e)) {
    /* Build and store under the build lock. Another process may be building this program: once it lets
       go, or a new entry appears, look again (a fault of the file already read is not said twice). A
       new entry that fails too means waiting again, a few times at most. */
    char what[300];
    snprintf(what, sizeof what, DEVICE_FMT " kernels/%s.cl", DEVICE_ARGS(d), src->family);
    for (int look = 0; look < 4 && !p; look++) {
      bool ready = false;
      lock = cls_kernel_cache_lock(e, build_lock_dir(e, d), key, what, &seen, &ready);
      if (lock < 0 && !ready) break;
      const cls_cache_file_id told = seen;
      p = from_cache(e, d, options, key, &told, &seen);
      if (lock >= 0) break;
    }
  }
  if (p) {
    cls_kernel_cache_unlock(lock);
    if (cache_hit) *cache_hit = true;
    *out = p;
    return CLS_OK;
  }
  cls_status st = build_from_source(e, d, src, options, key, out);
  cls_kernel_cache_unlock(lock);
  return st;
}

/* Whether every kernel of a built program can be created: a driver may build a program and still refuse
 * one of its kernels (Oclgrind: an LLVM intrinsic its simulator cannot run). Each is created by name, as
 * the ops create them (Oclgrind 21.10's clCreateKernelsInProgram succeeds where clCreateKernel fails).
 * CL_SUCCESS or the first error, *bad its kernel's name (at most cap bytes). */
static cl_int create_all(cl_program p, char *bad, size_t cap) {
  size_t len = 0;
  bad[0] = '\0';
  cl_int err = clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &len);
  if (err != CL_SUCCESS || len == 0) return err;
  char *names = malloc(len + 1);
  if (!names) return CL_OUT_OF_HOST_MEMORY;
  err = clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, len, names, NULL);
  names[len] = '\0';
  for (char *save = NULL, *name = strtok_r(names, ";", &save); err == CL_SUCCESS && name;
       name = strtok_r(NULL, ";", &save)) {
    cl_kernel k = clCreateKernel(p, name, &err);
    if (k) clReleaseKernel(k);
    if (err != CL_SUCCESS) snprintf(bad, cap, "%s", name);
  }
  free(names);
  return err;
}

/* The option that builds the kernels without optional builtins (kernels/gemm.cl's prefetch hints): the
 * plain form for a driver that builds the fast form but cannot create its kernels. */
#define PLAIN_BUILTINS "-DCLS_PLAIN_BUILTINS"

/* The cache entry that remembers that this device needs the plain form of `src` under `options`: its
 * key is the program's with a suffix no build option has. */
static void plain_marker_key(const cls_device *d, const cls_kernel_source *src, const char *options, char key[65]) {
  char tagged[4096];
  snprintf(tagged, sizeof tagged, "%s\n#needs " PLAIN_BUILTINS, options);
  cls_kernel_cache_key(&d->info, src->source, src->length, tagged, key);
}

static bool plain_remembered(cls_engine *e, const cls_device *d, const cls_kernel_source *src, const char *options) {
  if (!cls_engine_cache_dir(e)) return false;
  char key[65];
  plain_marker_key(d, src, options, key);
  unsigned char *data = NULL;
  size_t size = 0;
  const bool hit = cls_kernel_cache_load(e, key, &data, &size, NULL) == CLS_CACHE_HIT;
  free(data);
  return hit;
}

static cls_status kernels_refused(cls_engine *e, cls_device *d, const cls_kernel_source *src, cl_int err,
                                  const char *bad, cl_program *out) {
  clReleaseProgram(*out);
  *out = NULL;
  return cls_fail(e, CLS_ERR_BUILD, DEVICE_FMT ": kernels/%s.cl built, but its kernel %s cannot be created "
                  "(clCreateKernel: %s), with or without optional builtins", DEVICE_ARGS(d), src->family, bad,
                  cls_cl_error_name(err));
}

static cls_status build_family(cls_engine *e, cls_device *d, const cls_kernel_source *src, const char *options,
                               cl_program *out, bool *cache_hit);

cls_status cls_program_build(cls_engine *e, cls_device *d, const cls_kernel_source *src, cl_program *out,
                             bool *cache_hit) {
  *out = NULL;
  if (cache_hit) *cache_hit = false;
  cls_status st = cls_device_open(e, d);
  if (st != CLS_OK) return st;
  const char *all = cls_engine_build_options(e, (int)(d - e->devices));
  char *options = all ? cls_kernel_options_of_family(all, src->family) : NULL;
  if (!options) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  st = build_family(e, d, src, options, out, cache_hit);
  free(options);
  return st;
}

/* cls_program_build with the family's options. */
static cls_status build_family(cls_engine *e, cls_device *d, const cls_kernel_source *src, const char *options,
                               cl_program *out, bool *cache_hit) {
  cls_status st;
  const bool plain_given = strstr(options, PLAIN_BUILTINS) != NULL;
  char *plain = plain_given ? NULL : malloc(strlen(options) + sizeof PLAIN_BUILTINS + 1);
  if (!plain_given && !plain) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  if (plain) sprintf(plain, "%s%s" PLAIN_BUILTINS, options, options[0] ? " " : "");
  const bool remembered = plain && plain_remembered(e, d, src, options);
  st = build_with(e, d, src, remembered ? plain : options, out, cache_hit);
  char bad[256];
  cl_int err = st == CLS_OK ? create_all(*out, bad, sizeof bad) : CL_SUCCESS;
  if (err != CL_SUCCESS && (!plain || remembered)) st = kernels_refused(e, d, src, err, bad, out);
  if (err == CL_SUCCESS || !plain || remembered) {
    free(plain);
    return st;
  }
  /* Once, the plain form; its options differ, so its binary has a cache entry of its own, and a marker
     entry remembers the choice so that later runs build the plain form at once. */
  clReleaseProgram(*out);
  *out = NULL;
  cls_log(e, CLS_LOG_WARNING,
          DEVICE_FMT ": kernels/%s.cl built, but its kernel %s cannot be created (clCreateKernel: %s); built again "
          "without optional builtins (%s), which this device keeps from now on", DEVICE_ARGS(d), src->family, bad,
          cls_cl_error_name(err), PLAIN_BUILTINS);
  st = build_with(e, d, src, plain, out, cache_hit);
  err = st == CLS_OK ? create_all(*out, bad, sizeof bad) : CL_SUCCESS;
  if (err != CL_SUCCESS) st = kernels_refused(e, d, src, err, bad, out);
  if (st == CLS_OK && cls_engine_cache_dir(e)) {
    char key[65];
    plain_marker_key(d, src, options, key);
    if (cls_kernel_cache_store(e, key, (const unsigned char *)PLAIN_BUILTINS, sizeof PLAIN_BUILTINS - 1) != CLS_OK)
      cls_log(e, CLS_LOG_WARNING, "%s (the choice is made again next time)", e->error.text);
  }
  free(plain);
  return st;
}

static void drop_programs(cls_device *d) {
  if (!d->programs) return;
  for (int k = 0; k < cls_kernel_source_count; k++)
    if (d->programs[k]) clReleaseProgram(d->programs[k]);
  memset(d->programs, 0, (size_t)cls_kernel_source_count * sizeof *d->programs);
}

static void read_preferred_multiple(cls_engine *e, cls_device *d) {
  if (cls_kernel_source_count == 0 || d->info.preferred_work_group_multiple) return;
  cl_uint n = 0;
  cl_kernel k = NULL;
  if (clCreateKernelsInProgram(d->programs[0], 1, &k, &n) != CL_SUCCESS || n == 0) return;
  size_t m = 0;
  if (clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof m, &m, NULL) == CL_SUCCESS)
    d->info.preferred_work_group_multiple = m;
  clReleaseKernel(k);
  (void)e;
}

cls_status cls_engine_build_device(cls_engine *e, int index, cls_build_record *records, int cap, int *count) {
  if (!e || index < 0 || index >= e->n_devices) return CLS_ERR_INVALID_ARGUMENT;
  if (count) *count = cls_kernel_source_count;
  cls_device *d = &e->devices[index];
  cls_status st = cls_device_open(e, d);
  if (st != CLS_OK) return st;
  if (!d->programs) {
    d->programs = calloc((size_t)(cls_kernel_source_count ? cls_kernel_source_count : 1), sizeof *d->programs);
    if (!d->programs) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  for (int k = 0; k < cls_kernel_source_count; k++) {
    cls_build_record rec = {cls_kernel_sources[k].family, CLS_OK, false, 0.0};
    if (!d->programs[k]) {
      double t0 = cls_now_ms();
      st = cls_program_build(e, d, &cls_kernel_sources[k], &d->programs[k], &rec.cache_hit);
      rec.ms = cls_now_ms() - t0;
    }
    rec.status = st;
    if (records && k < cap) records[k] = rec;
    if (st != CLS_OK) {
      drop_programs(d);
      d->built = false;
      return st;
    }
  }
  d->built = true;
  read_preferred_multiple(e, d);
  return CLS_OK;
}

static cls_status prepare(cls_engine *e, int *sel, int *count, bool load_tuning) {
  if (!e || !sel || !count) return CLS_ERR_INVALID_ARGUMENT;
  int kept = 0, dropped = 0;
  char *first = NULL; /* the first dropped device's reason, for the error when none is left */
  for (int i = 0; i < *count; i++) {
    if (!e->devices[sel[i]].build_options) e->devices[sel[i]].untuned = !load_tuning;
    cls_status st = cls_engine_build_device(e, sel[i], NULL, 0, NULL);
    if (st == CLS_OK) {
      /* the device's stored CLBlast GEMM winners (clspeech bench --tune), so that training uses them */
      if (load_tuning) cls_gemm_tuning_load(e, sel[i], NULL);
      sel[kept++] = sel[i];
    } else {
      dropped++;
      cls_log(e, CLS_LOG_WARNING, "dropping device: %s", e->error.text);
      if (!first) first = strdup(e->error.text);
    }
  }
  *count = kept;
  cls_status st = CLS_OK;
  /* the reason is in the error itself: an embedder without a log sink never saw the warnings */
  if (kept == 0 && dropped == 1)
    st = cls_fail(e, CLS_ERR_NO_DEVICE, "the selected device could not build the kernels: %s", first ? first : "");
  else if (kept == 0)
    st = cls_fail(e, CLS_ERR_NO_DEVICE, "none of the %d selected devices could build the kernels; the first: %s", dropped,
                  first ? first : "");
  free(first);
  return st;
}

cls_status cls_engine_prepare(cls_engine *e, int *sel, int *count) { return prepare(e, sel, count, true); }
cls_status cls_engine_prepare_untuned(cls_engine *e, int *sel, int *count) { return prepare(e, sel, count, false); }

cls_status cls_device_kernel(cls_engine *e, cls_device *d, const char *family, const char *name, cl_kernel *out) {
  *out = NULL;
  int k = cls_kernel_source_find(family);
  if (k < 0) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "no kernel family \"%s\" is embedded", family);
  if (!d->built || !d->programs[k])
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, DEVICE_FMT ": kernels not built", DEVICE_ARGS(d));
  cl_int err = CL_SUCCESS;
  *out = clCreateKernel(d->programs[k], name, &err);
  if (!*out)
    return cls_fail(e, CLS_ERR_OPENCL, DEVICE_FMT ": clCreateKernel(%s from kernels/%s.cl) failed: %s", DEVICE_ARGS(d),
                    name, family, cls_cl_error_name(err));
  return CLS_OK;
}

cls_status cls_kernel_compile_wg(cls_engine *e, cls_device *d, cl_kernel kernel, const char *name, size_t fallback,
                                 size_t *out) {
  size_t wg[3] = {0, 0, 0};
  cl_int err = clGetKernelWorkGroupInfo(kernel, d->id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof wg, wg, NULL);
  *out = wg[0] ? wg[0] : fallback;
  if (err != CL_SUCCESS)
    return cls_fail(e, CLS_ERR_OPENCL, DEVICE_FMT ": clGetKernelWorkGroupInfo(%s, CL_KERNEL_COMPILE_WORK_GROUP_SIZE) failed: %s",
                    DEVICE_ARGS(d), name, cls_cl_error_name(err));
  return CLS_OK;
}
