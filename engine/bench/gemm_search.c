/* The GEMM tuning search (see gemm_tuning.h). CLBlast's SGEMM runs one of two kernels: XgemmDirect
 * when m*n*k < XGEMM_MIN_INDIRECT_SIZE^3 (a GemmRoutine parameter), else Xgemm with pad/transpose
 * helpers. All three live in one CLBlast program, which is recompiled whenever any of their
 * parameters change (about 20 s on PoCL, the search's main cost). So the search compiles a short,
 * hand-picked list of candidate PAIRS (one Xgemm and one XgemmDirect configuration each), with a
 * threshold of its own that sends the large shapes to Xgemm and the skinny ones to XgemmDirect; checks
 * every shape's result against a host reference and times it (heaviest shapes first; a kernel whose
 * partial sum already exceeds the best total is dropped); keeps the fastest valid Xgemm (over the
 * large shapes) and XgemmDirect (over the skinny ones); times the shapes on the other kernel as well
 * (two more compiles) to choose the threshold; and measures the result. Then it times our own kernels on
 * every shape and stores, per shape class (cls_gemm_class_of), the backend whose calls x ms sum is smaller
 * (cls_gemm_backend_of then gives it to the device's plans). Prints nothing. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/internal/bench.h"
#include "device/engine.h"
#include "device/gemm_tuning.h"
#include "device/log.h"

#define MAX_SHAPES (CLS_BENCH_MAX_SHAPES * 4)
#define ALL_DIRECT ((size_t)1 << 20) /* (2^20)^3 = 2^60 exceeds every m*n*k */

/* Xgemm, GEMMK 0 / KREG 1: MWG NWG KWG MDIMC NDIMC MDIMA NDIMB KWI VWM VWN STRM STRN SA SB */
typedef struct xgemm_cfg { int mwg, nwg, kwg, mdimc, ndimc, mdima, ndimb, kwi, vwm, vwn, strm, strn, sa, sb; } xgemm_cfg;
/* XgemmDirect: WGD MDIMCD NDIMCD MDIMAD NDIMBD KWID VWMD VWND PADA PADB */
typedef struct direct_cfg { int wgd, mdimcd, ndimcd, mdimad, ndimbd, kwid, vwmd, vwnd, pada, padb; } direct_cfg;

/* CPUs: large register tiles in wide vectors, no local memory (it is ordinary memory there). */
static const xgemm_cfg cpu_x[] = {
    {128, 64, 32, 8, 8, 8, 8, 4, 8, 8, 1, 1, 0, 0}, {64, 64, 32, 8, 8, 8, 8, 2, 8, 8, 1, 1, 0, 0},
    {64, 128, 32, 8, 8, 8, 8, 4, 8, 8, 0, 0, 0, 0}, {128, 128, 32, 16, 8, 16, 8, 4, 8, 8, 1, 1, 0, 0},
    {32, 32, 32, 8, 8, 8, 8, 2, 4, 4, 0, 0, 0, 0},  {64, 64, 32, 16, 16, 16, 16, 2, 2, 2, 0, 0, 1, 1},
    {64, 64, 16, 16, 16, 16, 16, 1, 4, 4, 0, 0, 1, 1}, {128, 128, 16, 16, 16, 16, 16, 2, 4, 4, 1, 1, 1, 1},
};
static const direct_cfg cpu_d[] = {
    {32, 8, 8, 8, 8, 2, 4, 4, 1, 1}, {64, 8, 8, 8, 8, 2, 8, 8, 1, 1}, {16, 8, 8, 8, 8, 2, 2, 2, 1, 1},
    {32, 8, 8, 8, 8, 8, 4, 4, 0, 0}, {64, 8, 8, 8, 8, 4, 4, 4, 1, 1}, {32, 8, 16, 8, 16, 2, 4, 2, 1, 1},
    {32, 16, 16, 16, 16, 2, 2, 2, 1, 1}, {64, 16, 16, 16, 16, 2, 4, 4, 1, 1},
};
/* GPUs and others: 256-item work-groups staging tiles in local memory first. */
static const xgemm_cfg gpu_x[] = {
    {128, 128, 16, 16, 16, 16, 16, 2, 4, 4, 1, 1, 1, 1}, {64, 64, 16, 16, 16, 16, 16, 1, 4, 4, 0, 0, 1, 1},
    {64, 64, 32, 16, 16, 16, 16, 2, 2, 2, 0, 0, 1, 1},  {128, 64, 16, 16, 16, 16, 16, 2, 4, 2, 1, 1, 1, 1},
    {64, 128, 16, 16, 16, 16, 16, 2, 2, 4, 1, 1, 1, 1}, {32, 32, 32, 8, 8, 8, 8, 2, 4, 4, 0, 0, 1, 1},
    {128, 64, 32, 8, 8, 8, 8, 4, 8, 8, 1, 1, 0, 0},     {64, 64, 32, 8, 8, 8, 8, 2, 8, 8, 1, 1, 0, 0},
};
static const direct_cfg gpu_d[] = {
    {32, 16, 16, 16, 16, 2, 2, 2, 1, 1}, {64, 16, 16, 16, 16, 2, 4, 4, 1, 1}, {32, 8, 8, 8, 8, 2, 4, 4, 1, 1},
    {16, 8, 8, 8, 8, 2, 2, 2, 1, 1},     {32, 8, 16, 8, 16, 2, 4, 2, 1, 1},   {64, 8, 8, 8, 8, 4, 4, 4, 1, 1},
    {32, 8, 8, 8, 8, 8, 4, 4, 0, 0},     {64, 8, 8, 8, 8, 2, 8, 8, 1, 1},
};
#define N_CANDIDATES CLS_GEMM_MAX_CANDIDATES

