/* The time estimate before training (cls_trainer_estimate, clspeech/internal/train.h): the epoch's
 * steps and the passes' batches as the loop forms them, weighted by padded frames; a few of each, from
 * the lightest to the heaviest, loaded by the training loader and run twice (the second run timed) with
 * the strategy's own step (a pass's batch as a pass of its own and of it twice over); lines fitted to
 * the times and summed over the epoch; and the towers' state put back as it was. The training set is sorted by size (DeepSpeech's order), so an epoch's first
 * steps are its lightest: they alone would say little of its heaviest. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/internal/train.h"
#include "device/log.h"
#include "train/step.h"
#include "train/trainer.h"

enum { DEFAULT_SAMPLES = 3, MAX_SAMPLES = 16 };

/* One batch of an epoch: its utterances u[first .. first+count) and its weight, the padded frames. */
typedef struct batch_weight {
  int first, count;
  const cls_eval_set *set; /* the pass's set (NULL for a training step) */
  double w;
} batch_weight;

/* Times against weights, and the line t = a + b w fitted to them. */
typedef struct series {
  double w[MAX_SAMPLES], t[MAX_SAMPLES];
  int n;
} series;
typedef struct line {
  double a, b;
} line;

static void add(series *s, double w, double t) {
  if (s->n < MAX_SAMPLES) {
    s->w[s->n] = w;
    s->t[s->n] = t;
    s->n++;
  }
}

/* Least squares, kept non-negative: a negative slope is a flat line at the mean time, a negative
 * intercept a line through the origin. A single point (or one weight): the time in proportion. */
static line fit(const series *s) {
  line l = {0, 0};
  if (s->n == 0) return l;
  double mw = 0, mt = 0, sw = 0, st = 0;
  for (int i = 0; i < s->n; i++) {
    mw += s->w[i];
    mt += s->t[i];
  }
  sw = mw;
  st = mt;
  mw /= s->n;
  mt /= s->n;
  double var = 0, cov = 0;
  for (int i = 0; i < s->n; i++) {
    var += (s->w[i] - mw) * (s->w[i] - mw);
    cov += (s->w[i] - mw) * (s->t[i] - mt);
  }
  if (var > 1e-9 * mw * mw) {
    l.b = cov / var;
    l.a = mt - l.b * mw;
    if (l.b < 0) l = (line){mt, 0};
    if (l.a < 0) l = (line){0, sw > 0 ? st / sw : 0};
  } else {
    l.b = sw > 0 ? st / sw : 0;
  }
  return l;
}

static double at(line l, double w) { return l.a + l.b * w; }

static int by_weight(const void *x, const void *y) {
  const batch_weight *a = x, *b = y;
  return a->w < b->w ? -1 : a->w > b->w;
}

/* The padded frames of u[first .. first+count): count x the longest's frames (1 per utterance unknown). */
static double weight(const int *frames, int first, int count) {
  int longest = 1;
  for (int i = first; frames && i < first + count; i++)
    if (frames[i] > longest) longest = frames[i];
  return (double)count * longest;
}

/* m indices of sorted[0 .. n) spread from the lightest to the heaviest, without repeats. */
static int spread(int n, int m, int *pick) {
  if (m > n) m = n;
  int k = 0;
  for (int j = 0; j < m; j++) {
    const int i = m == 1 ? n - 1 : (int)llround((double)j * (n - 1) / (m - 1));
    if (k == 0 || pick[k - 1] != i) pick[k++] = i;
  }
  return k;
}

/* The balance feedback and freshness of each seat, and the training state, to put back afterwards. */
typedef struct saved_crew {
  cls_crew_slot slots[CLS_MAX_TOWERS];
  cls_train_state state;
} saved_crew;

static void save_crew(const cls_crew *c, saved_crew *s) {
  for (int i = 0; i < c->n_towers && i < CLS_MAX_TOWERS; i++) s->slots[i] = c->towers[i];
  s->state = c->state;
}

