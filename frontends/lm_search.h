/* The search of `clspeech lm_optimizer` over the scorer's weights (lm_alpha, lm_beta) in
 * [0, alpha_max] x [0, beta_max], in place of DeepSpeech's Optuna TPE: deterministic (the same flags give
 * the same trials, whatever the number of threads) and in rounds of LM_SEARCH_ROUND trials whose points
 * depend only on the rounds before, so a round's trials can run in parallel.
 *  - Exploration, the first half of the trials (at least one): trial 1 is DeepSpeech's default pair
 *    (0.931289, 1.183414; clipped to the ranges), then the Halton sequence in bases 2 and 3 scaled to
 *    the ranges (a low-discrepancy cover of the rectangle: quasi-random points that fill it evenly).
 *  - Refinement, the rest: each trial is the best so far plus a Gaussian step on each axis whose standard
 *    deviation is `radius` times that axis's range (reflected at the bounds); radius starts at 0.1 and
 *    halves after each round that does not improve on the best, down to 1/512.
 * A trial is better than another when its WER is lower, then its CER; an earlier trial wins a tie. */
#ifndef CLS_LM_SEARCH_H
#define CLS_LM_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

enum { LM_SEARCH_ROUND = 16 };

typedef struct lm_trial {
  double alpha, beta;
  double wer, cer;   /* filled by the caller before lm_search_end_round */
  double cpu_s;      /* CPU seconds of the thread that decoded it */
} lm_trial;

typedef struct lm_search {
  int n_trials, n_explore, proposed;
  double alpha_max, beta_max;
  double radius;     /* refinement steps' standard deviation, as a fraction of each range */
  int best;          /* the best trial so far, -1 before the first round ends */
  uint64_t rng;      /* the refinement's generator (xorshift64*) */
  lm_trial *trials;  /* [n_trials] */
} lm_search;

/* n_trials >= 1, maxima >= 0. Returns 0, or -1 when out of memory. */
int lm_search_init(lm_search *s, int n_trials, double alpha_max, double beta_max, uint64_t seed);
void lm_search_free(lm_search *s);
/* The next round: trials[*first .. *first + count) get their alpha and beta; returns count (0: done). */
int lm_search_next_round(lm_search *s, int *first);
/* The round's trials decoded (wer, cer filled): the best updated and the radius adapted. */
void lm_search_end_round(lm_search *s, int first, int count);
/* Whether trial a is better than trial b (WER, then CER). */
bool lm_trial_better(const lm_trial *a, const lm_trial *b);

#endif
