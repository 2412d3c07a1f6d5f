/* `clspeech train` loading a checkpoint to train on (DeepSpeech's --load_checkpoint_dir, and transfer
 * learning with --drop_source_layers): the checks made before any work. */
#ifndef CLS_TRAIN_TRANSFER_H
#define CLS_TRAIN_TRANSFER_H

#include "clspeech/data.h"
#include "train_flags.h"

/* When training will load a checkpoint (--load_train and what --load_checkpoint_dir holds): its n_hidden
 * must be --n_hidden, and its alphabet (the folder's alphabet.txt, else the output layer's size) that of
 * --alphabet_config_path and its feature settings (the folder's features.txt) those of the flags, unless
 * --drop_source_layers is 1 or more, in which case a notice says what changes. And when
 * --save_checkpoint_dir already holds checkpoints other than the one loaded (a fresh start there, or
 * another folder), its alphabet.txt and features.txt must be the flags' too: they are never silently
 * rewritten. A mismatch prints the flag, both values and the files and returns CLI_EXIT_USAGE; an
 * unreadable checkpoint or metadata file CLI_EXIT_FAILURE; else 0. */
int train_transfer_check(const train_flags *f, const cls_alphabet *alphabet);

#endif
