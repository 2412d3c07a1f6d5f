/* The one table of numeric flag rules (see flags.h): for every numeric flag of every subcommand, by
 * name, the range its value must lie in. cli_parse_flags applies it after parsing, before any
 * work, so that a value the engine would turn into NaN weights, a hang or a late failure (an
 * infinite learning rate, a NaN dropout, a 10^8 ms window) is a usage error naming the flag. */
#include "flags.h"

#include "clspeech/features.h"

#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#define BIG 2147483647.0 /* INT_MAX: any int */

static const cli_rule rules[] = {
    /* name                 min      max        min_open max_open */
    {"train_batch_size", 1, 1 << 20, false, false},
    {"dev_batch_size", 1, 1 << 20, false, false},
    {"test_batch_size", 1, 1 << 20, false, false},
    {"epochs", 0, BIG, false, false},
    {"learning_rate", 0, 10, true, false},
    {"beta1", 0, 1, false, true},
    {"beta2", 0, 1, false, true},
    {"epsilon", 0, 1, true, false},
    {"dropout_rate", 0, 1, false, true},
    {"dropout_rate2", -1, 1, false, true}, /* negative: --dropout_rate */
    {"dropout_rate3", -1, 1, false, true},
    {"dropout_rate4", -1, 1, false, true},
    {"dropout_rate5", -1, 1, false, true},
    {"dropout_rate6", -1, 1, false, true},
    {"relu_clip", 0, 1e6, true, false},
    {"n_hidden", 1, 65536, false, false},
    {"checkpoint_secs", 0, BIG, false, false},
    {"cache_for_epochs", 0, BIG, false, false},
    {"max_to_keep", 1, BIG, false, false},
    {"drop_source_layers", 0, 5, false, false}, /* DeepSpeech drops at most 5 (it warns and clamps; refused here) */
    {"plateau_epochs", 1, BIG, false, false},
    {"plateau_reduction", 0, 1, true, false},
    {"es_epochs", 1, BIG, false, false},
    {"es_min_delta", 0, 1e30, false, false},
    {"audio_sample_rate", CLS_MFCC_MIN_RATE, CLS_MFCC_MAX_RATE, false, false},
    {"feature_win_len", 1, CLS_MFCC_MAX_MS, false, false},
    {"feature_win_step", 1, CLS_MFCC_MAX_MS, false, false},
    {"towers_per_device", 1, 64, false, false},
    {"replica_check_steps", 0, BIG, false, false},
    {"limit_train", 0, BIG, false, false},
    {"limit_dev", 0, BIG, false, false},
    {"limit_test", 0, BIG, false, false},
    {"report_count", 0, BIG, false, false},
    {"beam_width", 1, 1 << 16, false, false},
    {"cutoff_prob", 0, 1, true, false},
    {"lm_alpha", -1e6, 1e6, false, false}, /* any finite weight; lm_optimizer searches 0 .. 5 */
    {"lm_beta", -1e6, 1e6, false, false},
    {"cutoff_top_n", 1, 1 << 16, false, false},
    {"n_trials", 1, 1000000, false, false},
    {"lm_alpha_max", 0, 1e6, false, false},
    {"lm_beta_max", 0, 1e6, false, false},
    {"threads", 0, 256, false, false}, /* 0: one per online core */
    {"summary_steps", 0, BIG, false, false},
};

const cli_rule *cli_flag_rule(const char *name) {
  for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
    if (!strcmp(rules[i].name, name)) return &rules[i];
  return NULL;
}

bool cli_rule_allows(const cli_rule *r, double v) {
  if (!isfinite(v)) return false;
  if (r->min_open ? !(v > r->min) : !(v >= r->min)) return false;
  return r->max_open ? v < r->max : v <= r->max;
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
