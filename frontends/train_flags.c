/* DeepSpeech's training flags (see train_flags.h). */
#include "train_flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clspeech/data.h"

static char default_checkpoint_dir[4096], default_summary_dir[4096];

/* DeepSpeech's data folders: $XDG_DATA_HOME/clspeech/<leaf>, else ~/.local/share/clspeech/<leaf>. */
static void data_dir(const char *leaf, char *out, size_t cap) {
  const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    snprintf(out, cap, "%s/clspeech/%s", xdg, leaf);
  else
    snprintf(out, cap, "%s/.local/share/clspeech/%s", home ? home : ".", leaf);
}

/* A float default as the decimal it was written as (0.05f -> 0.05, not 0.0500000007...): the
   shortest decimal that reads back as the same float, so that --help and flags.txt show it so. */
static double decimal(float x) {
  char text[32];
  for (int digits = 6; digits < 9; digits++) {
    snprintf(text, sizeof text, "%.*g", digits, (double)x);
    if ((float)strtod(text, NULL) == x) return strtod(text, NULL);
  }
  return (double)x;
}

void train_flags_defaults(train_flags *f) {
  /* DeepSpeech's training defaults come from the engine's; the rest are the command's. */
  const int n_hidden = 2048; /* DeepSpeech's --n_hidden */
  const cls_train_options d = cls_train_options_default(n_hidden, 0);
  memset(f, 0, sizeof *f);
  f->train_files = f->dev_files = f->test_files = f->metrics_files = "";
  f->alphabet_config_path = "data/alphabet.txt";
  f->train_batch_size = d.train_batch_size;
  f->dev_batch_size = d.dev_batch_size;
  f->test_batch_size = d.test_batch_size;
  f->epochs = d.epochs;
  f->learning_rate = decimal(d.learning_rate);
  f->beta1 = decimal(d.beta1);
  f->beta2 = decimal(d.beta2);
  f->epsilon = decimal(d.epsilon);
  f->dropout_rate = decimal(d.dropout[0]);
  f->dropout_rate2 = f->dropout_rate3 = f->dropout_rate6 = -1.0; /* -1: --dropout_rate */
  f->dropout_rate4 = decimal(d.dropout[3]);
  f->dropout_rate5 = decimal(d.dropout[4]);
  f->relu_clip = decimal(d.model.relu_clip);
  f->n_hidden = n_hidden;
  f->random_seed = (int)d.random_seed;
  f->checkpoint_dir = f->load_checkpoint_dir = f->save_checkpoint_dir = "";
  f->checkpoint_secs = d.checkpoint_secs;
  f->max_to_keep = d.max_to_keep;
  f->load_train = cls_load_mode_name(d.load_train);
  f->load_evaluate = cls_load_mode_name(d.load_evaluate);
  f->drop_source_layers = d.drop_source_layers;
  f->force_initialize_learning_rate = d.force_initialize_learning_rate;
  f->reduce_lr_on_plateau = d.reduce_lr_on_plateau;
  f->plateau_epochs = d.plateau_epochs;
  f->plateau_reduction = decimal(d.plateau_reduction);
  f->early_stop = d.early_stop;
  f->es_epochs = d.es_epochs;
  f->es_min_delta = decimal(d.es_min_delta);
  f->audio_sample_rate = d.features.sample_rate;
  f->feature_win_len = d.features.win_len_ms;
  f->feature_win_step = d.features.win_step_ms;
  f->feature_cache = "";
  f->cache_for_epochs = 0;
  f->features_device = d.host_features ? "host" : "device";
  f->devices = "";
  f->show_progressbar = true;
  f->report_count = 5;
  f->beam_width = 1024;
  f->cutoff_prob = 1.0;
  f->cutoff_top_n = 300;
  f->scorer_path = "";
  f->lm_alpha = CLS_LM_ALPHA_DEFAULT;
  f->lm_beta = CLS_LM_BETA_DEFAULT;
  f->test_output_file = "";
  /* Summaries are on by default, where DeepSpeech's went; an empty --summary_dir turns them off. */
  data_dir("summaries", default_summary_dir, sizeof default_summary_dir);
  f->summary_dir = default_summary_dir;
  f->summary_steps = d.summary_steps;
  f->strategy = cls_strategy_name(d.strategy);
  f->balance = cls_balance_name(d.balance);
  f->towers_per_device = d.towers_per_device;
  f->replica_check_steps = d.replica_check_steps;
  f->overlap_reduction = !d.no_overlap;
  f->log_placement = d.log_placement;
  f->audio = "";
}

