/* `clspeech import FORMAT SRC --out DIR [--alphabet FILE | --make_alphabet] ...`: reads a corpus in
 * one of the public layouts (commonvoice, librispeech, mls, folder; clspeech/internal/import.h), checks
 * every row as training does, on every core, and writes DIR/train.csv, dev.csv, test.csv (DeepSpeech's
 * CSVs naming the original audio), DIR/excluded.csv and with --make_alphabet DIR/alphabet.txt, each by
 * the output rule, with a summary on stdout (docs/import.md). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clspeech/data.h"
#include "clspeech/internal/import.h"
#include "flags.h"

#define CMD "import"
/* Files named per reason in the summary. */
#define SUMMARY_EXAMPLES 3

typedef struct import_progress {
  bool enabled, tty;
  double t0, last;
} import_progress;

static void on_progress(void *user, int done, int total) {
  import_progress *p = user;
  if (!p->enabled) return;
  const double t = (cls_now_ms() - p->t0) / 1000.0;
  if (done < total && t - p->last < (p->tty ? 0.1 : 5.0)) return;
  p->last = t;
  fprintf(stderr, "%sclspeech import: checked %d of %d rows (%.0f%%), %.1f s%s", p->tty ? "\r" : "", done, total,
          total ? 100.0 * done / total : 100.0, t, p->tty && done < total ? "" : "\n");
}


static int fail(cls_status st, const cls_error *err) {
  fprintf(stderr, "clspeech " CMD ": %s\n", err->text);
  return cli_exit_status(st);
}

/* DIR/name into out; CLI_EXIT_USAGE when it does not fit. */
static int out_path(char *out, const char *dir, const char *name) {
  int w = snprintf(out, CLS_PATH_CAP, "%s/%s", dir, name);
  if (w > 0 && w < CLS_PATH_CAP) return 0;
  fprintf(stderr, "clspeech " CMD ": --out %s: the path is too long\n", dir);
  return CLI_EXIT_USAGE;
}

static cls_status write_split(const char *path, const cls_import_list *l, int split, cls_error *err) {
  cls_output *o = NULL;
  cls_status st = cls_output_open(path, &o, err);
  if (st != CLS_OK) return st;
  FILE *f = cls_output_file(o);
  fputs(CLS_DEEPSPEECH_CSV_HEADER "\n", f);
  for (int i = 0; i < l->n; i++) {
    const cls_import_row *r = &l->rows[i];
    if (r->split != split || r->reason != CLS_IMPORT_KEPT) continue;
    cls_csv_write_field(f, r->path);
    fprintf(f, ",%lld,", (long long)r->filesize);
    cls_csv_write_field(f, r->transcript);
    fputc('\n', f);
  }
  return cls_output_commit(o, path, err);
}

static cls_status write_excluded(const char *path, const cls_import_list *l, cls_error *err) {
  cls_output *o = NULL;
  cls_status st = cls_output_open(path, &o, err);
  if (st != CLS_OK) return st;
  FILE *f = cls_output_file(o);
  fputs("path,split,reason,source,line,detail\n", f);
  for (int i = 0; i < l->n; i++) {
    const cls_import_row *r = &l->rows[i];
    if (r->reason == CLS_IMPORT_KEPT) continue;
    cls_csv_write_field(f, r->path);
    fprintf(f, ",%s,%s,", cls_import_split_name((cls_import_split)r->split),
            cls_import_reason_key((cls_import_reason)r->reason));
    cls_csv_write_field(f, l->sources[r->source]);
    fprintf(f, ",%d,", r->line);
    cls_csv_write_field(f, r->detail);
    fputc('\n', f);
  }
  return cls_output_commit(o, path, err);
}

static cls_status write_alphabet(const char *path, const cls_import_list *l, cls_error *err) {
  cls_alphabet_counts *c = NULL;
  cls_status st = cls_alphabet_counts_create(&c, err);
  for (int i = 0; st == CLS_OK && i < l->n; i++)
    if (l->rows[i].reason == CLS_IMPORT_KEPT)
      st = cls_alphabet_counts_add(c, l->rows[i].transcript, strlen(l->rows[i].transcript), err);
  if (st == CLS_OK) st = cls_alphabet_counts_write(c, path, err);
  cls_alphabet_counts_destroy(c);
  return st;
}

