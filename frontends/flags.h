/* Command-line flags in DeepSpeech's (absl) style: --name=value, --name value, and for booleans
 * --name, --name=true|false|1|0 and --noname. Each subcommand declares a table of cli_flag. */
#ifndef CLS_FLAGS_H
#define CLS_FLAGS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum cli_flag_type { CLI_STRING, CLI_INT, CLI_DOUBLE, CLI_BOOL, CLI_STRINGS } cli_flag_type;

/* A repeatable string flag's values (CLI_STRINGS, absl's multi_string: each occurrence adds one), in
 * command-line order. */
#define CLI_MAX_REPEATS 32
typedef struct cli_strings {
  const char *items[CLI_MAX_REPEATS];
  int n;
} cli_strings;

typedef struct cli_flag {
  const char *name;     /* without the leading -- */
  cli_flag_type type;
  void *value;          /* const char **, int *, double *, bool *, cli_strings *: holds the default on entry */
  const char *help;
  bool seen;            /* set when the flag was given */
} cli_flag;

/* A numeric flag's allowed values: finite, min..max, each end open or closed. The one table of them,
 * by flag name, is flag_rules.c; cli_parse_flags applies it to every int and float flag it parses. */
typedef struct cli_rule {
  const char *name;
  double min, max;
  bool min_open, max_open;
} cli_rule;

/* The rule for a flag name, NULL when it has none. */
const cli_rule *cli_flag_rule(const char *name);
/* Whether v is finite and in the rule's range. */
bool cli_rule_allows(const cli_rule *rule, double v);
/* What the value must do, after "must": "be a finite number in (0, 10]", "not be negative". */
void cli_rule_describe(const cli_rule *rule, bool integer, char *out, size_t cap);

/* Parses argv[first..argc) into the table. Positional arguments are an error unless `positional`
 * is given (then they are collected into it, up to `max_positional`).
 * Every numeric flag given is then checked against its rule (cli_flag_rule): a value outside it is
 * a usage error naming the flag and the range.
 * Returns 0 on success, 2 on a usage error (message already printed to stderr), or 1 when --help
 * was asked for (usage already printed to stdout). */
int cli_parse_flags(int argc, char **argv, int first, cli_flag *flags, int n_flags, const char *command,
                    const char *summary, const char **positional, int max_positional, int *n_positional);

/* The flag a string flag `alias` is another name of (flag_rules.c's table), NULL when it is none.
 * cli_parse_flags gives an alias's value to that flag and marks it given; the two given with different
 * values is a usage error. */
const char *cli_flag_alias_of(const char *alias);

void cli_print_flags(const cli_flag *flags, int n_flags);
/* Whether flag `name` of the table was given on the command line (0 when the table has no such flag). */
bool cli_flag_seen(const cli_flag *flags, int n_flags, const char *name);

#endif
