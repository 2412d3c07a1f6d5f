/* Transcription for other commands: `clspeech train --one_shot_infer FILE` runs `clspeech transcribe`'s
 * path (cmd_transcribe.c) on one file. */
#ifndef CLS_TRANSCRIBE_H
#define CLS_TRANSCRIBE_H

#include "flags.h"
#include "train_flags.h"

/* Transcribes `file` with the checkpoint --load_evaluate chooses in checkpoint_dir, the folder's
 * alphabet and features, and f's decoder flags (the scorer loaded afresh from --scorer_path), checked
 * against the flags given (flags[0 .. n_flags), their seen marks), as `clspeech transcribe` does;
 * prints "FILE: TRANSCRIPT" on stdout. Messages are prefixed "clspeech COMMAND:". 0 or the exit status. */
int transcribe_one_shot(const char *command, const train_flags *f, const cli_flag *flags, int n_flags,
                        const char *checkpoint_dir, const char *file);

#endif
