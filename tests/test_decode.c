/* Host-side decoding: greedy and prefix beam search against TensorFlow (fixtures from
 * tests/ref/make_decode_fixtures.py), the beam search against every alignment enumerated in double on tiny
 * cases and against a naive prefix search, fed in chunks against whole utterances, its options and argument
 * checks, and its default width at DeepSpeech's sizes (its speed: bench/bench_decode.c). The evaluation
 * metrics: test_wer.c. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "clspeech/base.h"
#include "clspeech/decode.h"
#include "ctc_reference.h"
#include "ops_test.h"
#include "test_rng.h"

/* ---- helpers ---- */

static int same_labels(const int32_t *a, int na, const int32_t *b, int nb) {
  return na == nb && (na == 0 || !memcmp(a, b, (size_t)na * sizeof *a));
}

static void print_labels(const char *what, const int32_t *v, int n) {
  fprintf(stderr, "    %s (%d):", what, n);
  for (int i = 0; i < n; i++) fprintf(stderr, " %d", v[i]);
  fputc('\n', stderr);
}

static cls_beam_options exact_options(int beam_width) {
  cls_beam_options o = cls_beam_options_default();
  o.beam_width = beam_width;
  o.delay_expansion = 0;
  return o;
}

/* ---- against TensorFlow ---- */

/* How far a beam's log-probability may be from TF's at the same width (see check_fixture). */
#define SCORE_TOL 0.05

static double worst_score_diff_w = 0.0, worst_score_diff_wide = 0.0;
static int tf_utterances = 0, tf_top_match = 0, tf_lower_paths = 0, tf_lower_match = 0;

