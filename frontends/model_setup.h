/* The model a command runs or exports, and what inference needs beside it, from a checkpoint folder
 * (the checkpoint --load_evaluate chooses, its geometry, the folder's alphabet.txt and features.txt)
 * or from a model package (--model FILE.clsm): each checked against the model flags given (a flag that
 * disagrees names both values) and against the model's classes. Shared by `clspeech transcribe` and
 * `clspeech export`. */
#ifndef CLS_MODEL_SETUP_H
#define CLS_MODEL_SETUP_H

#include <stddef.h>

#include "clspeech/data.h"
#include "clspeech/package.h"
#include "flags.h"
#include "train_flags.h"

typedef struct model_setup {
  char path[CLS_PATH_CAP];          /* the checkpoint file, or the package */
  cls_model_config model;
  cls_alphabet *alphabet;
  char alphabet_file[CLS_PATH_CAP]; /* the file the alphabet came from ("PACKAGE (alphabet)" for a package) */
  cls_package *package;     /* --model: the package, open */
} model_setup;

/* From f->load_checkpoint_dir: the checkpoint, the alphabet (the folder's copy, else
 * --alphabet_config_path) and the feature settings (features.txt, else the flags), which are written
 * into *f. 0 or the exit status after printing why ("clspeech COMMAND: ..."). */
int model_setup_from_checkpoint(const char *command, train_flags *f, const cli_flag *flags, int n_flags,
                                model_setup *out);

/* From the package `path`: its geometry, alphabet and feature settings (written into *f), each
 * agreeing with the flags given. 0 or the exit status. */
int model_setup_from_package(const char *command, const char *path, train_flags *f, const cli_flag *flags,
                             int n_flags, model_setup *out);

void model_setup_free(model_setup *s);

/* The alphabet the flags give: with --bytes_output_mode the UTF-8 bytes alphabet (no file is read),
 * else --alphabet_config_path loaded. 0 or the exit status after printing why. */
int model_setup_flag_alphabet(const char *command, const train_flags *f, cls_alphabet **out);

#endif
