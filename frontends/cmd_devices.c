/* `clspeech devices [--devices SEL] [--json] [--noselftest]`: every OpenCL device with its
 * capabilities, which of them the selection takes, the kernel build (and whether it came from the
 * binary cache) and a self-test per device. Exit status 1 when any device fails its self-test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flags.h"
#include "json_out.h"

#define MAX_PROGRAMS 64

typedef struct device_report {
  bool selected;
  cls_status status;      /* build + self-test */
  char *reason;           /* the engine's error text on failure */
  cls_build_record records[MAX_PROGRAMS];
  int n_records;
  double build_ms;
  int cache_hits;
} device_report;

static void run_checks(cls_engine *engine, int i, bool selftest, device_report *r) {
  const cls_device_info *d = cls_engine_device(engine, i);
  fprintf(stderr, "clspeech: building kernels%s on device %d:%d (%s)...\n", selftest ? " and self-testing" : "",
          d->platform_index, d->device_index, d->name);
  r->status = cls_engine_build_device(engine, i, r->records, MAX_PROGRAMS, &r->n_records);
  if (r->n_records > MAX_PROGRAMS) r->n_records = MAX_PROGRAMS;
  for (int k = 0; k < r->n_records && r->status == CLS_OK; k++) {
    r->build_ms += r->records[k].ms;
    r->cache_hits += r->records[k].cache_hit;
  }
  if (r->status == CLS_OK && selftest) r->status = cls_engine_selftest(engine, i);
  if (r->status != CLS_OK) r->reason = strdup(cls_engine_error(engine));
}

static const char *verdict(const device_report *r, bool selftest) {
  if (r->status != CLS_OK) return "FAIL";
  return selftest ? "PASS" : "built";
}

static void print_table(cls_engine *engine, const device_report *reports, bool selftest) {
  int n = cls_engine_device_count(engine);
  char g[32], l[32], a[32];
  printf("%-5s %-5s %-50s %4s %6s %10s %9s %10s %-8s %s\n", "id", "kind", "name", "CUs", "MHz", "global", "local",
         "max alloc", "selected", selftest ? "self-test" : "kernels");
  for (int i = 0; i < n; i++) {
    const cls_device_info *d = cls_engine_device(engine, i);
    char id[16];
    snprintf(id, sizeof id, "%d:%d", d->platform_index, d->device_index);
    printf("%-5s %-5s %-50.50s %4u %6u %10s %9s %10s %-8s %s\n", id, cls_device_kind_name(d->kind), d->name,
           d->compute_units, d->clock_mhz, cli_bytes(d->global_mem_bytes, g, sizeof g),
           cli_bytes(d->local_mem_bytes, l, sizeof l), cli_bytes(d->max_alloc_bytes, a, sizeof a),
           reports[i].selected ? "yes" : "no", verdict(&reports[i], selftest));
  }
  for (int i = 0; i < n; i++) {
    const cls_device_info *d = cls_engine_device(engine, i);
    const device_report *r = &reports[i];
    printf("\ndevice %d:%d  %s\n", d->platform_index, d->device_index, d->name);
    printf("  platform      %s (%s)\n", d->platform_name, d->platform_version);
    printf("  vendor        %s; driver %s\n", d->vendor, d->driver_version);
    printf("  versions      %s; %s\n", d->device_version, d->opencl_c_version);
    printf("  work-groups   max %zu, preferred multiple %zu\n", d->max_work_group_size, d->preferred_work_group_multiple);
    printf("  precision     fp16 %s, fp64 %s\n", d->fp16 ? "yes" : "no", d->fp64 ? "yes" : "no");
    printf("  build options %s\n", cls_engine_build_options(engine, i));
    if (r->status == CLS_OK || r->n_records > 0) {
      int ok = 0;
      for (int k = 0; k < r->n_records; k++) ok += r->records[k].status == CLS_OK;
      printf("  kernels       %d of %d programs built in %.1f ms (%d from the binary cache)\n", ok, r->n_records,
             r->build_ms, r->cache_hits);
    }
    printf("  %-13s %s\n", selftest ? "self-test" : "status", verdict(r, selftest));
    if (r->reason) printf("  reason        %s\n", r->reason);
  }
}

