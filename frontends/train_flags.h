/* The flags of `clspeech train` and `clspeech transcribe`, with DeepSpeech 0.9's names and
 * defaults (training/deepspeech_training/util/flags.py), and their conversion into the engine's
 * training options. */
#ifndef CLS_TRAIN_FLAGS_H
#define CLS_TRAIN_FLAGS_H

#include <stdbool.h>

#include "clspeech/scorer.h"
#include "clspeech/train.h"
#include "flags.h"

typedef struct train_flags {
  const char *train_files, *dev_files, *test_files, *metrics_files, *alphabet_config_path;
  int train_batch_size, dev_batch_size, test_batch_size, epochs;
  double learning_rate, beta1, beta2, epsilon;
  double dropout_rate, dropout_rate2, dropout_rate3, dropout_rate4, dropout_rate5, dropout_rate6, relu_clip;
  int n_hidden, random_seed;
  const char *checkpoint_dir, *load_checkpoint_dir, *save_checkpoint_dir;
  int checkpoint_secs, max_to_keep;
  const char *load_train, *load_evaluate;
  int drop_source_layers; /* transfer learning: the last N of layers 2, 3, LSTM, 5, 6 made afresh */
  bool force_initialize_learning_rate, reduce_lr_on_plateau, early_stop;
  int plateau_epochs, es_epochs;
  double plateau_reduction, es_min_delta;
  int audio_sample_rate, feature_win_len, feature_win_step;
  const char *feature_cache, *features_device, *devices;
  int cache_for_epochs; /* DeepSpeech's; accepted, no effect (augmented training sets are never cached) */
  int limit_train, limit_dev, limit_test;
  bool reverse_train, reverse_dev, reverse_test, show_progressbar, strict;
  int report_count, beam_width, cutoff_top_n;
  double cutoff_prob;
  const char *scorer_path; /* a language model (ARPA or clspeech's binary form); "": none */
  double lm_alpha, lm_beta;
  cls_scorer *scorer;      /* loaded from scorer_path (transcript_scorer_load), or NULL */
  const char *test_output_file;
  const char *summary_dir;
  int summary_steps;
  const char *strategy, *balance;
  int towers_per_device, replica_check_steps;
  bool overlap_reduction, log_placement, horovod;
  const char *audio; /* transcribe */
  cli_strings augment;                         /* --augment, repeatable */
  cls_augmentation augments[CLI_MAX_REPEATS];  /* parsed by train_flags_finish */
  int n_augments;
  bool features_device_asked; /* --features_device host was given (train_flags_finish), not implied */
  /* The values of --strategy, --balance, --load_train and --load_evaluate (train_flags_finish). */
  cls_strategy strategy_mode;
  cls_balance balance_mode;
  cls_load_mode load_train_mode, load_evaluate_mode;
} train_flags;

/* DeepSpeech's defaults: its training options from the engine's (cls_train_options_default), and
 * the command's own (--n_hidden 2048, decoding, reports). */
void train_flags_defaults(train_flags *f);
/* The table for cli_parse_flags; `n` receives its length. */
cli_flag *train_flags_table(train_flags *f, int *n);
/* Resolves derived defaults (checkpoint folders, dropout -1 = dropout_rate), parses the modes
 * (strategy, balance, load) into their enums and the --augment specifications (refusing those not
 * implemented yet, and --augment with --features_device host asked for; notices for --augment with
 * --feature_cache and for --cache_for_epochs) (the numeric flags' ranges were checked while parsing,
 * flag_rules.c); prints the problem and returns CLI_EXIT_USAGE, or 0. */
int train_flags_finish(train_flags *f, const char *command);
/* The engine's options for these flags (n_classes from the alphabet). */
cls_train_options train_flags_options(const train_flags *f, int n_classes);
/* Writes every flag as --name=value lines (DeepSpeech's flags.txt) to path; 0 on success. */
int train_flags_write(const train_flags *f, const char *path);

#endif
