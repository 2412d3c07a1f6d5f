/* The model and what inference needs beside it, from a checkpoint folder or a model package (see
 * model_setup.h). */
#include "model_setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* An explicit flag that disagrees with the stored value is a usage error naming both. */
static int disagrees(const char *command, const cli_flag *flags, int n, const char *name, int given, int stored,
                     const char *file) {
  if (!cli_flag_seen(flags, n, name) || given == stored) return 0;
  fprintf(stderr, "clspeech %s: --%s %d disagrees with %s %d in %s\n", command, name, given, name, stored, file);
  return 1;
}

/* The geometry's flags (--n_hidden, --relu_clip) against the model's. 0 or the exit status. */
static int check_model_flags(const char *command, const train_flags *f, const cli_flag *flags, int n_flags,
                             const cls_model_config *m, const char *file) {
  if (disagrees(command, flags, n_flags, "n_hidden", f->n_hidden, m->n_hidden, file)) return CLI_EXIT_USAGE;
  if (cli_flag_seen(flags, n_flags, "relu_clip") && (float)f->relu_clip != m->relu_clip) {
    fprintf(stderr, "clspeech %s: --relu_clip %g disagrees with relu_clip %g in %s\n", command, f->relu_clip,
            (double)m->relu_clip, file);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* The feature settings stored in `file` against the flags given, then into *f. 0 or the exit status. */
static int take_features(const char *command, train_flags *f, const cli_flag *flags, int n_flags, int rate, int len,
                         int step, const char *file) {
  if (disagrees(command, flags, n_flags, "audio_sample_rate", f->audio_sample_rate, rate, file) ||
      disagrees(command, flags, n_flags, "feature_win_len", f->feature_win_len, len, file) ||
      disagrees(command, flags, n_flags, "feature_win_step", f->feature_win_step, step, file))
    return CLI_EXIT_USAGE;
  f->audio_sample_rate = rate;
  f->feature_win_len = len;
  f->feature_win_step = step;
  return 0;
}

int model_setup_flag_alphabet(const char *command, const train_flags *f, cls_alphabet **out) {
  cls_error err;
  if (f->bytes_output_mode) {
    if (cls_alphabet_bytes(out, &err) == CLS_OK) return 0;
    fprintf(stderr, "clspeech %s: --bytes_output_mode: %s\n", command, err.text);
    return CLI_EXIT_FAILURE;
  }
  if (cls_alphabet_load(f->alphabet_config_path, out, &err) == CLS_OK) return 0;
  fprintf(stderr, "clspeech %s: --alphabet_config_path: %s\n", command, err.text);
  return CLI_EXIT_USAGE;
}

/* An explicit --alphabet_config_path (or --bytes_output_mode) against the stored alphabet. 0 or the exit
 * status. */
static int check_alphabet_flag(const char *command, const train_flags *f, const cli_flag *flags, int n_flags,
                               const cls_alphabet *stored, const char *file) {
  if (!f->bytes_output_mode && !cli_flag_seen(flags, n_flags, "alphabet_config_path")) return 0;
  cls_alphabet *given = NULL;
  cls_error err;
  int rc = model_setup_flag_alphabet(command, f, &given);
  if (rc) return rc;
  if (cls_alphabet_differs(given, stored, &err)) {
    if (f->bytes_output_mode)
      fprintf(stderr, "clspeech %s: --bytes_output_mode disagrees with %s: %s\n", command, file, err.text);
    else
      fprintf(stderr, "clspeech %s: --alphabet_config_path %s disagrees with %s: %s\n", command,
              f->alphabet_config_path, file, err.text);
    rc = CLI_EXIT_USAGE;
  }
  cls_alphabet_destroy(given);
  return rc;
}

static int check_classes(const char *command, const model_setup *s) {
  if (cls_alphabet_size(s->alphabet) + 1 == s->model.n_classes) return 0;
  fprintf(stderr, "clspeech %s: %s has %d classes, but %s gives %d labels (+1 blank)\n", command, s->path,
          s->model.n_classes, s->alphabet_file, cls_alphabet_size(s->alphabet));
  return CLI_EXIT_USAGE;
}

int model_setup_from_checkpoint(const char *command, train_flags *f, const cli_flag *flags, int n_flags,
                                model_setup *s) {
  cls_error err;
  if (cls_checkpoint_choose(f->load_checkpoint_dir, f->load_evaluate_mode, s->path, sizeof s->path, NULL, &err) !=
          CLS_OK ||
      cls_checkpoint_peek_model(s->path, &s->model, &err) != CLS_OK) {
    fprintf(stderr, "clspeech %s: %s\n", command, err.text);
    return CLI_EXIT_FAILURE;
  }
  int rc = check_model_flags(command, f, flags, n_flags, &s->model, s->path);
  if (rc) return rc;
  /* the feature settings: features.txt, else (a folder from before it) the flags */
  int rate = 0, len = 0, step = 0, found = 0;
  if (cls_checkpoint_read_features(f->load_checkpoint_dir, &rate, &len, &step, &found, &err) != CLS_OK) {
    fprintf(stderr, "clspeech %s: %s\n", command, err.text);
    return CLI_EXIT_FAILURE;
  }
  char file[CLS_PATH_CAP];
  snprintf(file, sizeof file, "%s/%s", f->load_checkpoint_dir, CLS_CHECKPOINT_FEATURES);
  if (found && (rc = take_features(command, f, flags, n_flags, rate, len, step, file))) return rc;
  /* the alphabet: the folder's copy, else --alphabet_config_path */
  snprintf(s->alphabet_file, sizeof s->alphabet_file, "%s/%s", f->load_checkpoint_dir, CLS_CHECKPOINT_ALPHABET);
  struct stat sb;
  if (stat(s->alphabet_file, &sb) != 0) {
    /* A folder with features.txt had its alphabet.txt beside it (written together): one deleted since, not
     * a folder from before them, whose alphabet only the flag gives. */
    if (found && !cli_flag_seen(flags, n_flags, "alphabet_config_path") && !f->bytes_output_mode) {
      fprintf(stderr,
              "clspeech %s: %s is missing (the alphabet `clspeech train` wrote beside the checkpoints and %s); "
              "give the alphabet the model was trained with as --alphabet_config_path\n",
              command, s->alphabet_file, CLS_CHECKPOINT_FEATURES);
      return CLI_EXIT_FAILURE;
    }
    snprintf(s->alphabet_file, sizeof s->alphabet_file, "%s",
             f->bytes_output_mode ? "--bytes_output_mode" : f->alphabet_config_path);
    if ((rc = model_setup_flag_alphabet(command, f, &s->alphabet))) return rc;
  } else {
    if (cls_alphabet_load(s->alphabet_file, &s->alphabet, &err) != CLS_OK) {
      fprintf(stderr, "clspeech %s: %s\n", command, err.text);
      return CLI_EXIT_FAILURE;
    }
    if ((rc = check_alphabet_flag(command, f, flags, n_flags, s->alphabet, s->alphabet_file))) return rc;
  }
  if ((rc = check_classes(command, s))) return rc;
  f->n_hidden = s->model.n_hidden;
  f->bytes_output_mode = cls_alphabet_is_bytes(s->alphabet);
  return 0;
}

int model_setup_from_package(const char *command, const char *path, train_flags *f, const cli_flag *flags,
                             int n_flags, model_setup *s) {
  cls_error err;
  snprintf(s->path, sizeof s->path, "%s", path);
  if (cls_package_open(path, &s->package, &err) != CLS_OK) {
    fprintf(stderr, "clspeech %s: %s\n", command, err.text);
    return CLI_EXIT_FAILURE;
  }
  const cls_package_info *in = cls_package_get_info(s->package);
  s->model = in->model;
  int rc = check_model_flags(command, f, flags, n_flags, &s->model, path);
  if (!rc) rc = take_features(command, f, flags, n_flags, in->audio_sample_rate, in->feature_win_len,
                              in->feature_win_step, path);
  if (rc) return rc;
  snprintf(s->alphabet_file, sizeof s->alphabet_file, "%s (alphabet)", path);
  if (cls_alphabet_parse(in->alphabet, in->alphabet_bytes, s->alphabet_file, &s->alphabet, &err) != CLS_OK) {
    fprintf(stderr, "clspeech %s: %s\n", command, err.text);
    return CLI_EXIT_FAILURE;
  }
  if ((rc = check_alphabet_flag(command, f, flags, n_flags, s->alphabet, s->alphabet_file))) return rc;
  if ((rc = check_classes(command, s))) return rc;
  f->n_hidden = s->model.n_hidden;
  f->bytes_output_mode = cls_alphabet_is_bytes(s->alphabet);
  return 0;
}

void model_setup_free(model_setup *s) {
  cls_alphabet_destroy(s->alphabet);
  s->alphabet = NULL;
  cls_package_close(s->package);
  s->package = NULL;
}