static void check_fixture(const char *name, int has_beam) {
  cls_safetensors *st = tst_fixture(name);
  if (!st) return;
  const cls_tensor_info *ti = cls_safetensors_find(st, "logits");
  CHECK(ti && ti->ndim == 3, "%s: logits [T, B, C]", name);
  if (!ti || ti->ndim != 3) {
    cls_safetensors_free(st);
    return;
  }
  int T = (int)ti->shape[0], B = (int)ti->shape[1], C = (int)ti->shape[2];
  const float *logits = tst_tensor(st, "logits", CLS_F32, (int64_t)T * B * C);
  const int32_t *lengths = tst_tensor(st, "lengths", CLS_I32, B);
  const int32_t *greedy = tst_tensor(st, "greedy", CLS_I32, (int64_t)B * T);
  const int32_t *greedy_len = tst_tensor(st, "greedy_len", CLS_I32, B);
  if (!logits || !lengths || !greedy || !greedy_len) {
    cls_safetensors_free(st);
    return;
  }
  int32_t *out = malloc((size_t)(T > 0 ? T : 1) * sizeof *out);
  size_t stride = (size_t)B * C;

  /* Greedy: identical to TF on every utterance, reading the time-major batch through the stride. */
  int greedy_ok = 0;
  for (int b = 0; b < B; b++) {
    int n = -1;
    CHECK_INT(cls_ctc_greedy_host(logits + (size_t)b * C, lengths[b], C, stride, out, &n), CLS_OK);
    int ok = same_labels(out, n, greedy + (size_t)b * T, greedy_len[b]);
    CHECK(ok, "%s utterance %d: greedy differs from TF", name, b);
    if (!ok) {
      print_labels("ours", out, n);
      print_labels("TF  ", greedy + (size_t)b * T, greedy_len[b]);
    }
    greedy_ok += ok;
  }
  printf("  %-28s greedy: %d of %d utterances identical to tf.nn.ctc_greedy_decoder\n", name, greedy_ok, B);

  if (has_beam) {
    int K = tst_meta_int(st, "top_paths"), W = tst_meta_int(st, "beam_width");
    int Wide = tst_meta_int(st, "wide_beam_width");
    const int32_t *paths = tst_tensor(st, "beam_paths", CLS_I32, (int64_t)B * K * T);
    const int32_t *plen = tst_tensor(st, "beam_len", CLS_I32, (int64_t)B * K);
    const float *logp = tst_tensor(st, "beam_logp", CLS_F32, (int64_t)B * K);
    const int32_t *wpaths = tst_tensor(st, "wide_paths", CLS_I32, (int64_t)B * K * T);
    const int32_t *wplen = tst_tensor(st, "wide_len", CLS_I32, (int64_t)B * K);
    const float *wlogp = tst_tensor(st, "wide_logp", CLS_F32, (int64_t)B * K);
    if (paths && plen && logp && wpaths && wplen && wlogp && K > 0 && K <= 16) {
      double dw = 0.0, dwide = 0.0, gap = 0.0;
      for (int b = 0; b < B; b++) {
        cls_beam_result res[16];
        int nres = 0;
        cls_beam_options o = exact_options(W);
        CHECK_INT(cls_ctc_beam_search(logits + (size_t)b * C, lengths[b], C, stride, &o, res, K, &nres), CLS_OK);
        CHECK(nres >= 1, "%s utterance %d: the beam search returned no result", name, b);
        if (nres < 1) continue;
        const int32_t *tf_top = paths + ((size_t)b * K) * T;
        const int32_t *tf_wide = wpaths + ((size_t)b * K) * T;
        int top = same_labels(res[0].labels, res[0].length, tf_top, plen[b * K]) &&
                  same_labels(res[0].labels, res[0].length, tf_wide, wplen[b * K]);
        CHECK(top, "%s utterance %d: the best beam differs from TF's", name, b);
        if (!top) {
          print_labels("ours", res[0].labels, res[0].length);
          print_labels("TF  ", tf_top, plen[b * K]);
        }
        tf_utterances++;
        tf_top_match += top;
        /* A beam's score sums the alignments whose prefixes stayed in the beam: a lower bound of the
         * exact probability (the CTC forward sum), which depends on how the search prunes. TF prunes
         * while it expands, ds_ctcdecoder after, so the scores agree only to SCORE_TOL at the same
         * width (to ~2e-5, float32 rounding, where both keep the same prefixes). */
        double exact = ctc_log_prob(logits + (size_t)b * C, lengths[b], C, stride, res[0].labels, res[0].length);
        double e1 = fabs(res[0].log_prob - logp[b * K]);
        dw = fmax(dw, e1);
        gap = fmax(gap, exact - res[0].log_prob);
        CHECK(e1 <= SCORE_TOL, "%s utterance %d: log-probability %.7f, TF (beam %d) %.7f", name, b, res[0].log_prob, W,
              logp[b * K]);
        CHECK(res[0].log_prob <= exact + 1e-9, "%s utterance %d: log-probability %.9f above the exact %.9f", name, b,
              res[0].log_prob, exact);
        cls_beam_result wide[1];
        int nw = 0;
        cls_beam_options ow = exact_options(Wide);
        CHECK_INT(cls_ctc_beam_search(logits + (size_t)b * C, lengths[b], C, stride, &ow, wide, 1, &nw), CLS_OK);
        if (nw == 1) {
          CHECK(same_labels(wide[0].labels, wide[0].length, tf_wide, wplen[b * K]),
                "%s utterance %d: the best beam at width %d differs from TF's", name, b, Wide);
          double e2 = fabs(wide[0].log_prob - wlogp[b * K]);
          dwide = fmax(dwide, e2);
          CHECK(e2 <= SCORE_TOL, "%s utterance %d: log-probability %.7f, TF (beam %d) %.7f", name, b, wide[0].log_prob,
                Wide, wlogp[b * K]);
          CHECK(wide[0].log_prob <= exact + 1e-9, "%s utterance %d: wide log-probability above the exact", name, b);
        }
        cls_beam_results_free(wide, nw);
        /* The lower beams: reported, not required (pruning differs). */
        for (int k = 1; k < K && k < nres; k++) {
          tf_lower_paths++;
          tf_lower_match += same_labels(res[k].labels, res[k].length, tf_wide + (size_t)k * T, wplen[b * K + k]);
        }
        cls_beam_results_free(res, nres);
      }
      printf("  %-28s top path = TF's at widths %d and %d on %d utterances; |log p - TF's| <= %.2g at width %d, "
             "<= %.2g at %d; exact - log p <= %.2g at %d\n",
             name, W, Wide, B, dw, W, dwide, Wide, gap, W);
      worst_score_diff_w = fmax(worst_score_diff_w, dw);
      worst_score_diff_wide = fmax(worst_score_diff_wide, dwide);
    }
  }
  free(out);
  cls_safetensors_free(st);
}

/* ---- against every alignment (tiny cases) ---- */

/* The prefix key: bijective base-C numeral of the labels (digits 1..C-1), unique for each prefix. */
static long prefix_key(const int32_t *labels, int n, int C) {
  long key = 0;
  for (int i = 0; i < n; i++) key = key * C + labels[i] + 1;
  return key;
}

static int brute_cases = 0, brute_prefixes = 0;
static double brute_worst = 0.0;

