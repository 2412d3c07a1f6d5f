/* libFuzzer target: the command-line flag parser and the numeric flags' rules. The input, split at
 * NUL bytes, is the argument list after `clspeech train`; the table holds a flag of every type,
 * numeric ones with rules (flag_rules.c) and without, and positional arguments are collected. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
  }
  free(copy);
  return 0;
}
