/* The own kernels' tuning of `clspeech bench --tune` (cls_own_tune) in the bench's table and JSON:
 * each candidate build with its state and time, the final comparison and where the winner was stored. */
#include "bench_report.h"

#include <string.h>

void bench_print_own_tuning(FILE *out, const bench_device_result *d) {
  const cls_own_tune_result *t = &d->own_tune;
  fprintf(out, "\n  own kernels' tuning at %s%s%s: %d builds in %.0f s%s (sum of calls x ms per step)\n", t->shapes,
          t->lstm[0] ? ", LSTM sequence kernels at " : "", t->lstm, t->n, t->seconds,
          t->over_budget ? ", stopped by --tune_budget" : "");
  fprintf(out, "  %-12s %-10s %11s %7s %7s  %s\n", "group", "state", "ms", "x best", "build s", "options");
  for (int i = 0; i < t->n; i++) {
    const cls_own_candidate *c = &t->candidate[i];
    char ms[32] = "-", versus[32] = "-";
    if (c->state == CLS_TUNE_TIMED || c->state == CLS_TUNE_DROPPED)
      snprintf(ms, sizeof ms, "%s%.2f", c->state == CLS_TUNE_DROPPED ? "> " : "", c->ms);
    if (c->versus > 0) snprintf(versus, sizeof versus, "%.3f", c->versus);
    fprintf(out, "  %-12s %-10s %11s %7s %7.1f  %s\n", c->group, cls_tune_state_name(c->state), ms, versus, c->build_s,
            c->options);
  }
  fprintf(out, "    (x best: the candidate's time over the best build so far, timed shape by shape beside it; 0.99 or\n"
               "    less makes it the best, over 1.05 drops it; the sequence group is timed on the LSTM's sequence\n"
               "    kernels alone, the other groups on the GEMM shapes)\n");
  if (t->rejected)
    fprintf(out, "    %d rejection%s; the last: %s\n", t->rejected, t->rejected == 1 ? "" : "s", t->last_rejection);
  const bool kept = !strcmp(t->winner, t->defaults);
  if (!kept)
    fprintf(out, "    winner: %s\n    in turns with the defaults: %.2f ms against %.2f ms per step, %.3fx the time\n",
            t->winner, t->after_ms, t->before_ms, t->ratio);
  else
    fprintf(out, "    kept: the defaults (%s)\n", t->defaults);
  if (t->note[0]) fprintf(out, "    %s\n", t->note);
  fprintf(out, "    %s %s\n", t->stored ? "stored in" : "NOT stored", t->stored ? t->path : "(see the warning above)");
}

json_t *bench_json_own_tuning(const bench_device_result *d) {
  const cls_own_tune_result *t = &d->own_tune;
  json_t *candidates = json_array();
  for (int i = 0; i < t->n; i++) {
    const cls_own_candidate *c = &t->candidate[i];
    const bool timed = c->state == CLS_TUNE_TIMED || c->state == CLS_TUNE_DROPPED;
    json_t *o = json_object();
    o = jo_set(o, "group", jo_text(c->group));
    o = jo_set(o, "options", jo_text(c->options));
    o = jo_set(o, "state", jo_text(cls_tune_state_name(c->state)));
    o = jo_set(o, "step_ms", timed ? jo_real(c->ms) : json_null());
    o = jo_set(o, "versus_best", c->versus > 0 ? jo_real(c->versus) : json_null());
    o = jo_set(o, "build_seconds", jo_real(c->build_s));
    o = jo_set(o, "why", jo_text(c->why[0] ? c->why : NULL));
    candidates = jo_push(candidates, o);
  }
  json_t *o = json_object();
  o = jo_set(o, "shapes", jo_text(t->shapes));
  o = jo_set(o, "lstm_sequence", jo_text(t->lstm[0] ? t->lstm : NULL));
  o = jo_set(o, "defaults", jo_text(t->defaults));
  o = jo_set(o, "winner", jo_text(t->winner));
  o = jo_set(o, "kept_defaults", json_boolean(!strcmp(t->winner, t->defaults)));
  o = jo_set(o, "before_step_ms", jo_real(t->before_ms));
  o = jo_set(o, "after_step_ms", jo_real(t->after_ms));
  o = jo_set(o, "time_ratio", jo_real(t->ratio));
  o = jo_set(o, "rejected", json_integer(t->rejected));
  o = jo_set(o, "over_budget", json_boolean(t->over_budget));
  o = jo_set(o, "stored", json_boolean(t->stored));
  o = jo_set(o, "file", jo_text(t->stored ? t->path : NULL));
  o = jo_set(o, "seconds", jo_real(t->seconds));
  o = jo_set(o, "candidates", candidates);
  return o;
}
