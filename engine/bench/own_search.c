/* Our own kernels' tuning search (see cls_own_tune in clspeech/internal/bench.h). The tile sizes of
 * kernels/gemm.cl and kernels/lstm_seq.cl are build-time macros, so each candidate is a build: an engine of
 * its own whose kernel options put the candidate after the device's table row (and after the user's
 * CLSPEECH_KERNEL_OPTIONS), on which only the program whose macros changed is compiled (the others'
 * options do not carry the -DCLS_GEMM_* or -DCLS_LSTM_SEQ_* items and come from the binary cache: about
 * 3.5-5 s a candidate on PoCL). Every GEMM shape's result is checked against the host's double reference
 * (cls_gemm_cases_check), every LSTM sequence case's against the per-step path (lstm_seq_cases.c), and then
 * timed; a wrong result or a build that fails is rejected, never kept. The search is coordinate-wise, one
 * group of macros at a time, each group's candidates generated from the device: the wide tile (MR x NV
 * vectors of the device's float width W, whose MR x NV accumulators, NV loads and a broadcast fit the
 * register file: 32 vector registers at W = 16, AVX-512's, 16 otherwise; at least half the file in
 * accumulators, to cover the FMA latency; ranked by FMAs per load), its k unrolling, the few-rows tile for
 * the packed recurrent products (ranked also by how little of the batch's rows a tile pads), the thin
 * tile's rows (MR_NARROW), the narrow product's copied form, and the sequence kernels' tile (ranked also by
 * how evenly whole tiles split the batch over the compute units; timed on those kernels alone). A
 * candidate whose partial sum already exceeds the best total by 5 % is dropped. The winner must then beat the defaults in a final comparison that takes turns between the
 * two builds round by round (the median of the rounds' ratios, at least 1 % faster); it is stored in the
 * device's tuning file (gemm_tuning.h, the "own" line) with the digest of the kernels it was measured
 * on, which every later engine's build options take. --tune_budget bounds the time: no candidate starts
 * after it. Prints nothing. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/internal/bench.h"
#include "clspeech/internal/ops.h"
#include "device/engine.h"
#include "device/gemm_tuning.h"
#include "device/kernel_options.h"
#include "device/log.h"
#include "own_tunables.h" /* kernels/: the tunables' defaults */

#define MAX_SHAPES (CLS_BENCH_MAX_SHAPES * 4)

/* The macros searched, in the order they are written; their defaults come from the device's build
 * options (the table row), else the kernels' own #ifndef values. */
enum { T_MR, T_NV, T_K_UNROLL, T_MR_FEW, T_NV_FEW, T_MR_NARROW, T_NARROW_COPY, T_SEQ_MR, T_SEQ_NV, N_TUNED };
static const char *const tuned_names[N_TUNED] = {"CLS_GEMM_MR",        "CLS_GEMM_NV",        "CLS_GEMM_K_UNROLL",
                                                 "CLS_GEMM_MR_FEW",    "CLS_GEMM_NV_FEW",    "CLS_GEMM_MR_NARROW",
                                                 "CLS_GEMM_NARROW_COPY", "CLS_LSTM_SEQ_MR", "CLS_LSTM_SEQ_NV"};

/* What a build is timed on: the GEMM shapes, the LSTM's sequence kernels (lstm_seq_cases.c), or both. A
 * group of candidates that changes one kernel's macros only is timed on that kernel's part. */
enum { PART_GEMM = 1, PART_SEQ = 2, PART_ALL = 3 };
#define MAX_LSTM_CASES 8

typedef struct values {
  int v[N_TUNED];
} values;

/* A candidate build, kept alive while it is timed. */
typedef struct side {
  cls_engine *e;
  int device;
  cl_command_queue q;
  cls_gemm_cases *cases;    /* made when the build is first timed on PART_GEMM (side_ready) */
  cls_lstm_seq_cases *lstm; /* and on PART_SEQ */
} side;

