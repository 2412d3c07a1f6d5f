/* `clspeech train`'s checks of the checkpoint it will load, before any work (see train_transfer.h):
 * the model it holds against --n_hidden, and its alphabet (the folder's alphabet.txt copy, and the
 * output layer's classes) against --alphabet_config_path, a different one allowed only when
 * --drop_source_layers drops the output layer. */
#include "train_transfer.h"

#include <stdio.h>
#include <sys/stat.h>

#include "cli.h"
#include "clspeech/model.h"

/* The checkpoint training would load from --load_checkpoint_dir (--load_train), or 0 when it starts
 * fresh (init, or auto finding none). Best and last finding none are left to the trainer's message. */
static int chosen_checkpoint(const train_flags *f, char *path, size_t cap) {
  if (f->load_train_mode == CLS_LOAD_INIT) return 0;
  return cls_checkpoint_choose(f->load_checkpoint_dir, f->load_train_mode, path, cap, NULL, NULL) == CLS_OK;
}

int train_transfer_check(const train_flags *f, const cls_alphabet *alphabet) {
  char path[4400], stored[4200], why[256] = "";
  if (!chosen_checkpoint(f, path, sizeof path)) {
    /* A mistyped source folder would otherwise start a fresh model unnoticed (auto falls back to init). */
    if (f->drop_source_layers > 0 && f->load_train_mode != CLS_LOAD_INIT)
      fprintf(stderr, "clspeech: warning: --drop_source_layers %d: no checkpoint to load in %s; training starts fresh\n",
              f->drop_source_layers, f->load_checkpoint_dir);
    return 0;
  }
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
    snprintf(why, sizeof why, "%d labels against %d", labels, source_labels);
    differs = 1;
  } else if (source) {
    differs = cls_alphabet_differs(alphabet, source, why, sizeof why);
  }
  const char *source_name = source ? stored : "the checkpoint's output layer";
  cls_alphabet_destroy(source);
  if (!differs) return 0;
  if (f->drop_source_layers < 1) {
    fprintf(stderr,
            "clspeech train: --alphabet_config_path %s (%d labels) is not the alphabet of the checkpoint %s (%s, %d "
            "labels): %s; to train another alphabet from it, drop its output layer (--drop_source_layers 1 or more)\n",
            f->alphabet_config_path, labels, path, source_name, source_labels, why);
    return CLI_EXIT_USAGE;
  }
  fprintf(stderr,
          "clspeech: transfer learning: the output layer is made anew for --alphabet_config_path %s (%d labels; the "
          "checkpoint's alphabet %s has %d: %s)\n",
          f->alphabet_config_path, labels, source_name, source_labels, why);
  return 0;
}
