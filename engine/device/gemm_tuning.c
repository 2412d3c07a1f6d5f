/* Stored GEMM tuning per device (see gemm_tuning.h): the file's path, format, checked reading, atomic
 * writing, applying its CLBlast parameters through CLBlastOverrideParameters and keeping its backend per
 * shape class on the device (for cls_gemm_backend_of). Prints nothing.
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
#include "device/log.h"

#define MAGIC "clspeech-gemm-tuning 1"
#define DEVICE_FMT "device %d:%d (%s)"
#define DEVICE_ARGS(d) (d)->info.platform_index, (d)->info.device_index, (d)->info.name

static const char *const class_names[CLS_GEMM_N_CLASSES] = {"big", "thin", "packed"};
static const char *const backend_names[3] = {NULL, "own", "clblast"}; /* by cls_gemm_backend's values */

const char *cls_gemm_class_name(cls_gemm_class c) {
  return c >= 0 && c < CLS_GEMM_N_CLASSES ? class_names[c] : "?";
}

cls_gemm_class cls_gemm_class_of(size_t m, size_t n, size_t k, bool packed) {
  if (packed) return CLS_GEMM_CLASS_PACKED;
  return m < CLS_GEMM_THIN_BELOW || n < CLS_GEMM_THIN_BELOW || k < CLS_GEMM_THIN_BELOW ? CLS_GEMM_CLASS_THIN
                                                                                        : CLS_GEMM_CLASS_BIG;
}

static bool backend_valid(int b) { return b == 1 || b == 2; }

/* " big=own packed=clblast" for the classes measured ("" when none). */
static void format_backends(const cls_gemm_tuning *t, char *out, size_t cap) {
  size_t used = 0;
  if (cap) out[0] = '\0';
  for (int c = 0; c < CLS_GEMM_N_CLASSES && used < cap; c++) {
    if (!backend_valid(t->backend[c])) continue;
    int w = snprintf(out + used, cap - used, " %s=%s", class_names[c], backend_names[t->backend[c]]);
    if (w < 0) break;
    used += (size_t)w;
  }
}

void cls_gemm_params_format(const cls_gemm_params *p, char *out, size_t cap) {
  size_t used = 0;
  if (cap) out[0] = '\0';
  for (int i = 0; i < p->n && used < cap; i++) {
    int w = snprintf(out + used, cap - used, "%s%s=%zu", i ? " " : "", p->names[i], p->values[i]);
    if (w < 0) break;
    used += (size_t)w;
  }
}

void cls_gemm_tuning_format(const cls_gemm_tuning *t, char *out, size_t cap) {
  if (t->n == 0) {
    snprintf(out, cap, "CLBlast defaults");
    return;
  }
  size_t used = 0;
  out[0] = '\0';
  for (int k = 0; k < t->n && used < cap; k++) {
    char params[512];
    cls_gemm_params_format(&t->kernels[k], params, sizeof params);
    int w = snprintf(out + used, cap - used, "%s%s %s", k ? "; " : "", t->kernels[k].kernel, params);
    if (w < 0) break;
    used += (size_t)w;
  }
}

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

