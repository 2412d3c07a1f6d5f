/* `clspeech export --checkpoint_dir DIR --out FILE.clsm [--load_evaluate best|last|auto] [--scorer_path LM
 * [--lm_alpha A --lm_beta B]]`: writes a model package (clspeech/package.h): the checkpoint's weights
 * without the Adam slots, the alphabet, the feature settings and the geometry, checked as `clspeech
 * transcribe` checks them (the same model flags: a flag given must agree with the folder), and
 * optionally a scorer, stored in the binary form whatever form --scorer_path has (ARPA is converted);
 * --lm_alpha or --lm_beta without --scorer_path is refused (they weigh the scorer).
 * `--format onnx` hands the command to the ONNX export (export_onnx.c); `--format tf --out DIR` writes
 * the checkpoint with its Adam slots as a TensorFlow checkpoint folder (DeepSpeech's own format). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clspeech/lm.h"
#include "clspeech/package.h"
#include "clspeech/scorer.h"
#include "model_setup.h"
#include "train_flags.h"

/* The scorer at f->scorer_path, checked against the alphabet, in the binary form at `tmp` (the
 * caller removes it). 0 or the exit status. */
static int scorer_to_binary(const train_flags *f, const cls_alphabet *alphabet, const char *tmp) {
  cls_error err = {0};
  cls_lm *lm = NULL;
  cls_scorer *scorer = NULL;
  const int n = cls_alphabet_size(alphabet);
  const char **labels = malloc((size_t)n * sizeof *labels);
  if (!labels) {
    fprintf(stderr, "clspeech export: out of memory\n");
    return CLI_EXIT_FAILURE;
  }
  for (int i = 0; i < n; i++) labels[i] = cls_alphabet_label(alphabet, i);
  cls_status st = cls_lm_load(f->scorer_path, &lm, &err);
  if (st == CLS_OK) st = cls_scorer_create(lm, labels, n, &scorer, NULL, &err);
  if (st == CLS_OK) st = cls_lm_save_binary(lm, tmp, &err);
  cls_scorer_destroy(scorer);
  cls_lm_destroy(lm);
  free(labels);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech export: --scorer_path: %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  return 0;
}

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
  model_setup m;
  memset(&m, 0, sizeof m);
  rc = model_setup_from_checkpoint("export", &f, all, n_flags, &m);
  if (tf) {
    if (!rc) rc = export_tf(&m, out);
    model_setup_free(&m);
    return rc;
  }
  /* the scorer's binary form on its way into the package: in the temporary folder, never beside --out
     (which may be a device or a FIFO: the output rule) */
  char scorer_tmp[CLS_PATH_CAP] = "", tmp_dir[CLS_PATH_CAP] = "";
  if (!rc && *f.scorer_path) {
    const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmp_dir, sizeof tmp_dir, "%s/clspeech-export-XXXXXX", tmpdir);
    if (!mkdtemp(tmp_dir)) {
      fprintf(stderr, "clspeech export: %s: cannot make a temporary folder: %s\n", tmp_dir, strerror(errno));
      tmp_dir[0] = '\0';
      rc = CLI_EXIT_FAILURE;
    } else if (snprintf(scorer_tmp, sizeof scorer_tmp, "%s/scorer.clm", tmp_dir) >= (int)sizeof scorer_tmp) {
      fprintf(stderr, "clspeech export: %s/scorer.clm: the path is too long\n", tmp_dir);
      scorer_tmp[0] = '\0';
      rc = CLI_EXIT_FAILURE;
    } else {
      rc = scorer_to_binary(&f, m.alphabet, scorer_tmp);
    }
  }
  if (!rc) {
    const double t0 = cls_now_ms();
    const cls_package_source src = {m.path,           m.alphabet_file,   f.audio_sample_rate, f.feature_win_len,
                                    f.feature_win_step, scorer_tmp,      f.lm_alpha,          f.lm_beta};
    cls_package_summary sum;
    cls_error err;
    if (cls_package_write(out, &src, &sum, &err) != CLS_OK) {
      fprintf(stderr, "clspeech export: %s\n", err.text);
      rc = CLI_EXIT_FAILURE;
    } else {
      char size[32], scorer[128] = "no scorer";
      if (sum.scorer_bytes) {
        char sb[32];
        snprintf(scorer, sizeof scorer, "scorer %s (lm_alpha %g, lm_beta %g)",
                 cli_bytes(sum.scorer_bytes, sb, sizeof sb), f.lm_alpha, f.lm_beta);
      }
      fprintf(stderr,
              "clspeech export: wrote %s: %s, %d tensors (%zu weights, n_hidden %d, %d classes) from %s (global step "
              "%lld), alphabet %s, %d Hz / %d ms / %d ms features, %s; %.2f s\n",
              out, cli_bytes(sum.file_bytes, size, sizeof size), sum.n_tensors, sum.n_params, m.model.n_hidden,
              m.model.n_classes, m.path, (long long)sum.global_step, m.alphabet_file, f.audio_sample_rate,
              f.feature_win_len, f.feature_win_step, scorer, (cls_now_ms() - t0) / 1000.0);
    }
  }
  if (*scorer_tmp) unlink(scorer_tmp);
  if (*tmp_dir) rmdir(tmp_dir);
  model_setup_free(&m);
  return rc;
}