typedef struct own_search {
  cls_engine *e;
  int device;
  const cls_own_tune_options *o;
  cls_own_tune_result *r;
  const cls_gemm_shape *shapes;
  int n;
  int order[MAX_SHAPES]; /* the shapes timed, heaviest first (calls x flops), so that a slow candidate is dropped */
  int n_order;           /* early; the LSTM's recurrent products where it takes the sequence path left out */
  char select[32];       /* the device as a selection item, "P:D" */
  double t0;
  int width, registers, few_rows;
  cls_lstm_seq_case lstm[MAX_LSTM_CASES]; /* the cases whose LSTM takes the sequence path */
  int n_lstm;
  unsigned units;        /* the device's compute units: the sequence kernels split the batch over them */
  side best;             /* the best build so far, kept to be timed beside each candidate (its e NULL: none yet) */
} own_search;

static void progress(own_search *s, const char *fmt, ...) CLS_PRINTF(2, 3);
static void progress(own_search *s, const char *fmt, ...) {
  if (!s->o->progress) return;
  char buf[400];
  int n = snprintf(buf, sizeof buf, "tune own [%d] ", s->r->n);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  s->o->progress(s->o->user, buf);
}

static bool over_budget(const own_search *s) {
  return s->o->budget_s > 0 && (cls_now_ms() - s->t0) / 1e3 >= s->o->budget_s;
}

/* The last -D<macro>=N of `options`, or `fallback`. */
static int option_value(const char *options, const char *macro, int fallback) {
  char key[48];
  snprintf(key, sizeof key, "-D%s=", macro);
  int v = fallback;
  for (const char *at = options; at && (at = strstr(at, key)) != NULL; at += strlen(key)) v = atoi(at + strlen(key));
  return v;
}

static values defaults_of(const char *options) {
  values d;
  d.v[T_MR] = option_value(options, tuned_names[T_MR], CLS_GEMM_MR_DEFAULT);
  d.v[T_NV] = option_value(options, tuned_names[T_NV], CLS_GEMM_NV_DEFAULT);
  d.v[T_K_UNROLL] = option_value(options, tuned_names[T_K_UNROLL], CLS_GEMM_K_UNROLL_DEFAULT);
  d.v[T_MR_FEW] = option_value(options, tuned_names[T_MR_FEW], d.v[T_MR]); /* (defaults to the build's tile) */
  d.v[T_NV_FEW] = option_value(options, tuned_names[T_NV_FEW], d.v[T_NV]);
  d.v[T_MR_NARROW] = option_value(options, tuned_names[T_MR_NARROW], CLS_GEMM_MR_NARROW_DEFAULT);
  d.v[T_NARROW_COPY] = option_value(options, tuned_names[T_NARROW_COPY], CLS_GEMM_NARROW_COPY_DEFAULT);
  d.v[T_SEQ_MR] = option_value(options, tuned_names[T_SEQ_MR], CLS_LSTM_SEQ_MR_DEFAULT);
  d.v[T_SEQ_NV] = option_value(options, tuned_names[T_SEQ_NV], CLS_LSTM_SEQ_NV_DEFAULT);
  return d;
}

static void format_values(const values *v, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (int t = 0; t < N_TUNED && used < cap; t++)
    used += (size_t)snprintf(out + used, cap - used, "%s-D%s=%d", t ? " " : "", tuned_names[t], v->v[t]);
}

static bool same(const values *a, const values *b) { return !memcmp(a->v, b->v, sizeof a->v); }

/* ---- one build, checked and timed ---- */

static void side_free(side *b) {
  cls_lstm_seq_cases_destroy(b->lstm);
  cls_gemm_cases_destroy(b->cases);
  if (b->q) clReleaseCommandQueue(b->q);
  cls_engine_destroy(b->e);
  memset(b, 0, sizeof *b);
}