static void brute_force_case(int T, int C, double scale) {
  float logits[6 * 4];
  for (int i = 0; i < T * C; i++) logits[i] = (float)(normal() * scale);
  long n_keys = 1;
  for (int t = 0; t < T; t++) n_keys *= C;
  double *prob = calloc((size_t)n_keys, sizeof *prob);
  double lsm[6][4];
  for (int t = 0; t < T; t++) log_softmax(logits + t * C, C, lsm[t]);
  /* Every alignment: its probability goes to the prefix it collapses to. */
  int a[6] = {0};
  for (long it = 0; it < n_keys; it++) {
    long v = it;
    for (int t = 0; t < T; t++) {
      a[t] = (int)(v % C);
      v /= C;
    }
    int32_t labels[6];
    int n = 0, prev = -1;
    double lp = 0.0;
    for (int t = 0; t < T; t++) {
      lp += lsm[t][a[t]];
      if (a[t] != C - 1 && a[t] != prev) labels[n++] = a[t];
      prev = a[t];
    }
    prob[prefix_key(labels, n, C)] += exp(lp);
  }
  int n_nonzero = 0;
  long best_key = 0;
  for (long k = 0; k < n_keys; k++) {
    if (prob[k] > 0) n_nonzero++;
    if (prob[k] > prob[best_key]) best_key = k;
  }

  /* A beam wider than the number of prefixes is exact: every prefix, with its probability. */
  enum { MAXR = 4096 };
  cls_beam_result *res = calloc(MAXR, sizeof *res);
  int nres = 0;
  cls_beam_options o = exact_options(MAXR);
  CHECK_INT(cls_ctc_beam_search(logits, T, C, (size_t)C, &o, res, MAXR, &nres), CLS_OK);
  CHECK(nres == n_nonzero, "T=%d C=%d: %d prefixes from the beam search, %d from the alignments", T, C, nres,
        n_nonzero);
  for (int i = 0; i < nres; i++) {
    long key = prefix_key(res[i].labels, res[i].length, C);
    double want = log(prob[key]);
    double err = fabs(res[i].log_prob - want);
    brute_worst = fmax(brute_worst, err);
    CHECK(err <= 1e-10 * fmax(1.0, fabs(want)), "T=%d C=%d prefix %d: log p %.15g, enumeration %.15g", T, C, i,
          res[i].log_prob, want);
    if (i > 0) CHECK(res[i].log_prob <= res[i - 1].log_prob, "results sorted");
  }
  if (nres > 0) {
    CHECK(prefix_key(res[0].labels, res[0].length, C) == best_key, "T=%d C=%d: best prefix differs from enumeration", T,
          C);
    /* The CTC forward sum the TF comparison uses as the exact value agrees with the enumeration. */
    double fwd = ctc_log_prob(logits, T, C, (size_t)C, res[0].labels, res[0].length);
    CHECK(fabs(fwd - log(prob[best_key])) < 1e-10, "CTC forward %.15g, enumeration %.15g", fwd, log(prob[best_key]));
  }
  cls_beam_results_free(res, nres);

  /* A narrow beam sums a subset of the alignments: never above the exact probability. */
  o.beam_width = 2;
  CHECK_INT(cls_ctc_beam_search(logits, T, C, (size_t)C, &o, res, MAXR, &nres), CLS_OK);
  CHECK(nres >= 1 && nres <= 2, "beam 2 keeps at most 2 prefixes (%d)", nres);
  for (int i = 0; i < nres; i++) {
    double want = log(prob[prefix_key(res[i].labels, res[i].length, C)]);
    CHECK(res[i].log_prob <= want + 1e-12, "narrow beam: %.15g above exact %.15g", res[i].log_prob, want);
  }
  cls_beam_results_free(res, nres);
  free(res);
  free(prob);
  brute_cases++;
  brute_prefixes += n_nonzero;
}

/* ---- against a naive prefix beam search (pruning included) ---- */

/* The same search written plainly: prefixes as label arrays, identical prefixes found by comparing
 * them, the beam cut by a full sort. Checks the trie, its hash table, node reuse and the selection. */
enum { NAIVE_MAXLEN = 1024 };
typedef struct nprefix {
  int32_t lab[NAIVE_MAXLEN];
  int len;
  double b, nb, bc, nbc, score;
} nprefix;

static int nprefix_cmp(const void *pa, const void *pb) {
  const nprefix *a = pa, *b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  int la = a->len ? a->lab[a->len - 1] : -1, lb = b->len ? b->lab[b->len - 1] : -1;
  return (la > lb) - (la < lb);
}

static void naive_add(nprefix *v, int *n, const nprefix *p, int32_t c, double value) {
  int j = 0;
  for (; j < *n; j++)
    if (v[j].len == p->len + 1 && v[j].lab[p->len] == c && !memcmp(v[j].lab, p->lab, (size_t)p->len * sizeof(int32_t)))
      break;
  if (j == *n) {
    memcpy(v[j].lab, p->lab, (size_t)p->len * sizeof(int32_t));
    v[j].lab[p->len] = c;
    v[j].len = p->len + 1;
    v[j].b = v[j].nb = v[j].bc = v[j].nbc = -INFINITY;
    (*n)++;
  }
  v[j].nbc = lse2(v[j].nbc, value);
}

