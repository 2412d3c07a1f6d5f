/* DeepSpeech's training flags (see train_flags.h): the option table's rows (clspeech/internal/train_options.def)
 * as the command's defaults, flag table, options and flags.txt, and the checks that span flags. */
#include "train_flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clspeech/data.h"
#include "clspeech/internal/train_options.h"
#include "train_compat.h"

static char default_checkpoint_dir[CLS_PATH_CAP], default_summary_dir[CLS_PATH_CAP];

/* DeepSpeech's data folders: $XDG_DATA_HOME/clspeech/<leaf>, else ~/.local/share/clspeech/<leaf>. */
static void data_dir(const char *leaf, char *out, size_t cap) {
  const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    snprintf(out, cap, "%s/clspeech/%s", xdg, leaf);
  else
    snprintf(out, cap, "%s/.local/share/clspeech/%s", home ? home : ".", leaf);
}

/* A row's default into its flag (a repeatable one starts empty). */
#define DEFAULT_STRING(name, value) f->name = (value);
#define DEFAULT_INT(name, value) f->name = (value);
#define DEFAULT_DOUBLE(name, value) f->name = (value);
#define DEFAULT_BOOL(name, value) f->name = (value);
#define DEFAULT_STRINGS(name, value)

void train_flags_defaults(train_flags *f) {
  memset(f, 0, sizeof *f);
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) DEFAULT_##type(name, value)
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
  /* Summaries are on by default, where DeepSpeech's went; an empty --summary_dir turns them off. */
  data_dir("summaries", default_summary_dir, sizeof default_summary_dir);
  f->summary_dir = default_summary_dir;
  f->audio = "";
}

int train_flags_table(train_flags *f, cli_flag *out) {
  int k = 0;
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) \
  out[k++] = (cli_flag){#name, CLI_##type, &f->name, help, false};
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
  return k;
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
  int rc = train_flags_augment(f, command);
  return rc ? rc : train_compat_finish(f, command);
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

/* A row's flag into the options: a member takes it, a converter converts it, the command's own stay here. */
#define OPTION_FIELD(member, value) o.member = (value);
#define OPTION_CONVERT(fn, value) fn(&o, value);
#define OPTION_COMMAND(none, value)

cls_train_options train_flags_options(const train_flags *f, int n_classes) {
  cls_train_options o = cls_train_options_default(f->n_hidden, n_classes);
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) OPTION_##to(target, f->name)
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
  o.augment = f->augments;
  o.n_augment = f->n_augments;
  return o;
}

/* A flag as flags.txt's lines. */
static void write_STRING(FILE *out, const char *name, const char *const *v) { fprintf(out, "--%s=%s\n", name, *v); }
static void write_INT(FILE *out, const char *name, const int *v) { fprintf(out, "--%s=%d\n", name, *v); }
static void write_DOUBLE(FILE *out, const char *name, const double *v) { fprintf(out, "--%s=%.17g\n", name, *v); }
static void write_BOOL(FILE *out, const char *name, const bool *v) {
  fprintf(out, "--%s=%s\n", name, *v ? "true" : "false");
}
static void write_STRINGS(FILE *out, const char *name, const cli_strings *v) {
  for (int j = 0; j < v->n; j++) fprintf(out, "--%s=%s\n", name, v->items[j]);
}

int train_flags_write(const train_flags *f, const char *path) {
  cls_output *o = NULL;
  cls_error err;
  if (cls_output_open(path, &o, &err) != CLS_OK) return -1;
  FILE *out = cls_output_file(o);
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) write_##type(out, #name, &f->name);
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
  return cls_output_commit(o, path, &err) == CLS_OK ? 0 : -1;
}
