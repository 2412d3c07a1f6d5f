/* `clspeech export --checkpoint_dir DIR --out FILE.clsm [--load_evaluate best|last|auto] [--scorer_path LM
 * [--lm_alpha A --lm_beta B]]`: writes a model package (clspeech/package.h): the checkpoint's weights
 * without the Adam slots, the alphabet, the feature settings and the geometry, checked as `clspeech
 * transcribe` checks them (the same model flags: a flag given must agree with the folder), and
 * optionally a scorer, stored in the binary form whatever form --scorer_path has (ARPA is converted);
 * --lm_alpha or --lm_beta without --scorer_path is refused (they weigh the scorer).
 * `--format onnx` hands the command to the ONNX export (export_onnx.c); `--format tf --out DIR` writes
 * the checkpoint with its Adam slots as a TensorFlow checkpoint folder (DeepSpeech's own format). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export_package.h"
#include "model_setup.h"
#include "train_flags.h"

/* The checkpoint m->path whole (weights, Adam slots, scalars) as a TensorFlow checkpoint in `out`. */
static int export_tf(const model_setup *m, const char *out) {
  cls_param_view views[CLS_MODEL_N_TENSORS];
  const size_t n = cls_model_layout(&m->model, views);
  float *p = malloc(3 * n * sizeof *p);
  if (!p) {
    fprintf(stderr, "clspeech export: out of memory\n");
    return CLI_EXIT_FAILURE;
  }
  cls_checkpoint_vars vars;
  char saved[CLS_PATH_CAP];
  cls_error err;
  cls_status st = cls_checkpoint_load(m->path, &m->model, p, p + n, p + 2 * n, &vars, NULL, 0, &err);
  if (st == CLS_OK) st = cls_checkpoint_tf_save(out, &m->model, p, p + n, p + 2 * n, &vars, saved, sizeof saved, &err);
  free(p);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech export: %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  fprintf(stderr, "clspeech export: wrote the TensorFlow checkpoint %s (n_hidden %d, %d classes, global step %lld) from %s\n",
          saved, m->model.n_hidden, m->model.n_classes, (long long)vars.global_step, m->path);
  return 0;
}

/* --format tf: the folder --out (never the checkpoint folder itself, whose index `checkpoint` TF's
 * would replace), no scorer flags (a TensorFlow checkpoint carries none). 0 or the exit status. */
static int export_tf_command(train_flags *f, const cli_flag *all, int n_flags, const char *out) {
  if (cls_same_file(out, f->load_checkpoint_dir)) {
    fprintf(stderr,
            "clspeech export: --out %s is the checkpoint folder: a TensorFlow checkpoint there would replace its "
            "index; give another folder\n",
            out);
    return CLI_EXIT_USAGE;
  }
  const char *const scorer_flags[] = {"scorer_path", "lm_alpha", "lm_beta"};
  for (int i = 0; i < 3; i++)
    if (cli_flag_seen(all, n_flags, scorer_flags[i])) {
      fprintf(stderr, "clspeech export: --%s with --format tf: a TensorFlow checkpoint carries no scorer; leave it out\n",
              scorer_flags[i]);
      return CLI_EXIT_USAGE;
    }
  model_setup m;
  memset(&m, 0, sizeof m);
  int rc = model_setup_from_checkpoint("export", f, all, n_flags, &m);
  if (!rc) rc = export_tf(&m, out);
  model_setup_free(&m);
  return rc;
}

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
  all[n_flags++] = (cli_flag){"out", CLI_STRING, &out, "the package to write (FILE.clsm; with --format tf a folder)", false};
  all[n_flags++] = (cli_flag){"format", CLI_STRING, &format, "clsm (a model package), onnx or tf (a TensorFlow checkpoint folder)", false};
  int rc = cli_parse_flags(argc, argv, 2, all, n_flags, "export",
                           "Writes a trained checkpoint as a model package (or, with --format onnx, an ONNX file).",
                           NULL, 0, NULL);
  if (rc) return rc == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
  if ((rc = train_flags_finish(&f, "export"))) return rc;
  const int tf = !strcmp(format, "tf");
  if (strcmp(format, "clsm") && !tf) {
    fprintf(stderr, "clspeech export: --format must be clsm, onnx or tf, not \"%s\"\n", format);
    return CLI_EXIT_USAGE;
  }
  if (!*out) {
    fprintf(stderr, "clspeech export: --out %s is required\n", tf ? "DIR" : "FILE.clsm");
    return CLI_EXIT_USAGE;
  }
  if ((rc = cli_refuse_input_folder("export", "--out", out, "--checkpoint_dir", f.load_checkpoint_dir)) ||
      (rc = cli_refuse_input("export", "--out", out, "--scorer_path", f.scorer_path)) ||
      (rc = cli_refuse_input("export", "--out", out, "--alphabet_config_path", f.alphabet_config_path)))
    return rc;
  if (tf) return export_tf_command(&f, all, n_flags, out);
  /* The weights are the scorer's: without one they would be ignored. */
  const int alpha = cli_flag_seen(all, n_flags, "lm_alpha"), beta = cli_flag_seen(all, n_flags, "lm_beta");
  if (!*f.scorer_path && (alpha || beta)) {
    fprintf(stderr, "clspeech export: %s%s%s without --scorer_path: the package holds no scorer to weigh\n",
            alpha ? "--lm_alpha" : "", alpha && beta ? ", " : "", beta ? "--lm_beta" : "");
    return CLI_EXIT_USAGE;
  }
  return export_package("export", &f, all, n_flags, out, NULL, NULL);
}