static void restore_crew(cls_crew *c, const saved_crew *s) {
  for (int i = 0; i < c->n_towers && i < CLS_MAX_TOWERS; i++) {
    cls_crew_slot *d = &c->towers[i];
    const cls_crew_slot *o = &s->slots[i];
    d->speed = o->speed;
    d->probe_speed = o->probe_speed;
    d->planned = o->planned;
    d->idle_until_ms = o->idle_until_ms;
    d->remeasured = o->remeasured;
    d->stale = o->stale;
  }
  c->state = s->state;
}

/* The live towers in crew order; their count. */
static int live_towers(cls_crew *c, cls_crew_slot **live) {
  int n = 0;
  for (int i = 0; i < c->n_towers; i++)
    if (c->towers[i].tower) live[n++] = &c->towers[i];
  return n;
}

/* The first of the live towers on live[k]'s device. */
static int device_group(cls_crew_slot **live, int k) {
  for (int i = 0; i < k; i++)
    if (cls_tower_device(live[i]->tower) == cls_tower_device(live[k]->tower)) return i;
  return k;
}

/* The timings of the training steps: the crew's (per turn tower under sync) and each tower's. */
typedef struct step_times {
  series crew[CLS_MAX_TOWERS]; /* [0] hybrid's; [k] sync's steps with live tower k working */
  series tower[CLS_MAX_TOWERS];
  double share[CLS_MAX_TOWERS]; /* hybrid: each tower's utterances summed over the timed steps */
  int timed;
} step_times;

/* Batch b, run once untimed and once timed, as the strategy runs it: hybrid's step on every tower, sync's
 * on each tower in turn, async's tower gradient on each tower. */
static cls_status time_batch(cls_crew *c, cls_step *step, const cls_host_batch *b, double w, step_times *out) {
  cls_crew_slot *live[CLS_MAX_TOWERS];
  const int n_live = live_towers(c, live);
  const cls_strategy strategy = c->o.strategy;
  const int turns = strategy == CLS_STRATEGY_HYBRID ? 1 : n_live;
  cls_status st = CLS_OK;
  for (int k = 0; st == CLS_OK && k < turns; k++)
    for (int run = 0; st == CLS_OK && run < 2; run++) {
      const double t0 = cls_now_ms();
      if (strategy == CLS_STRATEGY_ASYNC) {
        st = cls_crew_tower_status(c, live[k],
                                   cls_step_tower_gradient(c, live[k], b, 0, b->batch, c->state.random_seed,
                                                           c->state.global_step, 0, 0, live[k]->losses));
        if (st == CLS_OK && run == 1) {
          add(&out->crew[k], w, cls_now_ms() - t0);
          add(&out->tower[live[k]->index], w, cls_now_ms() - t0);
        }
        continue;
      }
      cls_step_plan plan = cls_step_plan_default(c, b);
      plan.turn = strategy == CLS_STRATEGY_SYNC ? k : -1;
      plan.hooks = 0;
      cls_step_result r;
      st = cls_step_run(step, &plan, &r);
      if (st != CLS_OK || run == 0) continue;
      add(&out->crew[k], w, cls_now_ms() - t0);
      for (int i = 0; i < r.n_towers; i++) {
        add(&out->tower[r.towers[i].tower], w, r.towers[i].ms);
        out->share[r.towers[i].tower] += r.towers[i].share;
      }
    }
  if (st == CLS_OK) out->timed++;
  return st;
}

/* The epoch's training steps: the global batch as the strategy forms it, the usable utterances (the
 * last partial global batch dropped), each step's weight; *global the global batch. NULL on no memory. */