static json_t *device_json(cls_engine *engine, int i, const device_report *r, bool selftest) {
  const cls_device_info *d = cls_engine_device(engine, i);
  char id[16];
  snprintf(id, sizeof id, "%d:%d", d->platform_index, d->device_index);
  json_t *programs = json_array();
  for (int k = 0; k < r->n_records; k++) {
    json_t *p = json_object();
    p = jo_set(p, "name", jo_text(r->records[k].program));
    p = jo_set(p, "ok", json_boolean(r->records[k].status == CLS_OK));
    p = jo_set(p, "cache_hit", json_boolean(r->records[k].cache_hit));
    p = jo_set(p, "ms", jo_real(r->records[k].ms));
    programs = jo_push(programs, p);
  }
  json_t *build = json_object();
  build = jo_set(build, "options", jo_text(cls_engine_build_options(engine, i)));
  build = jo_set(build, "ms", jo_real(r->build_ms));
  build = jo_set(build, "programs", programs);
  json_t *o = json_object();
  o = jo_set(o, "id", jo_text(id));
  o = jo_set(o, "platform_index", json_integer(d->platform_index));
  o = jo_set(o, "device_index", json_integer(d->device_index));
  o = jo_set(o, "kind", jo_text(cls_device_kind_name(d->kind)));
  o = jo_set(o, "name", jo_text(d->name));
  o = jo_set(o, "vendor", jo_text(d->vendor));
  o = jo_set(o, "platform_name", jo_text(d->platform_name));
  o = jo_set(o, "platform_version", jo_text(d->platform_version));
  o = jo_set(o, "driver_version", jo_text(d->driver_version));
  o = jo_set(o, "device_version", jo_text(d->device_version));
  o = jo_set(o, "opencl_c_version", jo_text(d->opencl_c_version));
  o = jo_set(o, "compute_units", json_integer(d->compute_units));
  o = jo_set(o, "clock_mhz", json_integer(d->clock_mhz));
  o = jo_set(o, "global_mem_bytes", json_integer((json_int_t)d->global_mem_bytes));
  o = jo_set(o, "local_mem_bytes", json_integer((json_int_t)d->local_mem_bytes));
  o = jo_set(o, "max_alloc_bytes", json_integer((json_int_t)d->max_alloc_bytes));
  o = jo_set(o, "max_work_group_size", json_integer((json_int_t)d->max_work_group_size));
  o = jo_set(o, "preferred_work_group_multiple", json_integer((json_int_t)d->preferred_work_group_multiple));
  o = jo_set(o, "fp16", json_boolean(d->fp16));
  o = jo_set(o, "fp64", json_boolean(d->fp64));
  o = jo_set(o, "selected", json_boolean(r->selected));
  o = jo_set(o, "build", build);
  o = jo_set(o, "selftest", jo_text(r->status != CLS_OK ? "FAIL" : selftest ? "PASS" : "SKIPPED"));
  o = jo_set(o, "reason", jo_text(r->reason));
  return o;
}

/* 0, or -1 when out of memory or stdout cannot be written. */
static int print_json(cls_engine *engine, const device_report *reports, bool selftest, const char *spec,
                      const char *source) {
  json_t *selection = json_object();
  selection = jo_set(selection, "spec", jo_text(spec));
  selection = jo_set(selection, "source", jo_text(source));
  json_t *devices = json_array();
  for (int i = 0; i < cls_engine_device_count(engine); i++)
    devices = jo_push(devices, device_json(engine, i, &reports[i], selftest));
  json_t *root = json_object();
  root = jo_set(root, "clspeech_version", jo_text(cls_version()));
  root = jo_set(root, "kernel_cache_dir", jo_text(cls_engine_cache_dir(engine)));
  root = jo_set(root, "selection", selection);
  root = jo_set(root, "devices", devices);
  return jo_dump(root, stdout);
}

int cmd_devices(int argc, char **argv) {
  const char *devices = "";
  bool json = false, selftest = true;
  cli_flag flags[] = {
      {"devices", CLI_STRING, &devices,
       "which devices to mark as selected: all, gpu, cpu, accelerator, P:D indices or name substrings, "
       "comma-separated (default: $CLSPEECH_DEVICES, else every GPU, else every CPU device)", false},
      {"json", CLI_BOOL, &json, "print JSON instead of the table (schema in docs/devices.md)", false},
      {"selftest", CLI_BOOL, &selftest, "build every kernel and run the numeric self-test on each device", false},
  };
  int rc = cli_parse_flags(argc, argv, 2, flags, (int)(sizeof flags / sizeof flags[0]), "devices",
                           "Lists every OpenCL device, its capabilities, and whether our kernels pass on it.", NULL, 0, NULL);
  if (rc) return rc == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;

  cls_engine *engine = NULL;
  if ((rc = cli_engine_open(&engine))) return rc;
  int n = cls_engine_device_count(engine);
  device_report *reports = calloc((size_t)n, sizeof *reports);
  int *sel = calloc((size_t)n, sizeof *sel);
  if (!reports || !sel) {
    fprintf(stderr, "clspeech devices: out of memory\n");
    free(reports);
    free(sel);
    cls_engine_destroy(engine);
    return CLI_EXIT_FAILURE;
  }
  const char *env = cls_engine_get_options(engine)->default_devices; /* CLSPEECH_DEVICES */
  const char *spec = *devices ? devices : env && *env ? env : NULL;
  const char *source = *devices ? "--devices" : env && *env ? "CLSPEECH_DEVICES" : "default";
  int n_sel = 0;
  cls_status st = cls_engine_select(engine, devices, sel, n, &n_sel);
  if (st != CLS_OK) {
    rc = cli_report("devices", engine, st);
  } else {
    for (int i = 0; i < n_sel; i++) reports[sel[i]].selected = true;
    bool any_failed = false;
    for (int i = 0; i < n; i++) {
      run_checks(engine, i, selftest, &reports[i]);
      any_failed |= reports[i].status != CLS_OK;
    }
    rc = any_failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
    if (!json) {
      print_table(engine, reports, selftest);
    } else if (print_json(engine, reports, selftest, spec, source) != 0) {
      fprintf(stderr, "clspeech devices: cannot write the JSON (out of memory, or stdout failed)\n");
      rc = CLI_EXIT_FAILURE;
    }
  }
  for (int i = 0; i < n; i++) free(reports[i].reason);
  free(reports);
  free(sel);
  cls_engine_destroy(engine);
  return rc;
}
