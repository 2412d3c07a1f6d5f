/* Device selection strings over synthetic device lists (no OpenCL needed): keywords, P:D indices,
 * name substrings, lists, the default (GPUs, else CPUs with a notice), and the error messages of
 * bad selections. */
#include <stdlib.h>

#include "check.h"
#include "device/device_select.h"

static cls_device_info make(int p, int d, cls_device_kind kind, const char *name, const char *vendor,
                            const char *platform) {
  cls_device_info info;
  memset(&info, 0, sizeof info);
  info.platform_index = p;
  info.device_index = d;
  info.kind = kind;
  snprintf(info.name, sizeof info.name, "%s", name);
  snprintf(info.vendor, sizeof info.vendor, "%s", vendor);
  snprintf(info.platform_name, sizeof info.platform_name, "%s", platform);
  return info;
}

/* Selects and renders the chosen indices as "0,2" (or "ERR" plus the status and message in err). */
static const char *pick(const cls_device_info *devs, int n, const char *spec, cls_error *err, bool *to_cpu) {
  static char out_text[128];
  int out[16], count = -1;
  cls_status st = cls_select_parse(devs, n, spec, out, 16, &count, to_cpu, NULL, err);
  if (st != CLS_OK) return "ERR";
  out_text[0] = '\0';
  for (int i = 0; i < count; i++)
    snprintf(out_text + strlen(out_text), sizeof out_text - strlen(out_text), "%s%d", i ? "," : "", out[i]);
  return out_text;
}

#define EXPECT_PICK(devs, n, spec, expected)                                              \
  do {                                                                                    \
    static cls_error err_;                                                                \
    cls_error_clear(&err_);                                                               \
    const char *got_ = pick(devs, n, spec, &err_, NULL);                                  \
    CHECK(!strcmp(got_, expected), "select \"%s\" gave %s, expected %s (%s)", spec ? spec : "(null)", got_, \
          expected, err_.text);                                                           \
  } while (0)

