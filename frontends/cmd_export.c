/* `clspeech export --checkpoint_dir DIR --out FILE.clsm [--load_evaluate best|last|auto] [--scorer_path LM
 * [--lm_alpha A --lm_beta B]]`: writes a model package (clspeech/package.h): the checkpoint's weights
 * without the Adam slots, the alphabet, the feature settings and the geometry, checked as `clspeech
 * transcribe` checks them (the same model flags: a flag given must agree with the folder), and
 * optionally a scorer, stored in the binary form whatever form --scorer_path has (ARPA is converted);
 * --lm_alpha or --lm_beta without --scorer_path is refused (they weigh the scorer).
 * `--format onnx` hands the command to the ONNX export (export_onnx.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "export_package.h"
#include "train_flags.h"

int cmd_export(int argc, char **argv) {
  for (int i = 2; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--format") && !strcmp(argv[i + 1], "onnx")) return cmd_export_onnx(argc, argv);
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "--format=onnx")) return cmd_export_onnx(argc, argv);
  train_flags f;
  train_flags_defaults(&f);
  cli_flag all[TRAIN_FLAGS_COUNT + 2];
  int n_flags = train_flags_table(&f, all);
  const char *out = "", *format = "clsm";
  all[n_flags++] = (cli_flag){"out", CLI_STRING, &out, "the package to write (FILE.clsm)", false};
  all[n_flags++] = (cli_flag){"format", CLI_STRING, &format, "clsm (a model package) or onnx", false};
  int rc = cli_parse_flags(argc, argv, 2, all, n_flags, "export",
                           "Writes a trained checkpoint as a model package (or, with --format onnx, an ONNX file).",
                           NULL, 0, NULL);
  if (rc) return rc == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
  if ((rc = train_flags_finish(&f, "export"))) return rc;
  if (strcmp(format, "clsm")) {
    fprintf(stderr, "clspeech export: --format must be clsm or onnx, not \"%s\"\n", format);
    return CLI_EXIT_USAGE;
  }
  if (!*out) {
    fprintf(stderr, "clspeech export: --out FILE.clsm is required\n");
    return CLI_EXIT_USAGE;
  }
  if ((rc = cli_refuse_input_folder("export", "--out", out, "--checkpoint_dir", f.load_checkpoint_dir)) ||
      (rc = cli_refuse_input("export", "--out", out, "--scorer_path", f.scorer_path)) ||
      (rc = cli_refuse_input("export", "--out", out, "--alphabet_config_path", f.alphabet_config_path)))
    return rc;
  /* The weights are the scorer's: without one they would be ignored. */
  const int alpha = cli_flag_seen(all, n_flags, "lm_alpha"), beta = cli_flag_seen(all, n_flags, "lm_beta");
  if (!*f.scorer_path && (alpha || beta)) {
    fprintf(stderr, "clspeech export: %s%s%s without --scorer_path: the package holds no scorer to weigh\n",
            alpha ? "--lm_alpha" : "", alpha && beta ? ", " : "", beta ? "--lm_beta" : "");
    return CLI_EXIT_USAGE;
  }
  return export_package("export", &f, all, n_flags, out, NULL, NULL);
}
