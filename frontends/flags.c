/* Flag parsing for the clspeech subcommands (see flags.h). Prints usage errors to stderr; knows
 * nothing of what the flags mean. */
#include "flags.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(cli_flag_type t) {
  switch (t) {
    case CLI_STRING: return "string";
    case CLI_INT: return "int";
    case CLI_DOUBLE: return "float";
    case CLI_BOOL: return "bool";
    case CLI_STRINGS: return "string, repeatable";
  }
  return "?";
}

void cli_print_flags(const cli_flag *flags, int n) {
  for (int i = 0; i < n; i++) {
    const cli_flag *f = &flags[i];
    char def[256] = "";
    switch (f->type) {
      case CLI_STRING: {
        const char *s = *(const char **)f->value;
        snprintf(def, sizeof def, "\"%s\"", s ? s : "");
        break;
      }
      case CLI_INT: snprintf(def, sizeof def, "%d", *(int *)f->value); break;
      case CLI_DOUBLE: snprintf(def, sizeof def, "%g", *(double *)f->value); break;
      case CLI_BOOL: snprintf(def, sizeof def, "%s", *(bool *)f->value ? "true" : "false"); break;
      case CLI_STRINGS: snprintf(def, sizeof def, "none"); break;
    }
    printf("  --%s (%s, default %s)\n      %s\n", f->name, type_name(f->type), def, f->help);
  }
}

static int set_value(cli_flag *f, const char *text, const char *command) {
  char *end = NULL;
  errno = 0;
  switch (f->type) {
    case CLI_STRING: *(const char **)f->value = text; return 0;
    case CLI_STRINGS: {
      cli_strings *list = f->value;
      if (list->n >= CLI_MAX_REPEATS) {
        fprintf(stderr, "clspeech %s: --%s given more than %d times\n", command, f->name, CLI_MAX_REPEATS);
        return 2;
      }
      list->items[list->n++] = text;
      return 0;
    }
    case CLI_INT: {
      long v = strtol(text, &end, 10);
      if (*text == '\0' || *end != '\0' || errno || v < INT_MIN || v > INT_MAX) break;
      *(int *)f->value = (int)v;
      return 0;
    }
    case CLI_DOUBLE: {
      double v = strtod(text, &end);
      if (*text == '\0' || *end != '\0' || errno) break;
      *(double *)f->value = v;
      return 0;
    }
    case CLI_BOOL:
      if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes")) {
        *(bool *)f->value = true;
        return 0;
      }
      if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no")) {
        *(bool *)f->value = false;
        return 0;
      }
      break;
  }
  const char *type = type_name(f->type);
  fprintf(stderr, "clspeech %s: --%s expects %s %s value, got \"%s\"\n", command, f->name,
          strchr("aeiou", type[0]) ? "an" : "a", type, text);
  return 2;
}

static cli_flag *find(cli_flag *flags, int n, const char *name, size_t len) {
  for (int i = 0; i < n; i++)
    if (strlen(flags[i].name) == len && !strncmp(flags[i].name, name, len)) return &flags[i];
  return NULL;
}

int cli_parse_flags(int argc, char **argv, int first, cli_flag *flags, int n, const char *command, const char *summary,
                    const char **positional, int max_positional, int *n_positional) {
  if (n_positional) *n_positional = 0;
  for (int i = first; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "--helpfull")) {
      printf("usage: clspeech %s [flags]\n%s\n\nflags:\n", command, summary);
      cli_print_flags(flags, n);
      return 1;
    }
    if (arg[0] != '-' || arg[1] == '\0') {
      if (positional && n_positional && *n_positional < max_positional) {
        positional[(*n_positional)++] = arg;
        continue;
      }
      fprintf(stderr, "clspeech %s: unexpected argument \"%s\" (see clspeech %s --help)\n", command, arg, command);
      return 2;
    }
    const char *name = arg + (arg[1] == '-' ? 2 : 1);
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    cli_flag *f = find(flags, n, name, len);
    if (!f && len > 2 && !strncmp(name, "no", 2) && !eq) {
      cli_flag *neg = find(flags, n, name + 2, len - 2);
      if (neg && neg->type == CLI_BOOL) {
        *(bool *)neg->value = false;
        neg->seen = true;
        continue;
      }
    }
    if (!f) {
      fprintf(stderr, "clspeech %s: unknown flag --%.*s (see clspeech %s --help)\n", command, (int)len, name, command);
      return 2;
    }
    f->seen = true;
    const char *text;
    if (eq) {
      text = eq + 1;
    } else if (f->type == CLI_BOOL) {
      *(bool *)f->value = true;
      continue;
    } else if (i + 1 < argc) {
      text = argv[++i];
    } else {
      fprintf(stderr, "clspeech %s: --%s needs a value\n", command, f->name);
      return 2;
    }
    int rc = set_value(f, text, command);
    if (rc) return rc;
  }
  for (int i = 0; i < n; i++) {
    const cli_flag *f = &flags[i];
    const cli_rule *r = f->type == CLI_INT || f->type == CLI_DOUBLE ? cli_flag_rule(f->name) : NULL;
    if (!f->seen || !r) continue;
    const double v = f->type == CLI_INT ? (double)*(int *)f->value : *(double *)f->value;
    if (cli_rule_allows(r, v)) continue;
    char want[96], got[48];
    cli_rule_describe(r, f->type == CLI_INT, want, sizeof want);
    if (f->type == CLI_INT)
      snprintf(got, sizeof got, "%d", *(int *)f->value);
    else
      snprintf(got, sizeof got, "%g", v);
    fprintf(stderr, "clspeech %s: --%s must %s (got %s)\n", command, f->name, want, got);
    return 2;
  }
  for (int i = 0; i < n; i++) {
    const char *target = flags[i].seen && flags[i].type == CLI_STRING ? cli_flag_alias_of(flags[i].name) : NULL;
    cli_flag *t = target ? find(flags, n, target, strlen(target)) : NULL;
    if (!t || t->type != CLI_STRING) continue;
    const char *given = *(const char **)flags[i].value;
    if (t->seen && strcmp(given, *(const char **)t->value)) {
      fprintf(stderr, "clspeech %s: --%s %s and --%s %s are one flag under two names: give one\n", command,
              flags[i].name, given, t->name, *(const char **)t->value);
      return 2;
    }
    *(const char **)t->value = given;
    t->seen = true;
  }
  return 0;
}

bool cli_flag_seen(const cli_flag *flags, int n_flags, const char *name) {
  for (int i = 0; i < n_flags; i++)
    if (!strcmp(flags[i].name, name)) return flags[i].seen;
  return false;
}
