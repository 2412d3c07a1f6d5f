/* `clspeech train --horovod`: the ranks agree, before any work, on every setting that shapes the model,
 * the features, the data and its order and the loop (train_agree.c). */
#ifndef CLS_TRAIN_AGREE_H
#define CLS_TRAIN_AGREE_H

#include "clspeech/data.h"
#include "data_sets.h"
#include "train_flags.h"

/* The sets a run reads, as loaded (after --limit_* and --reverse_*). */
typedef struct train_agree_sets {
  const data_set *train, *dev, *metrics;
  int n_train, n_dev, n_metrics;
  const cls_augmentation *augs; /* --augment, parsed: overlay sources are compared by their contents */
  int n_augs;
} train_agree_sets;

/* Collective under --horovod (every rank calls it at the same point): the settings of `table` (all
 * but those a rank may hold on its own: devices, folders it alone writes, test-only flags), the
 * alphabet's labels, the contents of the training, validation and metrics sets and of --augment
 * overlay's source CSVs (a path may hold other rows on another host), compared across
 * the ranks in one exchange (cls_world_agree). 0, or exit status 2 after printing, on every rank, the
 * setting that differs with every rank's value. `command` prefixes the message. */
int train_agree(const char *command, const cli_flag *table, int n_flags, const cls_alphabet *alphabet,
                const train_agree_sets *sets);

#endif
