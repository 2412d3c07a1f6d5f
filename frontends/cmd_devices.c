/* `clspeech devices [--devices SEL] [--json] [--noselftest]`: every OpenCL device with its
 * capabilities, which of them the selection takes, the kernel build (and whether it came from the
 * binary cache) and a self-test per device. Exit status 1 when any device fails its self-test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flags.h"
#include "json_writer.h"

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

static void print_json(cls_engine *engine, const device_report *reports, bool selftest, const char *spec,
                       const char *source) {
  json_writer w;
  json_init(&w, stdout);
  json_begin_object(&w);
  json_key(&w, "clspeech_version");
  json_string(&w, cls_version());
  json_key(&w, "kernel_cache_dir");
  json_string(&w, cls_engine_cache_dir(engine));
  json_key(&w, "selection");
  json_begin_object(&w);
  json_key(&w, "spec");
  json_string(&w, spec);
  json_key(&w, "source");
  json_string(&w, source);
  json_end_object(&w);
  json_key(&w, "devices");
  json_begin_array(&w);
  for (int i = 0; i < cls_engine_device_count(engine); i++) {
    const cls_device_info *d = cls_engine_device(engine, i);
    const device_report *r = &reports[i];
    char id[16];
    snprintf(id, sizeof id, "%d:%d", d->platform_index, d->device_index);
    json_begin_object(&w);
    json_key(&w, "id"); json_string(&w, id);
    json_key(&w, "platform_index"); json_int(&w, d->platform_index);
    json_key(&w, "device_index"); json_int(&w, d->device_index);
    json_key(&w, "kind"); json_string(&w, cls_device_kind_name(d->kind));
    json_key(&w, "name"); json_string(&w, d->name);
    json_key(&w, "vendor"); json_string(&w, d->vendor);
    json_key(&w, "platform_name"); json_string(&w, d->platform_name);
    json_key(&w, "platform_version"); json_string(&w, d->platform_version);
    json_key(&w, "driver_version"); json_string(&w, d->driver_version);
    json_key(&w, "device_version"); json_string(&w, d->device_version);
    json_key(&w, "opencl_c_version"); json_string(&w, d->opencl_c_version);
    json_key(&w, "compute_units"); json_int(&w, d->compute_units);
    json_key(&w, "clock_mhz"); json_int(&w, d->clock_mhz);
    json_key(&w, "global_mem_bytes"); json_int(&w, (int64_t)d->global_mem_bytes);
    json_key(&w, "local_mem_bytes"); json_int(&w, (int64_t)d->local_mem_bytes);
    json_key(&w, "max_alloc_bytes"); json_int(&w, (int64_t)d->max_alloc_bytes);
    json_key(&w, "max_work_group_size"); json_int(&w, (int64_t)d->max_work_group_size);
    json_key(&w, "preferred_work_group_multiple"); json_int(&w, (int64_t)d->preferred_work_group_multiple);
    json_key(&w, "fp16"); json_bool(&w, d->fp16);
    json_key(&w, "fp64"); json_bool(&w, d->fp64);
    json_key(&w, "selected"); json_bool(&w, r->selected);
    json_key(&w, "build");
    json_begin_object(&w);
    json_key(&w, "options"); json_string(&w, cls_engine_build_options(engine, i));
    json_key(&w, "ms"); json_double(&w, r->build_ms);
    json_key(&w, "programs");
    json_begin_array(&w);
    for (int k = 0; k < r->n_records; k++) {
      json_begin_object(&w);
      json_key(&w, "name"); json_string(&w, r->records[k].program);
      json_key(&w, "ok"); json_bool(&w, r->records[k].status == CLS_OK);
      json_key(&w, "cache_hit"); json_bool(&w, r->records[k].cache_hit);
      json_key(&w, "ms"); json_double(&w, r->records[k].ms);
      json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
    json_key(&w, "selftest");
    json_string(&w, r->status != CLS_OK ? "FAIL" : selftest ? "PASS" : "SKIPPED");
    json_key(&w, "reason");
    json_string(&w, r->reason);
    json_end_object(&w);
  }
  json_end_array(&w);
  json_end_object(&w);
}

int cmd_devices(int argc, char **argv) {
  const char *devices = "";
  bool json = false, selftest = true;
  cli_flag flags[] = {
      {"devices", CLI_STRING, &devices,
       "which devices to mark as selected: all, gpu, cpu, accelerator, P:D indices or name substrings, "
       "comma-separated (default: $CLSPEECH_DEVICES, else every GPU, else every CPU device)", false},
      {"json", CLI_BOOL, &json, "print JSON instead of the table (schema in README.md)", false},
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
  const char *env = getenv("CLSPEECH_DEVICES");
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
    if (json)
      print_json(engine, reports, selftest, spec, source);
    else
      print_table(engine, reports, selftest);
    rc = any_failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
  }
  for (int i = 0; i < n; i++) free(reports[i].reason);
  free(reports);
  free(sel);
  cls_engine_destroy(engine);
  return rc;
}
