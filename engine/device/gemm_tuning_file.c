/* The GEMM tuning file's text (see gemm_tuning.h): its header, parsing and checksum check, the GEMM shape
 * classes and the backend lines that store the faster backend per class, the own kernels' line (their
 * measured build options, each a tunable in its range), and the
 * check of stored parameters against the constraints CLBlast's Xgemm and XgemmDirect kernels need
 * (a file with a valid checksum may still hold values that would make them divide by zero or
 * compute garbage). Pure functions of the bytes and the device record: no OpenCL, no CLBlast, so
 * the fuzz target (tests/fuzz/fuzz_tuning.c) runs them alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "device/gemm_tuning.h"
#include "own_tunables.h" /* kernels/: the tunables and their ranges */

#define MAGIC "clspeech-gemm-tuning 1"

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

/* Every stored class's backend, each as `format` of its class and backend names, one after another. */
static void format_each_backend(const cls_gemm_tuning *t, const char *format, char *out, size_t cap) {
  size_t used = 0;
  if (cap) out[0] = '\0';
  for (int c = 0; c < CLS_GEMM_N_CLASSES && used < cap; c++) {
    if (!backend_valid(t->backend[c])) continue;
    int w = snprintf(out + used, cap - used, format, class_names[c], backend_names[t->backend[c]]);
    if (w < 0) break;
    used += (size_t)w;
  }
}

void cls_gemm_tuning_format_backends(const cls_gemm_tuning *t, char *out, size_t cap) {
  format_each_backend(t, " %s=%s", out, cap);
}

