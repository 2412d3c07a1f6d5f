/* Per-device kernel build options: the table's rows by device kind, the CPU GEMM's row by float width (or
 * by an overridden width), and CLSPEECH_KERNEL_OPTIONS overrides applied to matching devices only, with
 * malformed entries reported. */
#include <stdlib.h>

#include "check.h"
#include "device/kernel_options.h"

/* cls_kernel_options_for(d, over) must be exactly "<rows> <gemm_row><tail>". */
static void expect(const cls_device_info *d, const char *over, const char *rows, const char *gemm_row,
                   const char *tail, const char *what) {
  char want[512];
  snprintf(want, sizeof want, "%s %s%s", rows, gemm_row, tail);
  char *o = cls_kernel_options_for(d, NULL, over, NULL);
  CHECK(o && !strcmp(o, want), "%s: %s, expected %s", what, o ? o : "(null)", want);
  free(o);
}

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
  char *o = cls_kernel_options_for(&gpu, NULL, NULL, &bad);
  CHECK(o && !strcmp(o, "-cl-std=CL1.2 -DCLS_WG_1D=256"), "gpu row: %s", o);
  free(o);
  o = cls_kernel_options_for(&cpu, NULL, NULL, &bad);
  CHECK(o && !strcmp(o, "-cl-std=CL1.2 -DCLS_WG_1D=64 -DCLS_MFCC_FILTERBANK_WG=1"), "cpu row: %s", o);
  free(o);

  const char *over = "basic=-DCLS_WG_1D=3; gpu = -DFOO=1 -DBAR=2;0:2=-DBAZ";
  o = cls_kernel_options_for(&cpu, NULL, over, &bad);
  CHECK(o && !strcmp(o, "-cl-std=CL1.2 -DCLS_WG_1D=64 -DCLS_MFCC_FILTERBANK_WG=1 -DCLS_WG_1D=3 -DBAZ"), "cpu with overrides: %s", o);
  CHECK(bad == NULL, "no bad entry");
  free(o);
  o = cls_kernel_options_for(&gpu, NULL, over, &bad);
  CHECK(o && !strcmp(o, "-cl-std=CL1.2 -DCLS_WG_1D=256  -DFOO=1 -DBAR=2"), "gpu with overrides: %s", o);
  free(o);

  /* The CPU GEMM's row by the preferred float width, or by a -DCLS_GEMM_W=N override that matches the
     device (the whole row of width N, then the override); an override for another device changes nothing. */
  cls_device_info avx512 = cpu, avx2 = cpu;
  avx512.vector_width_float = 16;
  avx2.vector_width_float = 8;
  const char *cpu_row = "-cl-std=CL1.2 -DCLS_WG_1D=64 -DCLS_MFCC_FILTERBANK_WG=1";
  const char *row16 =
      "-DCLS_GEMM_W=16 -DCLS_GEMM_MR=6 -DCLS_GEMM_NV=4 -DCLS_GEMM_MR_FEW=8 -DCLS_GEMM_NV_FEW=2 -DCLS_LSTM_SEQ_MR=8 "
      "-DCLS_LSTM_SEQ_NV=2";
  const char *row8 =
      "-DCLS_GEMM_W=8 -DCLS_GEMM_MR=6 -DCLS_GEMM_NV=2 -DCLS_GEMM_MR_FEW=4 -DCLS_GEMM_NV_FEW=3 -DCLS_GEMM_K_UNROLL=4 "
      "-DCLS_GEMM_NARROW_COPY=1 -DCLS_LSTM_SEQ_MR=4 -DCLS_LSTM_SEQ_NV=3";
  const char *row4 = "-DCLS_GEMM_W=4 -DCLS_GEMM_MR=6 -DCLS_GEMM_NV=2";
  expect(&avx512, NULL, cpu_row, row16, "", "AVX-512 row");
  expect(&avx2, NULL, cpu_row, row8, "", "AVX2 row");
  expect(&avx512, "gpu=-DCLS_GEMM_W=4;cpu=-DCLS_GEMM_W=8 -DCLS_GEMM_MR=5", cpu_row, row8,
         " -DCLS_GEMM_W=8 -DCLS_GEMM_MR=5", "AVX-512 device told W = 8");
  expect(&avx2, "gpu=-DCLS_GEMM_W=16;basic=-DCLS_GEMM_W=16;0:2=-DCLS_GEMM_W=4", cpu_row, row4,
         " -DCLS_GEMM_W=16 -DCLS_GEMM_W=4", "the last matching width wins");
  expect(&avx2, "gpu=-DCLS_GEMM_W=16", cpu_row, row8, "", "a width for another device");

  /* the stored own-kernel tuning after the table's row, before the overrides (which still win) */
  o = cls_kernel_options_for(&avx512, "-DCLS_GEMM_MR=8 -DCLS_GEMM_NV=3", "cpu=-DCLS_GEMM_NV=2", &bad);
  char want[512];
  snprintf(want, sizeof want, "%s %s -DCLS_GEMM_MR=8 -DCLS_GEMM_NV=3 -DCLS_GEMM_NV=2", cpu_row, row16);
  CHECK(o && !strcmp(o, want), "stored tuning: %s, expected %s", o ? o : "(null)", want);
  /* ... which only the GEMM program is built with, and the sequence kernels' tile only the LSTM's sequence
     kernels (with the width): the other families keep the rest, in order */
  char *fam = o ? cls_kernel_options_of_family(o, "lstm") : NULL;
  CHECK(fam && !strcmp(fam, "-cl-std=CL1.2 -DCLS_WG_1D=64 -DCLS_MFCC_FILTERBANK_WG=1"), "lstm's options: %s",
        fam ? fam : "(null)");
  free(fam);
  fam = o ? cls_kernel_options_of_family(o, "gemm") : NULL;
  /* (each macro once: its last definition) */
  CHECK(fam && !strcmp(fam, "-cl-std=CL1.2 -DCLS_WG_1D=64 -DCLS_MFCC_FILTERBANK_WG=1 "
                          "-DCLS_GEMM_W=16 -DCLS_GEMM_MR_FEW=8 -DCLS_GEMM_NV_FEW=2 -DCLS_GEMM_MR=8 -DCLS_GEMM_NV=2"),
        "gemm's options: %s", fam ? fam : "(null)");
  free(fam);
  fam = o ? cls_kernel_options_of_family(o, "lstm_seq") : NULL;
  CHECK(fam && !strcmp(fam, "-cl-std=CL1.2 -DCLS_WG_1D=64 -DCLS_MFCC_FILTERBANK_WG=1 -DCLS_GEMM_W=16 -DCLS_LSTM_SEQ_MR=8 "
                          "-DCLS_LSTM_SEQ_NV=2"),
        "lstm_seq's options: %s", fam ? fam : "(null)");
  free(fam);
  free(o);

  /* a definition given again later, in any form, keeps the later one alone; other items stay as given */
  fam = cls_kernel_options_of_family("-DA=1 -DAB=2 -cl-mad-enable -DA -D B -DC=3 -DC=4 -DA=5", "dense");
  CHECK(fam && !strcmp(fam, "-DAB=2 -cl-mad-enable -D B -DC=4 -DA=5"), "redefinitions: %s", fam ? fam : "(null)");
  free(fam);
  /* ... among the items the family keeps: another family's later item hides none of its own */
  fam = cls_kernel_options_of_family("-DCLS_GEMM_W=16 -DCLS_LSTM_SEQ_MR=8 -DCLS_GEMM_W", "lstm_seq");
  CHECK(fam && !strcmp(fam, "-DCLS_LSTM_SEQ_MR=8 -DCLS_GEMM_W"), "the width in either form: %s", fam ? fam : "(null)");
  free(fam);
  fam = cls_kernel_options_of_family("-DCLS_GEMM_MR=6 -DCLS_LSTM_SEQ_MR=8 -DCLS_GEMM_MR=5", "lstm_seq");
  CHECK(fam && !strcmp(fam, "-DCLS_LSTM_SEQ_MR=8"), "lstm_seq without the GEMM's: %s", fam ? fam : "(null)");
  free(fam);

  o = cls_kernel_options_for(&gpu, NULL, "nonsense;gpu=-DX", &bad);
  CHECK(bad && !strncmp(bad, "nonsense", 8), "malformed entry reported");
  CHECK(o && strstr(o, "-DX"), "later entries still apply: %s", o);
  free(o);
  return check_finish("test_kernel_options");
}
