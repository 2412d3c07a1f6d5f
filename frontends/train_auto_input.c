/* `clspeech train --auto_input_dataset` (train_auto_input.h): the split and the alphabet beside the CSV. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "clspeech/data.h"
#include "train_auto_input.h"

static bool exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

static int usage(const char *fmt, ...) CLS_PRINTF(1, 2);
static int usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "clspeech train: --auto_input_dataset ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return CLI_EXIT_USAGE;
}

/* The CSV and its folder: the flag's file, or the one CSV of the flag's folder that is not a split. */
static int find_csv(const char *given, train_auto_paths *p, char *dir, size_t dir_cap) {
  struct stat sb;
  if (stat(given, &sb) != 0) return usage("%s: %s", given, strerror(errno));
  if (!S_ISDIR(sb.st_mode)) {
    snprintf(p->csv, sizeof p->csv, "%s", given);
    const char *slash = strrchr(given, '/');
    if (!slash) snprintf(dir, dir_cap, ".");
    else if (slash == given) snprintf(dir, dir_cap, "/");
    else snprintf(dir, dir_cap, "%.*s", (int)(slash - given), given);
    return 0;
  }
  snprintf(dir, dir_cap, "%s", given);
  DIR *d = opendir(given);
  if (!d) return usage("%s: %s", given, strerror(errno));
  int found = 0;
  for (struct dirent *e; (e = readdir(d));) {
    const size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".csv")) continue;
    if (!strcmp(e->d_name, "train.csv") || !strcmp(e->d_name, "dev.csv") || !strcmp(e->d_name, "test.csv")) continue;
    if (found++ == 0) snprintf(p->csv, sizeof p->csv, "%s/%s", given, e->d_name);
  }
  closedir(d);
  if (found > 1)
    return usage("%s: the folder holds %d CSV files besides train.csv, dev.csv and test.csv: name the one to split",
                 given, found);
  if (found == 0) return usage("%s: the folder holds no CSV file to split", given);
  return 0;
}

int train_auto_input(train_flags *f, const cli_flag *flags, int n_flags, train_auto_paths *p) {
  if (!*f->auto_input_dataset) return 0;
  static const char *const sets[3] = {"train_files", "dev_files", "test_files"};
  for (int k = 0; k < 3; k++)
    if (cli_flag_seen(flags, n_flags, sets[k])) return usage("makes the data sets: not with --%s", sets[k]);
  if (f->horovod)
    return usage("writes its sets once: make them in a run without --horovod, then give --train_files, "
                 "--dev_files and --test_files");
  char dir[CLS_PATH_CAP];
  int rc = find_csv(f->auto_input_dataset, p, dir, sizeof dir);
  if (rc) return rc;
  static const char *const names[3] = {"train.csv", "dev.csv", "test.csv"};
  int have = 0;
  for (int k = 0; k < 3; k++) {
    if (snprintf(p->sets[k], sizeof p->sets[k], "%s/%s", dir, names[k]) >= (int)sizeof p->sets[k])
      return usage("%s: the folder's path is too long", dir);
    have += exists(p->sets[k]);
  }
  /* The alphabet: the flag's, the one beside the CSV, or one made from the CSV's transcripts, counted as
     the split reads them (or on their own when the sets are there already). */
  if (cli_flag_seen(flags, n_flags, "alphabet_config_path"))
    snprintf(p->alphabet, sizeof p->alphabet, "%s", f->alphabet_config_path);
  else if (snprintf(p->alphabet, sizeof p->alphabet, "%s/alphabet.txt", dir) >= (int)sizeof p->alphabet)
    return usage("%s: the folder's path is too long", dir);
  const bool make = !cli_flag_seen(flags, n_flags, "alphabet_config_path") && !exists(p->alphabet);
  if (have > 0 && have < 3)
    return usage("%s: some of train.csv, dev.csv and test.csv are there and some are not: leave all three there (to "
                 "use them) or none (to make them)",
                 dir);
  cls_error err;
  cls_alphabet_counts *counts = NULL;
  cls_status st = make ? cls_alphabet_counts_create(&counts, &err) : CLS_OK;
  if (st == CLS_OK && have == 3) {
    fprintf(stderr, "clspeech: --auto_input_dataset: using the sets already beside %s (%s, %s, %s)\n", p->csv,
            names[0], names[1], names[2]);
    if (counts) st = cls_auto_split_count(p->csv, counts, &err);
  } else if (st == CLS_OK) {
    const char *out[3] = {p->sets[0], p->sets[1], p->sets[2]};
    int n[3];
    st = cls_auto_split_csv(p->csv, (uint64_t)(uint32_t)f->random_seed, out, n, counts, &err);
    if (st == CLS_OK)
      fprintf(stderr, "clspeech: --auto_input_dataset %s: %d training, %d validation and %d test rows (--random_seed %d) "
              "written to %s, %s and %s\n", p->csv, n[0], n[1], n[2], f->random_seed, out[0], out[1], out[2]);
  }
  if (st == CLS_OK && counts) {
    st = cls_alphabet_counts_write(counts, p->alphabet, &err);
    if (st == CLS_OK)
      fprintf(stderr, "clspeech: --auto_input_dataset: an alphabet of the %d characters of %s's transcripts written to "
              "%s\n", cls_alphabet_counts_size(counts), p->csv, p->alphabet);
  } else if (st == CLS_OK && !make && !cli_flag_seen(flags, n_flags, "alphabet_config_path")) {
    fprintf(stderr, "clspeech: --auto_input_dataset: using the alphabet beside it, %s\n", p->alphabet);
  }
  cls_alphabet_counts_destroy(counts);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech train: --auto_input_dataset: %s\n", err.text);
    return cli_exit_status(st);
  }
  f->train_files = p->sets[0];
  f->dev_files = p->sets[1];
  f->test_files = p->sets[2];
  f->alphabet_config_path = p->alphabet;
  return 0;
}