static batch_weight *epoch_steps(cls_crew *c, const cls_train_estimate_request *r, int n_live, int *global,
                                 int64_t *steps) {
  const int B = c->o.train_batch_size;
  int towers = c->o.strategy == CLS_STRATEGY_HYBRID ? n_live : 1;
  if (towers > 1 && r->n_train / B < towers) towers = r->n_train / B > 0 ? r->n_train / B : 1;
  *global = B * towers;
  *steps = r->n_train / *global;
  batch_weight *v = malloc((size_t)(*steps > 0 ? *steps : 1) * sizeof *v);
  for (int64_t k = 0; v && k < *steps; k++) {
    const int first = (int)(k * *global);
    v[k] = (batch_weight){first, *global, NULL, weight(r->train_frames, first, *global)};
  }
  return v;
}

/* The training steps timed (the sampled batches through the training loader), fitted and summed. */
static cls_status estimate_training(cls_crew *c, const cls_train_estimate_request *r, int samples,
                                    cls_train_estimate *out) {
  cls_crew_slot *live[CLS_MAX_TOWERS];
  const int n_live = live_towers(c, live);
  int global = 0;
  int64_t n_steps = 0;
  batch_weight *steps = epoch_steps(c, r, n_live, &global, &n_steps);
  if (!steps) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  if (n_steps == 0) {
    free(steps);
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT, "the estimate needs a global batch (%d) of training samples, not %d",
                    global, r->n_train);
  }
  batch_weight *sorted = malloc((size_t)n_steps * sizeof *sorted);
  step_times *times = calloc(1, sizeof *times);
  cls_utterance *picked = malloc((size_t)samples * global * sizeof *picked);
  int pick[MAX_SAMPLES];
  double pick_w[MAX_SAMPLES];
  cls_step *step = NULL;
  cls_loader *l = NULL;
  cls_status st = sorted && times && picked ? CLS_OK : cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  int m = 0;
  if (st == CLS_OK) {
    memcpy(sorted, steps, (size_t)n_steps * sizeof *sorted);
    qsort(sorted, (size_t)n_steps, sizeof *sorted, by_weight);
    m = spread((int)(n_steps < INT32_MAX ? n_steps : INT32_MAX), samples, pick);
    for (int j = 0; j < m; j++) {
      memcpy(picked + (size_t)j * global, r->train + sorted[pick[j]].first, (size_t)global * sizeof *picked);
      pick_w[j] = sorted[pick[j]].w;
    }
    st = cls_step_create(c, &step);
  }
  /* Every sampled batch loaded before any step, each one's loading after the first timed (the time since
     the one before: the loader prepares a batch at a time, its workers sharing it; the first's also holds
     the loader's cold start, which no epoch repeats), then each one's step. */
  const double load_t0 = cls_now_ms();
  if (st == CLS_OK) st = cls_crew_start_train_loader(c, 0, picked, m * global, global, m, global, global, 0, &l);
  cls_host_batch *held[MAX_SAMPLES];
  int n_held = 0;
  series load = {{0}, {0}, 0};
  for (double last = load_t0; st == CLS_OK && n_held < m; n_held++) {
    cls_host_batch *b = cls_loader_next(l);
    if (!b) break;
    held[n_held] = b;
    if (n_held > 0) add(&load, pick_w[n_held], cls_now_ms() - last);
    last = cls_now_ms();
    if (b->error.status != CLS_OK) st = cls_fail(c->e, b->error.status, "%s", b->error.text);
  }
  for (int j = 0; st == CLS_OK && j < n_held; j++) st = time_batch(c, step, held[j], pick_w[j], times);
  for (int j = 0; j < n_held; j++) cls_loader_done(l, held[j]);
  cls_loader_stop(l);
  cls_step_destroy(step);
  if (st == CLS_OK) {
    const int L = c->o.strategy == CLS_STRATEGY_HYBRID ? 1 : n_live;
    line crew[CLS_MAX_TOWERS], tower[CLS_MAX_TOWERS];
    for (int k = 0; k < L; k++) crew[k] = fit(&times->crew[k]);
    for (int i = 0; i < c->n_towers; i++) tower[i] = fit(&times->tower[i]);
    double epoch_ms = 0, tower_ms[CLS_MAX_TOWERS] = {0}, tower_batches[CLS_MAX_TOWERS] = {0};
    if (c->o.strategy == CLS_STRATEGY_ASYNC) {
      /* Each tower takes the next batch when it is done. Towers of one device share it (each was timed
         alone): a device's rate is its towers' mean batch time's; the devices' rates add up. */
      double rate = 0, mean[CLS_MAX_TOWERS] = {0}, device_mean[CLS_MAX_TOWERS] = {0};
      int on_device[CLS_MAX_TOWERS] = {0};
      for (int k = 0; k < L; k++) {
        for (int64_t s = 0; s < n_steps; s++) mean[k] += at(crew[k], steps[s].w);
        mean[k] /= (double)n_steps;
      }
      for (int k = 0; k < L; k++) {
        const int g = device_group(live, k);
        device_mean[g] += mean[k];
        on_device[g]++;
      }
      for (int k = 0; k < L; k++)
        if (on_device[k] > 0 && device_mean[k] > 0) rate += on_device[k] / device_mean[k];
      epoch_ms = rate > 0 ? (double)n_steps / rate : 0;
      for (int k = 0; k < L; k++) {
        const int g = device_group(live, k);
        tower_batches[live[k]->index] = device_mean[g] > 0 ? epoch_ms / device_mean[g] : 0;
        tower_ms[live[k]->index] = epoch_ms;
      }
    } else {
      /* The loader works ahead: a step waits for its batch only when loading takes longer than a step;
         the first batch is waited for. */
      const line loading = fit(&load);
      epoch_ms = at(loading, steps[0].w);
      for (int64_t s = 0; s < n_steps; s++) {
        const int k = (int)(s % L);
        epoch_ms += fmax(at(crew[k], steps[s].w), at(loading, steps[s].w));
        if (L > 1) { /* sync: live tower k works this step */
          tower_ms[live[k]->index] += at(tower[live[k]->index], steps[s].w);
          tower_batches[live[k]->index] += 1;
        } else {
          for (int i = 0; i < n_live; i++) tower_ms[live[i]->index] += at(tower[live[i]->index], steps[s].w);
        }
      }
    }
    out->steps = n_steps;
    out->timed = times->timed;
    out->epoch_s = epoch_ms / 1e3;
    out->n_towers = n_live;
    for (int i = 0; i < n_live; i++) {
      const int t = live[i]->index;
      double utts = tower_batches[t] * c->o.train_batch_size; /* sync, async: whole batches */
      if (c->o.strategy == CLS_STRATEGY_HYBRID)
        utts = times->timed > 0 ? times->share[t] / times->timed * (double)n_steps : 0;
      out->towers[i] = (cls_train_estimate_tower){t, cls_tower_device(live[i]->tower), utts, tower_ms[t] / 1e3};
    }
  }
  free(steps);
  free(sorted);
  free(times);
  free(picked);
  return st;
}

