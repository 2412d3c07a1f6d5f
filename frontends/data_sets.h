/* Loading the data sets named by --train_files, --dev_files and --test_files for the commands:
 * each set's skip report printed, and the utterance lists the trainer consumes. */
#ifndef CLS_DATA_SETS_H
#define CLS_DATA_SETS_H

#include "clspeech/data.h"
#include "clspeech/train.h"

typedef struct data_set {
  char *name;              /* the CSV path(s) */
  cls_dataset *ds;
  cls_utterance *utts;     /* [n] pointing into ds */
  int *frames;             /* [n] each one's feature frames (cls_eval_set.frames) */
  int n;
} data_set;

/* Loads `files` (comma-separated) as one set (`separate` 0) or each file as its own set (1, as
 * DeepSpeech reports dev and test files). Prints what was skipped. Returns 0, or an exit status
 * after printing the error. *sets is malloc'ed, *n_sets its length. */
int data_sets_load(const char *what, const char *files, int separate, const cls_dataset_options *options,
                   data_set **sets, int *n_sets);
void data_sets_free(data_set *sets, int n);
/* The set as the trainer evaluates it (those too long for the towers streamed). */
cls_eval_set data_set_eval(const data_set *set);
/* Drops from each set the utterances of more than max_frames frames (too long for a device's memory;
 * `why` says which device and figures), each named in a warning with its duration and the limit; with
 * `strict`, the first one is an error instead. Returns 0, or an exit status after printing the error. */
int data_sets_drop_longer(const char *what, data_set *sets, int n, int max_frames, double max_seconds, const char *why,
                          int strict);
/* The largest frames and label count over the sets. */
void data_sets_max(const data_set *sets, int n, int *max_frames, int *max_labels);

#endif
