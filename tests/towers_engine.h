/* For the tests of several towers (label towers, run with POCL_DEVICES="pthread pthread basic"): an engine
 * that logs into log_text (log_capture.h) from the INFO level up, with every device selected and prepared.
 * Include after check.h. */
#ifndef CLS_TEST_TOWERS_ENGINE_H
#define CLS_TEST_TOWERS_ENGINE_H

#include "clspeech/clspeech.h"
#include "log_capture.h"

/* The towers tests' data: the formats' clips, LDC93S1 and the espeak-ng sentence, utterances of three
 * lengths (SMOKE and CLS_TEST_DATA: data_files.h). */
#define TOWERS_CSVS CLS_TEST_DATA "/formats/formats.csv," SMOKE "/ldc93s1.csv," SMOKE "/new-home-in-the-stars-16k.csv"

/* The engine (NULL when it could not be made) and its devices in sel[0 .. *n_sel); fails a check when
 * fewer than `want` devices are there. */
static cls_engine *towers_engine(int want, int *sel, int cap, int *n_sel) {
  cls_engine_options eo = cls_engine_options_from_environment();
  eo.log = capture_log;
  eo.log_level = CLS_LOG_INFO;
  cls_engine *e = NULL;
  *n_sel = 0;
  CHECK_INT(cls_engine_create(&eo, &e), CLS_OK);
  if (!e) return NULL;
  CHECK_INT(cls_engine_select(e, "all", sel, cap, n_sel), CLS_OK);
  CHECK_INT(cls_engine_prepare(e, sel, n_sel), CLS_OK);
  CHECK(*n_sel >= want, "%d devices (POCL_DEVICES=\"pthread pthread basic\"), found %d", want, *n_sel);
  return e;
}

#endif