int main(void) {
  /* A mixed machine: two platforms, NVIDIA and AMD GPUs, and PoCL's CPU devices. */
  cls_device_info mixed[] = {
      make(0, 0, CLS_DEVICE_GPU, "NVIDIA H200", "NVIDIA Corporation", "NVIDIA CUDA"),
      make(0, 1, CLS_DEVICE_GPU, "NVIDIA H200", "NVIDIA Corporation", "NVIDIA CUDA"),
      make(1, 0, CLS_DEVICE_CPU, "pthread-skylake-avx512", "GenuineIntel", "Portable Computing Language"),
      make(1, 1, CLS_DEVICE_CPU, "basic-skylake-avx512", "GenuineIntel", "Portable Computing Language"),
      make(2, 0, CLS_DEVICE_GPU, "gfx1100", "Advanced Micro Devices, Inc.", "AMD Accelerated Parallel Processing"),
  };
  int n = (int)(sizeof mixed / sizeof mixed[0]);

  bool to_cpu = true;
  cls_error err;
  CHECK(!strcmp(pick(mixed, n, NULL, &err, &to_cpu), "0,1,4"), "default takes every GPU");
  CHECK(!to_cpu, "no CPU fallback notice when GPUs exist");
  EXPECT_PICK(mixed, n, "", "0,1,4");
  EXPECT_PICK(mixed, n, "  ", "0,1,4");
  EXPECT_PICK(mixed, n, "all", "0,1,2,3,4");
  EXPECT_PICK(mixed, n, "ALL", "0,1,2,3,4");
  EXPECT_PICK(mixed, n, "gpu", "0,1,4");
  EXPECT_PICK(mixed, n, "cpu", "2,3");
  EXPECT_PICK(mixed, n, "1:1", "3");
  EXPECT_PICK(mixed, n, "2:0,0:1", "1,4");
  EXPECT_PICK(mixed, n, "nvidia", "0,1");       /* vendor substring, case-insensitive */
  EXPECT_PICK(mixed, n, "pthread", "2");        /* name substring */
  EXPECT_PICK(mixed, n, "portable", "2,3");     /* platform substring */
  EXPECT_PICK(mixed, n, "gpu, cpu", "0,1,2,3,4");
  EXPECT_PICK(mixed, n, "0:0,0:0,nvidia", "0,1"); /* each device once */

  /* Bad selections name the item and list the devices. */
  cls_error_clear(&err);
  CHECK(!strcmp(pick(mixed, n, "7:0", &err, NULL), "ERR"), "7:0 does not exist");
  CHECK_INT(err.status, CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "there is no device 7:0");
  CHECK_CONTAINS(err.text, "1:1 basic-skylake-avx512 (cpu)");
  CHECK(!strcmp(pick(mixed, n, "intel-arc", &err, NULL), "ERR"), "unknown name");
  CHECK_CONTAINS(err.text, "\"intel-arc\" matches no device name, vendor or platform");
  CHECK(!strcmp(pick(mixed, n, "gpu,,cpu", &err, NULL), "ERR"), "empty item");
  CHECK_CONTAINS(err.text, "empty item");
  CHECK(!strcmp(pick(mixed, n, "cpu,bogus", &err, NULL), "ERR"), "one bad item fails the whole list");
  CHECK_CONTAINS(err.text, "\"bogus\" matches no device");
  CHECK(!strcmp(pick(mixed, n, "accelerator", &err, NULL), "ERR"), "no accelerator");
  CHECK_CONTAINS(err.text, "there is no accelerator device");

  /* A CPU-only machine (PoCL with three devices): the default falls back to the CPUs and says so. */
  cls_device_info cpus[] = {
      make(0, 0, CLS_DEVICE_CPU, "basic-skylake", "GenuineIntel", "Portable Computing Language"),
      make(0, 1, CLS_DEVICE_CPU, "pthread-skylake", "GenuineIntel", "Portable Computing Language"),
      make(0, 2, CLS_DEVICE_CPU, "pthread-skylake", "GenuineIntel", "Portable Computing Language"),
  };
  to_cpu = false;
  CHECK(!strcmp(pick(cpus, 3, "", &err, &to_cpu), "0,1,2"), "default on a CPU-only machine");
  CHECK(to_cpu, "the CPU fallback is reported");
  CHECK(!strcmp(pick(cpus, 3, "gpu", &err, NULL), "ERR"), "gpu on a CPU-only machine");
  CHECK_CONTAINS(err.text, "there is no gpu device");
  EXPECT_PICK(cpus, 3, "pthread", "1,2");

  /* Item matching is what the kernel-option overrides use too. */
  CHECK(cls_select_item_matches(&cpus[0], "basic"), "basic matches by name");
  CHECK(!cls_select_item_matches(&cpus[0], "0:1"), "index mismatch");
  CHECK(!cls_select_item_matches(&cpus[0], "1:"), "malformed index is a substring, matches nothing");

  /* ":split=N" marks the matched devices for sub-devices; the selection itself is unchanged. */
  int out[16], count = 0, split[5];
  CHECK_INT(cls_select_parse(mixed, n, "pthread:split=2,0:0", out, 16, &count, NULL, split, &err), CLS_OK);
  CHECK(count == 2 && out[0] == 0 && out[1] == 2, "split selection picks 0 and 2 (got %d)", count);
  CHECK(split[2] == 2 && split[0] == 1 && split[3] == 1, "split counts %d %d %d", split[2], split[0], split[3]);
  CHECK_INT(cls_select_parse(mixed, n, "1:0:split=4", out, 16, &count, NULL, split, &err), CLS_OK);
  CHECK(count == 1 && out[0] == 2 && split[2] == 4, "P:D:split=4");
  CHECK_INT(cls_select_parse(mixed, n, "cpu:split=1", out, 16, &count, NULL, split, &err),
            CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "DEVICES:split=N with N from 2 to 64");
  CHECK_INT(cls_select_parse(mixed, n, "cpu:split=two", out, 16, &count, NULL, split, &err),
            CLS_ERR_INVALID_ARGUMENT);
  /* The default leaves out a far slower device (issue 44): Oclgrind's simulator, a "GPU" of 1 unit at
     1 MHz, beside PoCL's CPU of 2 at 2596 MHz, is left to --devices all; a weak integrated GPU beside a
     discrete one (26,400 against 322,560 units x MHz: 12x) is not far slower and stays. */
  cls_device_info sim[] = {make(0, 0, CLS_DEVICE_GPU, "Oclgrind Simulator", "University of Bristol", "Oclgrind"),
                           make(1, 0, CLS_DEVICE_CPU, "pthread-skylake-avx512", "AuthenticAMD",
                                "Portable Computing Language")};
  sim[0].compute_units = 1, sim[0].clock_mhz = 1;
  sim[1].compute_units = 2, sim[1].clock_mhz = 2596;
  bool sim_cpu = false;
  cls_error sim_err;
  const char *got = pick(sim, 2, "", &sim_err, &sim_cpu);
  CHECK(!strcmp(got, "1") && sim_cpu, "default beside a simulator: %s (to cpu %d)", got, sim_cpu);
  int best = -1;
  CHECK(cls_select_far_slower(sim, 2, 0, &best) && best == 1 && !cls_select_far_slower(sim, 2, 1, NULL),
        "the simulator is far slower than the CPU");
  EXPECT_PICK(sim, 2, "all", "0,1");
  EXPECT_PICK(sim, 2, "gpu", "0");
  cls_device_info two_gpus[] = {make(0, 0, CLS_DEVICE_GPU, "Intel UHD Graphics 770", "Intel", "Intel(R) OpenCL HD"),
                                make(1, 0, CLS_DEVICE_GPU, "NVIDIA GeForce RTX 4090", "NVIDIA", "NVIDIA CUDA"),
                                make(2, 0, CLS_DEVICE_CPU, "pthread-alderlake", "GenuineIntel",
                                     "Portable Computing Language")};
  two_gpus[0].compute_units = 24, two_gpus[0].clock_mhz = 1100;
  two_gpus[1].compute_units = 128, two_gpus[1].clock_mhz = 2520;
  two_gpus[2].compute_units = 16, two_gpus[2].clock_mhz = 4900;
  EXPECT_PICK(two_gpus, 3, "", "0,1");
  /* a simulator alone is still taken: the default never leaves nothing */
  EXPECT_PICK(sim, 1, "", "0");
  return check_finish("test_select");
}
