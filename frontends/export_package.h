/* A model package (clspeech/package.h) written from the checkpoint folder f->load_checkpoint_dir, as
 * `clspeech export` writes it and `clspeech train --export_dir` at the end of training. */
#ifndef CLS_EXPORT_PACKAGE_H
#define CLS_EXPORT_PACKAGE_H

#include "clspeech/model.h"
#include "clspeech/package.h"
#include "flags.h"
#include "train_flags.h"

/* The checkpoint --load_evaluate chooses in f->load_checkpoint_dir, with the folder's alphabet and
 * features (each checked against the flags given in all[0 .. n_flags)) and, with --scorer_path, the
 * scorer in its binary form (--lm_alpha, --lm_beta), written to `out`; prints "clspeech COMMAND: wrote
 * OUT: ..." and fills *summary and *model (the package's geometry), either may be NULL. 0 or the exit
 * status after printing why. */
int export_package(const char *command, train_flags *f, const cli_flag *all, int n_flags, const char *out,
                   cls_package_summary *summary, cls_model_config *model);

#endif
