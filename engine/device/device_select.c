/* Device selection strings: `all`, `gpu`, `cpu`, `accelerator`, `P:D` indices and name substrings,
 * comma-separated (see clspeech.h, cls_engine_select). Owns parsing and matching only; it opens no
 * device and reads no environment (the engine entry point at the end takes the engine's
 * default_devices option, CLSPEECH_DEVICES, for an empty selection). */
#include "device/device_select.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/engine.h"
#include "device/log.h"

static bool contains_nocase(const char *haystack, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0) return false;
  for (const char *h = haystack; *h; h++) {
    size_t i = 0;
    while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) i++;
    if (i == n) return true;
  }
  return false;
}

static bool equals_nocase(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
  return *a == *b;
}

/* "P:D" with two non-negative decimal integers. */
static bool parse_index_pair(const char *item, int *p, int *d) {
  char *end = NULL;
  if (!isdigit((unsigned char)item[0])) return false;
  long a = strtol(item, &end, 10);
  if (*end != ':' || !isdigit((unsigned char)end[1])) return false;
  long b = strtol(end + 1, &end, 10);
  if (*end != '\0' || a > 1000000 || b > 1000000) return false;
  *p = (int)a;
  *d = (int)b;
  return true;
}

static int kind_keyword(const char *item) {
  if (equals_nocase(item, "gpu")) return CLS_DEVICE_GPU;
  if (equals_nocase(item, "cpu")) return CLS_DEVICE_CPU;
  if (equals_nocase(item, "accelerator")) return CLS_DEVICE_ACCELERATOR;
  return -1;
}

bool cls_select_item_matches(const cls_device_info *d, const char *item) {
  if (equals_nocase(item, "all")) return true;
  int kind = kind_keyword(item);
  if (kind >= 0) return (int)d->kind == kind;
  int p, i;
  if (parse_index_pair(item, &p, &i)) return d->platform_index == p && d->device_index == i;
  return contains_nocase(d->name, item) || contains_nocase(d->vendor, item) || contains_nocase(d->platform_name, item);
}

static void list_devices(const cls_device_info *devs, int n, cls_error *err) {
  cls_error_add(err, "; the devices are:");
  for (int i = 0; i < n; i++)
    cls_error_add(err, " %d:%d %s (%s)%s", devs[i].platform_index, devs[i].device_index, devs[i].name,
                  cls_device_kind_name(devs[i].kind), i + 1 < n ? "," : "");
}

static void add_unique(int *out, int cap, int *count, int index) {
  for (int i = 0; i < *count; i++)
    if (out[i] == index) return;
  if (*count < cap) out[(*count)++] = index;
}

static int compare_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Cuts a trailing ":split=N" off item; returns N, 1 without one, 0 when N is not an integer >= 2. */
static int split_suffix(char *item) {
  char *at = strstr(item, ":split=");
  if (!at) return 1;
  char *end = NULL;
  long parts = strtol(at + 7, &end, 10);
  *at = '\0';
  return end && *end == '\0' && end != at + 7 && parts >= 2 && parts <= CLS_MAX_DEVICES ? (int)parts : 0;
}

static double nominal_compute(const cls_device_info *d) { return (double)d->compute_units * (double)d->clock_mhz; }

bool cls_select_far_slower(const cls_device_info *devs, int n, int i, int *best) {
  int b = 0;
  for (int k = 1; k < n; k++)
    if (nominal_compute(&devs[k]) > nominal_compute(&devs[b])) b = k;
  if (best) *best = b;
  return n > 0 && nominal_compute(&devs[i]) * CLS_SELECT_FAR_SLOWER < nominal_compute(&devs[b]);
}

/* An empty selection: every GPU, else every CPU (*defaulted_to_cpu), else every device; of the GPUs and
   the CPUs, those not far slower than the best device (cls_select_far_slower). */
static cls_status select_default(const cls_device_info *devs, int n, int *out, int cap, int *count,
                                 bool *defaulted_to_cpu, cls_error *err) {
  for (int i = 0; i < n; i++)
    if (devs[i].kind == CLS_DEVICE_GPU && !cls_select_far_slower(devs, n, i, NULL)) add_unique(out, cap, count, i);
  if (*count == 0) {
    for (int i = 0; i < n; i++)
      if (devs[i].kind == CLS_DEVICE_CPU && !cls_select_far_slower(devs, n, i, NULL)) add_unique(out, cap, count, i);
    if (*count > 0 && defaulted_to_cpu) *defaulted_to_cpu = true;
  }
  if (*count == 0)
    for (int i = 0; i < n; i++) add_unique(out, cap, count, i);
  if (*count == 0) return cls_error_set(err, CLS_ERR_NO_DEVICE, "no OpenCL device to select");
  return CLS_OK;
}

/* One item of the selection `spec` (trimmed, not empty): adds the devices it matches, with its split. */
static cls_status select_item(const cls_device_info *devs, int n, const char *spec, char *item, int *out, int cap,
                              int *count, int *split, cls_error *err) {
  int parts = split_suffix(item);
  if (parts == 0) {
    cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                  "device selection \"%s\": a split is written DEVICES:split=N with N from 2 to %d", spec,
                  CLS_MAX_DEVICES);
    return CLS_ERR_INVALID_ARGUMENT;
  }
  bool matched = false;
  for (int i = 0; i < n; i++)
    if (cls_select_item_matches(&devs[i], item)) {
      add_unique(out, cap, count, i);
      if (split && parts > 1) split[i] = parts;
      matched = true;
    }
  if (!matched) {
    int p, d;
    if (parse_index_pair(item, &p, &d))
      cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "device selection \"%s\": there is no device %d:%d", spec, p, d);
    else if (kind_keyword(item) >= 0)
      cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "device selection \"%s\": there is no %s device", spec, item);
    else
      cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                    "device selection \"%s\": \"%s\" matches no device name, vendor or platform", spec, item);
    list_devices(devs, n, err);
    return CLS_ERR_INVALID_ARGUMENT;
  }
  return CLS_OK;
}