static void print_summary(const cls_import_list *l, const cls_import_check_report *rep, double seconds) {
  int kept[CLS_IMPORT_SPLITS] = {0}, rows[CLS_IMPORT_SPLITS] = {0}, count[CLS_IMPORT_REASONS] = {0};
  double audio[CLS_IMPORT_SPLITS] = {0};
  for (int i = 0; i < l->n; i++) {
    const cls_import_row *r = &l->rows[i];
    rows[r->split]++;
    count[r->reason]++;
    if (r->reason == CLS_IMPORT_KEPT) {
      kept[r->split]++;
      audio[r->split] += r->seconds;
    }
  }
  printf("%d rows read, %d kept, %d left out (%.1f s; %d audio headers from the cache, %d opened)\n", l->n,
         count[CLS_IMPORT_KEPT], l->n - count[CLS_IMPORT_KEPT], seconds, rep->cached, rep->probed);
  for (int s = 0; s < CLS_IMPORT_SPLITS; s++)
    if (rows[s])
      printf("  %-5s %d of %d rows kept, %.2f hours of audio (%.1f s)\n", cls_import_split_name((cls_import_split)s), kept[s],
             rows[s], audio[s] / 3600.0, audio[s]);
  for (int reason = 1; reason < CLS_IMPORT_REASONS; reason++) {
    if (!count[reason]) continue;
    printf("  %d %s (%s)\n", count[reason], cls_import_reason_name((cls_import_reason)reason),
           cls_import_reason_key((cls_import_reason)reason));
    for (int i = 0, shown = 0; i < l->n && shown < SUMMARY_EXAMPLES; i++) {
      const cls_import_row *r = &l->rows[i];
      if (r->reason != reason) continue;
      shown++;
      printf("    %s: %s\n", r->path, r->detail);
    }
  }
}

static cls_status read_corpus(const char *format, const char *src, cls_import_list *l, cls_error *err) {
  if (!strcmp(format, "commonvoice")) return cls_import_read_commonvoice(src, l, err);
  if (!strcmp(format, "librispeech")) return cls_import_read_librispeech(src, l, err);
  if (!strcmp(format, "mls")) return cls_import_read_mls(src, l, err);
  return cls_import_read_folder(src, l, err);
}