const char *cls_tune_state_name(cls_tune_state state) {
  switch (state) {
    case CLS_TUNE_SKIPPED: return "skipped";
    case CLS_TUNE_TIMED: return "timed";
    case CLS_TUNE_DROPPED: return "dropped";
    case CLS_TUNE_REJECTED: return "rejected";
    case CLS_TUNE_MISFIT: return "misfit";
  }
  return "?";
}

static void add(cls_gemm_params *p, const char *name, size_t value) {
  snprintf(p->names[p->n], sizeof p->names[0], "%s", name);
  p->values[p->n++] = value;
}

static cls_gemm_params xgemm_params(const xgemm_cfg *c) {
  cls_gemm_params p;
  memset(&p, 0, sizeof p);
  snprintf(p.kernel, sizeof p.kernel, "Xgemm");
  add(&p, "GEMMK", 0);
  add(&p, "KREG", 1);
  add(&p, "KWG", (size_t)c->kwg);
  add(&p, "KWI", (size_t)c->kwi);
  add(&p, "MDIMA", (size_t)c->mdima);
  add(&p, "MDIMC", (size_t)c->mdimc);
  add(&p, "MWG", (size_t)c->mwg);
  add(&p, "NDIMB", (size_t)c->ndimb);
  add(&p, "NDIMC", (size_t)c->ndimc);
  add(&p, "NWG", (size_t)c->nwg);
  add(&p, "SA", (size_t)c->sa);
  add(&p, "SB", (size_t)c->sb);
  add(&p, "STRM", (size_t)c->strm);
  add(&p, "STRN", (size_t)c->strn);
  add(&p, "VWM", (size_t)c->vwm);
  add(&p, "VWN", (size_t)c->vwn);
  return p;
}

static cls_gemm_params direct_params(const direct_cfg *c) {
  cls_gemm_params p;
  memset(&p, 0, sizeof p);
  snprintf(p.kernel, sizeof p.kernel, "XgemmDirect");
  add(&p, "KWID", (size_t)c->kwid);
  add(&p, "MDIMAD", (size_t)c->mdimad);
  add(&p, "MDIMCD", (size_t)c->mdimcd);
  add(&p, "NDIMBD", (size_t)c->ndimbd);
  add(&p, "NDIMCD", (size_t)c->ndimcd);
  add(&p, "PADA", (size_t)c->pada);
  add(&p, "PADB", (size_t)c->padb);
  add(&p, "VWMD", (size_t)c->vwmd);
  add(&p, "VWND", (size_t)c->vwnd);
  add(&p, "WGD", (size_t)c->wgd);
  return p;
}

