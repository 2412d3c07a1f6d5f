/* DeepSpeech 0.9.3's training flags without an engine counterpart: notices for values that
 * have no effect here, refusals with the way to get what the flag asked for. */
#ifndef CLS_TRAIN_COMPAT_H
#define CLS_TRAIN_COMPAT_H

#include "train_flags.h"

/* Part of train_flags_finish (--scorer, an alias, is cli_parse_flags'): --automatic_mixed_precision and
 * --export_tflite refused; --export_zip, --export_onnx and --remove_export only with --export_dir (the first
 * and the last not together);
 * --export_dir and --one_shot_infer only in `clspeech train`; --read_buffer's size checked; a notice
 * for each flag given a value that has no effect. Prints the problem and returns CLI_EXIT_USAGE, or 0. */
int train_compat_finish(train_flags *f, const char *command);

#endif
