/* libFuzzer target: the GEMM tuning file. An input whose first byte is even is the whole file as
 * read from disk; otherwise the rest is the part after the header, and the target wraps it in this
 * device's header and a correct checksum line, so that the kernel lines and the check of their values
 * against CLBlast's constraints are reached (a checksum cannot be guessed). Values that pass the check
 * are formatted as the log line does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/gemm_tuning.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cls_device_info device(void) {
  cls_device_info d;
  memset(&d, 0, sizeof d);
  snprintf(d.name, sizeof d.name, "fuzz device");
  snprintf(d.vendor, sizeof d.vendor, "fuzz vendor");
  snprintf(d.driver_version, sizeof d.driver_version, "1.0");
  snprintf(d.platform_name, sizeof d.platform_name, "fuzz platform");
  snprintf(d.platform_version, sizeof d.platform_version, "OpenCL 1.2");
  d.max_work_group_size = 256;
  d.local_mem_bytes = 32768;
  return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0 || size > 16384) return 0;
  const cls_device_info d = device();
  char *text = NULL;
  size_t len = 0;
  if (data[0] % 2 == 0) {
    text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    len = size - 1;
  } else {
    char head[2048];
    cls_gemm_tuning_header(&d, "H=32 B=2 T=20", head, sizeof head);
    const size_t hl = strlen(head);
    text = malloc(hl + size - 1 + 80);
    if (!text) return 0;
    memcpy(text, head, hl);
    memcpy(text + hl, data + 1, size - 1);
    len = cls_gemm_tuning_seal(text, hl + size - 1, hl + size - 1 + 80);
  }
  cls_gemm_tuning t;
  static cls_error why;
  char out[2048];
  if (cls_gemm_tuning_parse(text, len, &d, &t, &why)) {
    for (int k = 0; k < t.n; k++) {
      cls_gemm_params_check(&t.kernels[k], &d, &why);
      cls_gemm_params_format(&t.kernels[k], out, sizeof out);
    }
    cls_gemm_tuning_format(&t, out, sizeof out);
  }
  free(text);
  return 0;
}