/* Returns the number of prefixes left in `beam` (sorted, best first). */
static int naive_beam(const float *x, int T, int C, int W, nprefix *beam, nprefix *next) {
  int nb = 1;
  beam[0].len = 0;
  beam[0].b = 0.0;
  beam[0].nb = -INFINITY;
  beam[0].score = 0.0;
  double l[32];
  for (int t = 0; t < T; t++) {
    log_softmax(x + (size_t)t * C, C, l);
    int nn = nb;
    for (int i = 0; i < nb; i++) {
      next[i] = beam[i];
      next[i].bc = next[i].nbc = -INFINITY;
    }
    for (int i = 0; i < nb; i++) {
      const nprefix *p = &beam[i];
      int last = p->len ? p->lab[p->len - 1] : -1;
      for (int c = 0; c < C; c++) {
        if (c == C - 1) {
          next[i].bc = lse2(next[i].bc, l[c] + p->score);
        } else if (c == last) {
          next[i].nbc = lse2(next[i].nbc, l[c] + p->nb);
          if (p->b > -INFINITY) naive_add(next, &nn, p, c, l[c] + p->b);
        } else {
          naive_add(next, &nn, p, c, l[c] + p->score);
        }
      }
    }
    int kept = 0;
    for (int i = 0; i < nn; i++) {
      next[i].b = next[i].bc;
      next[i].nb = next[i].nbc;
      next[i].score = lse2(next[i].b, next[i].nb);
      if (next[i].score > -INFINITY) next[kept++] = next[i];
    }
    qsort(next, (size_t)kept, sizeof *next, nprefix_cmp);
    nb = kept < W ? kept : W;
    memcpy(beam, next, (size_t)nb * sizeof *beam);
  }
  return nb;
}

static int naive_cases = 0;

static void naive_case(int T, int C, int W, double scale) {
  float *x = malloc((size_t)T * C * sizeof *x);
  for (int i = 0; i < T * C; i++) x[i] = (float)(normal() * scale);
  nprefix *beam = malloc((size_t)W * sizeof *beam), *next = malloc((size_t)W * (C + 1) * sizeof *next);
  int nn = naive_beam(x, T, C, W, beam, next);
  cls_beam_result *res = calloc((size_t)W, sizeof *res);
  int nres = 0;
  cls_beam_options o = exact_options(W);
  CHECK_INT(cls_ctc_beam_search(x, T, C, (size_t)C, &o, res, W, &nres), CLS_OK);
  CHECK(nres == nn, "T=%d C=%d W=%d: %d results, naive search %d", T, C, W, nres, nn);
  int bad = 0;
  for (int k = 0; k < nres && k < nn; k++) {
    int ok = same_labels(res[k].labels, res[k].length, beam[k].lab, beam[k].len) &&
             fabs(res[k].log_prob - beam[k].score) <= 1e-9 * fmax(1.0, fabs(beam[k].score));
    if (!ok && bad++ == 0) {
      fprintf(stderr, "    result %d: log p %.12g vs naive %.12g\n", k, res[k].log_prob, beam[k].score);
      print_labels("ours ", res[k].labels, res[k].length);
      print_labels("naive", beam[k].lab, beam[k].len);
    }
  }
  CHECK(bad == 0, "T=%d C=%d W=%d: %d of %d results differ from the naive search", T, C, W, bad, nres);
  cls_beam_results_free(res, nres);
  free(res);
  free(beam);
  free(next);
  free(x);
  naive_cases++;
}

/* ---- beam search: hand cases, options, arguments ---- */

