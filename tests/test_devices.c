/* The device layer on the machine's real OpenCL devices (CI: POCL_DEVICES="pthread pthread basic"):
 * enumeration and capabilities, selection with the notice of the CPU fallback, every device's
 * kernel build and self-test, a broken kernel source, and devices that fail to build being dropped
 * while the others go on. */
#include <stdlib.h>

#include "check.h"
#include "log_capture.h"
#include "device/engine.h"
#include "device/program.h"


static cls_engine *open_engine(void) {
  cls_engine_options options = cls_engine_options_from_environment();
  options.log = capture_log;
  options.log_level = CLS_LOG_DEBUG;
  cls_engine *e = NULL;
  cls_status st = cls_engine_create(&options, &e);
  CHECK(st == CLS_OK, "cls_engine_create: %s: %s", cls_status_string(st), cls_engine_error(e));
  return e;
}

int main(void) {
  const char *expect_env = getenv("CLS_TEST_EXPECT_CPU_DEVICES");
  int expect_cpus = expect_env ? atoi(expect_env) : -1;
  cls_engine *e = open_engine();
  if (!e || cls_engine_device_count(e) == 0) return check_finish("test_devices");
  int n = cls_engine_device_count(e);
  int cpus = 0, gpus = 0;
  for (int i = 0; i < n; i++) {
    cpus += cls_engine_device(e, i)->kind == CLS_DEVICE_CPU;
    gpus += cls_engine_device(e, i)->kind == CLS_DEVICE_GPU;
  }
  if (expect_cpus >= 0) CHECK_INT(cpus, expect_cpus);

  /* Capabilities are read and plausible. */
  for (int i = 0; i < n; i++) {
    const cls_device_info *d = cls_engine_device(e, i);
    CHECK(d->name[0] != '\0' && strcmp(d->name, "?"), "device %d has a name", i);
    CHECK(d->compute_units > 0, "device %d compute units %u", i, d->compute_units);
    CHECK(d->global_mem_bytes > 0 && d->max_alloc_bytes > 0 && d->max_alloc_bytes <= d->global_mem_bytes,
          "device %d memory: global %llu, max alloc %llu", i, (unsigned long long)d->global_mem_bytes,
          (unsigned long long)d->max_alloc_bytes);
    CHECK(d->local_mem_bytes >= 16384, "device %d local memory %llu (OpenCL 1.2 guarantees 16 KiB)", i,
          (unsigned long long)d->local_mem_bytes);
    CHECK(d->max_work_group_size >= 1, "device %d max work-group size", i);
    CHECK_CONTAINS(d->opencl_c_version, "OpenCL C");
  }
  CHECK(cls_engine_device(e, n) == NULL && cls_engine_device(e, -1) == NULL, "out-of-range device is NULL");

  /* Selection through the engine: the default on a CPU-only machine notes the fallback. */
  int sel[64], count = 0;
  unsetenv("CLSPEECH_DEVICES");
  cls_engine_destroy(e); /* an engine takes CLSPEECH_DEVICES when it is created */
  e = open_engine();
  log_text[0] = '\0';
  CHECK_INT(cls_engine_select(e, NULL, sel, 64, &count), CLS_OK);
  if (gpus == 0) {
    CHECK_INT(count, n);
    CHECK_CONTAINS(log_text, "no GPU found; using");
  } else {
    CHECK_INT(count, gpus);
  }
  setenv("CLSPEECH_DEVICES", "basic", 1);
  cls_engine_destroy(e);
  e = open_engine();
  CHECK_INT(cls_engine_select(e, NULL, sel, 64, &count), CLS_OK);
  CHECK(count == 1 && strstr(cls_engine_device(e, sel[0])->name, "basic"), "CLSPEECH_DEVICES=basic picks basic");
  CHECK_INT(cls_engine_select(e, "pthread", sel, 64, &count), CLS_OK); /* the flag wins over the variable */
  CHECK(count >= 1 && !strstr(cls_engine_device(e, sel[0])->name, "basic"), "--devices pthread wins over the variable");
  unsetenv("CLSPEECH_DEVICES");
  CHECK_INT(cls_engine_select(e, "9:9", sel, 64, &count), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "--devices: device selection \"9:9\": there is no device 9:9");

  /* Every device builds every kernel and passes the self-test. */
  for (int i = 0; i < n; i++) {
    cls_status st = cls_engine_selftest(e, i);
    CHECK(st == CLS_OK, "device %d self-test: %s", i, cls_engine_error(e));
    CHECK(cls_engine_device(e, i)->preferred_work_group_multiple > 0, "device %d preferred multiple read", i);
  }

  /* A broken kernel source: CLS_ERR_BUILD naming the device and file, with the compiler's log. */
  static const char broken[] = "__kernel void broken(__global float *x) { x[0] = undefined_name; }\n";
  cls_kernel_source src = {"broken", broken, sizeof broken - 1};
  cl_program prog = NULL;
  cls_status st = cls_program_build(e, &e->devices[0], &src, &prog, NULL);
  CHECK_INT(st, CLS_ERR_BUILD);
  CHECK(prog == NULL, "no program on failure");
  CHECK_CONTAINS(cls_engine_error(e), "kernels/broken.cl failed to build (CL_BUILD_PROGRAM_FAILURE)");
  CHECK_CONTAINS(cls_engine_error(e), "undefined_name");
  CHECK_CONTAINS(cls_engine_error(e), "options: -cl-std=CL1.2");
  cls_engine_destroy(e);

  /* A device whose build fails (a bad tunable for the basic device only) is dropped; the others go on. */
  setenv("CLSPEECH_KERNEL_OPTIONS", "basic=-DCLS_WG_1D=3", 1);
  e = open_engine();
  CHECK_INT(cls_engine_select(e, "all", sel, 64, &count), CLS_OK);
  log_text[0] = '\0';
  CHECK_INT(cls_engine_prepare(e, sel, &count), CLS_OK);
  CHECK_INT(count, n - 1);
  for (int i = 0; i < count; i++)
    CHECK(!strstr(cls_engine_device(e, sel[i])->name, "basic"), "basic was dropped, %s kept", cls_engine_device(e, sel[i])->name);
  CHECK_CONTAINS(log_text, "dropping device: device ");
  CHECK_CONTAINS(log_text, "(basic-");
  CHECK_CONTAINS(log_text, "CLS_WG_1D must be a power of two");
  cls_engine_destroy(e);

  /* When every device fails, preparing is an error that says so. */
  setenv("CLSPEECH_KERNEL_OPTIONS", "all=-DCLS_WG_1D=3", 1);
  e = open_engine();
  CHECK_INT(cls_engine_select(e, "all", sel, 64, &count), CLS_OK);
  CHECK_INT(cls_engine_prepare(e, sel, &count), CLS_ERR_NO_DEVICE);
  CHECK_INT(count, 0);
  CHECK_CONTAINS(cls_engine_error(e), "could build the kernels");
  /* and carries the reason itself, for an embedder that has no log sink */
  CHECK_CONTAINS(cls_engine_error(e), "CLS_WG_1D must be a power of two");
  cls_engine_destroy(e);
  unsetenv("CLSPEECH_KERNEL_OPTIONS");
  return check_finish("test_devices");
}