static cls_gemm_params routine_params(size_t min_indirect) {
  cls_gemm_params p;
  memset(&p, 0, sizeof p);
  snprintf(p.kernel, sizeof p.kernel, "GemmRoutine");
  add(&p, "XGEMM_MIN_INDIRECT_SIZE", min_indirect);
  return p;
}

/* CLBlast's tuner constraints, and what the device can run. */
static bool xgemm_fits(const xgemm_cfg *c, const cls_device_info *d) {
  if (c->kwg % c->kwi || c->mwg % (c->mdimc * c->vwm) || c->nwg % (c->ndimc * c->vwn)) return false;
  if (c->mwg % (c->mdima * c->vwm) || c->nwg % (c->ndimb * c->vwn)) return false;
  int threads = c->mdimc * c->ndimc;
  if (threads % c->mdima || threads % c->ndimb || c->kwg % (threads / c->mdima) || c->kwg % (threads / c->ndimb)) return false;
  size_t local = (size_t)(c->sa * c->kwg * c->mwg + c->sb * c->kwg * c->nwg) * sizeof(float);
  return (size_t)threads <= d->max_work_group_size && local <= d->local_mem_bytes;
}

static bool direct_fits(const direct_cfg *c, const cls_device_info *d) {
  if (c->wgd % c->kwid || c->wgd % (c->mdimcd * c->vwmd) || c->wgd % (c->ndimcd * c->vwnd)) return false;
  if (c->wgd % (c->mdimad * c->vwmd) || c->wgd % (c->ndimbd * c->vwnd)) return false;
  int threads = c->mdimcd * c->ndimcd;
  if (threads % c->mdimad || threads % c->ndimbd || c->wgd % (threads / c->mdimad) || c->wgd % (threads / c->ndimbd))
    return false;
  size_t local = (size_t)(c->wgd * (c->wgd + c->pada) + c->wgd * (c->wgd + c->padb)) * sizeof(float);
  return (size_t)threads <= d->max_work_group_size && local <= d->local_mem_bytes;
}

typedef struct search {
  cls_engine *e;
  int device;
  const cls_gemm_tune_options *o;
  cls_gemm_tune_result *r;
  cls_gemm_cases *cases;
  const cls_gemm_shape *shapes;
  int n;
  int runs;      /* timed runs per shape: min(options->runs, 3) */
  int stage, stages;
} search;

static void progress(search *s, const char *fmt, ...) CLS_PRINTF(2, 3);
static void progress(search *s, const char *fmt, ...) {
  if (!s->o->progress) return;
  char buf[300];
  int n = snprintf(buf, sizeof buf, "tune [%d/%d] ", s->stage, s->stages);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  s->o->progress(s->o->user, buf);
}

static unsigned long long mnk(const cls_gemm_shape *s) {
  return (unsigned long long)s->m * (unsigned long long)s->n * (unsigned long long)s->k;
}

static bool is_direct(const cls_gemm_shape *s, size_t min_indirect) {
  unsigned long long t = (unsigned long long)min_indirect;
  return mnk(s) < t * t * t;
}

/* The smallest threshold sending `lo` direct, or 0 when none also sends `hi` indirect. */
static size_t threshold_between(unsigned long long lo, unsigned long long hi) {
  size_t t = (size_t)cbrt((double)lo);
  while ((unsigned long long)t * t * t <= lo) t++;
  if ((unsigned long long)t * t * t > hi) return 0;
  /* prefer the geometric middle of the gap, so that nearby shapes fall on the same side */
  size_t mid = (size_t)cbrt(sqrt((double)lo) * sqrt((double)hi));
  if (mid > t && (unsigned long long)mid * mid * mid <= hi) t = mid;
  return t;
}

static void reject(search *s, const char *fmt, ...) CLS_PRINTF(2, 3);
static void reject(search *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->r->last_rejection, sizeof s->r->last_rejection, fmt, ap);
  va_end(ap);
  s->r->rejected++;
}

/* Checks and times shape i under the parameters in force. false: wrong result or CLBlast error
 * (recorded as a rejection); a failed OpenCL call other than through CLBlast is returned in *st. */