/* Builds `options` on the device in an engine of its own; false with `why` when it does not build. */
static bool side_build(own_search *s, const char *options, side *b, char *why, size_t cap) {
  memset(b, 0, sizeof *b);
  cls_engine_options eo = *cls_engine_get_options(s->e);
  const char *user = eo.kernel_options ? eo.kernel_options : "";
  size_t len = strlen(user) + strlen(s->select) + strlen(options) + 4;
  char *ko = malloc(len);
  if (!ko) {
    snprintf(why, cap, "out of host memory");
    return false;
  }
  snprintf(ko, len, "%s%s%s=%s", user, user[0] ? ";" : "", s->select, options);
  eo.kernel_options = ko;
  eo.log = NULL; /* its notices (builds, no tuning) are the search's own business */
  eo.gemm_tuning = false;
  cls_status st = cls_engine_create(&eo, &b->e);
  free(ko);
  int sel = -1, count = 0, all[64];
  if (st == CLS_OK) st = cls_engine_select(b->e, s->select, all, 64, &count);
  if (st == CLS_OK && count == 1) sel = all[0];
  if (st == CLS_OK && count == 1) st = cls_engine_prepare_untuned(b->e, &sel, &count);
  if (st == CLS_OK && count != 1) st = CLS_ERR_BUILD;
  b->device = sel;
  if (st == CLS_OK) st = cls_bench_queue(b->e, sel, &b->q);
  if (st != CLS_OK) {
    const char *text = b->e ? cls_engine_error(b->e) : "no engine";
    snprintf(why, cap, "does not build: %.*s", (int)strcspn(text, "\n"), text && text[0] ? text : "(no error text)");
    side_free(b);
    return false;
  }
  return true;
}

/* The build's cases of `parts` (its GEMM shapes' buffers, its LSTM sequence cases), made the first time it is
 * timed on them: a group's candidate is timed on one part, and only the best build, timed beside every
 * group's, comes to need both. false with `why` when they cannot be made. */
static bool side_ready(own_search *s, side *b, int parts, char *why, size_t cap) {
  cls_status st = CLS_OK;
  if ((parts & PART_GEMM) && !b->cases) {
    st = cls_gemm_cases_create(b->e, b->device, b->q, s->shapes, s->n, &b->cases);
    if (st == CLS_OK) st = cls_gemm_cases_set_backend(b->cases, CLS_GEMM_BACKEND_OWN);
    if (st == CLS_OK) cls_gemm_cases_set_run_ms(b->cases, CLS_BENCH_RUN_MS);
  }
  if (st == CLS_OK && (parts & PART_SEQ) && s->n_lstm > 0 && !b->lstm)
    st = cls_lstm_seq_cases_create(b->e, b->device, b->q, s->lstm, s->n_lstm, &b->lstm);
  if (st != CLS_OK) snprintf(why, cap, "its cases: %s", cls_engine_error(b->e));
  return st == CLS_OK;
}

/* A candidate is dropped once its partial sum passes this many times the best's (side_time), and wins at this
 * many times its time or less (beats_best; the final comparison with the defaults alike). */
#define DROP_RATIO 1.05
#define WIN_RATIO 0.99

/* Checks every GEMM shape (PART_GEMM) and LSTM sequence case (PART_SEQ) of `parts` on the build: false with
 * `why` at the first wrong result or failed run. All before any timing, so that a wrong build is rejected
 * even where it is also slow. */
static bool side_check(own_search *s, side *b, int parts, char *why, size_t cap) {
  for (int j = 0; (parts & PART_GEMM) && j < s->n_order; j++) {
    const int i = s->order[j];
    const cls_gemm_shape *sh = &s->shapes[i];
    bool ok = false;
    char detail[200] = "";
    const cls_status st = cls_gemm_cases_check(b->cases, i, &ok, detail, sizeof detail);
    if (st != CLS_OK || !ok) {
      snprintf(why, cap, "wrong result on %s [%d,%d,%d]: %s", sh->name, sh->m, sh->n, sh->k,
               st != CLS_OK ? cls_engine_error(b->e) : detail);
      return false;
    }
  }
  for (int i = 0; (parts & PART_SEQ) && i < s->n_lstm; i++) {
    bool ok = false;
    char detail[240] = "";
    const cls_status st = cls_lstm_seq_cases_check(b->lstm, i, &ok, detail, sizeof detail);
    if (st != CLS_OK || !ok) {
      snprintf(why, cap, "wrong result on lstm sequence H=%d: %s", s->lstm[i].hidden,
               st != CLS_OK ? cls_engine_error(b->e) : detail);
      return false;
    }
  }
  return true;
}