cli_flag *train_flags_table(train_flags *f, int *n) {
  static cli_flag t[96];
  int k = 0;
#define S(name, help) t[k++] = (cli_flag){#name, CLI_STRING, &f->name, help, false}
#define I(name, help) t[k++] = (cli_flag){#name, CLI_INT, &f->name, help, false}
#define D(name, help) t[k++] = (cli_flag){#name, CLI_DOUBLE, &f->name, help, false}
#define B(name, help) t[k++] = (cli_flag){#name, CLI_BOOL, &f->name, help, false}
  S(train_files, "comma-separated training CSVs (wav_filename,wav_filesize,transcript)");
  S(dev_files, "comma-separated validation CSVs, evaluated after every epoch");
  S(test_files, "comma-separated test CSVs, evaluated after training (WER, CER, loss)");
  S(metrics_files, "comma-separated CSVs whose loss is only reported (and summarised) after validation");
  S(alphabet_config_path, "the alphabet file (one label per line)");
  I(train_batch_size, "utterances per training step");
  I(dev_batch_size, "utterances per validation step");
  I(test_batch_size, "utterances per test step");
  I(epochs, "passes over the training set");
  D(learning_rate, "Adam learning rate (kept in the checkpoint; see --force_initialize_learning_rate)");
  D(beta1, "Adam beta1");
  D(beta2, "Adam beta2");
  D(epsilon, "Adam epsilon (TF1 form, outside the bias correction)");
  D(dropout_rate, "dropout of layer 1 (and of layers 2, 3, 5 when their rates are -1)");
  D(dropout_rate2, "dropout of layer 2 (-1: --dropout_rate)");
  D(dropout_rate3, "dropout of layer 3 (-1: --dropout_rate)");
  D(dropout_rate4, "unused by the model, as in DeepSpeech");
  D(dropout_rate5, "unused by the model, as in DeepSpeech");
  D(dropout_rate6, "dropout of layer 5 (-1: --dropout_rate)");
  D(relu_clip, "ReLU clipping value");
  I(n_hidden, "width of the hidden layers and the LSTM");
  I(random_seed, "seed of the initialisation and of dropout");
  S(checkpoint_dir, "checkpoint folder (default ~/.local/share/clspeech/checkpoints)");
  S(load_checkpoint_dir, "folder to load from (default --checkpoint_dir)");
  S(save_checkpoint_dir, "folder to save to (default --checkpoint_dir)");
  I(checkpoint_secs, "save a train checkpoint at most this often during an epoch (0: only at epoch ends)");
  I(max_to_keep, "train checkpoints kept");
  S(load_train, "auto (best_dev, else last, else init), best, last or init");
  S(load_evaluate, "auto (best_dev, else last), best or last");
  I(drop_source_layers, "transfer learning: re-initialise the last N (1-5) of layers 2, 3, LSTM, 5, 6 of the loaded "
                        "checkpoint (1: the output layer, for a new alphabet)");
  B(force_initialize_learning_rate, "use --learning_rate even when the checkpoint holds one");
  B(reduce_lr_on_plateau, "reduce the learning rate when the dev loss stops improving");
  I(plateau_epochs, "epochs without improvement before a reduction");
  D(plateau_reduction, "factor of a reduction");
  B(early_stop, "stop when the dev loss stops improving");
  I(es_epochs, "epochs without improvement before stopping");
  D(es_min_delta, "a dev loss must fall by more than this to count as an improvement");
  I(audio_sample_rate, "sample rate of the features; other audio is resampled");
  I(feature_win_len, "feature window in milliseconds");
  I(feature_win_step, "feature step in milliseconds");
  S(feature_cache, "folder caching each file's features (implies --features_device host; an --augment'ed training "
                   "set is featurised on the device and never cached)");
  I(cache_for_epochs, "DeepSpeech's epochs before the feature cache is refreshed: accepted, no effect (augmented "
                      "training sets are never cached; other features never change)");
  S(features_device, "device (OpenCL, default) or host");
  S(devices, "OpenCL device selection (all|gpu|cpu|accelerator|P:D|name, comma-separated): a tower on each");
  S(strategy, "hybrid (one synchronous update from the towers' averaged gradients), sync (one tower at a time) or async");
  S(balance, "hybrid's split of the global batch: auto (in proportion to each tower's measured speed) or equal");
  I(towers_per_device, "towers on each selected device");
  I(replica_check_steps, "compare the towers' parameter replicas every N steps (0: never)");
  B(overlap_reduction, "read each layer's gradient back while the backward pass goes on");
  B(log_placement, "print each tower's device, queues, programs, batch share and buffer sizes");
  B(horovod, "train with the other processes of an MPI job (mpirun): gradients averaged across them, lr x ranks");
  I(limit_train, "at most this many training samples (0: all)");
  I(limit_dev, "at most this many validation samples (0: all)");
  I(limit_test, "at most this many test samples (0: all)");
  B(reverse_train, "longest training samples first");
  B(reverse_dev, "longest validation samples first");
  B(reverse_test, "longest test samples first");
  B(show_progressbar, "progress lines updated in place on a terminal");
  B(strict, "a bad sample (characters not in the alphabet, unreadable audio, too short) is fatal");
  I(report_count, "best, median and worst samples shown in the test report");
  I(beam_width, "CTC beam search width (1: greedy decoding)");
  D(cutoff_prob, "beam search: keep classes within this cumulative probability (1.0: off)");
  I(cutoff_top_n, "beam search: keep at most this many classes per frame");
  S(scorer_path, "language model for the beam search: ARPA or `clspeech lm`'s binary form (\"\": none)");
  D(lm_alpha, "weight of the language model's ln P(word | history) in the beam search");
  D(lm_beta, "bonus per word in the beam search with a language model");
  S(test_output_file, "write every test sample's result as JSON here");
  t[k++] = (cli_flag){"augment", CLI_STRINGS, &f->augment,
                      "DeepSpeech's augmentation NAME[key=value,...], repeatable, applied to training batches: all "
                      "thirteen of DeepSpeech 0.9.3's, signal ones on the decoded audio, the others on the device "
                      "(docs/train.md#augmentation)",
                      false};
  S(summary_dir, "TensorBoard event files go to DIR/train, DIR/dev and DIR/metrics (\"\": none)");
  I(summary_steps, "each variable's statistics and histograms (and its gradient's) every N steps (0: never)");
#undef S
#undef I
#undef D
#undef B
  *n = k;
  return t;
}