cls_status cls_select_parse(const cls_device_info *devs, int n, const char *spec, int *out, int cap, int *count,
                            bool *defaulted_to_cpu, int *split, cls_error *err) {
  *count = 0;
  for (int i = 0; split && i < n; i++) split[i] = 1;
  if (defaulted_to_cpu) *defaulted_to_cpu = false;
  if (cap < n) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "device selection: output has room for %d devices, %d exist",
                         cap, n);
  }
  bool blank = true;
  for (const char *s = spec; s && *s; s++)
    if (!isspace((unsigned char)*s)) blank = false;
  if (blank) return select_default(devs, n, out, cap, count, defaulted_to_cpu, err);

  size_t len = strlen(spec);
  char *copy = malloc(len + 1);
  if (!copy) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  memcpy(copy, spec, len + 1);
  cls_status status = CLS_OK;
  char *cursor = copy;
  for (;;) {
    char *comma = strchr(cursor, ',');
    if (comma) *comma = '\0';
    char *item = cursor;
    while (isspace((unsigned char)*item)) item++;
    char *end = item + strlen(item);
    while (end > item && isspace((unsigned char)end[-1])) *--end = '\0';
    if (*item == '\0') {
      cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                    "device selection \"%s\": empty item (items are separated by single commas)", spec);
      status = CLS_ERR_INVALID_ARGUMENT;
      break;
    }
    if ((status = select_item(devs, n, spec, item, out, cap, count, split, err)) != CLS_OK) break;
    if (!comma) break;
    cursor = comma + 1;
  }
  free(copy);
  if (status != CLS_OK) {
    *count = 0;
    return status;
  }
  qsort(out, (size_t)*count, sizeof *out, compare_int);
  return CLS_OK;
}

cls_status cls_engine_select(cls_engine *e, const char *spec, int *out, int cap, int *count) {
  if (!e || !out || !count) return CLS_ERR_INVALID_ARGUMENT;
  const char *source = "--devices";
  if (!spec || !*spec) {
    spec = e->options.default_devices;
    source = "CLSPEECH_DEVICES";
  }
  cls_device_info *infos = calloc((size_t)(e->n_devices ? e->n_devices : 1), sizeof *infos);
  if (!infos) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory selecting devices");
  for (int i = 0; i < e->n_devices; i++) infos[i] = e->devices[i].info;
  bool to_cpu = false;
  cls_error err;
  int n_before = e->n_devices;
  int *split = calloc((size_t)(n_before ? n_before : 1), sizeof *split);
  cls_status st = split ? cls_select_parse(infos, n_before, spec, out, cap, count, &to_cpu, split, &err)
                        : CLS_ERR_OUT_OF_MEMORY;
  if (st == CLS_ERR_OUT_OF_MEMORY && !split) cls_error_set(&err, st, "out of host memory");
  if (st != CLS_OK) {
    free(split);
    free(infos);
    return cls_fail(e, st, "%s: %s", spec && *spec ? source : "default selection", err.text);
  }
  /* Devices to split are replaced by their sub-devices (appended to the device table). */
  int kept = 0, extra[CLS_MAX_DEVICES], n_extra = 0;
  for (int k = 0; k < *count && st == CLS_OK; k++) {
    int i = out[k], parts = split[i];
    if (parts <= 1) {
      out[kept++] = i;
      continue;
    }
    int first = 0;
    st = cls_device_split(e, i, parts, &first);
    for (int s = 0; st == CLS_OK && s < parts && n_extra < CLS_MAX_DEVICES; s++) extra[n_extra++] = first + s;
  }
  free(split);
  if (st != CLS_OK) {
    free(infos);
    *count = 0;
    return st;
  }
  if (kept + n_extra > cap) {
    free(infos);
    *count = 0;
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "device selection: more than %d devices after splitting", cap);
  }
  for (int s = 0; s < n_extra; s++) out[kept++] = extra[s];
  *count = kept;
  bool slow_gpu = false;
  for (int i = 0; (!spec || !*spec) && i < n_before; i++) {
    int best = 0;
    if (!cls_select_far_slower(infos, n_before, i, &best)) continue;
    const cls_device_info *d = &infos[i], *b = &infos[best];
    slow_gpu |= d->kind == CLS_DEVICE_GPU;
    cls_log(e, CLS_LOG_NOTICE,
            "the default selection leaves out device %d:%d (%s): it reports %u compute unit%s at %u MHz against %u at "
            "%u MHz on device %d:%d (%s), so far slower that it would hold the others back; --devices all or "
            "--devices %d:%d takes it",
            d->platform_index, d->device_index, d->name, d->compute_units, d->compute_units == 1 ? "" : "s",
            d->clock_mhz, b->compute_units, b->clock_mhz, b->platform_index, b->device_index, b->name,
            d->platform_index, d->device_index);
  }
  if (to_cpu)
    cls_log(e, CLS_LOG_NOTICE, "%s; using %d CPU OpenCL device%s (choose with --devices or CLSPEECH_DEVICES)",
            slow_gpu ? "no GPU but a far slower one" : "no GPU found", *count, *count == 1 ? "" : "s");
  free(infos);
  return CLS_OK;
}
