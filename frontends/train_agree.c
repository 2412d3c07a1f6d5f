/* The ranks of `clspeech train --horovod` agree on what they train (see train_agree.h): each setting
 * as text, the data sets as digests of their contents in order. Owns the list of flags a rank may
 * hold on its own; the comparison itself is the engine's (cls_world_agree). */
#include "train_agree.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Flags each rank may set for itself (the option table's rows of ranks OWN,
 * clspeech/internal/train_options.def): its devices and how it uses them, what rank 0 alone reads or
 * writes (checkpoints it loads and saves, summaries, the test after training), how it prints; and the
 * CSV paths and the alphabet's path, whose contents are compared instead. */
#define PER_RANK_OWN(name) #name,
#define PER_RANK_AGREE(name)
static const char *const per_rank[] = {
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) PER_RANK_##ranks(name)
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
};

static int is_per_rank(const char *name) {
  for (size_t i = 0; i < sizeof per_rank / sizeof *per_rank; i++)
    if (!strcmp(per_rank[i], name)) return 1;
  return 0;
}

/* A flag's value as flags.txt writes it (a repeatable flag's values joined by spaces). */
static void flag_text(const cli_flag *f, char *out, size_t cap) {
  switch (f->type) {
    case CLI_STRING: snprintf(out, cap, "%s", *(const char *const *)f->value); break;
    case CLI_INT: snprintf(out, cap, "%d", *(const int *)f->value); break;
    case CLI_DOUBLE: snprintf(out, cap, "%.17g", *(const double *)f->value); break;
    case CLI_BOOL: snprintf(out, cap, "%s", *(const bool *)f->value ? "true" : "false"); break;
    case CLI_STRINGS: {
      const cli_strings *list = f->value;
      size_t used = 0;
      out[0] = '\0';
      for (int j = 0; j < list->n && used < cap; j++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", j ? " " : "", list->items[j]);
      break;
    }
  }
}

/* FNV-1a, 64 bits: the digest of a set's contents (not a defence against tampering, only a test of
   sameness; the engine compares the text by SHA-256). */
static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

/* "none", or each set's CSV path(s), its samples and the digest of every sample's audio path and
 * labels in order: "a.csv: 6 samples, digest 0123456789abcdef". */
static void sets_text(const data_set *sets, int n, char *out, size_t cap) {
  size_t used = (size_t)snprintf(out, cap, "%s", n ? "" : "none");
  for (int s = 0; s < n && used < cap; s++) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < sets[s].n; i++) {
      const cls_utterance *u = &sets[s].utts[i];
      h = fnv(h, u->path, strlen(u->path) + 1);
      h = fnv(h, &u->n_labels, sizeof u->n_labels);
      h = fnv(h, u->labels, (size_t)u->n_labels * sizeof *u->labels);
    }
    used += (size_t)snprintf(out + used, cap - used, "%s%s: %d sample%s, digest %016llx", s ? "; " : "", sets[s].name,
                             sets[s].n, sets[s].n == 1 ? "" : "s", (unsigned long long)h);
  }
}

/* "none", or each overlay source's CSV with its size and the digest of its bytes (the rows name the
 * files and their sizes, as DeepSpeech's CSVs do): "noise.csv: 812 bytes, digest 0123456789abcdef". */
static void sources_text(const cls_augmentation *augs, int n_augs, char *out, size_t cap) {
  size_t used = (size_t)snprintf(out, cap, "none");
  int any = 0;
  for (int j = 0; j < n_augs && used < cap; j++) {
    if (augs[j].kind != CLS_AUGMENT_OVERLAY) continue;
    if (!any) used = 0;
    any = 1;
    uint64_t h = 0xcbf29ce484222325ULL;
    long long bytes = -1;
    FILE *f = fopen(augs[j].source, "rb");
    if (f) {
      unsigned char buf[65536];
      size_t got;
      bytes = 0;
      while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        h = fnv(h, buf, got);
        bytes += (long long)got;
      }
      if (ferror(f)) bytes = -1;
      fclose(f);
    }
    if (bytes < 0)
      used += (size_t)snprintf(out + used, cap - used, "%s%s: unreadable", used ? "; " : "", augs[j].source);
    else
      used += (size_t)snprintf(out + used, cap - used, "%s%s: %lld bytes, digest %016llx", used ? "; " : "",
                               augs[j].source, bytes, (unsigned long long)h);
  }
}

int train_agree(const char *command, const cli_flag *table, int n_flags, const cls_alphabet *alphabet,
                const train_agree_sets *sets) {
  enum { CAP = 4096 };
  cls_world_setting settings[CLS_WORLD_MAX_SETTINGS];
  char *text = calloc(CLS_WORLD_MAX_SETTINGS, CAP), *names = calloc(CLS_WORLD_MAX_SETTINGS, 64);
  if (!text || !names) {
    free(text);
    free(names);
    fprintf(stderr, "clspeech %s: out of memory\n", command);
    return CLI_EXIT_FAILURE;
  }
  int n = 0;
  if (n_flags > CLS_WORLD_MAX_SETTINGS - 5) { /* a new flag must never go uncompared: the cap raised instead */
    free(text);
    free(names);
    fprintf(stderr, "clspeech %s: %d flags, more than the %d the ranks' agreement compares\n", command, n_flags,
            CLS_WORLD_MAX_SETTINGS - 5);
    return CLI_EXIT_FAILURE;
  }
  for (int i = 0; i < n_flags; i++) {
    if (is_per_rank(table[i].name)) continue;
    snprintf(names + 64 * n, 64, "--%s", table[i].name);
    flag_text(&table[i], text + (size_t)CAP * n, CAP);
    settings[n] = (cls_world_setting){names + 64 * n, text + (size_t)CAP * n};
    n++;
  }
  /* The alphabet's labels in order (its contents, wherever each rank reads it from). */
  char *a = text + (size_t)CAP * n;
  size_t used = (size_t)snprintf(a, CAP, "%d labels: ", cls_alphabet_size(alphabet));
  for (int i = 0; i < cls_alphabet_size(alphabet) && used < CAP; i++)
    used += (size_t)snprintf(a + used, CAP - used, "%s", cls_alphabet_label(alphabet, i));
  settings[n++] = (cls_world_setting){"the alphabet (--alphabet_config_path)", a};
  sets_text(sets->train, sets->n_train, text + (size_t)CAP * n, CAP);
  settings[n] = (cls_world_setting){"the training set (--train_files, --limit_train, --reverse_train)",
                                    text + (size_t)CAP * n};
  n++;
  sets_text(sets->dev, sets->n_dev, text + (size_t)CAP * n, CAP);
  settings[n] = (cls_world_setting){"the validation sets (--dev_files, --limit_dev, --reverse_dev)",
                                    text + (size_t)CAP * n};
  n++;
  sets_text(sets->metrics, sets->n_metrics, text + (size_t)CAP * n, CAP);
  settings[n] = (cls_world_setting){"the metrics sets (--metrics_files)", text + (size_t)CAP * n};
  n++;
  sources_text(sets->augs, sets->n_augs, text + (size_t)CAP * n, CAP);
  settings[n] = (cls_world_setting){"the contents of --augment overlay's sources", text + (size_t)CAP * n};
  n++;
  cls_error err;
  cls_status st = cls_world_agree(settings, n, &err);
  free(text);
  free(names);
  if (st == CLS_OK) return 0;
  fprintf(stderr, "clspeech %s: %s\n", command, err.text);
  return cli_exit_status(st);
}