static int train_flags_augment(train_flags *f, const char *command);

int train_flags_finish(train_flags *f, const char *command) {
  if (!*f->checkpoint_dir) {
    data_dir("checkpoints", default_checkpoint_dir, sizeof default_checkpoint_dir);
    f->checkpoint_dir = default_checkpoint_dir;
  }
  if (!*f->load_checkpoint_dir) f->load_checkpoint_dir = f->checkpoint_dir;
  if (!*f->save_checkpoint_dir) f->save_checkpoint_dir = f->checkpoint_dir;
  if (f->dropout_rate2 < 0) f->dropout_rate2 = f->dropout_rate;
  if (f->dropout_rate3 < 0) f->dropout_rate3 = f->dropout_rate;
  if (f->dropout_rate6 < 0) f->dropout_rate6 = f->dropout_rate;
  /* "host" here was asked for (the default is the device); --feature_cache implies it. */
  f->features_device_asked = !strcmp(f->features_device, "host");
  if (*f->feature_cache) f->features_device = "host";
  const char *bad = NULL;
  char why[256];
  /* The numeric flags were checked against their rules (flag_rules.c) while parsing. */
  if (cls_strategy_parse(f->strategy, &f->strategy_mode) != CLS_OK)
    bad = "--strategy must be hybrid, sync or async";
  else if (f->horovod && f->strategy_mode == CLS_STRATEGY_ASYNC)
    bad = "--horovod trains with --strategy hybrid or sync, not async";
  else if (cls_balance_parse(f->balance, &f->balance_mode) != CLS_OK) bad = "--balance must be auto or equal";
  else if (cls_load_mode_parse(f->load_train, &f->load_train_mode) != CLS_OK) {
    snprintf(why, sizeof why, "--load_train must be auto, best, last or init, not \"%s\"", f->load_train);
    bad = why;
  } else if (cls_load_mode_parse(f->load_evaluate, &f->load_evaluate_mode) != CLS_OK ||
             f->load_evaluate_mode == CLS_LOAD_INIT)
    bad = "--load_evaluate must be auto, best or last";
  else if (strcmp(f->features_device, "device") && strcmp(f->features_device, "host"))
    bad = "--features_device must be device or host";
  if (bad) {
    fprintf(stderr, "clspeech %s: %s\n", command, bad);
    return CLI_EXIT_USAGE;
  }
  return train_flags_augment(f, command);
}

/* --augment: each specification parsed and checked (DeepSpeech's grammar, clspeech/features.h), then
   refused when this build does not run it yet, an overlay whose source lists no readable audio, and
   refused on the host feature path. */