static bool measure(search *s, int i, const char *what, double *ms, cls_status *st) {
  bool ok = false;
  char detail[200];
  progress(s, "%s: checking %s [%d,%d,%d]", what, s->shapes[i].name, s->shapes[i].m, s->shapes[i].n, s->shapes[i].k);
  cls_status c = cls_gemm_cases_check(s->cases, i, &ok, detail, sizeof detail);
  if (c == CLS_ERR_BLAS) {
    reject(s, "%s: %s", what, cls_engine_error(s->e));
    return false;
  }
  if (c != CLS_OK) {
    *st = c;
    return false;
  }
  if (!ok) {
    reject(s, "%s: %s: wrong result: %s", what, s->shapes[i].name, detail);
    return false;
  }
  progress(s, "%s: timing %s", what, s->shapes[i].name);
  c = cls_gemm_cases_time(s->cases, i, 0, s->runs, ms, NULL); /* the check was the warm-up */
  if (c == CLS_ERR_BLAS) {
    reject(s, "%s: %s", what, cls_engine_error(s->e));
    return false;
  }
  if (c != CLS_OK) *st = c;
  return c == CLS_OK;
}

/* Applies parameter sets; false (a rejection) when CLBlast refuses one. */
static bool apply(search *s, const cls_gemm_params *p, int n) {
  for (int k = 0; k < n; k++)
    if (cls_gemm_params_apply(s->e, s->device, &p[k]) != CLS_OK) {
      reject(s, "%s", cls_engine_error(s->e));
      return false;
    }
  return true;
}

/* Chooses where direct ends: shapes sorted by m*n*k, the first p direct. */
static size_t choose_threshold(search *s, const double *ms_ind, const double *ms_dir, double *best_cost) {
  int order[MAX_SHAPES];
  for (int i = 0; i < s->n; i++) order[i] = i;
  for (int i = 1; i < s->n; i++)
    for (int j = i; j > 0 && mnk(&s->shapes[order[j]]) < mnk(&s->shapes[order[j - 1]]); j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  size_t best = 1;
  *best_cost = INFINITY;
  for (int p = 0; p <= s->n; p++) {
    size_t t = p == 0        ? 1
               : p == s->n ? ALL_DIRECT
                           : threshold_between(mnk(&s->shapes[order[p - 1]]), mnk(&s->shapes[order[p]]));
    if (t == 0) continue;
    double cost = 0;
    for (int q = 0; q < s->n; q++) {
      int i = order[q];
      cost += s->shapes[i].calls * (q < p ? ms_dir[i] : ms_ind[i]);
    }
    if (cost < *best_cost) {
      *best_cost = cost;
      best = t;
    }
  }
  return best;
}

/* The search's own first threshold: at the largest gap in m*n*k between consecutive shapes, so that
 * both kernels get shapes to be judged on (everything indirect when there is one shape). */
static size_t initial_threshold(const cls_gemm_shape *shapes, int n) {
  size_t best = 1;
  double best_gap = 1.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      unsigned long long lo = mnk(&shapes[i]), hi = mnk(&shapes[j]);
      if (hi <= lo) continue;
      bool adjacent = true; /* no shape strictly between */
      for (int k = 0; k < n && adjacent; k++) adjacent = !(mnk(&shapes[k]) > lo && mnk(&shapes[k]) < hi);
      double gap = (double)hi / (double)lo;
      size_t t = adjacent ? threshold_between(lo, hi) : 0;
      if (t && gap > best_gap) {
        best_gap = gap;
        best = t;
      }
    }
  return best;
}

void cls_gemm_shapes_describe(const cls_gemm_shape *shapes, int n, char *out, size_t cap) {
  size_t used = (size_t)snprintf(out, cap, "H=");
  for (int i = 0; i < n && used < cap; i++) {
    bool seen = false;
    for (int j = 0; j < i; j++) seen |= shapes[j].n_hidden == shapes[i].n_hidden;
    if (!seen) used += (size_t)snprintf(out + used, cap - used, "%s%d", used > 2 ? "," : "", shapes[i].n_hidden);
  }
  if (used < cap) snprintf(out + used, cap - used, " (%d shapes)", n);
}