/* One GEMM shape (item < s->n_order, in s->order) or LSTM sequence case (item - s->n_order) on build b: calls x
 * median ms. */
static cls_status item_time(own_search *s, side *b, int item, int warmups, int runs, double *ms) {
  if (item < s->n_order) {
    const cls_gemm_shape *sh = &s->shapes[s->order[item]];
    double median = 0;
    const cls_status st = cls_gemm_cases_time(b->cases, s->order[item], warmups, runs, &median, NULL);
    *ms = sh->calls * median;
    return st;
  }
  return cls_lstm_seq_cases_time(b->lstm, item - s->n_order, warmups, runs, ms); /* once per step */
}

static void item_name(const own_search *s, int item, char *out, size_t cap) {
  if (item < s->n_order)
    snprintf(out, cap, "%s", s->shapes[s->order[item]].name);
  else
    snprintf(out, cap, "lstm sequence H=%d", s->lstm[item - s->n_order].hidden);
}

/* With `check`, checks the build first (side_check); then times the GEMM shapes (PART_GEMM) and LSTM sequence
 * cases (PART_SEQ, their two kernels' device time in one forward and backward) of `parts`: *ms the sum of
 * calls x median ms. With `best` (the best build so far), each shape or case is timed on it as well, right
 * after the candidate's, into *best_ms: the two times of a shape are moments apart, where whole sums timed one
 * after the other are seconds apart on a machine whose speed drifts; CLS_TUNE_DROPPED once the partial sum
 * passes DROP_RATIO times the best's. CLS_TUNE_REJECTED with `why` for a wrong result or a failed run (the
 * candidate's; the best's as a failed run too). */
static cls_tune_state side_time(own_search *s, side *b, int parts, bool check, int runs, double *ms, side *best,
                                double *best_ms, char *why, size_t cap) {
  *ms = 0;
  if (best_ms) *best_ms = 0;
  if (!side_ready(s, b, parts, why, cap) || (best && !side_ready(s, best, parts, why, cap))) return CLS_TUNE_REJECTED;
  if (check && !side_check(s, b, parts, why, cap)) return CLS_TUNE_REJECTED;
  for (int item = 0; item < s->n_order + s->n_lstm; item++) {
    if (!(parts & (item < s->n_order ? PART_GEMM : PART_SEQ))) continue;
    char name[48];
    item_name(s, item, name, sizeof name);
    double mine = 0, theirs = 0;
    if (item_time(s, b, item, check ? 0 : 1, runs, &mine) != CLS_OK) { /* (the check ran it: warm) */
      snprintf(why, cap, "%s: %s", name, cls_engine_error(b->e));
      return CLS_TUNE_REJECTED;
    }
    *ms += mine;
    if (!best) continue;
    if (item_time(s, best, item, 1, runs, &theirs) != CLS_OK) {
      snprintf(why, cap, "the best so far on %s: %s", name, cls_engine_error(best->e));
      return CLS_TUNE_REJECTED;
    }
    *best_ms += theirs;
    if (*ms > DROP_RATIO * *best_ms) return CLS_TUNE_DROPPED;
  }
  return CLS_TUNE_TIMED;
}

/* Builds, checks and times one candidate on `parts` into the result's list, shape by shape beside the best
 * build so far when there is one (s->best.e; the candidate's time over the best's in c->versus, dropped past
 * DROP_RATIO); a timed build is kept in *keep. */