void cls_gemm_tuning_backend_lines(const cls_gemm_tuning *t, char *out, size_t cap) {
  format_each_backend(t, "backend %s %s\n", out, cap);
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

/* A device string on one line (newlines and carriage returns become spaces). */
static void one_line(const char *in, char *out, size_t cap) {
  snprintf(out, cap, "%s", in);
  for (char *c = out; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
}

/* The header lines that tie a file to its device (the same text is written and compared). */
void cls_gemm_tuning_header(const cls_device_info *d, const char *shapes, char *out, size_t cap) {
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

size_t cls_gemm_tuning_seal(char *text, size_t len, size_t cap) {
  if (len + 7 + 64 + 2 > cap) return 0;
  cls_sha256 h;
  uint8_t digest[32];
  char hex[65];
  cls_sha256_init(&h);
  cls_sha256_update(&h, text, len);
  cls_sha256_final(&h, digest);
  cls_sha256_hex(digest, hex);
  return len + (size_t)snprintf(text + len, cap - len, "sha256 %s\n", hex);
}

/* Parses "kernel NAME A=1 B=2 ..." (line without the newline). */
static bool parse_kernel(const char *line, cls_gemm_params *p, cls_error *why) {
  memset(p, 0, sizeof *p);
  const char *s = line + strlen("kernel ");
  size_t len = strcspn(s, " ");
  if (len == 0 || len >= sizeof p->kernel) {
    cls_error_set(why, CLS_ERR_IO, "a kernel line without a kernel name");
    return false;
  }
  memcpy(p->kernel, s, len);
  if (strcmp(p->kernel, "Xgemm") && strcmp(p->kernel, "XgemmDirect") && strcmp(p->kernel, "GemmRoutine")) {
    cls_error_set(why, CLS_ERR_IO, "unknown kernel \"%s\"", p->kernel);
    return false;
  }
  s += len;
  while (*s == ' ') s++;
  while (*s) {
    size_t item = strcspn(s, " ");
    const char *eq = memchr(s, '=', item);
    if (!eq || eq == s || (size_t)(eq - s) >= sizeof p->names[0] || p->n == CLS_GEMM_MAX_PARAMS) {
      cls_error_set(why, CLS_ERR_IO, "%s: malformed parameter \"%.*s\"", p->kernel, (int)item, s);
      return false;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(eq + 1, &end, 10);
    if (end == eq + 1 || end != s + item || errno || v > (1ull << 40)) {
      cls_error_set(why, CLS_ERR_IO, "%s: parameter \"%.*s\" has no valid value", p->kernel, (int)item, s);
      return false;
    }
    memcpy(p->names[p->n], s, (size_t)(eq - s));
    p->names[p->n][eq - s] = '\0';
    p->values[p->n++] = (size_t)v;
    s += item;
    while (*s == ' ') s++;
  }
  if (p->n == 0) {
    cls_error_set(why, CLS_ERR_IO, "%s: no parameters", p->kernel);
    return false;
  }
  return true;
}

/* Parses "backend CLASS NAME" (line without the newline) into t->backend; a class named twice is an error. */
static bool parse_backend(const char *line, cls_gemm_tuning *t, cls_error *why) {
  char cls[16], name[16], extra[2];
  if (sscanf(line, "backend %15s %15s %1s", cls, name, extra) != 2) {
    cls_error_set(why, CLS_ERR_IO, "malformed backend line \"%.60s\"", line);
    return false;
  }
  int c = -1, b = 0;
  for (int i = 0; i < CLS_GEMM_N_CLASSES; i++)
    if (!strcmp(cls, class_names[i])) c = i;
  for (int i = 1; i < 3; i++)
    if (!strcmp(name, backend_names[i])) b = i;
  if (c < 0 || !b) {
    cls_error_set(why, CLS_ERR_IO,
             "backend line \"%.60s\": the class must be big, thin or packed and the backend own or clblast", line);
    return false;
  }
  if (t->backend[c]) {
    cls_error_set(why, CLS_ERR_IO, "the backend of class %s is given twice", cls);
    return false;
  }
  t->backend[c] = b;
  return true;
}

/* The own kernels' tunables a file may set, with their ranges (the kernels' own #error checks; the
 * search in engine/bench/own_search.c chooses among them): nothing else reaches a build from a file. */
/* every tunable of kernels/own_tunables.h, with its range */
#define OWN_TUNABLE(macro) {#macro, macro##_MIN, macro##_MAX},
static const struct {
  const char *name;
  int lo, hi;
} own_tunables[] = {CLS_OWN_TUNABLES(OWN_TUNABLE)};
#undef OWN_TUNABLE

bool cls_gemm_own_tunable(const char *macro, int value) {
  for (size_t i = 0; i < sizeof own_tunables / sizeof *own_tunables; i++)
    if (!strcmp(macro, own_tunables[i].name)) return value >= own_tunables[i].lo && value <= own_tunables[i].hi;
  return false;
}

/* A value as the kernels' preprocessor reads it the same: 0, or 1 to 6 decimal digits without a leading zero
 * (no sign, no octal, no wrap-around). */
static bool plain_int(const char *s, size_t n, int *out) {
  if (n < 1 || n > 6 || strspn(s, "0123456789") < n || (n > 1 && s[0] == '0')) return false;
  int v = 0;
  for (size_t i = 0; i < n; i++) v = v * 10 + (s[i] - '0');
  *out = v;
  return true;
}

bool cls_gemm_own_options_check(const char *options, cls_error *why) {
  cls_error_clear(why);
  if (strlen(options) >= CLS_GEMM_OWN_CAP) {
    cls_error_set(why, CLS_ERR_INVALID_ARGUMENT, "own kernels' options longer than %d bytes", CLS_GEMM_OWN_CAP - 1);
    return false;
  }
  for (const char *s = options; *s;) {
    while (*s == ' ') s++;
    if (!*s) break;
    size_t item = strcspn(s, " ");
    char name[40];
    int value = 0;
    static const char prefix[] = "-D";
    const char *eq = memchr(s, '=', item);
    bool ok = item > sizeof prefix && !strncmp(s, prefix, sizeof prefix - 1) && eq && eq > s + 2 &&
              (size_t)(eq - s) - (sizeof prefix - 1) < sizeof name;
    if (ok) {
      memcpy(name, s + sizeof prefix - 1, (size_t)(eq - s) - (sizeof prefix - 1));
      name[(eq - s) - (sizeof prefix - 1)] = '\0';
      ok = plain_int(eq + 1, (size_t)(s + item - (eq + 1)), &value) && cls_gemm_own_tunable(name, value);
    }
    if (!ok) {
      cls_error_set(why, CLS_ERR_INVALID_ARGUMENT, "\"%.*s\" is not one of the own kernels' tunables in its range",
                    (int)item, s);
      return false;
    }
    s += item;
  }
  return true;
}

/* Parses "own HEX16 OPTIONS" (line without the newline). */
static bool parse_own(const char *line, cls_gemm_tuning *t, cls_error *why) {
  const char *hex = line + 4;
  size_t n = strspn(hex, "0123456789abcdef");
  if (t->own[0] || n != 16 || (hex[16] != ' ' && hex[16] != '\0')) {
    cls_error_set(why, CLS_ERR_IO, "malformed own line \"%.60s\"", line);
    return false;
  }
  const char *options = hex[16] ? hex + 17 : "";
  cls_error bad;
  if (!options[0] || !cls_gemm_own_options_check(options, &bad)) {
    cls_error_set(why, CLS_ERR_IO, "own line: %s", options[0] ? bad.text : "no options");
    return false;
  }
  memcpy(t->own_kernels, hex, 16);
  t->own_kernels[16] = '\0';
  snprintf(t->own, sizeof t->own, "%s", options);
  return true;
}

bool cls_gemm_tuning_parse(const char *text, size_t len, const cls_device_info *d, cls_gemm_tuning *out,
                           cls_error *why) {
  memset(out, 0, sizeof *out);
  cls_error_clear(why);
  bool ok = false;
  char *buf = malloc(len + 1);
  if (!buf) {
    cls_error_set(why, CLS_ERR_OUT_OF_MEMORY, "out of memory");
    return false;
  }
  memcpy(buf, text, len);
  buf[len] = '\0';
  /* the checksum line: the last line, over every byte before it */
  char *sum = len > 1 ? buf + len - 1 : buf; /* the final newline */
  while (sum > buf && sum[-1] != '\n') sum--;
  if (strlen(buf) != len || strncmp(sum, "sha256 ", 7) != 0 || strlen(sum) != 7 + 64 + 1) {
    cls_error_set(why, CLS_ERR_IO, "no checksum line at the end (truncated or not a tuning file)");
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
    cls_error_set(why, CLS_ERR_IO, "checksum mismatch (the file was changed or damaged)");
    goto done;
  }
  *sum = '\0';
  /* the header must be this device's, byte for byte (the shapes line aside) */
  char *shapes = strstr(buf, "\nshapes ");
  char *shapes_end = shapes ? strchr(shapes + 1, '\n') : NULL;
  if (!shapes || !shapes_end) {
    cls_error_set(why, CLS_ERR_IO, "no shapes line");
    goto done;
  }
  snprintf(out->shapes, sizeof out->shapes, "%.*s", (int)(shapes_end - shapes - 8), shapes + 8);
  char expect[4096];
  cls_gemm_tuning_header(d, out->shapes, expect, sizeof expect);
  size_t head_len = (size_t)(shapes_end + 1 - buf);
  if (head_len != strlen(expect) || memcmp(buf, expect, head_len) != 0) {
    cls_error_set(why, CLS_ERR_IO, "written for another device, driver or format");
    goto done;
  }
  for (char *line = shapes_end + 1; *line;) {
    char *nl = strchr(line, '\n');
    if (!nl) break;
    *nl = '\0';
    if (!strncmp(line, "backend ", 8) || !strncmp(line, "own ", 4)) {
      if (!(line[0] == 'b' ? parse_backend(line, out, why) : parse_own(line, out, why))) goto done;
      line = nl + 1;
      continue;
    }
    if (strncmp(line, "kernel ", 7) != 0 || out->n == 3) {
      cls_error_set(why, CLS_ERR_IO, "unexpected line \"%.60s\"", line);
      goto done;
    }
    if (!parse_kernel(line, &out->kernels[out->n], why)) goto done;
    out->n++;
    line = nl + 1;
  }
  ok = true;
done:
  if (!ok) memset(out, 0, sizeof *out);
  free(buf);
  return ok;
}

/* ---- the kernels' constraints ---- */

/* The value of `name`, or -1 when the set lacks it. */
static long long value_of(const cls_gemm_params *p, const char *name) {
  for (int i = 0; i < p->n; i++)
    if (!strcmp(p->names[i], name)) return (long long)p->values[i];
  return -1;
}

typedef enum value_kind { FLAG, WIDTH, SIZE } value_kind; /* 0 or 1; 1, 2, 4, 8 or 16; 1 .. 1024 */

static bool value_ok(value_kind k, long long v) {
  switch (k) {
    case FLAG: return v == 0 || v == 1;
    case WIDTH: return v == 1 || v == 2 || v == 4 || v == 8 || v == 16;
    case SIZE: return v >= 1 && v <= 1024;
  }
  return false;
}

static const char *kind_text(value_kind k) {
  return k == FLAG ? "0 or 1" : k == WIDTH ? "1, 2, 4, 8 or 16" : "1..1024";
}

typedef struct param_rule {
  const char *name;
  value_kind kind;
} param_rule;

static const param_rule xgemm_rules[] = {{"GEMMK", FLAG}, {"KREG", SIZE},  {"KWG", SIZE},   {"KWI", SIZE},
                                         {"MDIMA", SIZE}, {"MDIMC", SIZE}, {"MWG", SIZE},   {"NDIMB", SIZE},
                                         {"NDIMC", SIZE}, {"NWG", SIZE},   {"SA", FLAG},    {"SB", FLAG},
                                         {"STRM", FLAG},  {"STRN", FLAG},  {"VWM", WIDTH},  {"VWN", WIDTH}};
static const param_rule direct_rules[] = {{"KWID", SIZE},   {"MDIMAD", SIZE}, {"MDIMCD", SIZE}, {"NDIMBD", SIZE},
                                          {"NDIMCD", SIZE}, {"PADA", FLAG},   {"PADB", FLAG},   {"VWMD", WIDTH},
                                          {"VWND", WIDTH},  {"WGD", SIZE}};

/* "a is a multiple of b" when both are known (b >= 1 after the value rules). */
static bool multiple(long long a, long long b) { return a < 0 || b <= 0 || a % b == 0; }

#define NEED(cond, ...)                                      \
  do {                                                       \
    if (!(cond)) {                                           \
      cls_error_set(why, CLS_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
      return false;                                          \
    }                                                        \
  } while (0)

/* Xgemm's constraints between its values, and against the device's work-group size and local memory
 * (0: not known, not checked). */
static bool xgemm_ok(const cls_gemm_params *p, uint64_t local, size_t max_wg, cls_error *why) {
  const long long gemmk = value_of(p, "GEMMK"), kreg = value_of(p, "KREG"), kwg = value_of(p, "KWG"),
                  kwi = value_of(p, "KWI"), mdima = value_of(p, "MDIMA"), mdimc = value_of(p, "MDIMC"),
                  mwg = value_of(p, "MWG"), ndimb = value_of(p, "NDIMB"), ndimc = value_of(p, "NDIMC"),
                  nwg = value_of(p, "NWG"), sa = value_of(p, "SA"), sb = value_of(p, "SB"),
                  vwm = value_of(p, "VWM"), vwn = value_of(p, "VWN");
  NEED(multiple(kwg, kwi), "KWG=%lld is not a multiple of KWI=%lld", kwg, kwi);
  if (vwm > 0) {
    NEED(mdimc < 0 || multiple(mwg, mdimc * vwm), "MWG=%lld is not a multiple of MDIMC*VWM=%lld", mwg, mdimc * vwm);
    NEED(mdima < 0 || multiple(mwg, mdima * vwm), "MWG=%lld is not a multiple of MDIMA*VWM=%lld", mwg, mdima * vwm);
  }
  if (vwn > 0) {
    NEED(ndimc < 0 || multiple(nwg, ndimc * vwn), "NWG=%lld is not a multiple of NDIMC*VWN=%lld", nwg, ndimc * vwn);
    NEED(ndimb < 0 || multiple(nwg, ndimb * vwn), "NWG=%lld is not a multiple of NDIMB*VWN=%lld", nwg, ndimb * vwn);
  }
  if (mdimc > 0 && ndimc > 0) {
    const long long threads = mdimc * ndimc;
    NEED(max_wg == 0 || (size_t)threads <= max_wg, "MDIMC*NDIMC=%lld exceeds the device's work-group size %zu",
         threads, max_wg);
    if (gemmk == 1) {
      NEED(mdima < 0 || mdima == mdimc, "GEMMK=1 needs MDIMA=%lld equal to MDIMC=%lld", mdima, mdimc);
      NEED(ndimb < 0 || ndimb == ndimc, "GEMMK=1 needs NDIMB=%lld equal to NDIMC=%lld", ndimb, ndimc);
    } else {
      NEED(multiple(threads, mdima) && multiple(threads, ndimb),
           "MDIMC*NDIMC=%lld is not a multiple of MDIMA=%lld and NDIMB=%lld", threads, mdima, ndimb);
      NEED(mdima < 0 || multiple(kwg, threads / mdima), "KWG=%lld is not a multiple of MDIMC*NDIMC/MDIMA=%lld", kwg,
           mdima > 0 ? threads / mdima : 0);
      NEED(ndimb < 0 || multiple(kwg, threads / ndimb), "KWG=%lld is not a multiple of MDIMC*NDIMC/NDIMB=%lld", kwg,
           ndimb > 0 ? threads / ndimb : 0);
    }
  }
  if (gemmk == 1) NEED(multiple(kreg, vwn), "GEMMK=1 needs KREG=%lld a multiple of VWN=%lld", kreg, vwn);
  if (kwg > 0 && mwg > 0 && nwg > 0) {
    const uint64_t bytes = 4u * (uint64_t)((sa > 0 ? kwg * mwg : 0) + (sb > 0 ? kwg * nwg : 0));
    NEED(local == 0 || bytes <= local, "SA/SB need %llu bytes of local memory; the device has %llu",
         (unsigned long long)bytes, (unsigned long long)local);
  }
  return true;
}

/* XgemmDirect's constraints, as xgemm_ok. */
static bool direct_ok(const cls_gemm_params *p, uint64_t local, size_t max_wg, cls_error *why) {
  const long long kwid = value_of(p, "KWID"), mdimad = value_of(p, "MDIMAD"), mdimcd = value_of(p, "MDIMCD"),
                  ndimbd = value_of(p, "NDIMBD"), ndimcd = value_of(p, "NDIMCD"), pada = value_of(p, "PADA"),
                  padb = value_of(p, "PADB"), vwmd = value_of(p, "VWMD"), vwnd = value_of(p, "VWND"),
                  wgd = value_of(p, "WGD");
  NEED(multiple(wgd, kwid), "WGD=%lld is not a multiple of KWID=%lld", wgd, kwid);
  if (vwmd > 0) {
    NEED(mdimcd < 0 || multiple(wgd, mdimcd * vwmd), "WGD=%lld is not a multiple of MDIMCD*VWMD", wgd);
    NEED(mdimad < 0 || multiple(wgd, mdimad * vwmd), "WGD=%lld is not a multiple of MDIMAD*VWMD", wgd);
  }
  if (vwnd > 0) {
    NEED(ndimcd < 0 || multiple(wgd, ndimcd * vwnd), "WGD=%lld is not a multiple of NDIMCD*VWND", wgd);
    NEED(ndimbd < 0 || multiple(wgd, ndimbd * vwnd), "WGD=%lld is not a multiple of NDIMBD*VWND", wgd);
  }
  if (mdimcd > 0 && ndimcd > 0) {
    const long long threads = mdimcd * ndimcd;
    NEED(max_wg == 0 || (size_t)threads <= max_wg, "MDIMCD*NDIMCD=%lld exceeds the device's work-group size %zu",
         threads, max_wg);
    NEED(multiple(threads, mdimad) && multiple(threads, ndimbd),
         "MDIMCD*NDIMCD=%lld is not a multiple of MDIMAD=%lld and NDIMBD=%lld", threads, mdimad, ndimbd);
    NEED(mdimad < 0 || multiple(wgd, threads / mdimad), "WGD=%lld is not a multiple of MDIMCD*NDIMCD/MDIMAD", wgd);
    NEED(ndimbd < 0 || multiple(wgd, threads / ndimbd), "WGD=%lld is not a multiple of MDIMCD*NDIMCD/NDIMBD", wgd);
  }
  if (wgd > 0) {
    const uint64_t bytes = 4u * (uint64_t)(wgd * (wgd + (pada > 0 ? pada : 0)) + wgd * (wgd + (padb > 0 ? padb : 0)));
    NEED(local == 0 || bytes <= local, "WGD=%lld needs %llu bytes of local memory; the device has %llu", wgd,
         (unsigned long long)bytes, (unsigned long long)local);
  }
  return true;
}

bool cls_gemm_params_check(const cls_gemm_params *p, const cls_device_info *d, cls_error *why) {
  cls_error_clear(why);
  const bool xgemm = !strcmp(p->kernel, "Xgemm"), direct = !strcmp(p->kernel, "XgemmDirect");
  if (!xgemm && !direct) {
    for (int i = 0; i < p->n; i++)
      NEED(p->values[i] <= ((size_t)1 << 31), "%s=%zu is out of range", p->names[i], p->values[i]);
    return true;
  }
  /* Each known value in its range (a name CLBlast does not know is left to CLBlast, which refuses it). */
  const param_rule *rules = xgemm ? xgemm_rules : direct_rules;
  const size_t n_rules = xgemm ? sizeof xgemm_rules / sizeof *xgemm_rules : sizeof direct_rules / sizeof *direct_rules;
  for (size_t r = 0; r < n_rules; r++) {
    long long v = value_of(p, rules[r].name);
    NEED(v < 0 || value_ok(rules[r].kind, v), "%s=%lld must be %s", rules[r].name, v, kind_text(rules[r].kind));
  }
  const uint64_t local = d ? d->local_mem_bytes : 0;
  const size_t max_wg = d ? d->max_work_group_size : 0;
  return xgemm ? xgemm_ok(p, local, max_wg, why) : direct_ok(p, local, max_wg, why);
}