/* Shape indices sorted by `key` (descending when `down`). */
static void sort_by(int *order, int n, const double *key, bool down) {
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && (down ? key[order[j]] > key[order[j - 1]] : key[order[j]] < key[order[j - 1]]); j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
}

/* Every shape of one class on the other kernel (already applied), in `order`; once the other kernel
 * is more than twice as slow as the current one, the rest of the order is assumed slower still
 * (INFINITY): the direct kernel loses ground as shapes grow, Xgemm as they shrink. */
static bool cross_measure(search *s, const int *order, bool direct_class, size_t split, const double *current,
                          double *other, const char *what, cls_status *st) {
  bool giving_up = false;
  for (int q = 0; q < s->n && *st == CLS_OK; q++) {
    int i = order[q];
    if (is_direct(&s->shapes[i], split) != direct_class) continue;
    if (giving_up) {
      other[i] = INFINITY;
      continue;
    }
    if (!measure(s, i, what, &other[i], st)) return false;
    giving_up = other[i] > 2 * current[i];
  }
  return true;
}

/* The fully timed candidate of one kernel with the least sum of calls x ms over the shapes that
 * `threshold` sends to it; `current` when none is better. */
static int repick(const cls_gemm_tune_result *r, double all[][MAX_SHAPES], const cls_gemm_shape *shapes, int n,
                  size_t threshold, bool direct, int current) {
  int best = current;
  double best_total = INFINITY;
  for (int c = 0; c < r->candidates; c++) {
    if ((direct ? r->candidate[c].direct_state : r->candidate[c].xgemm_state) != CLS_TUNE_TIMED) continue;
    double total = 0;
    for (int i = 0; i < n; i++)
      if (is_direct(&shapes[i], threshold) == direct) total += shapes[i].calls * all[c][i];
    if (total < best_total) {
      best_total = total;
      best = c;
    }
  }
  return best;
}

/* What the stages of one search share: the candidate lists for the device, the search's own first
 * threshold, the shape orders, and the best candidate of each kernel so far with its times. */
typedef struct tune_state {
  const xgemm_cfg *xs;
  const direct_cfg *ds;
  size_t split;
  cls_gemm_params routine;
  bool any_x, any_d; /* shapes on Xgemm / XgemmDirect at `split` */
  int heavy_first[MAX_SHAPES], small_first[MAX_SHAPES], large_first[MAX_SHAPES];
  int best_x, best_d;
  double best_x_total, best_d_total;
  double ms_ind[MAX_SHAPES], ms_dir[MAX_SHAPES]; /* the best's time per shape (the other kernel's: stage 2) */
  double all_x[N_CANDIDATES][MAX_SHAPES], all_d[N_CANDIDATES][MAX_SHAPES]; /* per candidate, shape */
} tune_state;

/* CLBlast's defaults on every shape (or the caller's `before_ms`), and the orders the stages use. */
static cls_status time_before(search *s, tune_state *t, const double *before_ms) {
  cls_gemm_tune_result *r = s->r;
  const cls_gemm_shape *shapes = s->shapes;
  double weight[MAX_SHAPES], size[MAX_SHAPES];
  cls_status st = CLS_OK;
  for (int i = 0; i < s->n && st == CLS_OK; i++) {
    if (before_ms) {
      r->before_ms[i] = before_ms[i];
    } else {
      progress(s, "before: timing %s", shapes[i].name);
      st = cls_gemm_cases_time(s->cases, i, 1, s->o->runs, &r->before_ms[i], NULL);
    }
    r->before_step_ms += shapes[i].calls * r->before_ms[i];
    weight[i] = shapes[i].calls * r->before_ms[i];
    size[i] = (double)mnk(&shapes[i]);
  }
  sort_by(t->heavy_first, s->n, weight, true);
  sort_by(t->small_first, s->n, size, false);
  sort_by(t->large_first, s->n, size, true);
  return st;
}

/* Stage 1 for candidate pair c: applied at the search's own threshold, every shape checked and timed
 * on its kernel (the heaviest first; a kernel stops once its partial sum exceeds the best total so
 * far, as it cannot win), the pair's states recorded, and the best of each kernel updated. */
