/* The engine object and its device table: finds every OpenCL platform and device, reads each
 * device's capabilities, and opens a device (its own context and in-order queue) on demand.
 * Selection lives in device_select.c, kernel builds in program.c. */
#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/engine.h"
#include "device/kernel_cache.h"
#include "device/kernel_sources.h"
#include "device/log.h"

static void info_string(cl_device_id dev, cl_device_info what, char *out, size_t cap) {
  out[0] = '\0';
  if (clGetDeviceInfo(dev, what, cap, out, NULL) != CL_SUCCESS) snprintf(out, cap, "?");
  out[cap - 1] = '\0';
}

static void platform_string(cl_platform_id p, cl_platform_info what, char *out, size_t cap) {
  out[0] = '\0';
  if (clGetPlatformInfo(p, what, cap, out, NULL) != CL_SUCCESS) snprintf(out, cap, "?");
  out[cap - 1] = '\0';
}

static void read_capabilities(cls_device *d) {
  cls_device_info *in = &d->info;
  cl_device_id id = d->id;
  platform_string(d->platform, CL_PLATFORM_NAME, in->platform_name, sizeof in->platform_name);
  platform_string(d->platform, CL_PLATFORM_VERSION, in->platform_version, sizeof in->platform_version);
  info_string(id, CL_DEVICE_NAME, in->name, sizeof in->name);
  info_string(id, CL_DEVICE_VENDOR, in->vendor, sizeof in->vendor);
  info_string(id, CL_DRIVER_VERSION, in->driver_version, sizeof in->driver_version);
  info_string(id, CL_DEVICE_VERSION, in->device_version, sizeof in->device_version);
  info_string(id, CL_DEVICE_OPENCL_C_VERSION, in->opencl_c_version, sizeof in->opencl_c_version);

  cl_device_type type = 0;
  clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  in->kind = (type & CL_DEVICE_TYPE_GPU) ? CLS_DEVICE_GPU
             : (type & CL_DEVICE_TYPE_CPU) ? CLS_DEVICE_CPU
             : (type & CL_DEVICE_TYPE_ACCELERATOR) ? CLS_DEVICE_ACCELERATOR
                                                  : CLS_DEVICE_OTHER;
  cl_uint u = 0;
  cl_ulong ul = 0;
  size_t sz = 0;
  if (clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u, &u, NULL) == CL_SUCCESS) in->compute_units = u;
  u = 0;
  if (clGetDeviceInfo(id, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof u, &u, NULL) == CL_SUCCESS) in->clock_mhz = u;
  if (clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS) in->global_mem_bytes = ul;
  ul = 0;
  if (clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS) in->local_mem_bytes = ul;
  ul = 0;
  if (clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS) in->max_alloc_bytes = ul;
  ul = 0;
  if (clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS)
    in->global_mem_cache_bytes = ul;
  if (clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof sz, &sz, NULL) == CL_SUCCESS) in->max_work_group_size = sz;
  u = 0;
  if (clGetDeviceInfo(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, sizeof u, &u, NULL) == CL_SUCCESS) in->vector_width_float = u;

  char ext[8192];
  info_string(id, CL_DEVICE_EXTENSIONS, ext, sizeof ext);
  in->fp16 = strstr(ext, "cl_khr_fp16") != NULL;
  cl_device_fp_config fp64 = 0;
  clGetDeviceInfo(id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
  in->fp64 = fp64 != 0 || strstr(ext, "cl_khr_fp64") != NULL;
}