/* A device string on one line (newlines and carriage returns become spaces). */
static void one_line(const char *in, char *out, size_t cap) {
  snprintf(out, cap, "%s", in);
  for (char *c = out; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
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

/* The header lines that tie a file to its device (the same text is written and compared). */
static void header(const cls_device_info *d, const char *shapes, char *out, size_t cap) {
  char name[300], vendor[160], driver[160], pname[160], pver[160], sh[160];
  one_line(d->name, name, sizeof name);
  one_line(d->vendor, vendor, sizeof vendor);
  one_line(d->driver_version, driver, sizeof driver);
  one_line(d->platform_name, pname, sizeof pname);
  one_line(d->platform_version, pver, sizeof pver);
  one_line(shapes, sh, sizeof sh);
  snprintf(out, cap, MAGIC "\ndevice %s\nvendor %s\ndriver %s\nplatform %s | %s\nshapes %s\n", name, vendor, driver,
           pname, pver, sh);
}

cls_status cls_gemm_tuning_store(cls_engine *e, int device, const cls_gemm_tuning *t, char *path, size_t path_cap) {
  cls_status st = cls_gemm_tuning_path(e, device, path, path_cap);
  if (st != CLS_OK) return st;
  char text[8192];
  header(&e->devices[device].info, t->shapes, text, sizeof text);
  size_t used = strlen(text);
  for (int k = 0; k < t->n && used < sizeof text; k++) {
    char params[1024];
    cls_gemm_params_format(&t->kernels[k], params, sizeof params);
    int w = snprintf(text + used, sizeof text - used, "kernel %s %s\n", t->kernels[k].kernel, params);
    if (w > 0) used += (size_t)w;
  }
  for (int c = 0; c < CLS_GEMM_N_CLASSES && used < sizeof text; c++) {
    if (!backend_valid(t->backend[c])) continue;
    int w = snprintf(text + used, sizeof text - used, "backend %s %s\n", class_names[c], backend_names[t->backend[c]]);
    if (w > 0) used += (size_t)w;
  }
  if (used + 80 >= sizeof text) return cls_fail(e, CLS_ERR_IO, "GEMM tuning: the file would be too long");
  cls_sha256 h;
  uint8_t digest[32];
  char hex[65];
  cls_sha256_init(&h);
  cls_sha256_update(&h, text, used);
  cls_sha256_final(&h, digest);
  cls_sha256_hex(digest, hex);
  snprintf(text + used, sizeof text - used, "sha256 %s\n", hex);
  char dir[1200];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  if (cls_make_dirs(dir) != CLS_OK) return cls_fail(e, CLS_ERR_IO, "GEMM tuning: cannot create folder %s: %s", dir, strerror(errno));
  const void *chunks[1] = {text};
  size_t sizes[1] = {strlen(text)};
  char err[1400];
  if (cls_write_atomic(path, chunks, sizes, 1, err, sizeof err) != CLS_OK)
    return cls_fail(e, CLS_ERR_IO, "GEMM tuning: %s", err);
  return CLS_OK;
}

/* Parses "kernel NAME A=1 B=2 ..." (line without the newline). */
static bool parse_kernel(const char *line, cls_gemm_params *p, char *why, size_t why_cap) {
  memset(p, 0, sizeof *p);
  const char *s = line + strlen("kernel ");
  size_t len = strcspn(s, " ");
  if (len == 0 || len >= sizeof p->kernel) {
    snprintf(why, why_cap, "a kernel line without a kernel name");
    return false;
  }
  memcpy(p->kernel, s, len);
  if (strcmp(p->kernel, "Xgemm") && strcmp(p->kernel, "XgemmDirect") && strcmp(p->kernel, "GemmRoutine")) {
    snprintf(why, why_cap, "unknown kernel \"%s\"", p->kernel);
    return false;
  }
  s += len;
  while (*s == ' ') s++;
  while (*s) {
    size_t item = strcspn(s, " ");
    const char *eq = memchr(s, '=', item);
    if (!eq || eq == s || (size_t)(eq - s) >= sizeof p->names[0] || p->n == CLS_GEMM_MAX_PARAMS) {
      snprintf(why, why_cap, "%s: malformed parameter \"%.*s\"", p->kernel, (int)item, s);
      return false;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(eq + 1, &end, 10);
    if (end == eq + 1 || end != s + item || errno || v > (1ull << 40)) {
      snprintf(why, why_cap, "%s: parameter \"%.*s\" has no valid value", p->kernel, (int)item, s);
      return false;
    }
    memcpy(p->names[p->n], s, (size_t)(eq - s));
    p->names[p->n][eq - s] = '\0';
    p->values[p->n++] = (size_t)v;
    s += item;
    while (*s == ' ') s++;
  }
  if (p->n == 0) {
    snprintf(why, why_cap, "%s: no parameters", p->kernel);
    return false;
  }
  return true;
}

/* Parses "backend CLASS NAME" (line without the newline) into t->backend; a class named twice is an error. */
static bool parse_backend(const char *line, cls_gemm_tuning *t, char *why, size_t why_cap) {
  char cls[16], name[16], extra[2];
  if (sscanf(line, "backend %15s %15s %1s", cls, name, extra) != 2) {
    snprintf(why, why_cap, "malformed backend line \"%.60s\"", line);
    return false;
  }
  int c = -1, b = 0;
  for (int i = 0; i < CLS_GEMM_N_CLASSES; i++)
    if (!strcmp(cls, class_names[i])) c = i;
  for (int i = 1; i < 3; i++)
    if (!strcmp(name, backend_names[i])) b = i;
  if (c < 0 || !b) {
    snprintf(why, why_cap,
             "backend line \"%.60s\": the class must be big, thin or packed and the backend own or clblast", line);
    return false;
  }
  if (t->backend[c]) {
    snprintf(why, why_cap, "the backend of class %s is given twice", cls);
    return false;
  }
  t->backend[c] = b;
  return true;
}

cls_tuning_read cls_gemm_tuning_read(cls_engine *e, int device, cls_gemm_tuning *out, char *path, size_t path_cap,
                                     char *why, size_t why_cap) {
  memset(out, 0, sizeof *out);
  if (why_cap) why[0] = '\0';
  char local[1200];
  if (!path) {
    path = local;
    path_cap = sizeof local;
  }
  char saved[CLS_ERROR_CAP];
  memcpy(saved, e->error, sizeof saved);
  cls_status st = cls_gemm_tuning_path(e, device, path, path_cap);
  memcpy(e->error, saved, sizeof saved);
  if (st != CLS_OK) return CLS_TUNING_NONE;
  char *text = NULL, err[1400];
  size_t len = 0;
  FILE *probe = fopen(path, "rb");
  if (!probe) return CLS_TUNING_NONE;
  fclose(probe);
  if (cls_read_file(path, &text, &len, err, sizeof err) != CLS_OK) {
    snprintf(why, why_cap, "%s", err);
    return CLS_TUNING_BAD;
  }
  cls_tuning_read result = CLS_TUNING_BAD;
  char *buf = malloc(len + 1);
  if (!buf) goto done;
  memcpy(buf, text, len);
  buf[len] = '\0';
  /* the checksum line: the last line, over every byte before it */
  char *sum = len > 1 ? buf + len - 1 : buf; /* the final newline */
  while (sum > buf && sum[-1] != '\n') sum--;
  if (strlen(buf) != len || strncmp(sum, "sha256 ", 7) != 0 || strlen(sum) != 7 + 64 + 1) {
    snprintf(why, why_cap, "no checksum line at the end (truncated or not a tuning file)");
    goto done;
  }
  cls_sha256 h;
  uint8_t digest[32];
  char hex[65];
  cls_sha256_init(&h);
  cls_sha256_update(&h, buf, (size_t)(sum - buf));
  cls_sha256_final(&h, digest);
  cls_sha256_hex(digest, hex);
  if (memcmp(hex, sum + 7, 64) != 0) {
    snprintf(why, why_cap, "checksum mismatch (the file was changed or damaged)");
    goto done;
  }
  *sum = '\0';
  /* the header must be this device's, byte for byte (the shapes line aside) */
  char *shapes = strstr(buf, "\nshapes ");
  char *shapes_end = shapes ? strchr(shapes + 1, '\n') : NULL;
  if (!shapes || !shapes_end) {
    snprintf(why, why_cap, "no shapes line");
    goto done;
  }
  snprintf(out->shapes, sizeof out->shapes, "%.*s", (int)(shapes_end - shapes - 8), shapes + 8);
  char expect[4096];
  header(&e->devices[device].info, out->shapes, expect, sizeof expect);
  size_t head_len = (size_t)(shapes_end + 1 - buf);
  if (head_len != strlen(expect) || memcmp(buf, expect, head_len) != 0) {
    snprintf(why, why_cap, "written for another device, driver or format");
    goto done;
  }
  for (char *line = shapes_end + 1; *line;) {
    char *nl = strchr(line, '\n');
    if (!nl) break;
    *nl = '\0';
    if (!strncmp(line, "backend ", 8)) {
      if (!parse_backend(line, out, why, why_cap)) goto done;
      line = nl + 1;
      continue;
    }
    if (strncmp(line, "kernel ", 7) != 0 || out->n == 3) {
      snprintf(why, why_cap, "unexpected line \"%.60s\"", line);
      goto done;
    }
    if (!parse_kernel(line, &out->kernels[out->n], why, why_cap)) goto done;
    out->n++;
    line = nl + 1;
  }
  result = CLS_TUNING_OK;
done:
  if (result != CLS_TUNING_OK) memset(out, 0, sizeof *out);
  free(buf);
  free(text);
  return result;
}

void cls_gemm_tuning_load(cls_engine *e, int device, bool *applied) {
  if (applied) *applied = false;
  if (!e || device < 0 || device >= e->n_devices || !e->options.gemm_tuning) return;
  cls_device *d = &e->devices[device];
  cls_gemm_tuning t;
  char path[1200], why[512];
  cls_tuning_read r = cls_gemm_tuning_read(e, device, &t, path, sizeof path, why, sizeof why);
  if (r == CLS_TUNING_NONE) return;
  if (r == CLS_TUNING_BAD) {
    cls_log(e, CLS_LOG_WARNING, DEVICE_FMT ": GEMM tuning file %s ignored: %s (run `clspeech bench --tune` to redo it)",
            DEVICE_ARGS(d), path, why);
    return;
  }
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) d->gemm_backend[c] = t.backend[c];
  char saved[CLS_ERROR_CAP];
  memcpy(saved, e->error, sizeof saved);
  int ok = 0;
  for (int k = 0; k < t.n; k++) {
    if (cls_gemm_params_apply(e, device, &t.kernels[k]) == CLS_OK) {
      ok++;
    } else {
      cls_log(e, CLS_LOG_WARNING, "%s; that part of GEMM tuning file %s is ignored", e->error, path);
    }
  }
  memcpy(e->error, saved, sizeof saved);
  char text[1024];
  cls_gemm_tuning_format(&t, text, sizeof text);
  cls_log(e, CLS_LOG_NOTICE, DEVICE_FMT ": GEMM tuning loaded from %s (tuned at %s): %s", DEVICE_ARGS(d), path,
          t.shapes, text);
  char backends[128];
  format_backends(&t, backends, sizeof backends);
  if (backends[0])
    cls_log(e, CLS_LOG_NOTICE, DEVICE_FMT ": GEMM backend by shape class, measured (%s):%s", DEVICE_ARGS(d), path,
            backends);
  if (applied) *applied = ok > 0;
}
