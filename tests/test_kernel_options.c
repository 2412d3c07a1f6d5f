/* Per-device kernel build options: the table's rows by device kind, and CLSPEECH_KERNEL_OPTIONS
 * overrides applied to matching devices only, with malformed entries reported. */
#include <stdlib.h>

#include "check.h"
#include "device/kernel_options.h"

int main(void) {
  cls_device_info gpu, cpu;
  memset(&gpu, 0, sizeof gpu);
  memset(&cpu, 0, sizeof cpu);
  gpu.kind = CLS_DEVICE_GPU;
  snprintf(gpu.name, sizeof gpu.name, "NVIDIA H200");
  cpu.kind = CLS_DEVICE_CPU;
  cpu.platform_index = 0;
  cpu.device_index = 2;
  snprintf(cpu.name, sizeof cpu.name, "basic-skylake");

  const char *bad = NULL;
  char *o = cls_kernel_options_for(&gpu, NULL, &bad);
  CHECK(o && !strcmp(o, "-cl-std=CL1.2 -DCLS_WG_1D=256"), "gpu row: %s", o);
  free(o);
  o = cls_kernel_options_for(&cpu, NULL, &bad);
  CHECK(o && !strcmp(o, "-cl-std=CL1.2 -DCLS_WG_1D=64"), "cpu row: %s", o);
  free(o);

  const char *over = "basic=-DCLS_WG_1D=3; gpu = -DFOO=1 -DBAR=2;0:2=-DBAZ";
  o = cls_kernel_options_for(&cpu, over, &bad);
  CHECK(o && !strcmp(o, "-cl-std=CL1.2 -DCLS_WG_1D=64 -DCLS_WG_1D=3 -DBAZ"), "cpu with overrides: %s", o);
  CHECK(bad == NULL, "no bad entry");
  free(o);
  o = cls_kernel_options_for(&gpu, over, &bad);
  CHECK(o && !strcmp(o, "-cl-std=CL1.2 -DCLS_WG_1D=256  -DFOO=1 -DBAR=2"), "gpu with overrides: %s", o);
  free(o);

  o = cls_kernel_options_for(&gpu, "nonsense;gpu=-DX", &bad);
  CHECK(bad && !strncmp(bad, "nonsense", 8), "malformed entry reported");
  CHECK(o && strstr(o, "-DX"), "later entries still apply: %s", o);
  free(o);
  return check_finish("test_kernel_options");
}
