/* `clspeech train`'s checks of the checkpoint it will load, before any work (see train_transfer.h):
 * the model it holds against --n_hidden, its alphabet (the folder's alphabet.txt copy, and the output
 * layer's classes) against --alphabet_config_path and its feature settings (features.txt) against the
 * feature flags, a difference allowed only when --drop_source_layers asks for transfer learning; and
 * the metadata beside the checkpoints of the folder training writes to, which is never silently
 * rewritten. */
#include "train_transfer.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "clspeech/model.h"

/* The checkpoint training would load from --load_checkpoint_dir (--load_train), or 0 when it starts
 * fresh (init, or auto finding none). Best and last finding none are left to the trainer's message. */
static int chosen_checkpoint(const train_flags *f, char *path, size_t cap) {
  if (f->load_train_mode == CLS_LOAD_INIT) return 0;
  return cls_checkpoint_choose(f->load_checkpoint_dir, f->load_train_mode, path, cap, NULL, NULL) == CLS_OK;
}

/* The feature settings stored in DIR/features.txt against the flags: 0 when they agree (or DIR has
 * none, a folder from before it); else 1 with the first difference in flag[], given[] and stored[];
 * -1 (printed) when the file cannot be read. */
static int features_differ(const train_flags *f, const char *dir, const char **flag, int *given, int *stored) {
  int rate = 0, len = 0, step = 0, found = 0;
  cls_error err;
  if (cls_checkpoint_read_features(dir, &rate, &len, &step, &found, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: %s\n", err.text);
    return -1;
  }
  if (!found) return 0;
  const struct {
    const char *flag;
    int given, stored;
  } keys[3] = {{"audio_sample_rate", f->audio_sample_rate, rate},
               {"feature_win_len", f->feature_win_len, len},
               {"feature_win_step", f->feature_win_step, step}};
  for (int i = 0; i < 3; i++)
    if (keys[i].given != keys[i].stored) {
      *flag = keys[i].flag;
      *given = keys[i].given;
      *stored = keys[i].stored;
      return 1;
    }
  return 0;
}

/* The feature settings of the checkpoint `path` (in --load_checkpoint_dir) against the flags: the same,
 * or transfer learning (--drop_source_layers 1 or more, a notice). 0 or the exit status. */
static int check_features(const train_flags *f, const char *path) {
  const char *flag = "";
  int given = 0, stored = 0;
  const int d = features_differ(f, f->load_checkpoint_dir, &flag, &given, &stored);
  if (d <= 0) return d < 0 ? CLI_EXIT_FAILURE : 0;
  if (f->drop_source_layers < 1) {
    fprintf(stderr,
            "clspeech train: --%s %d disagrees with %s=%d in %s/%s, the features the checkpoint %s was trained on; "
            "to train other features from it, drop layers (--drop_source_layers 1 or more), or train into another "
            "--checkpoint_dir\n",
            flag, given, flag, stored, f->load_checkpoint_dir, CLS_CHECKPOINT_FEATURES, path);
    return CLI_EXIT_USAGE;
  }
  fprintf(stderr,
          "clspeech: transfer learning: --%s %d, the checkpoint %s was trained on %s=%d (%s/%s); the checkpoints "
          "this run saves record %d\n",
          flag, given, path, flag, stored, f->load_checkpoint_dir, CLS_CHECKPOINT_FEATURES, given);
  return 0;
}

/* The folder training writes to (--save_checkpoint_dir), when it already holds checkpoints and is not the
 * folder of the checkpoint loaded (checked above): its alphabet.txt and features.txt, which describe
 * those checkpoints, must be the flags' (a fresh start there would rewrite them). 0 or the exit status. */
static int check_save_dir(const train_flags *f, const cls_alphabet *alphabet, int loaded) {
  const char *dir = f->save_checkpoint_dir;
  char path[CLS_PATH_CAP], stored[CLS_PATH_CAP];
  if (cls_checkpoint_choose(dir, CLS_LOAD_LAST, path, sizeof path, NULL, NULL) == CLS_OK && cls_checkpoint_is_tf(path)) {
    /* saving would replace TensorFlow's index file `checkpoint` with clspeech's */
    fprintf(stderr,
            "clspeech train: %s holds the TensorFlow checkpoint %s, whose index file this run would rewrite; load "
            "it with --load_checkpoint_dir and train into another --save_checkpoint_dir\n",
            dir, path);
    return CLI_EXIT_USAGE;
  }
  if (loaded && !strcmp(dir, f->load_checkpoint_dir)) return 0;
  if (cls_checkpoint_choose(dir, CLS_LOAD_LAST, path, sizeof path, NULL, NULL) != CLS_OK) return 0;
  const char *flag = "";
  int given = 0, value = 0;
  const int d = features_differ(f, dir, &flag, &given, &value);
  if (d < 0) return CLI_EXIT_FAILURE;
  if (d > 0) {
    fprintf(stderr,
            "clspeech train: --%s %d disagrees with %s=%d in %s/%s, beside the checkpoints already in %s (such as "
            "%s), which this run would rewrite; train into another --save_checkpoint_dir, or resume with "
            "--%s %d\n",
            flag, given, flag, value, dir, CLS_CHECKPOINT_FEATURES, dir, path, flag, value);
    return CLI_EXIT_USAGE;
  }
  snprintf(stored, sizeof stored, "%s/%s", dir, CLS_CHECKPOINT_ALPHABET);
  struct stat sb;
  if (stat(stored, &sb) != 0) return 0;
  cls_alphabet *had = NULL;
  cls_error err;
  if (cls_alphabet_load(stored, &had, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: --save_checkpoint_dir: %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  cls_error why;
  const bool differs = cls_alphabet_differs(alphabet, had, &why);
  cls_alphabet_destroy(had);
  if (!differs) return 0;
  fprintf(stderr,
          "clspeech train: --alphabet_config_path %s disagrees with %s, beside the checkpoints already in %s (such as "
          "%s), which this run would rewrite: %s; train into another --save_checkpoint_dir\n",
          f->alphabet_config_path, stored, dir, path, why.text);
  return CLI_EXIT_USAGE;
}

static int check_loaded(const train_flags *f, const cls_alphabet *alphabet, const char *path);

int train_transfer_check(const train_flags *f, const cls_alphabet *alphabet) {
  char path[CLS_PATH_CAP];
  if (!chosen_checkpoint(f, path, sizeof path)) {
    /* A mistyped source folder would otherwise start a fresh model unnoticed (auto falls back to init). */
    if (f->drop_source_layers > 0 && f->load_train_mode != CLS_LOAD_INIT)
      fprintf(stderr, "clspeech: warning: --drop_source_layers %d: no checkpoint to load in %s; training starts fresh\n",
              f->drop_source_layers, f->load_checkpoint_dir);
    return check_save_dir(f, alphabet, 0);
  }
  int rc = check_loaded(f, alphabet, path);
  return rc ? rc : check_save_dir(f, alphabet, 1);
}

/* The checkpoint `path` training loads: its model, alphabet and features against the flags. 0 or the
 * exit status. */
static int check_loaded(const train_flags *f, const cls_alphabet *alphabet, const char *path) {
  char stored[CLS_PATH_CAP];
  cls_error why = {CLS_OK, ""};
  cls_error err;
  cls_model_config have;
  if (cls_checkpoint_peek_model(path, &have, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: --load_checkpoint_dir: %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  if (have.n_hidden != f->n_hidden) {
    fprintf(stderr, "clspeech train: --n_hidden %d: the checkpoint %s is a model of n_hidden %d\n", f->n_hidden, path,
            have.n_hidden);
    return CLI_EXIT_USAGE;
  }
  /* The checkpoint's alphabet: the folder's copy when it has one, else only its size (the output layer). */
  snprintf(stored, sizeof stored, "%s/%s", f->load_checkpoint_dir, CLS_CHECKPOINT_ALPHABET);
  struct stat sb;
  cls_alphabet *source = NULL;
  if (stat(stored, &sb) == 0 && cls_alphabet_load(stored, &source, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: --load_checkpoint_dir: %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  const int source_labels = have.n_classes - 1, labels = cls_alphabet_size(alphabet);
  int differs = 0;
  if (source_labels != labels) {
    cls_error_set(&why, CLS_ERR_INVALID_ARGUMENT, "%d labels against %d", labels, source_labels);
    differs = 1;
  } else if (source) {
    differs = cls_alphabet_differs(alphabet, source, &why);
  }
  const char *source_name = source ? stored : "the checkpoint's output layer";
  cls_alphabet_destroy(source);
  if (!differs) return check_features(f, path);
  if (f->drop_source_layers < 1) {
    fprintf(stderr,
            "clspeech train: --alphabet_config_path %s (%d labels) is not the alphabet of the checkpoint %s (%s, %d "
            "labels): %s; to train another alphabet from it, drop its output layer (--drop_source_layers 1 or more)\n",
            f->alphabet_config_path, labels, path, source_name, source_labels, why.text);
    return CLI_EXIT_USAGE;
  }
  fprintf(stderr,
          "clspeech: transfer learning: the output layer is made anew for --alphabet_config_path %s (%d labels; the "
          "checkpoint's alphabet %s has %d: %s)\n",
          f->alphabet_config_path, labels, source_name, source_labels, why.text);
  return check_features(f, path);
}