static void try_pair(search *s, tune_state *t, int c, cls_status *st) {
  cls_gemm_tune_result *r = s->r;
  const cls_gemm_shape *shapes = s->shapes;
  const int n = s->n;
  const cls_device_info *info = &s->e->devices[s->device].info;
  cls_gemm_candidate *cand = &r->candidate[c];
  bool x_fits = xgemm_fits(&t->xs[c], info), d_fits = direct_fits(&t->ds[c], info);
  cls_gemm_params set[3] = {t->routine, xgemm_params(&t->xs[c]), direct_params(&t->ds[c])};
  cand->xgemm = set[1];
  cand->direct = set[2];
  r->candidates++;
  bool x_ok = x_fits && t->any_x, d_ok = d_fits && t->any_d, x_cut = false, d_cut = false;
  if (x_ok || d_ok) {
    bool x_applied = !x_ok || apply(s, &set[1], 1), d_applied = !d_ok || apply(s, &set[2], 1);
    bool r_applied = apply(s, &set[0], 1);
    if (!x_applied || !r_applied) cand->xgemm_state = CLS_TUNE_REJECTED;
    if (!d_applied || !r_applied) cand->direct_state = CLS_TUNE_REJECTED;
    x_ok = x_ok && x_applied && r_applied;
    d_ok = d_ok && d_applied && r_applied;
  }
  if (!x_fits) cand->xgemm_state = CLS_TUNE_MISFIT;
  if (!d_fits) cand->direct_state = CLS_TUNE_MISFIT;
  double x_total = 0, d_total = 0, ms_x[MAX_SHAPES] = {0}, ms_d[MAX_SHAPES] = {0};
  char what[48];
  for (int q_ = 0; q_ < n && *st == CLS_OK; q_++) {
    int i = t->heavy_first[q_];
    bool direct = is_direct(&shapes[i], t->split);
    if (direct ? !d_ok || d_cut : !x_ok || x_cut) continue;
    snprintf(what, sizeof what, "candidate %d (%s)", c + 1, direct ? "XgemmDirect" : "Xgemm");
    double ms = 0;
    bool ok = measure(s, i, what, &ms, st);
    if (direct) {
      d_ok = ok;
      ms_d[i] = ms;
      d_total += shapes[i].calls * ms;
      d_cut = d_total > t->best_d_total;
    } else {
      x_ok = ok;
      ms_x[i] = ms;
      x_total += shapes[i].calls * ms;
      x_cut = x_total > t->best_x_total;
    }
  }
  cand->xgemm_ms = x_total;
  cand->direct_ms = d_total;
  memcpy(t->all_x[c], ms_x, sizeof ms_x);
  memcpy(t->all_d[c], ms_d, sizeof ms_d);
  if (x_fits && t->any_x && cand->xgemm_state == CLS_TUNE_SKIPPED)
    cand->xgemm_state = !x_ok ? CLS_TUNE_REJECTED : x_cut ? CLS_TUNE_DROPPED : CLS_TUNE_TIMED;
  if (d_fits && t->any_d && cand->direct_state == CLS_TUNE_SKIPPED)
    cand->direct_state = !d_ok ? CLS_TUNE_REJECTED : d_cut ? CLS_TUNE_DROPPED : CLS_TUNE_TIMED;
  if (x_ok && !x_cut && x_total < t->best_x_total) {
    t->best_x_total = x_total;
    t->best_x = c;
    for (int i = 0; i < n; i++)
      if (!is_direct(&shapes[i], t->split)) t->ms_ind[i] = ms_x[i];
  }
  if (d_ok && !d_cut && d_total < t->best_d_total) {
    t->best_d_total = d_total;
    t->best_d = c;
    for (int i = 0; i < n; i++)
      if (is_direct(&shapes[i], t->split)) t->ms_dir[i] = ms_d[i];
  }
}

/* Stage 2: each class of shapes on the other kernel too (two compiles), then the threshold; the
 * best of each kernel picked again when the threshold moved shapes between them. */