static void check_beam_cases(void) {
  cls_beam_result res[8];
  int n = -1;
  cls_beam_options o = exact_options(16);

  /* 'a - a' is the best path: standard CTC decodes it as "a a" (TF's merge_repeated=True would say
   * "a"); its only alignment has probability 0.8^3. */
  const float p3[9] = {0.8f, 0.1f, 0.1f, 0.1f, 0.1f, 0.8f, 0.8f, 0.1f, 0.1f};
  float l3[9];
  for (int i = 0; i < 9; i++) l3[i] = logf(p3[i]);
  CHECK_INT(cls_ctc_beam_search(l3, 3, 3, 3, &o, res, 8, &n), CLS_OK);
  int32_t aa[2] = {0, 0};
  CHECK(n >= 2 && same_labels(res[0].labels, res[0].length, aa, 2), "a-a decodes as [0 0]");
  CHECK(fabs(res[0].log_prob - log(0.512)) < 1e-6, "P(a a) = 0.512: got %.9f", exp(res[0].log_prob));
  CHECK(res[0].frames && res[0].frames[0] == 0 && res[0].frames[1] == 2, "frames of 'a a' are 0 and 2");
  cls_beam_results_free(res, n);
  CHECK(res[0].labels == NULL && res[0].length == 0, "free zeroes the results");

  /* No frames, or only the blank class: one empty result of probability 1. */
  CHECK_INT(cls_ctc_beam_search(NULL, 0, 29, 29, &o, res, 8, &n), CLS_OK);
  CHECK(n == 1 && res[0].length == 0 && res[0].labels == NULL && res[0].log_prob == 0.0, "T=0: one empty result");
  cls_beam_results_free(res, n);
  const float one[3] = {0.5f, -2.0f, 7.0f};
  CHECK_INT(cls_ctc_beam_search(one, 3, 1, 1, &o, res, 8, &n), CLS_OK);
  CHECK(n == 1 && res[0].length == 0 && fabs(res[0].log_prob) < 1e-12, "C=1: one empty result, log p 0");
  cls_beam_results_free(res, n);

  /* Random frames for the option checks. */
  enum { T = 40, C = 6 };
  float x[T * C];
  for (int i = 0; i < T * C; i++) x[i] = (float)normal() * 2.0f;
  int32_t g[T];
  int ng = 0;
  CHECK_INT(cls_ctc_greedy_host(x, T, C, C, g, &ng), CLS_OK);
  double best_path = 0.0;
  for (int t = 0; t < T; t++) {
    double l[C], m = -INFINITY;
    log_softmax(x + t * C, C, l);
    for (int k = 0; k < C; k++) m = fmax(m, l[k]);
    best_path += m;
  }

  /* A tiny cutoff_prob keeps only each frame's best class: one alignment, the greedy one. */
  cls_beam_options oc = exact_options(16);
  oc.cutoff_prob = 1e-6;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &oc, res, 8, &n), CLS_OK);
  CHECK(n == 1 && same_labels(res[0].labels, res[0].length, g, ng), "cutoff_prob 1e-6: the greedy path");
  CHECK(n == 1 && fabs(res[0].log_prob - best_path) < 1e-9, "cutoff_prob 1e-6: log p of the best path %.12g vs %.12g",
        res[0].log_prob, best_path);
  cls_beam_results_free(res, n);
  /* cutoff_top_n = 1 with cutoff_prob < 1 does the same; with cutoff_prob = 1.0 it is ignored
   * (ds_ctcdecoder 0.9). */
  oc.cutoff_prob = 0.9999999;
  oc.cutoff_top_n = 1;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &oc, res, 8, &n), CLS_OK);
  CHECK(n == 1 && same_labels(res[0].labels, res[0].length, g, ng), "cutoff_top_n 1: the greedy path");
  cls_beam_results_free(res, n);
  cls_beam_result ref[8];
  int nref = 0;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &o, ref, 8, &nref), CLS_OK);
  oc.cutoff_prob = 1.0;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &oc, res, 8, &n), CLS_OK);
  int same = n == nref;
  for (int i = 0; same && i < n; i++)
    same = same_labels(res[i].labels, res[i].length, ref[i].labels, ref[i].length) &&
           res[i].log_prob == ref[i].log_prob;
  CHECK(same, "cutoff_top_n without cutoff_prob < 1 changes nothing");
  cls_beam_results_free(res, n);
  /* Deterministic: the same call gives the same bits. */
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &o, res, 8, &n), CLS_OK);
  same = n == nref;
  for (int i = 0; same && i < n; i++)
    same = same_labels(res[i].labels, res[i].length, ref[i].labels, ref[i].length) &&
           same_labels(res[i].frames, res[i].length, ref[i].frames, ref[i].length) &&
           res[i].log_prob == ref[i].log_prob;
  CHECK(same, "two identical calls give identical results");
  cls_beam_results_free(res, n);

  /* delay_expansion: leading frames with P(blank) >= 0.999 are skipped; the best prefix is the same and
   * its score higher by about their log P(blank). */
  float xd[T * C];
  memcpy(xd, x, sizeof xd);
  double skipped = 0.0;
  for (int t = 0; t < 5; t++) {
    for (int k = 0; k < C; k++) xd[t * C + k] = (k == C - 1) ? 12.0f + (float)t : (float)normal();
    double l[C];
    log_softmax(xd + t * C, C, l);
    CHECK(exp(l[C - 1]) >= 0.999, "frame %d is blank enough", t);
    skipped += l[C - 1];
  }
  cls_beam_result rd[8], re[8];
  int nd = 0, ne = 0;
  cls_beam_options od = cls_beam_options_default();
  od.beam_width = 16;
  CHECK_INT(cls_ctc_beam_search(xd, T, C, C, &od, rd, 8, &nd), CLS_OK);
  CHECK_INT(cls_ctc_beam_search(xd, T, C, C, &o, re, 8, &ne), CLS_OK);
  CHECK(nd > 0 && ne > 0 && same_labels(rd[0].labels, rd[0].length, re[0].labels, re[0].length),
        "delay_expansion: same best prefix");
  /* Without the delay the score also counts the rare alignments that emit a label in those frames. */
  if (nd > 0 && ne > 0)
    CHECK(re[0].log_prob >= rd[0].log_prob + skipped - 1e-12 && re[0].log_prob - (rd[0].log_prob + skipped) < 1e-3,
          "delay_expansion shifts by %.9g: %.12g vs %.12g", skipped, rd[0].log_prob, re[0].log_prob);
  cls_beam_results_free(rd, nd);
  cls_beam_results_free(re, ne);
  cls_beam_results_free(ref, nref);

  /* A class with logit -inf is allowed (probability 0); the best path avoids it. */
  float xi[T * C];
  memcpy(xi, x, sizeof xi);
  for (int t = 0; t < T; t++) xi[t * C + 2] = -INFINITY;
  CHECK_INT(cls_ctc_beam_search(xi, T, C, C, &o, res, 8, &n), CLS_OK);
  int has2 = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < res[i].length; j++) has2 |= res[i].labels[j] == 2;
  CHECK(n > 0 && !has2, "a class of probability 0 never appears");
  cls_beam_results_free(res, n);

  /* Arguments. */
  cls_beam_options bad = o;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C - 1, &o, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_beam_search(x, T, 0, C, &o, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_beam_search(x, -1, C, C, &o, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &o, res, 0, &n), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &o, NULL, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_beam_search(NULL, T, C, C, &o, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  bad.beam_width = 0;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &bad, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  bad = o;
  bad.cutoff_prob = 0.0;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &bad, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  bad.cutoff_prob = 1.5;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &bad, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  bad = o;
  bad.cutoff_top_n = 0;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &bad, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  float xn[T * C];
  memcpy(xn, x, sizeof xn);
  xn[17 * C + 3] = NAN;
  CHECK_INT(cls_ctc_beam_search(xn, T, C, C, &o, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  CHECK(n == 0 && res[0].labels == NULL, "no results after an error");
  CHECK_INT(cls_ctc_greedy_host(xn, T, C, C, g, &ng), CLS_ERR_INVALID_ARGUMENT);
  xn[17 * C + 3] = INFINITY;
  CHECK_INT(cls_ctc_beam_search(xn, T, C, C, &o, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  for (int k = 0; k < C; k++) xn[17 * C + k] = -INFINITY;
  CHECK_INT(cls_ctc_beam_search(xn, T, C, C, &o, res, 8, &n), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_greedy_host(x, T, C, C - 1, g, &ng), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_greedy_host(x, T, C, C, NULL, &ng), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_greedy_host(NULL, 0, C, C, NULL, &ng), CLS_OK);
  CHECK_INT(ng, 0);
  cls_beam_options d = cls_beam_options_default();
  CHECK(d.beam_width == 1024 && d.cutoff_prob == 1.0 && d.cutoff_top_n == 300 && d.delay_expansion == 1,
        "DeepSpeech's defaults");
  /* NULL options mean the defaults. */
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, NULL, res, 8, &n), CLS_OK);
  cls_beam_results_free(res, n);
}

/* ---- streaming ---- */

/* The decoder fed in chunks of `chunk` frames (0: one feed of everything), with a finish after the
 * first chunk that must not disturb it; results into res[0..*n). */
static void decode_chunked(const float *x, int T, int C, int greedy, const cls_beam_options *o, int chunk,
                           cls_beam_result *res, int max, int *n) {
  cls_ctc_decoder *d = NULL;
  CHECK_INT(cls_ctc_decoder_begin(C, greedy, o, &d), CLS_OK);
  int step = chunk > 0 ? chunk : T;
  for (int t = 0; t < T; t += step) {
    int m = T - t < step ? T - t : step;
    CHECK_INT(cls_ctc_decoder_feed(d, x + (size_t)t * C, m, (size_t)C), CLS_OK);
    if (t == 0) {
      cls_beam_result peek[4];
      int np = 0;
      CHECK_INT(cls_ctc_decoder_finish(d, peek, 4, &np), CLS_OK);
      CHECK(np >= 1, "a result after the first chunk");
      cls_beam_results_free(peek, np);
    }
  }
  CHECK_INT(cls_ctc_decoder_finish(d, res, max, n), CLS_OK);
  cls_ctc_decoder_free(d);
}

static int streaming_cases = 0;

/* Chunks of 1, 7 and 50 frames and the whole utterance in one feed give the whole-utterance API's
 * results exactly (labels, frames, scores compared with ==), greedy and beam with and without
 * cutoff_prob/cutoff_top_n and delay_expansion. */
static void check_streaming(void) {
  enum { T = 600, C = 29, MAXR = 6 }; /* past 256 frames: the trie's shared start is committed */
  float *x = malloc((size_t)T * C * sizeof *x);
  /* Silence (blank > 0.999) for the first 20 frames, so delay_expansion has frames to skip. */
  for (int t = 0; t < T; t++) {
    int hot = t < 20 || uniform01() < 0.4 ? C - 1 : (int)(uniform01() * (C - 1));
    for (int k = 0; k < C; k++) x[t * C + k] = (float)(normal() + (k == hot ? (t < 20 ? 14.0 : 3.0) : 0.0));
  }
  cls_beam_options opts[4];
  for (int i = 0; i < 4; i++) opts[i] = cls_beam_options_default();
  opts[0].beam_width = 64;
  opts[1].beam_width = 16;
  opts[1].cutoff_prob = 0.9;
  opts[1].cutoff_top_n = 5;
  opts[2].beam_width = 100;
  opts[2].delay_expansion = 0;
  opts[3].beam_width = 32;
  opts[3].cutoff_prob = 0.99;
  opts[3].cutoff_top_n = 10;
  opts[3].delay_expansion = 0;
  const int chunks[] = {1, 7, 50, 0};
  for (int v = 0; v < 5; v++) {
    int greedy = v == 4;
    cls_beam_result ref[MAXR];
    int nref = 0;
    if (greedy) {
      int32_t g[T];
      CHECK_INT(cls_ctc_greedy_host(x, T, C, C, g, &nref), CLS_OK);
      ref[0].labels = g;
      ref[0].length = nref;
      cls_beam_result got[1];
      for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        int n = 0;
        decode_chunked(x, T, C, 1, NULL, chunks[c], got, 1, &n);
        CHECK(n == 1 && same_labels(got[0].labels, got[0].length, g, nref), "greedy in chunks of %d: same labels",
              chunks[c]);
        for (int i = 0; i + 1 < got[0].length; i++) CHECK(got[0].frames[i] < got[0].frames[i + 1], "frames ascend");
        cls_beam_results_free(got, n);
        streaming_cases++;
      }
      continue;
    }
    CHECK_INT(cls_ctc_beam_search(x, T, C, C, &opts[v], ref, MAXR, &nref), CLS_OK);
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
      cls_beam_result got[MAXR];
      int n = 0;
      decode_chunked(x, T, C, 0, &opts[v], chunks[c], got, MAXR, &n);
      CHECK_INT(n, nref);
      for (int i = 0; i < n && i < nref; i++) {
        const size_t fb = (size_t)got[i].length * sizeof(int32_t);
        CHECK(same_labels(got[i].labels, got[i].length, ref[i].labels, ref[i].length) &&
                  (got[i].length == 0 || !memcmp(got[i].frames, ref[i].frames, fb)),
              "options %d, chunks of %d: result %d differs", v, chunks[c], i);
        CHECK(got[i].log_prob == ref[i].log_prob, "options %d, chunks of %d: result %d scores %.17g, whole %.17g", v,
              chunks[c], i, got[i].log_prob, ref[i].log_prob);
      }
      cls_beam_results_free(got, n);
      streaming_cases++;
    }
    cls_beam_results_free(ref, nref);
  }
  /* Errors stick; bad arguments. */
  cls_ctc_decoder *d = NULL;
  CHECK_INT(cls_ctc_decoder_begin(0, 0, NULL, &d), CLS_ERR_INVALID_ARGUMENT);
  CHECK(d == NULL, "no decoder on an error");
  cls_beam_options bad = cls_beam_options_default();
  bad.beam_width = 0;
  CHECK_INT(cls_ctc_decoder_begin(C, 0, &bad, &d), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_decoder_begin(C, 0, NULL, &d), CLS_OK);
  CHECK_INT(cls_ctc_decoder_feed(d, x, 3, (size_t)C), CLS_OK);
  x[3 * C + 2] = NAN;
  CHECK_INT(cls_ctc_decoder_feed(d, x + 3 * C, 2, (size_t)C), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_ctc_decoder_feed(d, x, 1, (size_t)C), CLS_ERR_INVALID_ARGUMENT);
  cls_beam_result r[1];
  int n = 5;
  CHECK_INT(cls_ctc_decoder_finish(d, r, 1, &n), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(n, 0);
  cls_ctc_decoder_free(d);
  CHECK_INT(cls_ctc_decoder_begin(C, 1, NULL, &d), CLS_OK);
  CHECK_INT(cls_ctc_decoder_feed(d, x, 1, (size_t)C - 1), CLS_ERR_INVALID_ARGUMENT);
  cls_ctc_decoder_free(d);
  cls_ctc_decoder_free(NULL);
  free(x);
  printf("  streaming: %d decodes in chunks of 1/7/50/all frames identical to whole utterances\n", streaming_cases);
}

/* Beam width 1024 (the default) on DeepSpeech's sizes, flat random logits (every beam slot filled) and
 * peaked ones: one result, labels in 0..C-2, and a log-probability no larger than the exact one of its
 * prefix (the beam sums a subset of the prefix's alignments; 1e-9 relative for rounding). Its speed is
 * bench_decode's (bench/bench_decode.c). */
static void wide_beam_case(int T, double peak) {
  enum { C = 29 };
  float *x = malloc((size_t)T * C * sizeof *x);
  for (int t = 0; t < T; t++) {
    int hot = uniform01() < 0.5 ? C - 1 : (int)(uniform01() * (C - 1));
    for (int k = 0; k < C; k++) x[t * C + k] = (float)(normal() + (k == hot ? peak : 0.0));
  }
  cls_beam_options o = cls_beam_options_default();
  CHECK_INT(o.beam_width, 1024);
  cls_beam_result res[1];
  int n = 0;
  CHECK_INT(cls_ctc_beam_search(x, T, C, C, &o, res, 1, &n), CLS_OK);
  CHECK_INT(n, 1);
  if (n == 1) {
    int bad = 0;
    for (int i = 0; i < res[0].length; i++) bad += res[0].labels[i] < 0 || res[0].labels[i] > C - 2;
    CHECK(res[0].length >= 0 && res[0].length <= T && bad == 0, "T=%d: %d labels, %d outside 0..%d", T,
          res[0].length, bad, C - 2);
    double exact = ctc_log_prob(x, T, C, C, res[0].labels, res[0].length);
    CHECK(isfinite(res[0].log_prob) && res[0].log_prob <= exact + 1e-9 * fabs(exact),
          "T=%d %s: beam log p %.12g, exact log p of its prefix %.12g", T, peak > 0 ? "peaked" : "flat",
          res[0].log_prob, exact);
    printf("  beam 1024, T=%d C=%d %s logits: %d labels, log p %.6g (exact %.6g)\n", T, C,
           peak > 0 ? "peaked" : "flat", res[0].length, res[0].log_prob, exact);
  }
  cls_beam_results_free(res, n);
  free(x);
}

int main(void) {
  printf("decoding against TensorFlow:\n");
  check_fixture("decode_small.safetensors", 1);
  check_fixture("decode_mid.safetensors", 1);
  check_fixture("decode_ds.safetensors", 1);
  check_fixture("decode_soft.safetensors", 1);
  check_fixture("decode_greedy_ties.safetensors", 0);
  printf("  beam top path = TF's on %d of %d utterances; worst |log p - TF's| %.2g at the fixture's width, "
         "%.2g at 8x; lower paths equal to TF's (not required): %d of %d\n",
         tf_top_match, tf_utterances, worst_score_diff_w, worst_score_diff_wide, tf_lower_match, tf_lower_paths);

  for (int T = 1; T <= 6; T++)
    for (int rep = 0; rep < 8; rep++) brute_force_case(T, 3, rep < 4 ? 1.0 : 3.0);
  for (int T = 1; T <= 5; T++)
    for (int rep = 0; rep < 4; rep++) brute_force_case(T, 4, 2.0);
  for (int rep = 0; rep < 4; rep++) brute_force_case(4, 2, 1.0);
  printf("  exhaustive: %d cases (T<=6, C=2..4), %d prefixes, worst |log p - enumeration| %.2g\n", brute_cases,
         brute_prefixes, brute_worst);

  for (int rep = 0; rep < 40; rep++) {
    int T = 20 + (int)(uniform01() * 40), C = 3 + (int)(uniform01() * 6), W = 1 + (int)(uniform01() * 24);
    naive_case(T, C, W, rep % 2 ? 1.0 : 3.0);
  }
  naive_case(60, 29, 12, 1.0);
  naive_case(60, 29, 12, 4.0);
  naive_case(40, 29, 64, 1.0); /* wide enough for select_best's sampled threshold */
  naive_case(40, 29, 64, 3.0);
  naive_case(700, 6, 8, 3.0); /* long enough for the trie's shared start to be committed (every 256 frames) */
  naive_case(600, 29, 16, 2.0);
  printf("  naive prefix search (plain arrays, full sorts): %d cases with pruning (T 20..700, C 3..29, beam 1..64) "
         "identical\n",
         naive_cases);

  check_beam_cases();
  check_streaming();
  wide_beam_case(150, 0.0);
  wide_beam_case(150, 6.0);
  wide_beam_case(1000, 0.0);

  return check_finish("test_decode");
}
