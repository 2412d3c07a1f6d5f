/* The test pass of `clspeech train --test_files`: each test set evaluated by the engine
 * (cls_evaluate, clspeech/evaluate.h: decoding, WER/CER/loss, the best, median and worst samples) and
 * printed as DeepSpeech's report, and the --test_output_file JSON. */
#ifndef CLS_TEST_REPORT_H
#define CLS_TEST_REPORT_H

#include "clspeech/data.h"
#include "clspeech/train.h"
#include "data_sets.h"
#include "progress.h"
#include "train_flags.h"

/* Returns 0 or an exit status (after printing the error). */
int test_report_run(cls_engine *engine, cls_trainer *trainer, const cls_alphabet *alphabet, const train_flags *flags,
                    const data_set *sets, int n_sets, progress_printer *progress);

#endif
