/* The trainer's loop counters in a checkpoint's metadata (see train_state.h). */
#include "train/train_state.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/meta_number.h"

enum { META_EPOCH, META_BEST, META_STREAK, META_SEED, N_META };

/* The keys, in the order checkpoints have always held them. */
static const char *const keys[N_META] = {"epoch", "best_dev_loss", "epochs_without_improvement", "random_seed"};

static void split(const cls_train_state *s, cls_checkpoint_vars *vars, cls_checkpoint_meta meta[N_META]) {
  vars->global_step = s->global_step;
  vars->learning_rate = s->learning_rate;
  vars->adam = s->adam;
  for (int i = 0; i < N_META; i++) meta[i].key = keys[i];
  snprintf(meta[META_EPOCH].value, sizeof meta[0].value, "%d", s->epoch);
  snprintf(meta[META_BEST].value, sizeof meta[0].value, "%.17g", s->rules.best_dev_loss);
  snprintf(meta[META_STREAK].value, sizeof meta[0].value, "%d", s->rules.epochs_without_improvement);
  snprintf(meta[META_SEED].value, sizeof meta[0].value, "%u", (unsigned)s->random_seed);
}

cls_status cls_train_checkpoint_save(const char *path, const cls_model_config *cfg, const float *params,
                                     const float *m, const float *v, const cls_train_state *s, cls_error *err) {
  cls_checkpoint_vars vars;
  cls_checkpoint_meta meta[N_META];
  split(s, &vars, meta);
  return cls_checkpoint_save(path, cfg, params, m, v, &vars, meta, N_META, err);
}

cls_status cls_train_checkpoint_save_in(const char *dir, const char *kind, int max_to_keep,
                                        const cls_model_config *cfg, const float *params, const float *m,
                                        const float *v, const cls_train_state *s, char *saved_path,
                                        size_t path_cap, cls_error *err) {
  cls_checkpoint_vars vars;
  cls_checkpoint_meta meta[N_META];
  split(s, &vars, meta);
  return cls_checkpoint_save_in(dir, kind, max_to_keep, cfg, params, m, v, &vars, meta, N_META, saved_path, path_cap,
                                err);
}

/* Entry `e` (or `fallback` when the file has none): a whole decimal number in [lo, hi]. */
static cls_status meta_int(const cls_checkpoint_meta *e, const char *path, const char *fallback, long long lo,
                           long long hi, long long *out, cls_error *err) {
  return cls_meta_parse_int(path, e->key, e->found ? e->value : fallback, lo, hi, out, err);
}

/* Entry `e` (or `fallback`): a number, not NaN. */
static cls_status meta_real(const cls_checkpoint_meta *e, const char *path, const char *fallback, double *out,
                            cls_error *err) {
  return cls_meta_parse_real(path, e->key, e->found ? e->value : fallback, -INFINITY, INFINITY, out, err);
}

cls_status cls_train_checkpoint_load(const char *path, const cls_model_config *cfg, float *params, float *m, float *v,
                                     cls_train_state *s, cls_error *err) {
  return cls_train_checkpoint_load_dropping(path, cfg, 0, 0, params, m, v, s, NULL, err);
}

cls_status cls_train_checkpoint_load_dropping(const char *path, const cls_model_config *cfg, int n_drop, int load_cudnn,
                                              float *params, float *m, float *v, cls_train_state *s, int *zeroed,
                                              cls_error *err) {
  cls_checkpoint_vars vars;
  cls_checkpoint_meta meta[N_META];
  memset(meta, 0, sizeof meta);
  for (int i = 0; i < N_META; i++) meta[i].key = keys[i];
  if (zeroed) *zeroed = 0;
  const int tf = cls_checkpoint_is_tf(path);
  cls_status rc = tf ? cls_checkpoint_tf_load(path, cfg, n_drop, load_cudnn, params, m, v, &vars, zeroed, err)
                     : cls_checkpoint_load_dropping(path, cfg, n_drop, params, m, v, &vars, meta, N_META, err);
  long long epoch = 0, streak = 0, seed = 0;
  double best = 0;
  if (rc == CLS_OK) rc = meta_int(&meta[META_EPOCH], path, "0", 0, INT_MAX, &epoch, err);
  if (rc == CLS_OK) rc = meta_real(&meta[META_BEST], path, "inf", &best, err);
  if (rc == CLS_OK) rc = meta_int(&meta[META_STREAK], path, "0", 0, INT_MAX, &streak, err);
  if (rc == CLS_OK) rc = meta_int(&meta[META_SEED], path, "4568", 0, UINT32_MAX, &seed, err);
  if (rc != CLS_OK) return rc;
  memset(s, 0, sizeof *s);
  s->global_step = vars.global_step;
  s->learning_rate = vars.no_learning_rate ? NAN : vars.learning_rate;
  s->adam = vars.adam;
  s->epoch = (int)epoch;
  s->rules.best_dev_loss = best;
  s->rules.epochs_without_improvement = (int)streak;
  s->random_seed = (uint32_t)seed;
  return CLS_OK;
}