int cmd_import(int argc, char **argv) {
  const char *out = "", *alphabet_path = "";
  bool make_alphabet = false, keep_case = false, keep_punctuation = false, keep_digits = false, normalize = false,
       progress = true;
  double max_seconds = 0, min_cps = 0;
  int threads = 0;
  cli_flag flags[] = {
      {"out", CLI_STRING, &out, "the folder to write train.csv, dev.csv, test.csv, excluded.csv (and alphabet.txt) in",
       false},
      {"alphabet", CLI_STRING, &alphabet_path, "leave out rows with characters this alphabet.txt lacks", false},
      {"make_alphabet", CLI_BOOL, &make_alphabet, "write DIR/alphabet.txt made from the kept transcripts", false},
      {"max_seconds", CLI_DOUBLE, &max_seconds, "leave out audio longer than this (0: no limit)", false},
      {"min_chars_per_second", CLI_DOUBLE, &min_cps,
       "leave out rows with fewer transcript characters per second of audio (0: no limit)", false},
      {"keep_case", CLI_BOOL, &keep_case, "do not lower-case the transcripts", false},
      {"keep_punctuation", CLI_BOOL, &keep_punctuation, "do not drop punctuation and symbols", false},
      {"keep_digits", CLI_BOOL, &keep_digits, "keep rows whose transcript holds digits", false},
      {"normalize", CLI_BOOL, &normalize, "letters to their base letters, accents dropped (é to e, ñ to n; Coqui's flag)",
       false},
      {"threads", CLI_INT, &threads, "threads checking the audio (0: one per online core)", false},
      {"show_progressbar", CLI_BOOL, &progress, "show a progress line on stderr", false},
  };
  const int n_flags = (int)(sizeof flags / sizeof flags[0]);
  const char *pos[2] = {NULL, NULL};
  int n_pos = 0;
  int rc = cli_parse_flags(argc, argv, 2, flags, n_flags, CMD,
                           "Writes DeepSpeech CSVs (train.csv, dev.csv, test.csv) naming a corpus's original audio, "
                           "every row checked as training checks it; rows left out go to excluded.csv with their "
                           "reason. Usage: clspeech import FORMAT SRC --out DIR [--alphabet FILE | --make_alphabet], "
                           "FORMAT one of commonvoice, librispeech, mls, folder (docs/import.md)",
                           pos, 2, &n_pos);
  if (rc == 1) return CLI_EXIT_OK;
  if (rc) return CLI_EXIT_USAGE;
  if (n_pos != 2) {
    fprintf(stderr, "clspeech " CMD ": needs FORMAT and SRC: clspeech import FORMAT SRC --out DIR\n");
    return CLI_EXIT_USAGE;
  }
  const char *format = pos[0], *src = pos[1];
  if (strcmp(format, "commonvoice") && strcmp(format, "librispeech") && strcmp(format, "mls") &&
      strcmp(format, "folder")) {
    fprintf(stderr, "clspeech " CMD ": unknown FORMAT \"%s\": one of commonvoice, librispeech, mls, folder\n", format);
    return CLI_EXIT_USAGE;
  }
  if (!out[0]) {
    fprintf(stderr, "clspeech " CMD ": --out DIR is required\n");
    return CLI_EXIT_USAGE;
  }
  if (alphabet_path[0] && make_alphabet) {
    fprintf(stderr, "clspeech " CMD ": --alphabet and --make_alphabet exclude each other\n");
    return CLI_EXIT_USAGE;
  }
  char p_split[CLS_IMPORT_SPLITS][CLS_PATH_CAP], p_excluded[CLS_PATH_CAP], p_alphabet[CLS_PATH_CAP],
      p_cache[CLS_PATH_CAP];
  for (int s = 0; s < CLS_IMPORT_SPLITS; s++) {
    char name[16];
    snprintf(name, sizeof name, "%s.csv", cls_import_split_name((cls_import_split)s));
    if ((rc = out_path(p_split[s], out, name))) return rc;
  }
  if ((rc = out_path(p_excluded, out, "excluded.csv")) || (rc = out_path(p_alphabet, out, "alphabet.txt")) ||
      (rc = out_path(p_cache, out, "import_cache.tsv")))
    return rc;
  const char *outputs[] = {p_split[0], p_split[1], p_split[2], p_excluded, p_alphabet, p_cache};
  for (int i = 0; i < 6; i++) {
    if ((i != 4 || make_alphabet) && (rc = cli_refuse_input(CMD, "--out", outputs[i], "--alphabet", alphabet_path)))
      return rc;
    if ((rc = cli_refuse_input_folder(CMD, "--out", outputs[i], "SRC", src))) return rc;
  }

  cls_error err = {0};
  cls_alphabet *alphabet = NULL;
  cls_status st;
  if (alphabet_path[0] && (st = cls_alphabet_load(alphabet_path, &alphabet, &err)) != CLS_OK) return fail(st, &err);
  const double t0 = cls_now_ms();
  cls_import_list list = {0};
  st = read_corpus(format, src, &list, &err);
  int removed = 0;
  if (st == CLS_OK) st = cls_dir_prepare_for_writing(out, &removed, &err);
  cls_import_check_report rep = {0};
  if (st == CLS_OK) {
    import_progress pr = {progress, isatty(fileno(stderr)) != 0, t0, -1e9};
    cls_import_check_options o = {.text = {keep_case, keep_punctuation, keep_digits, normalize},
                                  .alphabet = alphabet,
                                  .max_seconds = max_seconds,
                                  .min_chars_per_second = min_cps,
                                  .threads = threads,
                                  .cache_path = p_cache,
                                  .progress = on_progress,
                                  .progress_user = &pr};
    st = cls_import_check(&list, &o, &rep, &err);
  }
  int kept = 0, present[CLS_IMPORT_SPLITS] = {0};
  for (int i = 0; i < list.n; i++) {
    kept += list.rows[i].reason == CLS_IMPORT_KEPT;
    present[list.rows[i].split] = 1;
  }
  for (int s = 0; st == CLS_OK && s < CLS_IMPORT_SPLITS; s++)
    if (present[s]) st = write_split(p_split[s], &list, s, &err);
  if (st == CLS_OK) st = write_excluded(p_excluded, &list, &err);
  if (st == CLS_OK && make_alphabet && kept) st = write_alphabet(p_alphabet, &list, &err);
  cls_alphabet_destroy(alphabet);
  if (st != CLS_OK) {
    cls_import_list_free(&list);
    return fail(st, &err);
  }
  print_summary(&list, &rep, (cls_now_ms() - t0) / 1000.0);
  cls_import_list_free(&list);
  if (!kept) {
    fprintf(stderr, "clspeech " CMD ": no row was kept (see %s)\n", p_excluded);
    return CLI_EXIT_FAILURE;
  }
  return CLI_EXIT_OK;
}
