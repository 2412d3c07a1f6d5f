/* The flags of `clspeech train` and `clspeech transcribe`, with DeepSpeech 0.9's names and
 * defaults, from the one table of them (clspeech/internal/train_options.def), and their conversion
 * into the engine's training options. */
#ifndef CLS_TRAIN_FLAGS_H
#define CLS_TRAIN_FLAGS_H

#include <stdbool.h>

#include "clspeech/scorer.h"
#include "clspeech/train.h"
#include "flags.h"

/* The C type of a row's value (cli_flag's value for its type, flags.h). */
#define TRAIN_FLAG_TYPE_STRING const char *
#define TRAIN_FLAG_TYPE_INT int
#define TRAIN_FLAG_TYPE_DOUBLE double
#define TRAIN_FLAG_TYPE_BOOL bool
#define TRAIN_FLAG_TYPE_STRINGS cli_strings

/* The flags' values, a member for each row of the option table (clspeech/internal/train_options.def),
 * and what train_flags_finish and transcript_scorer_load make of them. */
typedef struct train_flags {
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) TRAIN_FLAG_TYPE_##type name;
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
  cls_scorer *loaded_scorer;                   /* loaded from scorer_path (transcript_scorer_load), or NULL */
  const char *audio;                           /* transcribe's --audio */
  cls_augmentation augments[CLI_MAX_REPEATS];  /* --augment parsed by train_flags_finish */
  int n_augments;
  bool features_device_asked; /* --features_device host was given (train_flags_finish), not implied */
  /* The values of --strategy, --balance, --load_train and --load_evaluate (train_flags_finish). */
  cls_strategy strategy_mode;
  cls_balance balance_mode;
  cls_load_mode load_train_mode, load_evaluate_mode;
} train_flags;

/* The rows of the option table. */
enum {
  TRAIN_FLAGS_COUNT = 0
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) +1
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
};

/* DeepSpeech's defaults, each row's (the summaries under the data folder, XDG_DATA_HOME's). */
void train_flags_defaults(train_flags *f);
/* The table for cli_parse_flags in out[0 .. TRAIN_FLAGS_COUNT), the caller's, its values pointing
 * into *f; returns TRAIN_FLAGS_COUNT. */
int train_flags_table(train_flags *f, cli_flag *out);
/* Resolves derived defaults (checkpoint folders, dropout -1 = dropout_rate), parses the modes
 * (strategy, balance, load) into their enums and the --augment specifications (refusing those not
 * implemented yet, and --augment with --features_device host asked for; notices for --augment with
 * --feature_cache and for --cache_for_epochs) (the numeric flags' ranges were checked while parsing,
 * flag_rules.c); prints the problem and returns CLI_EXIT_USAGE, or 0. */
int train_flags_finish(train_flags *f, const char *command);
/* The engine's options for these flags (n_classes from the alphabet). */
cls_train_options train_flags_options(const train_flags *f, int n_classes);
/* Writes every flag as --name=value lines (DeepSpeech's flags.txt; a repeatable flag once per value)
 * to path; 0 on success. */
int train_flags_write(const train_flags *f, const char *path);

#endif
