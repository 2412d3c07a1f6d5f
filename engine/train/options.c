/* The training options' values (see clspeech/train.h): DeepSpeech 0.9's defaults in one place, the
 * names of the strategies and balance modes (one parse and one name function each, so that
 * a frontend validates a flag once and the engine carries enums), and the fault specification. */
#include <stdio.h>
#include <string.h>

#include "clspeech/internal/train.h"
#include "clspeech/train.h"

static const char *const strategy_names[] = {"hybrid", "sync", "async"};
static const char *const balance_names[] = {"auto", "equal"};

#define N_NAMES(a) ((int)(sizeof(a) / sizeof *(a)))

/* The index of name in names[0 .. n), or -1. */
static int find_name(const char *const *names, int n, const char *name) {
  for (int i = 0; name && i < n; i++)
    if (!strcmp(names[i], name)) return i;
  return -1;
}

cls_status cls_strategy_parse(const char *name, cls_strategy *out) {
  int i = find_name(strategy_names, N_NAMES(strategy_names), name);
  if (i < 0) return CLS_ERR_INVALID_ARGUMENT;
  *out = (cls_strategy)i;
  return CLS_OK;
}

cls_status cls_balance_parse(const char *name, cls_balance *out) {
  int i = find_name(balance_names, N_NAMES(balance_names), name);
  if (i < 0) return CLS_ERR_INVALID_ARGUMENT;
  *out = (cls_balance)i;
  return CLS_OK;
}

const char *cls_strategy_name(cls_strategy s) {
  return (int)s >= 0 && (int)s < N_NAMES(strategy_names) ? strategy_names[s] : "?";
}

const char *cls_balance_name(cls_balance b) {
  return (int)b >= 0 && (int)b < N_NAMES(balance_names) ? balance_names[b] : "?";
}

cls_status cls_train_fault_parse(const char *spec, cls_train_fault *out, cls_error *err) {
  memset(out, 0, sizeof *out);
  out->kind = CLS_FAULT_NONE;
  if (!spec || !*spec) return CLS_OK;
  char kind[16] = "";
  int tower = -1;
  long long step = -1;
  if (sscanf(spec, "%15[a-z]:tower=%d,step=%lld", kind, &tower, &step) != 3 || tower < 0 || step < 0 ||
      (strcmp(kind, "fail") && strcmp(kind, "perturb"))) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "\"%s\": expected fail:tower=K,step=S or perturb:tower=K,step=S",
                         spec);
  }
  out->kind = strcmp(kind, "fail") ? CLS_FAULT_PERTURB : CLS_FAULT_FAIL;
  out->tower = tower;
  out->step = step;
  return CLS_OK;
}

cls_train_options cls_train_options_default(int n_hidden, int n_classes) {
  cls_train_options o;
  memset(&o, 0, sizeof o);
  o.model = cls_model_config_deepspeech(n_hidden, n_classes);
  o.features = cls_mfcc_default(16000);
  o.train_batch_size = o.dev_batch_size = o.test_batch_size = 1;
  o.epochs = 75;
  o.learning_rate = 0.001f;
  o.beta1 = 0.9f;
  o.beta2 = 0.999f;
  o.epsilon = 1e-8f;
  for (int i = 0; i < 6; i++) o.dropout[i] = i == 3 || i == 4 ? 0.0f : 0.05f;
  o.random_seed = 4568;
  o.checkpoint_secs = 600;
  o.max_to_keep = 5;
  o.load_train = o.load_evaluate = CLS_LOAD_AUTO;
  o.plateau_epochs = 10;
  o.plateau_reduction = 0.1f;
  o.es_epochs = 25;
  o.es_min_delta = 0.05f;
  o.strategy = CLS_STRATEGY_HYBRID;
  o.balance = CLS_BALANCE_AUTO;
  o.towers_per_device = 1;
  o.replica_check_steps = 100;
  o.summary_steps = 100;
  return o;
}
