/* The training options from the one option table (clspeech/internal/train_options.def): DeepSpeech 0.9's
 * defaults member by member, the converters of the rows that do not map one to one, and
 * cls_train_options_check refusing a member outside its row's bounds (each end, open or closed). */
#include <string.h>

#include "check.h"
#include "clspeech/internal/train_options.h"
#include "clspeech/train.h"

/* cls_train_options_check on a copy of the defaults with one member changed: whether it refused, and
   that its message names the member. */
#define REFUSED(member, value)                                               \
  do {                                                                      \
    cls_train_options o_ = cls_train_options_default(2048, 29);             \
    cls_error e_;                                                           \
    o_.member = (value);                                                    \
    CHECK(cls_train_options_check(&o_, &e_) == CLS_ERR_INVALID_ARGUMENT,    \
          "%s = %g accepted", #member, (double)(value));                    \
    CHECK_CONTAINS(e_.text, #member);                                       \
  } while (0)
#define ACCEPTED(member, value)                                             \
  do {                                                                      \
    cls_train_options o_ = cls_train_options_default(2048, 29);             \
    cls_error e_;                                                           \
    o_.member = (value);                                                    \
    CHECK(cls_train_options_check(&o_, &e_) == CLS_OK, "%s = %g refused: %s", #member, (double)(value), e_.text); \
  } while (0)

int main(void) {
  const cls_train_options d = cls_train_options_default(2048, 29);
  CHECK_INT(d.model.n_hidden, 2048);
  CHECK_INT(d.model.n_classes, 29);
  CHECK(d.model.relu_clip == 20.0f, "relu_clip %g", (double)d.model.relu_clip);
  CHECK_INT(d.features.sample_rate, 16000);
  CHECK_INT(d.features.win_len_ms, 32);
  CHECK_INT(d.features.win_step_ms, 20);
  CHECK_INT(d.features.n_coeff, 26);
  CHECK_INT(d.train_batch_size, 1);
  CHECK_INT(d.dev_batch_size, 1);
  CHECK_INT(d.test_batch_size, 1);
  CHECK_INT(d.epochs, 75);
  CHECK(d.learning_rate == 0.001f && d.beta1 == 0.9f && d.beta2 == 0.999f && d.epsilon == 1e-8f, "Adam's defaults");
  const float dropout[6] = {0.05f, 0.05f, 0.05f, 0.0f, 0.0f, 0.05f};
  CHECK(!memcmp(d.dropout, dropout, sizeof dropout), "dropout %g %g %g %g %g %g", (double)d.dropout[0],
        (double)d.dropout[1], (double)d.dropout[2], (double)d.dropout[3], (double)d.dropout[4], (double)d.dropout[5]);
  CHECK_INT((int)d.random_seed, 4568);
  CHECK(!d.load_checkpoint_dir && !d.save_checkpoint_dir && !d.feature_cache && !d.summary_dir, "a folder set");
  CHECK_INT(d.checkpoint_secs, 600);
  CHECK_INT(d.max_to_keep, 5);
  CHECK_INT(d.load_train, CLS_LOAD_AUTO);
  CHECK_INT(d.load_evaluate, CLS_LOAD_AUTO);
  CHECK_INT(d.drop_source_layers, 0);
  CHECK(!d.force_initialize_learning_rate && !d.reduce_lr_on_plateau && !d.early_stop, "a rule on");
  CHECK_INT(d.plateau_epochs, 10);
  CHECK(d.plateau_reduction == 0.1f && d.es_min_delta == 0.05f, "plateau or early stop's factor");
  CHECK_INT(d.es_epochs, 25);
  CHECK_INT(d.host_features, 0);
  CHECK_INT(d.strategy, CLS_STRATEGY_HYBRID);
  CHECK_INT(d.balance, CLS_BALANCE_AUTO);
  CHECK_INT(d.towers_per_device, 1);
  CHECK_INT(d.replica_check_steps, 100);
  CHECK_INT(d.overlap_reduction, 1);
  CHECK_INT(d.log_placement, 0);
  CHECK_INT(d.horovod, 0);
  CHECK_INT(d.summary_steps, 100);
  CHECK(!d.augment && d.n_augment == 0 && d.max_train_seconds == 0, "augment or time limit set");

  /* The converters. */
  cls_train_options o = d;
  cls_option_dropout_rate(&o, 0.3);
  cls_option_dropout_rate2(&o, -1);
  cls_option_dropout_rate3(&o, 0.1);
  cls_option_dropout_rate4(&o, -1); /* unused by the model: kept as given */
  cls_option_dropout_rate6(&o, -0.5);
  CHECK(o.dropout[0] == 0.3f && o.dropout[1] == 0.3f && o.dropout[2] == 0.1f && o.dropout[3] == -1.0f &&
            o.dropout[5] == 0.3f,
        "dropout %g %g %g %g %g", (double)o.dropout[0], (double)o.dropout[1], (double)o.dropout[2],
        (double)o.dropout[3], (double)o.dropout[5]);
  cls_option_audio_sample_rate(&o, 8000);
  CHECK(o.features.sample_rate == 8000 && o.features.upper_hz == 4000.0, "sample rate 8000: %d, upper %g",
        o.features.sample_rate, o.features.upper_hz);
  cls_option_features_device(&o, "host");
  CHECK_INT(o.host_features, 1);
  cls_option_features_device(&o, "device");
  CHECK_INT(o.host_features, 0);
  cls_option_strategy(&o, "async");
  CHECK_INT(o.strategy, CLS_STRATEGY_ASYNC);
  cls_option_strategy(&o, "nonsense"); /* unchanged */
  CHECK_INT(o.strategy, CLS_STRATEGY_ASYNC);
  cls_option_balance(&o, "equal");
  CHECK_INT(o.balance, CLS_BALANCE_EQUAL);
  cls_option_load_train(&o, "init");
  CHECK_INT(o.load_train, CLS_LOAD_INIT);
  cls_option_load_evaluate(&o, "best");
  CHECK_INT(o.load_evaluate, CLS_LOAD_BEST);

  /* The checks: the defaults pass; each end of a few rows' bounds. */
  cls_error err;
  CHECK(cls_train_options_check(&d, &err) == CLS_OK, "the defaults refused: %s", err.text);
  REFUSED(train_batch_size, 0);
  ACCEPTED(train_batch_size, 1 << 20);
  REFUSED(train_batch_size, (1 << 20) + 1);
  REFUSED(learning_rate, 0.0f); /* (0, 10] */
  ACCEPTED(learning_rate, 10.0f);
  REFUSED(beta1, 1.0f); /* [0, 1) */
  ACCEPTED(beta1, 0.0f);
  REFUSED(model.relu_clip, 0.0f);
  REFUSED(features.win_len_ms, 0);
  REFUSED(epochs, -1);
  REFUSED(drop_source_layers, 6);
  REFUSED(towers_per_device, 65);
  REFUSED(es_min_delta, -0.5f);
  {
    cls_train_options n = d;
    n.epsilon = 0.0f;
    CHECK(cls_train_options_check(&n, &err) == CLS_ERR_INVALID_ARGUMENT, "epsilon 0 accepted");
    CHECK_CONTAINS(err.text, "training option epsilon (--epsilon) is 0, outside (0, 1]");
  }
  return check_finish("test_train_options");
}
