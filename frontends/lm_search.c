/* The deterministic search over (lm_alpha, lm_beta) of `clspeech lm_optimizer` (see lm_search.h). */
#include "lm_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/scorer.h"

int lm_search_init(lm_search *s, int n_trials, double alpha_max, double beta_max, uint64_t seed) {
  memset(s, 0, sizeof *s);
  s->trials = calloc((size_t)n_trials, sizeof *s->trials);
  if (!s->trials) return -1;
  s->n_trials = n_trials;
  s->n_explore = n_trials / 2 > 0 ? n_trials / 2 : 1;
  s->alpha_max = alpha_max;
  s->beta_max = beta_max;
  s->radius = 0.1;
  s->best = -1;
  s->rng = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
  if (!s->rng) s->rng = 1;
  return 0;
}

void lm_search_free(lm_search *s) {
  free(s->trials);
  s->trials = NULL;
}

/* The radical inverse of i in base b: digit-reversed i after the point (Halton's sequence). */
static double halton(int i, int b) {
  double f = 1.0, r = 0.0;
  for (; i > 0; i /= b) {
    f /= b;
    r += f * (i % b);
  }
  return r;
}

static double uniform(lm_search *s) { /* xorshift64*: [0, 1) with 53 bits */
  s->rng ^= s->rng >> 12;
  s->rng ^= s->rng << 25;
  s->rng ^= s->rng >> 27;
  return (double)((s->rng * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static double gaussian(lm_search *s) { /* Box-Muller */
  const double u = 1.0 - uniform(s), v = uniform(s);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* x reflected into [0, max] (then clamped, for steps longer than the range). */
static double reflect(double x, double max) {
  if (x < 0) x = -x;
  if (x > max) x = 2 * max - x;
  return x < 0 ? 0 : x > max ? max : x;
}

static void propose(lm_search *s, int i) {
  lm_trial *t = &s->trials[i];
  if (i == 0) {
    t->alpha = CLS_LM_ALPHA_DEFAULT < s->alpha_max ? CLS_LM_ALPHA_DEFAULT : s->alpha_max;
    t->beta = CLS_LM_BETA_DEFAULT < s->beta_max ? CLS_LM_BETA_DEFAULT : s->beta_max;
  } else if (i < s->n_explore || s->best < 0) {
    t->alpha = halton(i, 2) * s->alpha_max;
    t->beta = halton(i, 3) * s->beta_max;
  } else {
    const lm_trial *b = &s->trials[s->best];
    t->alpha = reflect(b->alpha + gaussian(s) * s->radius * s->alpha_max, s->alpha_max);
    t->beta = reflect(b->beta + gaussian(s) * s->radius * s->beta_max, s->beta_max);
  }
}

int lm_search_next_round(lm_search *s, int *first) {
  *first = s->proposed;
  int count = s->n_trials - s->proposed;
  if (count > LM_SEARCH_ROUND) count = LM_SEARCH_ROUND;
  /* exploration and refinement never share a round: refinement starts from exploration's best */
  if (s->proposed < s->n_explore && s->proposed + count > s->n_explore) count = s->n_explore - s->proposed;
  for (int i = 0; i < count; i++) propose(s, s->proposed + i);
  s->proposed += count;
  return count;
}

bool lm_trial_better(const lm_trial *a, const lm_trial *b) {
  return a->wer < b->wer || (a->wer == b->wer && a->cer < b->cer);
}

void lm_search_end_round(lm_search *s, int first, int count) {
  const int before = s->best;
  for (int i = first; i < first + count; i++)
    if (s->best < 0 || lm_trial_better(&s->trials[i], &s->trials[s->best])) s->best = i;
  if (first >= s->n_explore && s->best == before) {
    s->radius *= 0.5;
    if (s->radius < 1.0 / 512) s->radius = 1.0 / 512;
  }
}
