/* `clspeech train`'s work after training and testing, as DeepSpeech's main() runs it: --export_dir
 * (with --export_file_name, --export_zip, --export_onnx, --remove_export and the --export_*
 * metadata) and
 * --one_shot_infer. */
#ifndef CLS_TRAIN_AFTER_H
#define CLS_TRAIN_AFTER_H

#include "flags.h"
#include "train_flags.h"

/* Before any work: --one_shot_infer's file readable; --export_dir a folder or new (with --export_zip,
 * empty or new). 0 or CLI_EXIT_USAGE after printing why. */
int train_after_check(const char *command, const train_flags *f);

/* The export of the checkpoint --load_evaluate chooses in checkpoint_dir: (--remove_export: the files
 * directly in --export_dir removed first) EXPORT_DIR/EXPORT_FILE_NAME.clsm as `clspeech export` writes
 * it (with --scorer_path's scorer), EXPORT_DIR/AUTHOR_MODEL_VERSION.md (the --export_* metadata and the
 * package's facts), with --export_onnx EXPORT_DIR/EXPORT_FILE_NAME.onnx (as `clspeech export --format
 * onnx`) and with --export_zip EXPORT_DIR.zip holding them, stored. flags[0 .. n_flags) give
 * the seen marks the model flags are checked by. 0 or the exit status. */
int train_after_export(const char *command, const train_flags *f, const cli_flag *flags, int n_flags,
                       const char *checkpoint_dir);

/* --one_shot_infer: the file transcribed with the checkpoint in checkpoint_dir (transcribe.h). */
int train_after_one_shot(const char *command, const train_flags *f, const cli_flag *flags, int n_flags,
                         const char *checkpoint_dir);

#endif
