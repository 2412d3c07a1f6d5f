/* `clspeech train`'s time estimate: --estimate, and its lines at the start of every run (the engine's
 * cls_trainer_estimate on the training set and the dev and metrics sets, printed for the crew and per
 * device), and after training the epochs' measured times beside it. */
#ifndef CLS_TRAIN_ESTIMATE_H
#define CLS_TRAIN_ESTIMATE_H

#include "clspeech/clspeech.h"
#include "clspeech/internal/train.h"
#include "data_sets.h"
#include "progress.h"

typedef struct train_estimate {
  cls_train_estimate e;
  int made;                    /* e holds an estimate */
  progress_printer *progress;  /* where the progress reports go on (NULL: not printed) */
  double train_s, eval_s;      /* the finished passes' wall time: training, dev and metrics */
  int epochs;                  /* training passes finished */
} train_estimate;

/* Estimates the run of `trainer` (loaded) on the training set and the passes evals[0 .. n_evals) and
 * prints it. 0 or the exit status (the engine's error reported as `command`'s). */
int train_estimate_make(train_estimate *te, cls_engine *engine, cls_trainer *trainer, const data_set *train,
                        const cls_eval_set *evals, int n_evals, const char *command);
/* A cls_progress_fn (user: the train_estimate): the finished passes' times recorded, every report
 * handed on to progress_print when te->progress is set. */
void train_estimate_progress(void *user, const cls_progress *progress);
/* After training: the epochs' measured mean times beside the estimate's (nothing without either). */
void train_estimate_report(const train_estimate *te);

#endif