static size_t choose_split(search *s, tune_state *t, int pairs, cls_status *st) {
  const cls_gemm_shape *shapes = s->shapes;
  const int n = s->n;
  const size_t split = t->split;
  size_t threshold = t->best_x >= 0 ? 1 : ALL_DIRECT;
  if (*st != CLS_OK || t->best_x < 0 || t->best_d < 0) return threshold;
  cls_gemm_params set[3] = {routine_params(1), xgemm_params(&t->xs[t->best_x]), direct_params(&t->ds[t->best_d])};
  s->stage = pairs + 1;
  bool ok = apply(s, set, 3) && cross_measure(s, t->large_first, true, split, t->ms_dir, t->ms_ind,
                                              "best Xgemm on the direct shapes", st);
  s->stage = pairs + 2;
  set[0] = routine_params(ALL_DIRECT);
  ok = ok && apply(s, set, 1) &&
       cross_measure(s, t->small_first, false, split, t->ms_ind, t->ms_dir, "best XgemmDirect on the Xgemm shapes", st);
  double cost = 0;
  threshold = ok ? choose_threshold(s, t->ms_ind, t->ms_dir, &cost) : split;
  /* the threshold already compiled, when it sorts the shapes the same way */
  bool same_as_split = true;
  for (int i = 0; i < n; i++) same_as_split &= is_direct(&shapes[i], threshold) == is_direct(&shapes[i], split);
  if (same_as_split) threshold = split;
  /* the threshold may have moved shapes between the kernels: where the candidates were timed on
     every shape their kernel now gets, pick each kernel's best again over exactly those shapes */
  if (threshold <= split) t->best_d = repick(s->r, t->all_d, shapes, n, threshold, true, t->best_d);
  if (threshold >= split) t->best_x = repick(s->r, t->all_x, shapes, n, threshold, false, t->best_x);
  return threshold;
}

/* Stage 3: the winners at `threshold`, measured with as many runs as "before"; CLBlast's defaults
 * (no winners) when they are not at least 1% faster. */
static void measure_winners(search *s, const tune_state *t, size_t threshold, int pairs, cls_status *st) {
  cls_gemm_tune_result *r = s->r;
  cls_gemm_tuning *w = &r->winners;
  cls_gemm_shapes_describe(s->shapes, s->n, w->shapes, sizeof w->shapes);
  if (t->best_x >= 0 || t->best_d >= 0) {
    if (t->best_x >= 0) w->kernels[w->n++] = xgemm_params(&t->xs[t->best_x]);
    if (t->best_d >= 0) w->kernels[w->n++] = direct_params(&t->ds[t->best_d]);
    w->kernels[w->n++] = routine_params(threshold);
  }
  s->stage = pairs + 3;
  s->runs = s->o->runs; /* "after" as many runs as "before" */
  bool final_ok = *st == CLS_OK && w->n > 0 && apply(s, w->kernels, w->n);
  for (int i = 0; i < s->n && *st == CLS_OK && final_ok; i++) {
    final_ok = measure(s, i, "winners", &r->after_ms[i], st);
    r->after_step_ms += s->shapes[i].calls * r->after_ms[i];
  }
  if (*st == CLS_OK && (!final_ok || !(r->after_step_ms < 0.99 * r->before_step_ms))) {
    /* nothing beat CLBlast's defaults: store that, so that training keeps them */
    w->n = 0;
    r->after_step_ms = r->before_step_ms;
    memcpy(r->after_ms, r->before_ms, sizeof r->after_ms);
  }
}

/* Stage 4: our own kernels on every shape beside CLBlast as stored (after_ms): the faster backend per
 * class into the winners. */
static cls_status choose_backends(search *s, int pairs) {
  cls_gemm_tune_result *r = s->r;
  const cls_gemm_shape *shapes = s->shapes;
  s->stage = pairs + 4;
  cls_status st = cls_gemm_cases_set_backend(s->cases, CLS_GEMM_BACKEND_OWN);
  for (int i = 0; i < s->n && st == CLS_OK; i++) {
    const cls_gemm_class c = cls_gemm_class_of((size_t)shapes[i].m, (size_t)shapes[i].n, (size_t)shapes[i].k,
                                               shapes[i].packed_b != 0);
    r->own_ms[i] = INFINITY; /* a wrong result (counted as a rejection) keeps the class on CLBlast */
    double ms = 0;
    if (measure(s, i, "own kernels", &ms, &st)) r->own_ms[i] = ms;
    r->class_ms[c][0] += shapes[i].calls * r->own_ms[i];
    r->class_ms[c][1] += shapes[i].calls * r->after_ms[i];
    r->class_shapes[c]++;
  }
  for (int c = 0; c < CLS_GEMM_N_CLASSES && st == CLS_OK; c++)
    if (r->class_shapes[c])
      r->winners.backend[c] =
          r->class_ms[c][0] < r->class_ms[c][1] ? CLS_GEMM_BACKEND_OWN : CLS_GEMM_BACKEND_CLBLAST;
  return st;
}

