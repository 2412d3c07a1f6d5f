/* The clspeech command: dispatches to one file per subcommand (cmd_*.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "clspeech %s: vendor-neutral OpenCL training engine for DeepSpeech-style speech recognition\n\n"
          "usage: clspeech COMMAND [flags]\n\n"
          "commands:\n"
          "  devices     list every OpenCL device, its capabilities, and whether our kernels pass on it\n"
          "  bench       benchmark each device (peak, SGEMM, ops, training step); --tune searches GEMM parameters\n"
          "  features    DeepSpeech's MFCC features of an audio file, as .npy or a summary\n"
          "  import      write DeepSpeech CSVs (and an alphabet) for a Common Voice, LibriSpeech, MLS or plain folder corpus\n"
          "  train       train a DeepSpeech model (DeepSpeech 0.9's flags) and test it\n"
          "  transcribe  transcribe audio files with a trained checkpoint or a model package\n"
          "  export      write a checkpoint as a model package (.clsm: weights, alphabet, features, scorer) or ONNX\n"
          "  lm          build a word n-gram language model (modified Kneser-Ney; ARPA or binary .clm), or convert an ARPA file\n"
          "  lm_optimizer  search the scorer's lm_alpha and lm_beta for the lowest WER on a dev set\n\n"
          "`clspeech COMMAND --help` lists a command's flags. Exit status: 0 success, 1 failure, 2 usage error,\n"
          "3 no OpenCL platform or device.\n",
          cls_version());
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *command = argv[1];
  if (!strcmp(command, "devices")) return cmd_devices(argc, argv);
  if (!strcmp(command, "bench")) return cmd_bench(argc, argv);
  if (!strcmp(command, "features")) return cmd_features(argc, argv);
  if (!strcmp(command, "import")) return cmd_import(argc, argv);
  if (!strcmp(command, "train")) return cmd_train(argc, argv);
  if (!strcmp(command, "transcribe")) return cmd_transcribe(argc, argv);
  if (!strcmp(command, "export")) return cmd_export(argc, argv);
  if (!strcmp(command, "lm")) return cmd_lm(argc, argv);
  if (!strcmp(command, "lm_optimizer")) return cmd_lm_optimizer(argc, argv);
  if (!strcmp(command, "--help") || !strcmp(command, "-h") || !strcmp(command, "help")) {
    usage(stdout);
    return CLI_EXIT_OK;
  }
  if (!strcmp(command, "--version") || !strcmp(command, "version")) {
    printf("clspeech %s\n", cls_version());
    return CLI_EXIT_OK;
  }
  fprintf(stderr, "clspeech: unknown command \"%s\"\n\n", command);
  usage(stderr);
  return CLI_EXIT_USAGE;
}
