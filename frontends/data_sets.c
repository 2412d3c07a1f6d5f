/* Data sets for the commands (see data_sets.h). */
#include "data_sets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int load_one(const char *what, const char *files, const cls_dataset_options *o, data_set *s) {
  char err[2048];
  memset(s, 0, sizeof *s);
  s->name = strdup(files);
  cls_status st = cls_dataset_load(files, o, &s->ds, err, sizeof err);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech: %s: %s\n", what, err);
    return cli_exit_status(st) == CLI_EXIT_USAGE ? CLI_EXIT_FAILURE : cli_exit_status(st);
  }
  char report[8192];
  cls_dataset_format_report(s->ds, report, sizeof report);
  fprintf(stderr, "clspeech: %s %s: %s", what, files, report);
  s->n = cls_dataset_size(s->ds);
  s->utts = calloc((size_t)(s->n ? s->n : 1), sizeof *s->utts);
  for (int i = 0; i < s->n; i++) {
    const cls_sample *x = cls_dataset_sample(s->ds, i);
    s->utts[i] = (cls_utterance){x->path, x->labels, x->n_labels};
  }
  return 0;
}

int data_sets_load(const char *what, const char *files, int separate, const cls_dataset_options *o, data_set **sets,
                   int *n_sets) {
  *sets = NULL;
  *n_sets = 0;
  if (!files || !*files) return 0;
  int count = 1;
  if (separate)
    for (const char *c = files; *c; c++) count += *c == ',';
  *sets = calloc((size_t)count, sizeof **sets);
  if (!*sets) return CLI_EXIT_FAILURE;
  if (!separate) {
    *n_sets = 1;
    return load_one(what, files, o, &(*sets)[0]);
  }
  char *copy = strdup(files);
  int rc = 0;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
    if (*tok) rc = load_one(what, tok, o, &(*sets)[(*n_sets)++]);
  free(copy);
  return rc;
}

void data_sets_free(data_set *sets, int n) {
  for (int i = 0; sets && i < n; i++) {
    cls_dataset_destroy(sets[i].ds);
    free(sets[i].utts);
    free(sets[i].name);
  }
  free(sets);
}

void data_sets_max(const data_set *sets, int n, int *max_frames, int *max_labels) {
  for (int i = 0; i < n; i++) {
    int f = 0, l = 0;
    if (sets[i].n > 0) cls_dataset_batch_max(sets[i].ds, 0, sets[i].n, &f, &l);
    /* Resampled files' frame counts are estimated from their headers (cls_sample.n_samples); the
       resampler may give one sample more, which can add one frame. */
    if (f + 1 > *max_frames) *max_frames = f + 1;
    if (l > *max_labels) *max_labels = l;
  }
}
