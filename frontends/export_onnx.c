/* `clspeech export --format onnx`: not built in this tree (the ONNX export replaces this file). */
#include <stdio.h>

#include "cli.h"

int cmd_export_onnx(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "clspeech export: --format onnx: not built in this tree\n");
  return CLI_EXIT_USAGE;
}