static cls_own_candidate *try_candidate(own_search *s, const char *group, const char *options, int parts,
                                        side *keep) {
  cls_own_tune_result *r = s->r;
  if (r->n == CLS_OWN_MAX_CANDIDATES) return NULL;
  cls_own_candidate *c = &r->candidate[r->n++];
  memset(c, 0, sizeof *c);
  snprintf(c->group, sizeof c->group, "%s", group);
  snprintf(c->options, sizeof c->options, "%s", options);
  progress(s, "%s: building %s", group, options);
  const double t0 = cls_now_ms();
  side b;
  if (!side_build(s, options, &b, c->why, sizeof c->why)) {
    c->state = CLS_TUNE_REJECTED;
  } else {
    c->build_s = (cls_now_ms() - t0) / 1e3;
    progress(s, "%s: checking and timing %s", group, options);
    double theirs = 0;
    const bool beside = s->best.e != NULL;
    c->state = side_time(s, &b, parts, true, s->o->runs, &c->ms, beside ? &s->best : NULL, beside ? &theirs : NULL,
                         c->why, sizeof c->why);
    if (beside && theirs > 0 && c->state != CLS_TUNE_REJECTED) c->versus = c->ms / theirs;
    if (keep && c->state == CLS_TUNE_TIMED)
      *keep = b;
    else
      side_free(&b);
  }
  if (c->state == CLS_TUNE_REJECTED) {
    r->rejected++;
    snprintf(r->last_rejection, sizeof r->last_rejection, "%s: %s", options, c->why);
  }
  return c;
}

/* ---- the candidates of each group ---- */

typedef struct tile {
  int mr, nv;
  double score;
} tile;

static int by_score(const void *a, const void *b) {
  const tile *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? 1 : -1;
  return y->mr * y->nv - x->mr * x->nv;
}

/* The tiles MR x NV (vectors) whose accumulators, NV loads and a broadcast fit the registers, with at
 * least half of them accumulating, ranked by FMAs per load and broadcast, times the share of `rows`
 * (0: any number of rows) that whole tiles cover; with `units`, the share of the time that rows split
 * over that many compute units in whole tiles keep busy (the sequence kernels' split,
 * cls_lstm_sequence_rows_per_item). At most `cap`, the current one left
 * out. */
static int tiles_for(const own_search *s, int rows, unsigned units, int cur_mr, int cur_nv, tile *out, int cap) {
  tile all[16 * 8];
  int n = 0;
  for (int mr = 2; mr <= 16; mr++)
    for (int nv = 1; nv <= 8; nv++) {
      const int acc = mr * nv;
      if (acc + nv + 1 > s->registers || 2 * acc < s->registers || (mr == cur_mr && nv == cur_nv)) continue;
      double score = (double)acc / (mr + nv);
      if (rows > 0 && units > 0)
        score *= (double)rows / units / cls_lstm_sequence_rows_per_item(rows, units, mr);
      else if (rows > 0)
        score *= (double)rows / (double)(((rows + mr - 1) / mr) * mr);
      all[n++] = (tile){mr, nv, score};
    }
  qsort(all, (size_t)n, sizeof *all, by_score);
  if (n > cap) n = cap;
  memcpy(out, all, (size_t)n * sizeof *out);
  return n;
}

/* Whether a timed candidate (its build in *cand) beats the best so far: 0.99x the best's time or less, both
 * timed shape by shape side by side (try_candidate). The winner's build becomes the best; the other one is
 * freed. */
static bool beats_best(own_search *s, cls_own_candidate *c, side *cand) {
  if (!c || c->state != CLS_TUNE_TIMED) return false;
  if (!(c->versus > 0) || c->versus > WIN_RATIO) { /* (0: nothing was timed beside the best) */
    side_free(cand);
    return false;
  }
  side_free(&s->best);
  s->best = *cand;
  return true;
}