/* The passes of an epoch: every set's batches of dev_batch_size (pooled), a few timed on the lead tower,
 * fitted and summed. */
static cls_status estimate_passes(cls_trainer *t, const cls_train_estimate_request *r, int samples,
                                  cls_train_estimate *out) {
  cls_crew *c = cls_trainer_crew(t);
  const int B = c->o.dev_batch_size;
  int64_t n = 0;
  for (int d = 0; d < r->n_evals; d++) n += (r->evals[d].n + B - 1) / B;
  out->eval_batches = n;
  if (n == 0) return CLS_OK;
  batch_weight *v = malloc((size_t)n * sizeof *v);
  if (!v) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  int64_t k = 0;
  for (int d = 0; d < r->n_evals; d++)
    for (int first = 0; first < r->evals[d].n; first += B) {
      const int count = r->evals[d].n - first < B ? r->evals[d].n - first : B;
      v[k++] = (batch_weight){first, count, &r->evals[d], weight(r->evals[d].frames, first, count)};
    }
  batch_weight *sorted = malloc((size_t)n * sizeof *sorted);
  if (!sorted) {
    free(v);
    return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  memcpy(sorted, v, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, by_weight);
  int pick[MAX_SAMPLES];
  const int m = spread((int)(n < INT32_MAX ? n : INT32_MAX), samples, pick);
  /* Each sampled batch as a pass of its own (untimed, then timed) and as a pass of it twice over (timed):
     the difference is the batch's time in a pass, the rest the pass's start, once per set and epoch. */
  series s = {{0}, {0}, 0};
  double start_ms = 0;
  cls_utterance *twice_u = malloc((size_t)2 * B * sizeof *twice_u);
  int *twice_f = malloc((size_t)2 * B * sizeof *twice_f);
  cls_status st = twice_u && twice_f ? CLS_OK : cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int j = 0; st == CLS_OK && j < m; j++) {
    const batch_weight *bw = &sorted[pick[j]];
    const cls_eval_set *set = bw->set;
    for (int i = 0; i < 2 * bw->count; i++) {
      twice_u[i] = set->utts[bw->first + i % bw->count];
      twice_f[i] = set->frames ? set->frames[bw->first + i % bw->count] : 1;
    }
    cls_eval_set one = {set->name, twice_u, bw->count, set->frames ? twice_f : NULL};
    cls_eval_set two = {set->name, twice_u, 2 * bw->count, set->frames ? twice_f : NULL};
    cls_trainer_eval_request req = {&one, bw->count, "Estimate", NULL, NULL, NULL, NULL, NULL};
    double ms[3] = {0, 0, 0};
    for (int run = 0; st == CLS_OK && run < 3; run++) {
      req.set = run < 2 ? &one : &two;
      const double t0 = cls_now_ms();
      st = cls_trainer_evaluate(t, &req, NULL);
      ms[run] = cls_now_ms() - t0;
    }
    if (st != CLS_OK) break;
    const double batch_ms = fmax(ms[2] - ms[1], 0);
    add(&s, bw->w, batch_ms);
    start_ms += fmax(ms[1] - batch_ms, 0) / m;
  }
  if (st == CLS_OK) {
    const line l = fit(&s);
    double ms = start_ms * r->n_evals;
    for (int64_t i = 0; i < n; i++) ms += at(l, v[i].w);
    out->eval_s = ms / 1e3;
    out->eval_timed = s.n;
  }
  free(twice_u);
  free(twice_f);
  free(v);
  free(sorted);
  return st;
}