static cls_status enumerate(cls_engine *e) {
  cl_uint n_platforms = 0;
  cl_int err = clGetPlatformIDs(0, NULL, &n_platforms);
  if (err != CL_SUCCESS || n_platforms == 0) {
    return cls_fail(e, CLS_ERR_NO_PLATFORM,
                    "no OpenCL platform found (clGetPlatformIDs: %s). Install an OpenCL driver: for the CPU, "
                    "`apt-get install -y pocl-opencl-icd`; for a GPU, its vendor's OpenCL ICD. Drivers are "
                    "registered in /etc/OpenCL/vendors (the OCL_ICD_VENDORS environment variable overrides that folder).",
                    err == CL_SUCCESS ? "0 platforms" : cls_cl_error_name(err));
  }
  cl_platform_id *platforms = calloc(n_platforms, sizeof *platforms);
  if (!platforms) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory listing OpenCL platforms");
  err = clGetPlatformIDs(n_platforms, platforms, NULL);
  if (err != CL_SUCCESS) {
    free(platforms);
    return cls_fail(e, CLS_ERR_NO_PLATFORM, "clGetPlatformIDs failed: %s", cls_cl_error_name(err));
  }
  e->n_platforms = (int)n_platforms;
  for (cl_uint p = 0; p < n_platforms; p++) {
    cl_uint n = 0;
    err = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n);
    if (err != CL_SUCCESS || n == 0) {
      char name[128];
      platform_string(platforms[p], CL_PLATFORM_NAME, name, sizeof name);
      cls_log(e, CLS_LOG_WARNING, "OpenCL platform %u (%s) has no device (%s); skipped", p, name,
              err == CL_SUCCESS ? "0 devices" : cls_cl_error_name(err));
      continue;
    }
    cl_device_id *ids = calloc(n, sizeof *ids);
    cls_device *grown = realloc(e->devices, (size_t)(e->n_devices + (int)n) * sizeof *grown);
    if (!ids || !grown) {
      free(ids);
      if (grown) e->devices = grown;
      free(platforms);
      return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory listing OpenCL devices");
    }
    e->devices = grown;
    clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n, ids, NULL);
    for (cl_uint i = 0; i < n; i++) {
      cls_device *d = &e->devices[e->n_devices++];
      memset(d, 0, sizeof *d);
      d->platform = platforms[p];
      d->id = ids[i];
      d->info.platform_index = (int)p;
      d->info.device_index = (int)i;
      read_capabilities(d);
    }
    free(ids);
  }
  free(platforms);
  if (e->n_devices == 0)
    return cls_fail(e, CLS_ERR_NO_DEVICE, "%d OpenCL platform(s) found, but none has a device", e->n_platforms);
  return CLS_OK;
}

cls_status cls_engine_create(const cls_engine_options *options, cls_engine **out) {
  if (!out) return CLS_ERR_INVALID_ARGUMENT;
  *out = NULL;
  cls_engine *e = calloc(1, sizeof *e);
  if (!e) return CLS_ERR_OUT_OF_MEMORY;
  e->options = options ? *options : cls_engine_options_from_environment();
  e->options.kernel_cache_dir[sizeof e->options.kernel_cache_dir - 1] = '\0';
  e->options.pocl_cache_dir[sizeof e->options.pocl_cache_dir - 1] = '\0';
  *out = e;
  const char *strings[2] = {e->options.kernel_options, e->options.default_devices};
  char **copies[2] = {&e->kernel_options, &e->default_devices};
  for (int i = 0; i < 2; i++) {
    if (strings[i] && !(*copies[i] = strdup(strings[i])))
      return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory copying the engine options");
  }
  e->options.kernel_options = e->kernel_options;
  e->options.default_devices = e->default_devices;
  cls_kernel_cache_init(e);
  return enumerate(e);
}

void cls_engine_destroy(cls_engine *e) {
  if (!e) return;
  /* CLBlast's programs go while their contexts and drivers are alive; its cache would otherwise release
     them from a static destructor at exit, after a driver's own statics are gone (Oclgrind beside PoCL:
     heap corruption inside Oclgrind's LLVM at exit). Other engines' programs are built again on use. */
  CLBlastClearCache();
  for (int i = 0; i < e->n_devices; i++) {
    cls_device *d = &e->devices[i];
    if (d->programs) {
      for (int k = 0; k < cls_kernel_source_count; k++)
        if (d->programs[k]) clReleaseProgram(d->programs[k]);
      free(d->programs);
    }
    if (d->queue) clReleaseCommandQueue(d->queue);
    if (d->context) clReleaseContext(d->context);
    if (d->sub_device) clReleaseDevice(d->id);
    free(d->build_options);
    free(d->tuning_file);
  }
  free(e->devices);
  free(e->kernel_options);
  free(e->default_devices);
  free(e);
}