/* Tries each of the group's candidates (best->v with the group's values changed), timed on `parts`, and keeps
 * each that beats the best so far (beats_best). */
static void search_group(own_search *s, const char *group, int parts, values *best, const values *cands, int n) {
  for (int i = 0; i < n && !over_budget(s); i++) {
    char options[CLS_GEMM_OWN_CAP];
    format_values(&cands[i], options, sizeof options);
    side cand;
    memset(&cand, 0, sizeof cand);
    cls_own_candidate *c = try_candidate(s, group, options, parts, &cand);
    if (beats_best(s, c, &cand)) *best = cands[i];
  }
}

/* A group of tile candidates: the best's values with the tile of macros (i_mr, i_nv) changed to each of
 * tiles_for's first `most` (for `rows` over `units`, as tiles_for takes them). Used for the wide tile (any
 * rows), the few-rows tile (the recurrent products' batch) and the sequence kernels' (the cases' batch over
 * the compute units). */
static int tile_cands(const own_search *s, const values *best, int i_mr, int i_nv, int rows, unsigned units, int most,
                      values *out, int cap) {
  tile t[8];
  const int n = tiles_for(s, rows, units, best->v[i_mr], best->v[i_nv], t, cap < most ? cap : most);
  for (int i = 0; i < n; i++) {
    out[i] = *best;
    out[i].v[i_mr] = t[i].mr;
    out[i].v[i_nv] = t[i].nv;
  }
  return n;
}

/* One macro over a list of values (those that differ from the best's). */
static int list_group(const values *best, int which, const int *list, int count, values *out) {
  int n = 0;
  for (int i = 0; i < count; i++) {
    if (list[i] == best->v[which]) continue;
    out[n] = *best;
    out[n++].v[which] = list[i];
  }
  return n;
}

/* ---- the final comparison and the file ---- */

/* Rounds taking turns between the defaults' build and the winner's: the median of the winner's time over
 * the defaults', and each side's median total. false when either does not build or run. */
static bool compare(own_search *s, const char *defaults, const char *winner, double *ratio) {
  side a, b;
  char why[256];
  cls_own_tune_result *r = s->r;
  if (!side_build(s, defaults, &a, why, sizeof why)) return false;
  if (!side_build(s, winner, &b, why, sizeof why)) {
    side_free(&a);
    return false;
  }
  const int rounds = s->o->rounds > 0 ? s->o->rounds : 3;
  double ra[CLS_BENCH_MAX_RUNS], rb[CLS_BENCH_MAX_RUNS], q[CLS_BENCH_MAX_RUNS];
  bool ok = true;
  for (int k = 0; k < rounds && k < CLS_BENCH_MAX_RUNS && ok; k++) {
    progress(s, "comparing the winner with the defaults, round %d of %d", k + 1, rounds);
    ok = side_time(s, &a, PART_ALL, k == 0, s->o->runs, &ra[k], NULL, NULL, why, sizeof why) == CLS_TUNE_TIMED &&
         side_time(s, &b, PART_ALL, k == 0, s->o->runs, &rb[k], NULL, NULL, why, sizeof why) == CLS_TUNE_TIMED;
    q[k] = ok ? rb[k] / ra[k] : 0;
  }
  side_free(&a);
  side_free(&b);
  if (!ok) return false;
  const int n = rounds < CLS_BENCH_MAX_RUNS ? rounds : CLS_BENCH_MAX_RUNS;
  r->before_ms = cls_bench_median(ra, n);
  r->after_ms = cls_bench_median(rb, n);
  *ratio = cls_bench_median(q, n);
  return true;
}

/* Writes the own line into the device's file, keeping what the file holds besides (CLBlast's parameters
 * and backends); a failure to store is a warning (the engine's error text left as it was). */
