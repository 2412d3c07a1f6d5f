/* `clspeech train --auto_input_dataset FILE.csv` (Coqui STT's flag): one DeepSpeech CSV split into the
 * training, validation and test sets beside it, and an alphabet made from its transcripts when none is
 * given, before the run reads them as --train_files, --dev_files, --test_files and --alphabet_config_path. */
#ifndef CLS_TRAIN_AUTO_INPUT_H
#define CLS_TRAIN_AUTO_INPUT_H

#include "clspeech/base.h"
#include "flags.h"
#include "train_flags.h"

/* The paths the flags then point at (owned by the caller, alive for the run). */
typedef struct train_auto_paths {
  char csv[CLS_PATH_CAP], sets[3][CLS_PATH_CAP], alphabet[CLS_PATH_CAP];
} train_auto_paths;

/* With --auto_input_dataset (a CSV, or a folder holding one CSV not named train, dev or test):
 * - refuses --train_files, --dev_files and --test_files beside it;
 * - uses train.csv, dev.csv and test.csv beside the CSV when all three exist (a part of them is refused),
 *   else writes them (cls_auto_split_csv, shuffled by --random_seed) and says how many rows each has;
 * - the alphabet: --alphabet_config_path when given, else alphabet.txt beside the CSV when it exists,
 *   else one made from the CSV's transcripts and written there (cls_alphabet_make's format);
 * and points the flags at them. Without the flag, 0 and nothing done. 0, CLI_EXIT_USAGE (the flags, a
 * malformed or too small CSV) or CLI_EXIT_FAILURE (a file that cannot be read or written), after
 * printing why. */
int train_auto_input(train_flags *f, const cli_flag *flags, int n_flags, train_auto_paths *paths);

#endif