const cls_engine_options *cls_engine_get_options(const cls_engine *e) { return e ? &e->options : NULL; }

const char *cls_engine_error(const cls_engine *e) { return e ? e->error.text : "no engine (out of host memory)"; }
int cls_engine_device_count(const cls_engine *e) { return e ? e->n_devices : 0; }

const cls_device_info *cls_engine_device(const cls_engine *e, int index) {
  if (!e || index < 0 || index >= e->n_devices) return NULL;
  return &e->devices[index].info;
}

cls_status cls_device_split(cls_engine *e, int index, int parts, int *first) {
  cls_device parent = e->devices[index];
  const cls_device_info *in = &parent.info;
  cl_uint max_sub = 0;
  clGetDeviceInfo(parent.id, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof max_sub, &max_sub, NULL);
  if (in->compute_units < (unsigned)parts || max_sub < (cl_uint)parts)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "device %d:%d (%s) cannot be split into %d: it has %u compute units and allows %u sub-devices",
                    in->platform_index, in->device_index, in->name, parts, in->compute_units, (unsigned)max_sub);
  cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, (cl_device_partition_property)(in->compute_units / (unsigned)parts), 0};
  cl_device_id ids[CLS_MAX_DEVICES];
  cl_uint made = 0;
  cl_int err = clCreateSubDevices(parent.id, props, (cl_uint)parts, ids, &made);
  if (err != CL_SUCCESS || made < (cl_uint)parts) {
    for (cl_uint i = 0; err == CL_SUCCESS && i < made; i++) clReleaseDevice(ids[i]);
    return cls_fail(e, CLS_ERR_OPENCL, "device %d:%d (%s): clCreateSubDevices into %d failed: %s", in->platform_index,
                    in->device_index, in->name, parts, err == CL_SUCCESS ? "too few sub-devices" : cls_cl_error_name(err));
  }
  cls_device *grown = realloc(e->devices, (size_t)(e->n_devices + parts) * sizeof *grown);
  if (!grown) {
    for (int i = 0; i < parts; i++) clReleaseDevice(ids[i]);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory splitting a device");
  }
  e->devices = grown;
  *first = e->n_devices;
  for (int i = 0; i < parts; i++) {
    cls_device *d = &e->devices[e->n_devices++];
    memset(d, 0, sizeof *d);
    d->platform = parent.platform;
    d->id = ids[i];
    d->sub_device = true;
    d->info.platform_index = parent.info.platform_index;
    d->info.device_index = parent.info.device_index;
    read_capabilities(d);
    size_t len = strlen(d->info.name);
    snprintf(d->info.name + len, sizeof d->info.name - len, " [sub-device %d/%d]", i + 1, parts);
    d->info.sub_index = i + 1;
    d->info.sub_count = parts;
  }
  return CLS_OK;
}

cls_status cls_device_open(cls_engine *e, cls_device *d) {
  if (d->queue) return CLS_OK;
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
  d->context = clCreateContext(props, 1, &d->id, NULL, NULL, &err);
  if (!d->context)
    return cls_fail(e, CLS_ERR_OPENCL, "device %d:%d (%s): clCreateContext failed: %s", d->info.platform_index,
                    d->info.device_index, d->info.name, cls_cl_error_name(err));
  /* In-order queue with profiling, so that benchmarks can read event times. */
  d->queue = clCreateCommandQueue(d->context, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (!d->queue) {
    clReleaseContext(d->context);
    d->context = NULL;
    return cls_fail(e, CLS_ERR_OPENCL, "device %d:%d (%s): clCreateCommandQueue failed: %s", d->info.platform_index,
                    d->info.device_index, d->info.name, cls_cl_error_name(err));
  }
  return CLS_OK;
}

const char *cls_device_kind_name(cls_device_kind kind) {
  switch (kind) {
    case CLS_DEVICE_GPU: return "gpu";
    case CLS_DEVICE_CPU: return "cpu";
    case CLS_DEVICE_ACCELERATOR: return "accelerator";
    case CLS_DEVICE_OTHER: return "other";
  }
  return "other";
}

const char *cls_version(void) { return CLSPEECH_VERSION; }
