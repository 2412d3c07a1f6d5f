/* DeepSpeech 0.9's end-of-epoch decisions (train.py's epoch loop) on scripted dev-loss sequences:
 * new best, the no-improvement count with es_min_delta, early stop at exactly es_epochs, and
 * reduce-on-plateau at every multiple of plateau_epochs, not reset by a reduction. */
#include <math.h>

#include "check.h"
#include "train/rules.h"

/* Runs a loss sequence; writes per-epoch decisions as a string of letters: B new best, S stop,
   R reduce, '.' nothing (several letters may stand for one epoch, then '|'). */
static void run(const double *losses, int n, const cls_rule_options *o, char *out, size_t cap) {
  cls_rule_state s = {INFINITY, 0};
  size_t used = 0;
  for (int i = 0; i < n && used + 4 < cap; i++) {
    cls_rule_decision d = cls_dev_rules(&s, losses[i], o);
    if (!d.new_best && !d.early_stop && !d.reduce_lr) out[used++] = '.';
    if (d.new_best) out[used++] = 'B';
    if (d.reduce_lr) out[used++] = 'R';
    if (d.early_stop) {
      out[used++] = 'S';
      break;
    }
    out[used++] = '|';
  }
  out[used] = '\0';
}

#define EXPECT(losses, n, opts, expected)                                                   \
  do {                                                                                      \
    char got_[512];                                                                         \
    run(losses, n, opts, got_, sizeof got_);                                                \
    CHECK(!strcmp(got_, expected), "decisions\n      got      %s\n      expected %s", got_, expected); \
  } while (0)

int main(void) {
  const cls_rule_options ds = {1, 25, 0.05, 1, 10}; /* DeepSpeech's defaults with both switched on */
  double flat[30];
  for (int i = 0; i < 30; i++) flat[i] = 50.0;
  /* Constant loss after the first epoch: reductions at counts 10 and 20, stop at exactly 25. */
  EXPECT(flat, 30, &ds,
         "B|.|.|.|.|.|.|.|.|.|R|.|.|.|.|.|.|.|.|.|R|.|.|.|.|S");

  /* Gains smaller than es_min_delta: each is a new best, yet counts as no improvement. */
  double creep[12];
  for (int i = 0; i < 12; i++) creep[i] = 40.0 - 0.01 * i;
  EXPECT(creep, 12, &ds, "B|B|B|B|B|B|B|B|B|B|BR|B|");

  /* A real improvement resets the count. */
  double reset[14] = {30, 30, 30, 30, 30, 30, 30, 30, 30, 29.9, 29.9, 29.9, 29.9, 29.9};
  EXPECT(reset, 14, &ds, "B|.|.|.|.|.|.|.|.|B|.|.|.|.|");

  /* A worse loss after a better one is not a new best and counts. */
  double worse[4] = {20, 19, 25, 18.96};
  cls_rule_options small = {1, 3, 0.05, 1, 2};
  EXPECT(worse, 4, &small, "B|B|.|BR|");

  /* Early stop is exact equality with es_epochs; off, it never stops. */
  cls_rule_options no_stop = {0, 25, 0.05, 0, 10};
  EXPECT(flat, 30, &no_stop, "B|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|");
  cls_rule_options stop_only = {1, 3, 0.01, 0, 10};
  EXPECT(flat, 30, &stop_only, "B|.|.|S");

  /* es_min_delta 0: DeepSpeech's test is `dev_loss > best - delta`, so an equal loss counts as an
     improvement and never stops training; only a worse one counts. */
  double tiny[6] = {5, 4.999, 4.998, 4.998, 4.998, 4.999};
  cls_rule_options d0 = {1, 1, 0.0, 0, 1};
  EXPECT(tiny, 6, &d0, "B|B|B|.|.|S");
  return check_finish("test_train_rules");
}
