/* Progress lines of long passes in DeepSpeech's style
 * ("Epoch 0 |   Training | Elapsed Time: 0:00:12 | Steps: 20 | Loss: 93.41 | ..."), updated in
 * place on a terminal and printed once per pass otherwise. */
#ifndef CLS_PROGRESS_H
#define CLS_PROGRESS_H

#include <stdbool.h>

#include "clspeech/train.h"

typedef struct progress_printer {
  bool enabled;      /* --show_progressbar */
  bool tty;          /* stderr is a terminal */
  double last_print; /* seconds into the pass */
} progress_printer;

void progress_init(progress_printer *p, bool show_progressbar);
/* A cls_progress_fn: user is the progress_printer. */
void progress_print(void *user, const cls_progress *progress);

#endif
