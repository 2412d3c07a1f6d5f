/* Writing a model package from a checkpoint folder (see export_package.h): the model, alphabet and
 * features as model_setup finds them, the scorer converted to its binary form on the way, the summary
 * line. */
#include "export_package.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clspeech/lm.h"
#include "clspeech/scorer.h"
#include "model_setup.h"

/* The scorer at f->scorer_path, checked against the alphabet, in the binary form at `tmp` (the
 * caller removes it). 0 or the exit status. */
static int scorer_to_binary(const char *command, const train_flags *f, const cls_alphabet *alphabet, const char *tmp) {
  cls_error err = {0};
  cls_lm *lm = NULL;
  cls_scorer *scorer = NULL;
  const int n = cls_alphabet_size(alphabet);
  const char **labels = malloc((size_t)n * sizeof *labels);
  if (!labels) {
    fprintf(stderr, "clspeech %s: out of memory\n", command);
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
    fprintf(stderr, "clspeech %s: --scorer_path: %s\n", command, err.text);
    return CLI_EXIT_FAILURE;
  }
  return 0;
}

int export_package(const char *command, train_flags *f, const cli_flag *all, int n_flags, const char *out,
                   cls_package_summary *summary, cls_model_config *model) {
  model_setup m;
  memset(&m, 0, sizeof m);
  int rc = model_setup_from_checkpoint(command, f, all, n_flags, &m);
  /* the scorer's binary form on its way into the package: in the temporary folder, never beside --out
     (which may be a device or a FIFO: the output rule) */
  char scorer_tmp[CLS_PATH_CAP] = "", tmp_dir[CLS_PATH_CAP] = "";
  if (!rc && *f->scorer_path) {
    const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmp_dir, sizeof tmp_dir, "%s/clspeech-export-XXXXXX", tmpdir);
    if (!mkdtemp(tmp_dir)) {
      fprintf(stderr, "clspeech %s: %s: cannot make a temporary folder: %s\n", command, tmp_dir, strerror(errno));
      tmp_dir[0] = '\0';
      rc = CLI_EXIT_FAILURE;
    } else if (snprintf(scorer_tmp, sizeof scorer_tmp, "%s/scorer.clm", tmp_dir) >= (int)sizeof scorer_tmp) {
      fprintf(stderr, "clspeech %s: %s/scorer.clm: the path is too long\n", command, tmp_dir);
      scorer_tmp[0] = '\0';
      rc = CLI_EXIT_FAILURE;
    } else {
      rc = scorer_to_binary(command, f, m.alphabet, scorer_tmp);
    }
  }
  if (!rc) {
    const double t0 = cls_now_ms();
    const cls_package_source src = {m.path,           m.alphabet_file,   f->audio_sample_rate, f->feature_win_len,
                                    f->feature_win_step, scorer_tmp,      f->lm_alpha,          f->lm_beta};
    cls_package_summary sum;
    cls_error err;
    if (cls_package_write(out, &src, &sum, &err) != CLS_OK) {
      fprintf(stderr, "clspeech %s: %s\n", command, err.text);
      rc = CLI_EXIT_FAILURE;
    } else {
      char size[32], scorer[128] = "no scorer";
      if (sum.scorer_bytes) {
        char sb[32];
        snprintf(scorer, sizeof scorer, "scorer %s (lm_alpha %g, lm_beta %g)",
                 cli_bytes(sum.scorer_bytes, sb, sizeof sb), f->lm_alpha, f->lm_beta);
      }
      fprintf(stderr,
              "clspeech %s: wrote %s: %s, %d tensors (%zu weights, n_hidden %d, %d classes) from %s (global step "
              "%lld), alphabet %s, %d Hz / %d ms / %d ms features, %s; %.2f s\n",
              command, out, cli_bytes(sum.file_bytes, size, sizeof size), sum.n_tensors, sum.n_params, m.model.n_hidden,
              m.model.n_classes, m.path, (long long)sum.global_step, m.alphabet_file, f->audio_sample_rate,
              f->feature_win_len, f->feature_win_step, scorer, (cls_now_ms() - t0) / 1000.0);
      if (summary) *summary = sum;
      if (model) *model = m.model;
    }
  }
  if (*scorer_tmp) unlink(scorer_tmp);
  if (*tmp_dir) rmdir(tmp_dir);
  model_setup_free(&m);
  return rc;
}
