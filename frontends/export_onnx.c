/* `clspeech export --format onnx --checkpoint_dir DIR --out model.onnx`: a trained checkpoint's
 * acoustic model as an ONNX file (clspeech/onnx.h describes the graph and its metadata). The
 * checkpoint is the one --load_evaluate chooses in --load_checkpoint_dir (default --checkpoint_dir),
 * with the folder's alphabet.txt and features.txt; the same model flags as transcribe. The scorer's
 * flags are refused: the file carries none. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "clspeech/onnx.h"
#include "train_flags.h"

int cmd_export_onnx(int argc, char **argv) {
  train_flags f;
  train_flags_defaults(&f);
  cli_flag all[TRAIN_FLAGS_COUNT + 2];
  int n_flags = train_flags_table(&f, all);
  const char *out = "", *format = "onnx";
  all[n_flags++] = (cli_flag){"out", CLI_STRING, &out, "the ONNX file to write (model.onnx)", false};
  all[n_flags++] = (cli_flag){"format", CLI_STRING, &format, "onnx: the acoustic model as an ONNX graph", false};
  int rc = cli_parse_flags(argc, argv, 2, all, n_flags, "export --format onnx",
                           "Writes a trained checkpoint's acoustic model as an ONNX file (opset 13): input_node "
                           "[batch, n_steps, 19, 26] MFCC context windows and the LSTM state in; per-frame softmax "
                           "probs, logits and the new state out; the alphabet and feature settings in its metadata.",
                           NULL, 0, NULL);
  if (rc) return rc == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
  if ((rc = train_flags_finish(&f, "export"))) return rc;
  if (strcmp(format, "onnx")) {
    fprintf(stderr, "clspeech export: the ONNX export takes --format onnx, not \"%s\"\n", format);
    return CLI_EXIT_USAGE;
  }
  if (!*out) {
    fprintf(stderr, "clspeech export: --out model.onnx is required\n");
    return CLI_EXIT_USAGE;
  }
  if ((rc = cli_refuse_input_folder("export", "--out", out, "--checkpoint_dir", f.load_checkpoint_dir))) return rc;
  /* An ONNX file is the acoustic model alone: the scorer's flags would be ignored. */
  char given[64] = "";
  const char *const scorer_flags[] = {"scorer_path", "lm_alpha", "lm_beta"};
  for (int i = 0; i < 3; i++)
    if (cli_flag_seen(all, n_flags, scorer_flags[i]))
      snprintf(given + strlen(given), sizeof given - strlen(given), "%s--%s", *given ? ", " : "", scorer_flags[i]);
  if (*given) {
    fprintf(stderr,
            "clspeech export: %s: an ONNX file carries no scorer (the acoustic model alone); leave them out, or "
            "export a model package (--format clsm), which carries the scorer and its weights\n",
            given);
    return CLI_EXIT_USAGE;
  }
  cls_error err = {0};
  char chosen[CLS_PATH_CAP] = "";
  cls_status st = cls_onnx_export_checkpoint(f.load_checkpoint_dir, f.load_evaluate_mode, out, chosen, sizeof chosen,
                                             &err);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech export: %s\n", err.text);
    return cli_exit_status(st);
  }
  printf("wrote %s (ONNX opset %d) from %s\n", out, CLS_ONNX_OPSET, chosen);
  return CLI_EXIT_OK;
}
