/* The host side of the hybrid step: the weighted reduction g = sum_i w_i g_i against a double
 * reference (within 3 ulp per term), the equal split (DeepSpeech's), and --balance auto's feedback
 * step, which must settle simulated towers with different per-utterance and fixed costs where their
 * finish times meet. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "train/grad_reduce.h"

int main(void) {
  /* Reduction: three sources with weights 1/6, 2/6, 3/6. */
  enum { N = 10007 };
  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c), *out = malloc(N * sizeof *out);
  for (int i = 0; i < N; i++) {
    a[i] = sinf((float)i);
    b[i] = cosf(0.5f * (float)i);
    c[i] = (float)(i % 17) - 8.0f;
  }
  const float *src[3] = {a, b, c};
  const float w[3] = {1.0f / 6, 2.0f / 6, 3.0f / 6};
  cls_grad_reduce(out, src, w, 3, 0, N);
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double exact = (double)w[0] * a[i] + (double)w[1] * b[i] + (double)w[2] * c[i];
    double bound = 3 * 1.2e-7 * (fabs((double)w[0] * a[i]) + fabs((double)w[1] * b[i]) + fabs((double)w[2] * c[i]));
    double err = fabs(out[i] - exact) / (bound > 0 ? bound : 1);
    worst = err > worst ? err : worst;
  }
  printf("  reduction: worst error %.2f of a 3-ulp-per-term bound\n", worst);
  CHECK(worst <= 1.0, "reduction error %.3g of its bound", worst);
  /* A sub-range leaves the rest alone; one source with weight 1 copies exactly. */
  for (int i = 0; i < N; i++) out[i] = -1.0f;
  const float one = 1.0f;
  cls_grad_reduce(out, src, &one, 1, 100, 50);
  int exact_copy = 1;
  for (int i = 0; i < N; i++) exact_copy &= (i >= 100 && i < 150) ? out[i] == a[i] : out[i] == -1.0f;
  CHECK(exact_copy, "range [100, 150) copied exactly, the rest untouched");

  /* Equal split, DeepSpeech's: remainders go to the first towers. */
  int shares[3];
  cls_batch_split(8, 3, shares);
  CHECK(shares[0] == 3 && shares[1] == 3 && shares[2] == 2, "8 over 3: %d %d %d", shares[0], shares[1], shares[2]);
  cls_batch_split(2, 3, shares);
  CHECK(shares[0] + shares[1] + shares[2] == 2 && shares[2] == 0, "2 over 3 leaves one idle");

  /* Feedback balance: a tower twice as slow per utterance loses utterances until the finish times
     meet (simulated times: fixed cost 50 + cost per utterance 10 or 20); it settles at the best
     integer split (11/5: 160 against 150; 10/6 would give 170) and stays; equal times move nothing. */
  int plan[2] = {8, 8}, moves = 0;
  for (int step = 0; step < 40; step++) {
    double ms[2] = {50 + 10.0 * plan[0], 50 + 20.0 * plan[1]};
    moves += cls_balance_adjust(2, ms, plan);
  }
  double t0 = 50 + 10.0 * plan[0], t1 = 50 + 20.0 * plan[1];
  printf("  feedback balance: shares %d/%d after %d moves, times %.0f/%.0f\n", plan[0], plan[1], moves, t0, t1);
  CHECK(plan[0] + plan[1] == 16 && plan[0] == 11 && plan[1] == 5, "settles at 11/5 (got %d/%d)", plan[0], plan[1]);
  double same[3] = {100, 103, 99};
  int three[3] = {4, 4, 4};
  CHECK(!cls_balance_adjust(3, same, three) && three[0] == 4 && three[1] == 4, "nearly equal times: no move");
  double lopsided[3] = {300, 100, 0};
  int keep[3] = {1, 5, 0};
  CHECK(!cls_balance_adjust(3, lopsided, keep) && keep[0] == 1, "a tower keeps its last utterance");
  /* Idling: issue 44's pair, Oclgrind at 22 frames/s beside PoCL at 30,099, batch 8: the simulator earns
     0.006 utterances and takes none; its 3 go to PoCL. */
  double pair[2] = {22, 30099};
  int pair_shares[2] = {3, 5};
  CHECK(cls_balance_idle(2, pair, 8, CLS_BALANCE_IDLE_BELOW, pair_shares, NULL) == 1 && pair_shares[0] == 0 && pair_shares[1] == 8,
        "the simulator idled: shares %d, %d", pair_shares[0], pair_shares[1]);
  /* pthread, pthread and basic (1 : 2 : 2) at batch 3: basic earns 0.6 utterances, kept */
  double cpus[3] = {1000, 2000, 2000};
  int cpu_shares[3] = {1, 1, 1};
  CHECK(cls_balance_idle(3, cpus, 3, CLS_BALANCE_IDLE_BELOW, cpu_shares, NULL) == 0 && cpu_shares[0] == 1, "0.6 utterances: kept");
  /* ... at 1 : 5 : 5 basic earns 0.27: idled, to the first fastest */
  double weak[3] = {1000, 5000, 5000};
  int weak_fast = -1;
  CHECK(cls_balance_idle(3, weak, 3, CLS_BALANCE_IDLE_BELOW, cpu_shares, &weak_fast) == 1 && weak_fast == 1 && cpu_shares[0] == 0 && cpu_shares[1] == 2 &&
            cpu_shares[2] == 1,
        "0.27 utterances: idled (shares %d, %d, %d)", cpu_shares[0], cpu_shares[1], cpu_shares[2]);
  /* the probe's bound: two sub-devices probed 10x apart (338.8 against 3591.7 frames/s, batch 4) keep
     their shares (0.35 earned); the simulator's probe (0.4 against 2926.8, batch 6: 0.0008) does not */
  double subs[2] = {338.8, 3591.7}, sim_probe[2] = {0.4, 2926.8};
  int sub_shares[2] = {2, 2}, sim_shares[2] = {3, 3};
  CHECK(cls_balance_idle(2, subs, 4, CLS_BALANCE_PROBE_IDLE_BELOW, sub_shares, NULL) == 0 && sub_shares[0] == 2,
        "a noisy probe of a like device idled it");
  CHECK(cls_balance_idle(2, sim_probe, 6, CLS_BALANCE_PROBE_IDLE_BELOW, sim_shares, NULL) == 1 && sim_shares[1] == 6,
        "the simulator's probe did not idle it");
  /* unmeasured towers are never idled; neither is the fastest, alone or not */
  double unknown[2] = {0, 30000};
  int u_shares[2] = {4, 4};
  CHECK(cls_balance_idle(2, unknown, 8, CLS_BALANCE_IDLE_BELOW, u_shares, NULL) == 0 && u_shares[0] == 4, "an unmeasured tower idled");
  double alone[1] = {5};
  int one_share[1] = {8};
  CHECK(cls_balance_idle(1, alone, 8, CLS_BALANCE_IDLE_BELOW, one_share, NULL) == 0 && one_share[0] == 8, "the only tower idled");
  free(a);
  free(b);
  free(c);
  free(out);
  return check_finish("test_grad_reduce");
}
