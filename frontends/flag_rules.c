/* The one table of numeric flag rules (see flags.h), and of the flags' other names: for every numeric flag of every subcommand, by
 * name, the range its value must lie in (the training flags' from their rows of the option table). cli_parse_flags applies it after parsing, before any
 * work, so that a value the engine would turn into NaN weights, a hang or a late failure (an
 * infinite learning rate, a NaN dropout, a 10^8 ms window) is a usage error naming the flag. */
#include "flags.h"

#include "clspeech/features.h"
#include "clspeech/internal/train_options.h"
#include "clspeech/model.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#define BIG 2147483647.0 /* INT_MAX: any int */

/* A row's bounds as its rule (a row of bounds NONE has none). */
#define RULE_NONE(name, min, max)
#define RULE_CLOSED(name, min, max) {#name, min, max, false, false},
#define RULE_OPEN_MIN(name, min, max) {#name, min, max, true, false},
#define RULE_OPEN_MAX(name, min, max) {#name, min, max, false, true},

static const cli_rule rules[] = {
/* The training flags' (clspeech/internal/train_options.def), which transcribe, export, lm_optimizer and
   features share. */
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) RULE_##bounds(name, min, max)
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
    /* lm_optimizer's own: name  min      max        min_open max_open */
    {"n_trials", 1, 1000000, false, false},
    {"lm_alpha_max", 0, 1e6, false, false},
    {"lm_beta_max", 0, 1e6, false, false},
    {"threads", 0, 256, false, false}, /* 0: one per online core */
    /* import's own */
    {"max_seconds", 0, 1e6, false, false},
    {"min_chars_per_second", 0, 1e6, false, false},
};

/* The flags that are another name of a flag (DeepSpeech's aliases): given, they are that flag given. */
static const struct {
  const char *alias, *name;
} aliases[] = {{"scorer", "scorer_path"}};

const char *cli_flag_alias_of(const char *alias) {
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
    if (!strcmp(aliases[i].alias, alias)) return aliases[i].name;
  return NULL;
}

const cli_rule *cli_flag_rule(const char *name) {
  for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
    if (!strcmp(rules[i].name, name)) return &rules[i];
  return NULL;
}

bool cli_rule_allows(const cli_rule *r, double v) {
  return cls_option_within(v, r->min, r->max, r->min_open, r->max_open);
}

void cli_rule_describe(const cli_rule *r, bool integer, char *out, size_t cap) {
  const char *what = integer ? "a whole number" : "a finite number";
  if (r->max >= BIG && r->min == 0 && !r->min_open)
    snprintf(out, cap, "not be negative");
  else if (r->max >= BIG && !r->min_open)
    snprintf(out, cap, "be %s of at least %g", what, r->min);
  else
    snprintf(out, cap, "be %s in %c%g, %g%c", what, r->min_open ? '(' : '[', r->min, r->max, r->max_open ? ')' : ']');
}