cls_status cls_trainer_estimate(cls_trainer *t, const cls_train_estimate_request *r, cls_train_estimate *out) {
  if (!t || !r || !out) return CLS_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  cls_crew *c = cls_trainer_crew(t);
  if (cls_world_size(c->world) > 1)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT, "the time estimate is made by a single process, not %d ranks",
                    cls_world_size(c->world));
  if (!r->train || !r->train_frames || r->n_train <= 0)
    return cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT, "the estimate needs a training set with its frames");
  const int samples = DEFAULT_SAMPLES;
  cls_crew_slot *lead = cls_crew_lead(c);
  if (!lead) return cls_crew_no_tower(c);
  out->epochs = c->o.epochs;
  /* What the steps change, kept: the lead's state in the crew's staging buffers (unused between epochs),
     the balance feedback and the training state. */
  saved_crew *saved = malloc(sizeof *saved);
  if (!saved) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  save_crew(c, saved);
  cls_status st = cls_crew_read_state(c, c->params, c->m, c->v);
  if (st == CLS_OK) {
    st = estimate_training(c, r, samples, out);
    /* Put back whatever happened, so that a failure leaves the towers as they were too; the slots after
       the write, which marks every tower fresh. */
    const cls_status back = cls_crew_write_state(c, c->params, c->m, c->v);
    if (st == CLS_OK) st = back;
    restore_crew(c, saved);
  }
  free(saved);
  if (st == CLS_OK) st = estimate_passes(t, r, samples, out);
  if (st == CLS_OK) out->run_s = out->epochs * (out->epoch_s + out->eval_s);
  return st;
}