static void store(own_search *s, const char *options) {
  cls_engine *e = s->e;
  cls_own_tune_result *r = s->r;
  cls_gemm_tuning t;
  cls_error why;
  if (cls_gemm_tuning_read(e, s->device, &t, NULL, 0, &why) != CLS_TUNING_OK) {
    memset(&t, 0, sizeof t);
    snprintf(t.shapes, sizeof t.shapes, "%s", r->shapes);
  }
  snprintf(t.own, sizeof t.own, "%s", options);
  cls_gemm_own_kernels_digest(t.own_kernels);
  char saved[CLS_ERROR_CAP];
  memcpy(saved, e->error.text, sizeof saved);
  if (cls_gemm_tuning_store(e, s->device, &t, r->path, sizeof r->path) == CLS_OK) {
    r->stored = true;
  } else {
    cls_log(e, CLS_LOG_WARNING, "%s", e->error.text);
    memcpy(e->error.text, saved, sizeof saved);
  }
}

cls_status cls_own_tune(cls_engine *e, int device, const cls_gemm_shape *shapes, int n, const cls_own_tune_options *o,
                        cls_own_tune_result *r) {
  memset(r, 0, sizeof *r);
  if (!e || device < 0 || device >= e->n_devices || n < 1 || n > MAX_SHAPES || !o || o->runs < 1)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "own kernels' tuning: bad arguments");
  const cls_device_info *d = &e->devices[device].info;
  if (d->sub_count > 0)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "own kernels' tuning: device %d:%d is a part of a split device; tune the whole device (%d:%d)",
                    d->platform_index, d->device_index, d->platform_index, d->device_index);
  own_search s = {.e = e, .device = device, .o = o, .r = r, .shapes = shapes, .n = n, .t0 = cls_now_ms()};
  snprintf(s.select, sizeof s.select, "%d:%d", d->platform_index, d->device_index);
  s.units = d->compute_units ? d->compute_units : 1; /* as the LSTM plan counts them */
  for (int i = 0; i < o->n_lstm && s.n_lstm < MAX_LSTM_CASES; i++) /* the cases the sequence tile runs in */
    if (cls_lstm_seq_case_takes_sequence(e, device, &o->lstm[i])) {
      s.lstm[s.n_lstm++] = o->lstm[i];
      size_t used = strlen(r->lstm);
      snprintf(r->lstm + used, sizeof r->lstm - used, "%s%d", used ? "," : "H=", o->lstm[i].hidden);
    }
  double weight[MAX_SHAPES];
  for (int i = 0; i < n; i++) {
    /* the recurrent products of an H whose LSTM takes the sequence path are not the step's: not timed */
    bool in_sequence = false;
    for (int c = 0; c < s.n_lstm; c++) in_sequence |= shapes[i].packed_b && shapes[i].n_hidden == s.lstm[c].hidden;
    if (in_sequence) continue;
    s.order[s.n_order++] = i;
    weight[i] = shapes[i].calls * cls_gemm_flops(&shapes[i]);
    if (shapes[i].packed_b && (s.few_rows == 0 || shapes[i].m < s.few_rows)) s.few_rows = shapes[i].m;
  }
  for (int i = 1; i < s.n_order; i++)
    for (int j = i; j > 0 && weight[s.order[j]] > weight[s.order[j - 1]]; j--) {
      int t = s.order[j];
      s.order[j] = s.order[j - 1];
      s.order[j - 1] = t;
    }
  /* the defaults: the device's table row, without stored tuning or the user's overrides */
  char *table = cls_kernel_options_for(d, NULL, NULL, NULL);
  if (!table) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  const values defaults = defaults_of(table);
  s.width = option_value(table, "CLS_GEMM_W", CLS_GEMM_W_DEFAULT);
  free(table);
  s.registers = s.width >= 16 ? 32 : 16;
  format_values(&defaults, r->defaults, sizeof r->defaults);
  cls_gemm_shape timed[MAX_SHAPES];
  for (int i = 0; i < s.n_order; i++) timed[i] = shapes[s.order[i]];
  cls_gemm_shapes_describe(timed, s.n_order, r->shapes, sizeof r->shapes);

  values best = defaults;
  const cls_own_candidate *first = try_candidate(&s, "defaults", r->defaults, PART_ALL, &s.best);
  if (!first || first->state != CLS_TUNE_TIMED) {
    r->seconds = (cls_now_ms() - s.t0) / 1e3;
    return cls_fail(e, CLS_ERR_BUILD, "own kernels' tuning: the defaults themselves fail on device %s: %s", s.select,
                    first ? first->why : "no room");
  }
  const double defaults_ms = first->ms;
  values cands[16];
  if (o->extra && o->extra[0]) { /* the user's own candidate, checked and timed like the others */
    char options[CLS_GEMM_OWN_CAP * 2];
    snprintf(options, sizeof options, "%s %s", r->defaults, o->extra);
    side cand;
    memset(&cand, 0, sizeof cand);
    cls_error bad;
    cls_own_candidate *c = try_candidate(&s, "tried", options, PART_ALL, &cand);
    if (c && c->state == CLS_TUNE_TIMED && !cls_gemm_own_options_check(o->extra, &bad)) {
      side_free(&cand);
      snprintf(r->note, sizeof r->note, "the tried options are not storable: %.150s", bad.text);
    } else if (beats_best(&s, c, &cand)) {
      best = defaults_of(options);
    }
  }
  int k = tile_cands(&s, &best, T_MR, T_NV, 0, 0, 8, cands, 16);
  search_group(&s, "tile", PART_GEMM, &best, cands, k);
  static const int unrolls[] = {1, 2, 4};
  k = list_group(&best, T_K_UNROLL, unrolls, 3, cands);
  search_group(&s, "k unroll", PART_GEMM, &best, cands, k);
  k = s.n_lstm ? tile_cands(&s, &best, T_SEQ_MR, T_SEQ_NV, s.lstm[0].batch, s.units, 6, cands, 16) : 0;
  search_group(&s, "sequence", PART_SEQ, &best, cands, k);
  k = s.few_rows ? tile_cands(&s, &best, T_MR_FEW, T_NV_FEW, s.few_rows, 0, 6, cands, 16) : 0;
  search_group(&s, "few rows", PART_GEMM, &best, cands, k);
  static const int narrow_rows[] = {4, 6, 8, 12, 16};
  k = 0;
  for (int i = 0; i < 5; i++) { /* the thin tile: MR_NARROW x NV/2 vectors within the registers */
    const int nv = best.v[T_NV] / 2 > 0 ? best.v[T_NV] / 2 : 1;
    if (narrow_rows[i] * nv + nv + 1 <= s.registers) k += list_group(&best, T_MR_NARROW, &narrow_rows[i], 1, &cands[k]);
  }
  search_group(&s, "thin tile", PART_GEMM, &best, cands, k);
  static const int copies[] = {0, 1};
  k = list_group(&best, T_NARROW_COPY, copies, 2, cands);
  search_group(&s, "narrow copy", PART_GEMM, &best, cands, k);
  r->over_budget = over_budget(&s);
  side_free(&s.best);

  format_values(&best, r->winner, sizeof r->winner);
  r->ratio = 1.0;
  if (!same(&best, &defaults)) {
    if (!compare(&s, r->defaults, r->winner, &r->ratio)) {
      snprintf(r->note, sizeof r->note, "the final comparison failed: the defaults kept");
      snprintf(r->winner, sizeof r->winner, "%s", r->defaults);
      r->ratio = 1.0;
    } else if (r->ratio > WIN_RATIO) {
      snprintf(r->note, sizeof r->note, "the winner measured %.3fx the defaults' time in turns: the defaults kept",
               r->ratio);
      snprintf(r->winner, sizeof r->winner, "%s", r->defaults);
    }
  } else {
    r->before_ms = r->after_ms = defaults_ms;
  }
  store(&s, strcmp(r->winner, r->defaults) ? r->winner : "");
  r->seconds = (cls_now_ms() - s.t0) / 1e3;
  return CLS_OK;
}