/* Stores the winners; a failure to store is a warning (the engine's error text left as it was). */
static void store_winners(search *s) {
  cls_engine *e = s->e;
  cls_gemm_tune_result *r = s->r;
  cls_gemm_tuning held; /* the own kernels' line, which this search does not measure, stays */
  cls_error why;
  if (cls_gemm_tuning_read(e, s->device, &held, NULL, 0, &why) == CLS_TUNING_OK) {
    memcpy(r->winners.own, held.own, sizeof held.own);
    memcpy(r->winners.own_kernels, held.own_kernels, sizeof held.own_kernels);
  }
  char saved[CLS_ERROR_CAP];
  memcpy(saved, e->error.text, sizeof saved);
  if (cls_gemm_tuning_store(e, s->device, &r->winners, r->path, sizeof r->path) == CLS_OK) {
    r->stored = true; /* and the device takes its backends */
  } else {
    cls_log(e, CLS_LOG_WARNING, "%s", e->error.text);
    memcpy(e->error.text, saved, sizeof saved);
  }
}

cls_status cls_gemm_tune(cls_engine *e, int device, const cls_gemm_shape *shapes, int n,
                         const double *before_ms, const cls_gemm_tune_options *o, cls_gemm_tune_result *r) {
  memset(r, 0, sizeof *r);
  if (!e || device < 0 || device >= e->n_devices || n < 1 || n > MAX_SHAPES || !o || o->runs < 1)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "GEMM tuning: bad arguments");
  const double t0 = cls_now_ms();
  const bool cpu = e->devices[device].info.kind == CLS_DEVICE_CPU;
  int pairs = o->max_candidates > 0 && o->max_candidates < N_CANDIDATES ? o->max_candidates : N_CANDIDATES;
  r->n_shapes = n;
  cl_command_queue q = NULL;
  cls_status st = cls_bench_queue(e, device, &q);
  search s = {e, device, o, r, NULL, shapes, n, o->runs < 3 ? o->runs : 3, 0, pairs + 4};
  if (st == CLS_OK) st = cls_gemm_cases_create(e, device, q, shapes, n, &s.cases);
  if (st == CLS_OK) st = cls_gemm_cases_set_backend(s.cases, CLS_GEMM_BACKEND_CLBLAST); /* what this search tunes */
  tune_state t = {.xs = cpu ? cpu_x : gpu_x, .ds = cpu ? cpu_d : gpu_d, .best_x = -1, .best_d = -1};
  if (st == CLS_OK) st = time_before(&s, &t, before_ms);
  t.split = initial_threshold(shapes, n);
  t.routine = routine_params(t.split);
  for (int i = 0; i < n; i++) {
    if (is_direct(&shapes[i], t.split)) t.any_d = true;
    else t.any_x = true;
  }
  t.best_x_total = t.best_d_total = INFINITY;
  r->best_xgemm = r->best_direct = -1;
  r->split = (int)t.split;
  for (int c = 0; c < pairs && st == CLS_OK; c++) {
    s.stage = c + 1;
    try_pair(&s, &t, c, &st);
  }
  size_t threshold = choose_split(&s, &t, pairs, &st);
  r->best_xgemm = t.best_x;
  r->best_direct = t.best_d;
  measure_winners(&s, &t, threshold, pairs, &st);
  if (st == CLS_OK) st = choose_backends(&s, pairs);
  if (st == CLS_OK) store_winners(&s);
  cls_gemm_cases_destroy(s.cases);
  if (q) clReleaseCommandQueue(q);
  r->seconds = (cls_now_ms() - t0) / 1e3;
  return st;
}
