/* Data sets for the commands (see data_sets.h). */
#include "data_sets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The utterance list, pointing into the set's samples. */
static int list_utterances(data_set *s) {
  free(s->utts);
  free(s->frames);
  s->n = cls_dataset_size(s->ds);
  s->utts = calloc((size_t)(s->n ? s->n : 1), sizeof *s->utts);
  s->frames = calloc((size_t)(s->n ? s->n : 1), sizeof *s->frames);
  if (!s->utts || !s->frames) return CLI_EXIT_FAILURE;
  for (int i = 0; i < s->n; i++) {
    const cls_sample *x = cls_dataset_sample(s->ds, i);
    s->utts[i] = (cls_utterance){x->path, x->labels, x->n_labels};
    s->frames[i] = x->frames;
  }
  return 0;
}

cls_eval_set data_set_eval(const data_set *set) { return (cls_eval_set){set->name, set->utts, set->n, set->frames}; }

static int load_one(const char *what, const char *files, const cls_dataset_options *o, data_set *s) {
  cls_error err;
  memset(s, 0, sizeof *s);
  s->name = strdup(files);
  cls_status st = cls_dataset_load(files, o, &s->ds, &err);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech: %s: %s\n", what, err.text);
    return cli_exit_status(st) == CLI_EXIT_USAGE ? CLI_EXIT_FAILURE : cli_exit_status(st);
  }
  char report[8192];
  cls_dataset_format_report(s->ds, report, sizeof report);
  fprintf(stderr, "clspeech: %s %s: %s", what, files, report);
  return list_utterances(s);
}

int data_sets_drop_longer(const char *what, data_set *sets, int n, int max_frames, double max_seconds, const char *why,
                          int strict) {
  for (int i = 0; i < n; i++) {
    data_set *s = &sets[i];
    int over = 0;
    for (int k = 0; k < s->n; k++) {
      const cls_sample *x = cls_dataset_sample(s->ds, k);
      if (x->frames <= max_frames) continue;
      if (strict) {
        fprintf(stderr,
                "clspeech: %s %s:%d: %s: %.1f s (%d frames) is too long for the device's memory, the limit is %d "
                "frames (%.1f s): %s\n",
                what, x->source, x->line, x->path, x->seconds, x->frames, max_frames, max_seconds, why);
        return CLI_EXIT_FAILURE;
      }
      if (over++ < CLS_SKIP_EXAMPLES)
        fprintf(stderr,
                "clspeech: warning: %s %s:%d: %s: %.1f s (%d frames) skipped: too long for the device's memory, "
                "the limit is %d frames (%.1f s)\n",
                what, x->source, x->line, x->path, x->seconds, x->frames, max_frames, max_seconds);
    }
    if (!over) continue;
    if (over > CLS_SKIP_EXAMPLES) fprintf(stderr, "clspeech: warning: ... and %d more\n", over - CLS_SKIP_EXAMPLES);
    fprintf(stderr, "clspeech: %s %s: %d sample%s skipped: %s\n", what, s->name, over, over == 1 ? "" : "s", why);
    if (cls_dataset_drop_longer(s->ds, max_frames) < 0 || list_utterances(s)) {
      fprintf(stderr, "clspeech: %s %s: out of memory\n", what, s->name);
      return CLI_EXIT_FAILURE;
    }
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
    free(sets[i].frames);
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
