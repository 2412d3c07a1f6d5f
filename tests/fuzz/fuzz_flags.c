/* libFuzzer target: the command-line flag parser and the numeric flags' rules. The input, split at
 * NUL bytes, is the argument list after `clspeech train`; the table holds a flag of every type,
 * numeric ones with rules (flag_rules.c) and without, the repeatable --augment, and positional
 * arguments are collected. Every --augment value is then parsed (engine/features/augment/spec.c): what it
 * accepts obeys its ranges, the operations an utterance draws from it lie inside the utterance, and the
 * signal augmentations (features/augment/host_pass.c) keep a short signal's length and finite values. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "augment_draw.h"
#include "clspeech/features.h"
#include "features/augment/device_ops.h"
#include "features/augment/overlay.h"
#include "features/augment/host_pass.h"
#include "flags.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each --augment value: accepted ones keep p in [0, 1] and radii >= 0; the supported ones' operations
   for a short and a longer utterance lie inside it. */
static void check_augment(const cli_strings *list) {
  cls_augmentation augs[CLI_MAX_REPEATS];
  int n = 0;
  for (int i = 0; i < list->n; i++) {
    cls_augmentation a;
    cls_error err;
    if (cls_augment_parse(list->items[i], &a, &err) != CLS_OK) continue;
    if (!(a.p >= 0 && a.p <= 1) || (int)a.kind < 0 || a.kind >= CLS_AUGMENT_N_KINDS) abort();
    for (int k = 0; k < CLS_AUGMENT_MAX_PARAMS; k++)
      if (!(a.param[k].r >= 0)) abort();
    if (cls_augment_check_supported(&a, &err) == CLS_OK) augs[n++] = a;
  }
  if (n == 0) return;
  /* the host augmentations on a short burst, one sample and silence: the length kept, values finite; an
     overlay mixes a small pool made here (its source file is never read: the fuzzer opens no files) */
  float clips[50];
  size_t starts[4] = {0, 7, 8, 50};
  for (int i = 0; i < 50; i++) clips[i] = (float)cos(0.7 * i) * (i < 8 ? 0.01f : 0.9f);
  const cls_audio_pool pool = {clips, 50, starts, 3, 16000};
  const cls_audio_pool *sources[CLI_MAX_REPEATS];
  for (int i = 0; i < n; i++) sources[i] = augs[i].kind == CLS_AUGMENT_OVERLAY ? &pool : NULL;
  float x[160];
  const size_t lengths[3] = {160, 1, 40};
  for (int c = 0; c < 3; c++) {
    for (size_t i = 0; i < lengths[c]; i++) x[i] = c == 2 ? 0.0f : (float)sin(0.3 * (double)i) * 0.5f;
    cls_error err;
    if (cls_augment_samples(augs, n, sources, 7, 1, (uint32_t)c, c / 2.0, x, lengths[c], 16000, &err) != CLS_OK) continue;
    for (size_t i = 0; i < lengths[c]; i++)
      if (!isfinite(x[i])) abort();
  }
  const int most = cls_augment_max_ops(augs, n);
  cls_augment_op *ops = malloc((size_t)most * sizeof *ops);
  if (!ops) return;
  const cls_augment_context c = {augs, n, 7, 1, 257, 20, 0};
  const int frames[3] = {1, 2, 60};
  for (int f = 0; f < 3; f++)
    for (uint32_t u = 0; u < 4; u++) {
      const int got = cls_augment_utterance(&c, u, u / 3.0, frames[f], 0, ops, NULL);
      if (got < 0 || got > most) abort();
      for (int i = 0; i < got; i++) {
        const int extent = ops[i].kind == CLS_AUGOP_FREQUENCY_MASK ? 257 : frames[f];
        const int mask = ops[i].kind == CLS_AUGOP_FREQUENCY_MASK || ops[i].kind == CLS_AUGOP_TIME_MASK;
        if (mask && (ops[i].lo < 0 || ops[i].hi > extent || ops[i].hi <= ops[i].lo)) abort();
        if (ops[i].kind == CLS_AUGOP_DROPOUT && !(ops[i].value >= 0)) abort();
      }
    }
  free(ops);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char *copy = malloc(size + 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  copy[size] = '\0';
  char *argv[66] = {"clspeech", "train"};
  int argc = 2;
  for (char *p = copy; argc < 65 && p <= copy + size; p += strlen(p) + 1) argv[argc++] = p;
  argv[argc] = NULL;
  const char *files = "", *positional[4];
  int hidden = 2048, epochs = 75, other = 3, n_positional = 0;
  double lr = 0.001, dropout = 0.05, cutoff = 1.0, free_value = 0.5;
  bool progress = true;
  cli_strings augment = {{NULL}, 0};
  cli_flag flags[] = {
      {"train_files", CLI_STRING, &files, "files", false},
      {"n_hidden", CLI_INT, &hidden, "width", false},
      {"epochs", CLI_INT, &epochs, "epochs", false},
      {"unruled_int", CLI_INT, &other, "no rule", false},
      {"learning_rate", CLI_DOUBLE, &lr, "rate", false},
      {"dropout_rate", CLI_DOUBLE, &dropout, "dropout", false},
      {"cutoff_prob", CLI_DOUBLE, &cutoff, "cutoff", false},
      {"unruled_float", CLI_DOUBLE, &free_value, "no rule", false},
      {"show_progressbar", CLI_BOOL, &progress, "progress", false},
      {"augment", CLI_STRINGS, &augment, "augmentations", false},
  };
  const int n = (int)(sizeof flags / sizeof *flags);
  int rc = cli_parse_flags(argc, argv, 2, flags, n, "train", "fuzz", positional, 4, &n_positional);
  if (rc == 0) {
    /* whatever passed obeys its rule */
    for (int i = 0; i < n; i++) {
      const cli_rule *r = cli_flag_rule(flags[i].name);
      if (!r || !flags[i].seen) continue;
      const double v = flags[i].type == CLI_INT ? *(int *)flags[i].value : *(double *)flags[i].value;
      if (!cli_rule_allows(r, v)) abort();
    }
    check_augment(&augment);
  }
  free(copy);
  return 0;
}
