/* The CTC prefix beam search's speed on the host (cls_ctc_beam_search, what `clspeech train`'s test
 * report and `clspeech transcribe` run per utterance) at DeepSpeech's sizes: 29 classes, the default
 * options (beam width 1024), flat random logits (every beam slot filled, the slow case) and peaked ones
 * (a confident model: few prefixes survive). Prints the best of --reps runs in ms and frames per second.
 * With --scorer FILE (an ARPA model over DeepSpeech's English alphabet: space, a..z, apostrophe) each
 * case runs without and with the language model, and the ratio of their times is printed. Its
 * results are checked in tests/test_decode.c and tests/test_scorer.c.
 *   bench_decode [--time 150,1000] [--reps 3] [--beam_width 1024] [--scorer FILE.arpa] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/decode.h"
#include "clspeech/scorer.h"

enum { C = 29, MAX_TIMES = 8 };

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static double uniform01(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return ((rng_state >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal(void) { return sqrt(-2.0 * log(uniform01())) * cos(6.283185307179586 * uniform01()); }

/* T frames of logits: noise, plus `peak` on one class a frame (blank half of the time). */
static float *make_logits(int T, double peak) {
  float *x = malloc((size_t)T * C * sizeof *x);
  if (!x) return NULL;
  for (int t = 0; t < T; t++) {
    int hot = uniform01() < 0.5 ? C - 1 : (int)(uniform01() * (C - 1));
    for (int k = 0; k < C; k++) x[t * C + k] = (float)(normal() + (k == hot ? peak : 0.0));
  }
  return x;
}

/* The best of reps runs in ms (negative on an error). */
static double time_search(const float *x, int T, const cls_beam_options *o, int reps, int *labels) {
  if (reps < 1) return -1;
  double best = INFINITY;
  for (int r = 0; r < reps; r++) {
    cls_beam_result res[1];
    int n = 0;
    double t0 = cls_now_ms();
    cls_status st = cls_ctc_beam_search(x, T, C, C, o, res, 1, &n);
    double ms = cls_now_ms() - t0;
    if (st != CLS_OK || n != 1) {
      fprintf(stderr, "bench_decode: the beam search failed: %s\n", cls_status_string(st));
      cls_beam_results_free(res, n);
      return -1;
    }
    *labels = res[0].length;
    cls_beam_results_free(res, n);
    best = fmin(best, ms);
  }
  return best;
}

/* DeepSpeech's English alphabet, for --scorer. */
static cls_scorer *load_scorer(const char *path) {
  static const char *const labels[C - 1] = {" ", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
                                            "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "'"};
  cls_scorer *sc = NULL;
  cls_scorer_info info;
  cls_error err = {0};
  double t0 = cls_now_ms();
  if (cls_scorer_load(path, labels, C - 1, &sc, &info, &err) != CLS_OK) {
    fprintf(stderr, "bench_decode: --scorer: %s\n", err.text);
    return NULL;
  }
  printf("scorer %s: %d-gram, %lld words, loaded in %.0f ms\n", path, cls_lm_order(cls_scorer_lm(sc)),
         (long long)info.words, cls_now_ms() - t0);
  return sc;
}

/* One row: T frames of one kind, without a scorer and (when there is one) with it. */
static int bench_case(const char *kind, double peak, int T, cls_beam_options o, int reps) {
  float *x = make_logits(T, peak);
  if (!x) {
    fprintf(stderr, "bench_decode: out of memory\n");
    return 1;
  }
  const cls_scorer *sc = o.scorer;
  o.scorer = NULL;
  int labels = 0, labels_lm = 0;
  double ms = time_search(x, T, &o, reps, &labels), ms_lm = 0.0;
  o.scorer = sc;
  if (sc && ms >= 0) ms_lm = time_search(x, T, &o, reps, &labels_lm);
  free(x);
  if (ms < 0 || ms_lm < 0) return 1;
  printf("%-8s %-6d %6d %10.2f %12.0f %7d", kind, T, o.beam_width, ms, ms > 0 ? T / (ms / 1e3) : 0.0, labels);
  if (sc) printf(" %10.2f %7d %8.2f", ms_lm, labels_lm, ms > 0 ? ms_lm / ms : 0.0);
  putchar('\n');
  return 0;
}

int main(int argc, char **argv) {
  char times_arg[128] = "150,1000";
  const char *scorer_path = NULL;
  int reps = 3;
  cls_beam_options o = cls_beam_options_default();
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "bench_decode: %s needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "--time")) snprintf(times_arg, sizeof times_arg, "%s", v);
    else if (!strcmp(a, "--reps")) reps = atoi(v);
    else if (!strcmp(a, "--beam_width")) o.beam_width = atoi(v);
    else if (!strcmp(a, "--scorer")) scorer_path = v;
    else {
      fprintf(stderr, "bench_decode: unknown flag %s\nusage: bench_decode [--time 150,1000] [--reps 3] [--beam_width 1024] "
              "[--scorer FILE.arpa]\n", a);
      return 2;
    }
  }
  int times[MAX_TIMES], n_times = 0;
  for (char *tok = strtok(times_arg, ","); tok && n_times < MAX_TIMES; tok = strtok(NULL, ",")) times[n_times++] = atoi(tok);
  if (reps < 1 || reps > 1000 || o.beam_width < 1 || n_times == 0) {
    fprintf(stderr, "bench_decode: --reps must be 1..1000, --beam_width 1 or more, --time a list of frame counts\n");
    return 2;
  }
  for (int i = 0; i < n_times; i++)
    if (times[i] < 1 || times[i] > 1000000) {
      fprintf(stderr, "bench_decode: --time %d: must be 1..1000000 frames\n", times[i]);
      return 2;
    }
  cls_scorer *sc = scorer_path ? load_scorer(scorer_path) : NULL;
  if (scorer_path && !sc) return 1;
  o.scorer = sc;
  printf("%-8s %-6s %6s %10s %12s %7s", "logits", "T", "beam", "ms", "frames/s", "labels");
  if (sc) printf(" %10s %7s %8s", "ms(lm)", "labels", "lm/none");
  putchar('\n');
  static const struct {
    const char *name;
    double peak;
  } kinds[] = {{"flat", 0.0}, {"peaked", 6.0}};
  int rc = 0;
  for (int i = 0; i < n_times && !rc; i++)
    for (int k = 0; k < 2 && !rc; k++) rc = bench_case(kinds[k].name, kinds[k].peak, times[i], o, reps);
  cls_scorer_destroy(sc);
  return rc;
}