static int train_flags_augment(train_flags *f, const char *command) {
  f->n_augments = 0;
  for (int i = 0; i < f->augment.n; i++) {
    cls_error err;
    cls_error_clear(&err);
    if (cls_augment_parse(f->augment.items[i], &f->augments[i], &err) != CLS_OK ||
        cls_augment_check_supported(&f->augments[i], &err) != CLS_OK) {
      fprintf(stderr, "clspeech %s: --augment \"%s\": %s\n", command, f->augment.items[i], err.text);
      return CLI_EXIT_USAGE;
    }
    if (f->augments[i].kind == CLS_AUGMENT_OVERLAY && cls_overlay_source_check(f->augments[i].source, &err) != CLS_OK) {
      fprintf(stderr, "clspeech %s: --augment \"%s\": overlay: source %s\n", command, f->augment.items[i], err.text);
      return CLI_EXIT_USAGE;
    }
    f->n_augments++;
  }
  if (f->n_augments > 0 && f->features_device_asked) {
    fprintf(stderr,
            "clspeech %s: --augment runs in the device feature path: not with --features_device host (leave it "
            "out; --feature_cache still serves the sets that are not augmented)\n",
            command);
    return CLI_EXIT_USAGE;
  }
  if (f->n_augments > 0 && *f->feature_cache)
    fprintf(stderr,
            "clspeech %s: notice: --augment: the training set's features are made on the device every epoch and "
            "never cached; the dev, test and metrics sets use --feature_cache %s\n",
            command, f->feature_cache);
  if (f->cache_for_epochs > 0)
    fprintf(stderr,
            "clspeech %s: notice: --cache_for_epochs %d has no effect: clspeech never caches augmented features, "
            "and features without augmentation never change\n",
            command, f->cache_for_epochs);
  return 0;
}

cls_train_options train_flags_options(const train_flags *f, int n_classes) {
  cls_train_options o = cls_train_options_default(f->n_hidden, n_classes);
  o.model.relu_clip = (float)f->relu_clip;
  o.features = cls_mfcc_default(f->audio_sample_rate);
  o.features.win_len_ms = f->feature_win_len;
  o.features.win_step_ms = f->feature_win_step;
  o.train_batch_size = f->train_batch_size;
  o.dev_batch_size = f->dev_batch_size;
  o.test_batch_size = f->test_batch_size;
  o.epochs = f->epochs;
  o.learning_rate = (float)f->learning_rate;
  o.beta1 = (float)f->beta1;
  o.beta2 = (float)f->beta2;
  o.epsilon = (float)f->epsilon;
  float d[6] = {(float)f->dropout_rate, (float)f->dropout_rate2, (float)f->dropout_rate3,
                (float)f->dropout_rate4, (float)f->dropout_rate5, (float)f->dropout_rate6};
  memcpy(o.dropout, d, sizeof d);
  o.random_seed = (uint32_t)f->random_seed;
  o.load_checkpoint_dir = f->load_checkpoint_dir;
  o.save_checkpoint_dir = f->save_checkpoint_dir;
  o.checkpoint_secs = f->checkpoint_secs;
  o.max_to_keep = f->max_to_keep;
  o.load_train = f->load_train_mode;
  o.load_evaluate = f->load_evaluate_mode;
  o.force_initialize_learning_rate = f->force_initialize_learning_rate;
  o.drop_source_layers = f->drop_source_layers;
  o.reduce_lr_on_plateau = f->reduce_lr_on_plateau;
  o.plateau_epochs = f->plateau_epochs;
  o.plateau_reduction = (float)f->plateau_reduction;
  o.early_stop = f->early_stop;
  o.es_epochs = f->es_epochs;
  o.es_min_delta = (float)f->es_min_delta;
  o.host_features = !strcmp(f->features_device, "host");
  o.feature_cache = f->feature_cache;
  o.strategy = f->strategy_mode;
  o.balance = f->balance_mode;
  o.towers_per_device = f->towers_per_device;
  o.replica_check_steps = f->replica_check_steps;
  o.no_overlap = !f->overlap_reduction;
  o.log_placement = f->log_placement;
  o.horovod = f->horovod;
  o.summary_dir = f->summary_dir;
  o.summary_steps = f->summary_steps;
  o.augment = f->augments;
  o.n_augment = f->n_augments;
  return o;
}

int train_flags_write(const train_flags *f, const char *path) {
  cls_output *o = NULL;
  cls_error err;
  if (cls_output_open(path, &o, &err) != CLS_OK) return -1;
  FILE *out = cls_output_file(o);
  train_flags copy = *f;
  int n = 0;
  cli_flag *t = train_flags_table(&copy, &n);
  for (int i = 0; i < n; i++) {
    switch (t[i].type) {
      case CLI_STRING: fprintf(out, "--%s=%s\n", t[i].name, *(const char **)t[i].value); break;
      case CLI_INT: fprintf(out, "--%s=%d\n", t[i].name, *(int *)t[i].value); break;
      case CLI_DOUBLE: fprintf(out, "--%s=%.17g\n", t[i].name, *(double *)t[i].value); break;
      case CLI_BOOL: fprintf(out, "--%s=%s\n", t[i].name, *(bool *)t[i].value ? "true" : "false"); break;
      case CLI_STRINGS: {
        const cli_strings *list = t[i].value;
        for (int j = 0; j < list->n; j++) fprintf(out, "--%s=%s\n", t[i].name, list->items[j]);
        break;
      }
    }
  }
  return cls_output_commit(o, path, &err) == CLS_OK ? 0 : -1;
}
