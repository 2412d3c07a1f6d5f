/* The training options' values (see clspeech/train.h): DeepSpeech 0.9's defaults and the options'
 * bounds from the one table of them (clspeech/internal/train_options.def) with its rows' converters
 * (clspeech/internal/train_options.h), the names of the strategies and balance modes (one parse and
 * one name function each, so that a frontend validates a flag once and the engine carries enums), and
 * the fault specification. */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "clspeech/internal/train.h"
#include "clspeech/internal/train_options.h"
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

/* ---- the option table (clspeech/internal/train_options.def) ---- */

#define DROPOUT(n, i, or_first)                                           \
  void cls_option_dropout_rate##n(cls_train_options *o, double rate) {    \
    o->dropout[i] = (or_first) && rate < 0 ? o->dropout[0] : (float)rate; \
  }
DROPOUT(, 0, 0)
DROPOUT(2, 1, 1)
DROPOUT(3, 2, 1)
DROPOUT(4, 3, 0)
DROPOUT(5, 4, 0)
DROPOUT(6, 5, 1)
#undef DROPOUT

void cls_option_audio_sample_rate(cls_train_options *o, int rate) { o->features = cls_mfcc_default(rate); }

void cls_option_features_device(cls_train_options *o, const char *where) {
  o->host_features = where && !strcmp(where, "host");
}


void cls_option_strategy(cls_train_options *o, const char *name) { (void)cls_strategy_parse(name, &o->strategy); }

void cls_option_balance(cls_train_options *o, const char *name) { (void)cls_balance_parse(name, &o->balance); }

void cls_option_load_train(cls_train_options *o, const char *name) {
  (void)cls_load_mode_parse(name, &o->load_train);
}

void cls_option_load_evaluate(cls_train_options *o, const char *name) {
  (void)cls_load_mode_parse(name, &o->load_evaluate);
}

/* A row's default into the options: a member takes it (folders stay NULL), a converter converts it, the
   command's own rows have none here. */
#define DEFAULT_FIELD(type, member, value) DEFAULT_##type(member, value)
#define DEFAULT_CONVERT(type, fn, value) fn(&o, value);
#define DEFAULT_COMMAND(type, none, value)
#define DEFAULT_INT(member, value) o.member = (value);
#define DEFAULT_DOUBLE(member, value) o.member = (value);
#define DEFAULT_BOOL(member, value) o.member = (value);
#define DEFAULT_STRING(member, value)

cls_train_options cls_train_options_default(int n_hidden, int n_classes) {
  cls_train_options o;
  memset(&o, 0, sizeof o);
  o.model = cls_model_config_deepspeech(n_hidden, n_classes);
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) \
  DEFAULT_##to(type, target, value)
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
  return o;
}

bool cls_option_within(double v, double min, double max, bool min_open, bool max_open) {
  if (!isfinite(v) || (min_open ? !(v > min) : !(v >= min))) return false;
  return max_open ? v < max : v <= max;
}

/* A member's row with bounds: the member's value checked (converted rows and the command's own have no
   member to check). */
#define CHECK_FIELD(name, member, min, max, bounds) CHECK_##bounds(name, member, min, max)
#define CHECK_CONVERT(name, fn, min, max, bounds)
#define CHECK_COMMAND(name, none, min, max, bounds)
#define CHECK_NONE(name, member, min, max)
#define CHECK_CLOSED(name, member, min, max) CHECK_WITHIN(name, member, min, max, false, false, '[', ']')
#define CHECK_OPEN_MIN(name, member, min, max) CHECK_WITHIN(name, member, min, max, true, false, '(', ']')
#define CHECK_OPEN_MAX(name, member, min, max) CHECK_WITHIN(name, member, min, max, false, true, '[', ')')
#define CHECK_WITHIN(name, member, min, max, min_open, max_open, left, right)                                  \
  if (!cls_option_within((double)o->member, (min), (max), (min_open), (max_open)))                                      \
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "training option %s (--%s) is %.10g, outside %c%.10g, " \
                         "%.10g%c", #member, #name, (double)o->member, left, (double)(min), (double)(max), right);

cls_status cls_train_options_check(const cls_train_options *o, cls_error *err) {
#define CLS_TRAIN_OPTION(name, type, value, min, max, bounds, ranks, to, target, help) \
  CHECK_##to(name, target, min, max, bounds)
#include "clspeech/internal/train_options.def"
#undef CLS_TRAIN_OPTION
  return CLS_OK;
}
