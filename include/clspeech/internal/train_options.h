/* clspeech internal API, train layer: the converters of the option table's rows that do not map one to
 * one onto a member of cls_train_options (clspeech/internal/train_options.def, column `to` CONVERT), for
 * the engine's defaults and the clspeech command's flags. Not installed. */
#ifndef CLSPEECH_INTERNAL_TRAIN_OPTIONS_H
#define CLSPEECH_INTERNAL_TRAIN_OPTIONS_H

#include <stdbool.h>

#include "clspeech/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --dropout_rate .. --dropout_rate6: DeepSpeech's dropout[0 .. 5]; for 2, 3 and 6 a negative rate is
 * --dropout_rate's (dropout[0], set first), for 4 and 5 (unused by the model) it is kept as given. */
void cls_option_dropout_rate(cls_train_options *o, double rate);
void cls_option_dropout_rate2(cls_train_options *o, double rate);
void cls_option_dropout_rate3(cls_train_options *o, double rate);
void cls_option_dropout_rate4(cls_train_options *o, double rate);
void cls_option_dropout_rate5(cls_train_options *o, double rate);
void cls_option_dropout_rate6(cls_train_options *o, double rate);
/* --audio_sample_rate: the features' defaults at that rate (cls_mfcc_default; the window and step rows
 * come after it). */
void cls_option_audio_sample_rate(cls_train_options *o, int rate);
/* --features_device: "host" sets host_features, anything else clears it. */
void cls_option_features_device(cls_train_options *o, const char *where);
/* --strategy, --balance, --load_train, --load_evaluate: the name's value (cls_strategy_parse,
 * cls_balance_parse, cls_load_mode_parse); an unknown name leaves the member as it was (the command
 * refuses it first). */
void cls_option_strategy(cls_train_options *o, const char *name);
void cls_option_balance(cls_train_options *o, const char *name);
void cls_option_load_train(cls_train_options *o, const char *name);
void cls_option_load_evaluate(cls_train_options *o, const char *name);

#ifdef __cplusplus
}
#endif
/* Whether v is finite and lies within [min, max], an end open where asked: the one range test of a row's
 * bounds, for the engine's check (cls_train_options_check) and the command's flag rules. */
bool cls_option_within(double v, double min, double max, bool min_open, bool max_open);

#endif
