/* The outputs of `clspeech bench` (see bench_report.h): the table, the JSON file (every field and
 * unit in docs/bench.md) and the SVG plot, which the program draws itself: grouped bars per device
 * of GFLOP/s (measured peak, the SGEMM mix of a training step) and of training frames per second. */
#include "bench_report.h"

#include <math.h>
#include <string.h>

#include "json_out.h"

double bench_gflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e6) : 0; }

/* Sum over a model's GEMM shapes of calls x ms (per_call: the median or the best runs), and of calls x flops. */
static void gemm_step(const bench_model_result *m, const double *per_call, double *ms, double *flops) {
  *ms = *flops = 0;
  for (int i = 0; i < m->n_shapes; i++) {
    *ms += m->shapes[i].calls * per_call[i];
    *flops += m->shapes[i].calls * cls_gemm_flops(&m->shapes[i]);
  }
}

static double per_second(double amount, double ms) { return ms > 0 ? amount / (ms / 1e3) : 0; }

static void device_id(const cls_device_info *d, char *out, size_t cap) {
  snprintf(out, cap, "%d:%d", d->platform_index, d->device_index);
}

/* ---- table ---- */

static void row(FILE *out, const char *op, const char *shape, const char *calls, double ms, const char *rate,
                double percent) {
  char pct[16] = "";
  if (percent > 0) snprintf(pct, sizeof pct, "%.1f", percent);
  fprintf(out, "  %-20s %-24s %6s %11.3f %18s %7s\n", op, shape, calls, ms, rate, pct);
}

/* An SGEMM row: the median run's figures, the best run's % of the peak, then (when the runs were timed beside
   the peak) the median of the runs at full speed as % of the peak and how many they were ("-" and 0: none). */
static void gemm_row(FILE *out, const char *op, const char *shape, const char *calls, double ms, const char *rate,
                     double percent, double best_percent, bool have_full, double full_percent, int full_runs) {
  char pct[16] = "", best[16] = "", full[16] = "", n_full[16] = "";
  if (percent > 0) snprintf(pct, sizeof pct, "%.1f", percent);
  if (best_percent > 0) snprintf(best, sizeof best, "%.1f", best_percent);
  if (have_full && full_runs != 0 && full_percent > 0) snprintf(full, sizeof full, "%.1f", full_percent);
  else if (have_full) snprintf(full, sizeof full, "-");
  if (have_full && full_runs >= 0) snprintf(n_full, sizeof n_full, "%d", full_runs);
  fprintf(out, "  %-20s %-24s %6s %11.3f %18s %7s %7s", op, shape, calls, ms, rate, pct, best);
  if (have_full) fprintf(out, " %7s %5s", full, n_full);
  fprintf(out, "\n");
}

/* The whole step's ms over the runs at full speed (Σ calls x their median), or -1 when a shape had none (the
   runs are timed beside the peak on every device with a measured peak: d->have_peak). */
static double full_step_ms(const bench_device_result *d, const bench_model_result *m) {
  double ms = 0;
  for (int i = 0; i < m->n_shapes; i++) {
    if (!d->have_peak || m->gemm_full_runs[i] < 1) return -1;
    ms += m->shapes[i].calls * m->gemm_full_ms[i];
  }
  return ms;
}

/* The fewest and the most calls per timed run over the model's SGEMM shapes */
static void calls_range(const bench_model_result *m, int *lo, int *hi) {
  *lo = *hi = m->n_shapes > 0 ? m->gemm_calls_per_run[0] : 1;
  for (int i = 1; i < m->n_shapes; i++) {
    if (m->gemm_calls_per_run[i] < *lo) *lo = m->gemm_calls_per_run[i];
    if (m->gemm_calls_per_run[i] > *hi) *hi = m->gemm_calls_per_run[i];
  }
}

static void print_model(FILE *out, const bench_run *run, const bench_device_result *d, const bench_model_result *m) {
  const double peak = d->have_peak ? d->peak.fma_gflops : 0;
  const bool have_full = d->have_peak; /* the SGEMM runs were timed beside the peak */
  fprintf(out, "\n  H=%d, B=%d, T=%d (%zu parameters, %d CTC labels per utterance)\n", m->n_hidden, run->batch,
          run->time, m->train.n_params, m->ops.ctc_labels);
  int calls_lo, calls_hi;
  calls_range(m, &calls_lo, &calls_hi);
  fprintf(out, "  (ms: per call; each timed run of a product is calls back to back lasting at least %.0f ms, as one "
               "run of the FMA peak probe: %d to %d calls here)\n", CLS_BENCH_RUN_MS, calls_lo, calls_hi);
  if (have_full)
    fprintf(out, "  (full %%: the median of the runs at full speed, both FMA peak runs beside each at >= %.0f %% of "
                 "its measured value, and how many of the %d runs they were)\n", 100 * CLS_BENCH_FULL_SPEED, run->runs);
  fprintf(out, "  %-20s %-24s %6s %11s %18s %7s %7s", "op", "shape", "calls", "ms", "rate", "% peak", "best %");
  if (have_full) fprintf(out, " %7s %5s", "full %", "runs");
  fprintf(out, "\n");
  char shape[64], calls[16], rate[48];
  for (int i = 0; i < m->n_shapes; i++) {
    const cls_gemm_shape *s = &m->shapes[i];
    double g = bench_gflops(cls_gemm_flops(s), m->gemm_ms[i]);
    char op[32];
    snprintf(op, sizeof op, "sgemm %s", s->name);
    snprintf(shape, sizeof shape, "%d x %d x %d%s", s->m, s->n, s->k, s->trans_a ? " (At)" : s->trans_b ? " (Bt)" : "");
    snprintf(calls, sizeof calls, "%d", s->calls);
    snprintf(rate, sizeof rate, "%.2f GFLOP/s", g);
    const double best = bench_gflops(cls_gemm_flops(s), m->gemm_best_ms[i]);
    const double full = have_full ? bench_gflops(cls_gemm_flops(s), m->gemm_full_ms[i]) : 0;
    gemm_row(out, op, shape, calls, m->gemm_ms[i], rate, peak > 0 ? 100 * g / peak : 0, peak > 0 ? 100 * best / peak : 0,
             have_full, peak > 0 ? 100 * full / peak : 0, have_full ? m->gemm_full_runs[i] : -1);
  }
  double ms, flops, best_ms, full_ms = full_step_ms(d, m);
  gemm_step(m, m->gemm_ms, &ms, &flops);
  gemm_step(m, m->gemm_best_ms, &best_ms, &flops);
  snprintf(rate, sizeof rate, "%.2f GFLOP/s", bench_gflops(flops, ms));
  gemm_row(out, "sgemm, whole step", "sum of calls x ms", "", ms, rate,
           peak > 0 ? 100 * bench_gflops(flops, ms) / peak : 0, peak > 0 ? 100 * bench_gflops(flops, best_ms) / peak : 0,
           have_full, peak > 0 && full_ms > 0 ? 100 * bench_gflops(flops, full_ms) / peak : 0, -1);
  if (have_full && cls_bench_peak_measured_slow(m->probe_best_gflops, peak))
    fprintf(out, "  note: a peak run beside the SGEMM runs read %.1f GFLOP/s, above the measured peak: the peak was "
                 "measured in a slow stretch, so every %% of it reads high; run again\n", m->probe_best_gflops);
  const double T = run->time;
  snprintf(rate, sizeof rate, "%.2f GFLOP/s", bench_gflops(m->ops.lstm_fwd_flops, m->ops.lstm_fwd_ms));
  snprintf(shape, sizeof shape, "per step (of %d)", run->time);
  row(out, "lstm forward", shape, "", m->ops.lstm_fwd_ms / T, rate,
      peak > 0 ? 100 * bench_gflops(m->ops.lstm_fwd_flops, m->ops.lstm_fwd_ms) / peak : 0);
  snprintf(rate, sizeof rate, "%.2f GFLOP/s", bench_gflops(m->ops.lstm_bwd_flops, m->ops.lstm_bwd_ms));
  row(out, "lstm backward", shape, "", m->ops.lstm_bwd_ms / T, rate,
      peak > 0 ? 100 * bench_gflops(m->ops.lstm_bwd_flops, m->ops.lstm_bwd_ms) / peak : 0);
  snprintf(shape, sizeof shape, "%d x %d frames, %d classes", run->batch, run->time, run->n_classes);
  snprintf(rate, sizeof rate, "%.0f frames/s", per_second(m->train.frames, m->ops.ctc_ms));
  row(out, "ctc loss + gradient", shape, "", m->ops.ctc_ms, rate, 0);
  snprintf(shape, sizeof shape, "%zu parameters", m->ops.n_params);
  snprintf(rate, sizeof rate, "%.2f GB/s", m->ops.adam_ms > 0 ? m->ops.adam_bytes / (m->ops.adam_ms * 1e6) : 0);
  row(out, "adam", shape, "", m->ops.adam_ms, rate, 0);
  snprintf(rate, sizeof rate, "%.1f frames/s", per_second(m->train.frames, m->train.ms));
  row(out, "training step", "MFCC+fwd+CTC+bwd+Adam", "", m->train.ms, rate, 0);
  fprintf(out, "  %-20s %-24s %6s %11s %18.2f audio-s/s\n", "", "", "", "",
          per_second(m->train.frames * m->train.frame_ms / 1e3, m->train.ms));
}

/* One training step by op: ms, % of the step's wall time, and GFLOP/s with % of the FMA peak for GEMMs. */
static void profile_row(FILE *out, const cls_bench_profile_row *r, double wall, double peak, const char *indent) {
  char name[64], calls[16] = "", rate[32] = "", pct[16] = "";
  snprintf(name, sizeof name, "%s%s", indent, r->name);
  if (r->calls) snprintf(calls, sizeof calls, "%d", r->calls);
  if (r->flops > 0) {
    double g = bench_gflops(r->flops, r->ms);
    snprintf(rate, sizeof rate, "%.2f GFLOP/s", g);
    if (peak > 0) snprintf(pct, sizeof pct, "%.1f", 100 * g / peak);
  }
  fprintf(out, "  %-34.34s %6s %11.3f %7.1f %18s %7s\n", name, calls, r->ms, wall > 0 ? 100 * r->ms / wall : 0, rate, pct);
}

static void print_profile(FILE *out, const bench_device_result *d, const bench_model_result *m) {
  const cls_bench_profile *p = &m->profile;
  const double peak = d->have_peak ? d->peak.fma_gflops : 0, wall = p->wall_ms;
  if (p->n_rows == 0) return;
  fprintf(out, "\n  one training step by op (training's step: the batch's MFCC, forward, CTC, backward, Adam on the "
               "gradient left on the device; profiled once): wall %.3f ms, "
               "device %.3f ms, %d commands recorded\n",
          wall, p->device_ms, p->commands);
  fprintf(out, "  %-34s %6s %11s %7s %18s %7s\n", "op", "calls", "ms", "% step", "rate", "% peak");
  for (int i = 0; i < p->n_rows; i++) profile_row(out, &p->rows[i], wall, peak, "");
  if (p->n_gemm_estimates) {
    fprintf(out, "  of which GEMMs, as timed alone above (calls x ms; estimates: the step's GEMMs report no events):\n");
    for (int i = 0; i < p->n_gemm_estimates; i++) profile_row(out, &p->gemm_estimates[i], wall, peak, "  ~");
  }
  double group_ms[CLS_PROFILE_WAIT + 1] = {0};
  for (int i = 0; i < p->n_rows; i++)
    if ((unsigned)p->rows[i].group <= CLS_PROFILE_WAIT) group_ms[p->rows[i].group] += p->rows[i].ms;
  fprintf(out, "  by group, %% of the step:");
  for (int g = 0; g <= CLS_PROFILE_WAIT; g++)
    if (group_ms[g] != 0)
      fprintf(out, " %s %.1f", cls_profile_group_name((cls_profile_group)g), wall > 0 ? 100 * group_ms[g] / wall : 0);
  fprintf(out, "\n");
}

static void print_tuning(FILE *out, const bench_device_result *d) {
  const cls_gemm_tune_result *t = &d->tune;
  char text[1024];
  cls_gemm_tuning_format(&t->winners, text, sizeof text);
  fprintf(out, "\n  GEMM tuning: %d candidate pairs in %.0f s, compiled with XGEMM_MIN_INDIRECT_SIZE=%d (sum of calls x ms)\n",
          t->candidates, t->seconds, t->split);
  fprintf(out, "  %-5s %-31s %-31s\n", "pair", "Xgemm, on the larger shapes", "XgemmDirect, on the skinny shapes");
  for (int c = 0; c < t->candidates; c++) {
    const cls_gemm_candidate *k = &t->candidate[c];
    char x[48] = "", dd[48] = "";
    if (k->xgemm_state == CLS_TUNE_TIMED || k->xgemm_state == CLS_TUNE_DROPPED)
      snprintf(x, sizeof x, "%s%.1f ms ", k->xgemm_state == CLS_TUNE_DROPPED ? "> " : "", k->xgemm_ms);
    if (k->direct_state == CLS_TUNE_TIMED || k->direct_state == CLS_TUNE_DROPPED)
      snprintf(dd, sizeof dd, "%s%.1f ms ", k->direct_state == CLS_TUNE_DROPPED ? "> " : "", k->direct_ms);
    snprintf(x + strlen(x), sizeof x - strlen(x), "%s%s", cls_tune_state_name(k->xgemm_state),
             c == t->best_xgemm ? ", best" : "");
    snprintf(dd + strlen(dd), sizeof dd - strlen(dd), "%s%s", cls_tune_state_name(k->direct_state),
             c == t->best_direct ? ", best" : "");
    fprintf(out, "  %-5d %-31s %-31s\n", c + 1, x, dd);
  }
  if (t->rejected)
    fprintf(out, "    %d rejection%s; the last: %s\n", t->rejected, t->rejected == 1 ? "" : "s", t->last_rejection);
  fprintf(out, "    %s: %s\n", t->winners.n ? "winners" : "kept",
          t->winners.n ? text : "CLBlast's defaults (nothing was faster)");
  fprintf(out, "    %s %s\n", t->stored ? "stored in" : "NOT stored", t->stored ? t->path : "(see the warning above)");
  fprintf(out, "  %-14s %6s %-22s %16s %16s %7s\n", "shape", "H", "m x n x k", "before GFLOP/s", "after GFLOP/s", "gain");
  for (int i = 0; i < t->n_shapes; i++) {
    const cls_gemm_shape *s = &d->tune_shapes[i];
    char mnk[48];
    snprintf(mnk, sizeof mnk, "%d x %d x %d", s->m, s->n, s->k);
    double b = bench_gflops(cls_gemm_flops(s), t->before_ms[i]), a = bench_gflops(cls_gemm_flops(s), t->after_ms[i]);
    fprintf(out, "  %-14s %6d %-22s %16.2f %16.2f %6.2fx\n", s->name, s->n_hidden, mnk, b, a, b > 0 ? a / b : 0);
  }
  fprintf(out, "  %-14s %6s %-22s %13.1f ms %13.1f ms %6.2fx\n", "all, per step", "", "sum of calls x ms",
          t->before_step_ms, t->after_step_ms, t->after_step_ms > 0 ? t->before_step_ms / t->after_step_ms : 0);
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) {
    if (!t->class_shapes[c]) continue;
    fprintf(out, "  backend, %-6s %d shape%s: own kernels %.1f ms, CLBlast %.1f ms (sum of calls x ms): %s\n",
            cls_gemm_class_name((cls_gemm_class)c), t->class_shapes[c], t->class_shapes[c] == 1 ? "" : "s",
            t->class_ms[c][0], t->class_ms[c][1], cls_gemm_backend_name((cls_gemm_backend)t->winners.backend[c]));
  }
  for (int h = 0; h < d->n_models; h++) {
    const bench_model_result *m = &d->models[h];
    if (!m->have_train_after) continue;
    double b = per_second(m->train.frames, m->train.ms), a = per_second(m->train_after.frames, m->train_after.ms);
    fprintf(out, "  training step H=%d: %.1f frames/s before, %.1f after (%.2fx)%s\n", m->n_hidden, b, a,
            b > 0 ? a / b : 0,
            d->tune_same_kernels ? "; the same (own) GEMM kernels both times: the difference is the machine's" : "");
  }
}

void bench_print_device(FILE *out, const bench_run *run, const bench_device_result *d) {
  const cls_device_info *i = d->info;
  char id[16];
  device_id(i, id, sizeof id);
  fprintf(out, "device %s  %s  (%s, %u compute units, %s, driver %s)\n", id, i->name, cls_device_kind_name(i->kind),
          i->compute_units, i->platform_name, i->driver_version);
  if (d->stored == CLS_TUNING_OK)
    fprintf(out, "  GEMM tuning     %s %s: %s\n",
            d->stored_applied ? "loaded from"
            : run->tune       ? "found (not loaded: --tune) in"
            : run->gemm_tuning ? "found in"
                               : "found (not loaded: CLSPEECH_GEMM_TUNING) in",
            d->stored_path, d->stored_text);
  else if (d->stored == CLS_TUNING_BAD)
    fprintf(out, "  GEMM tuning     %s ignored: %s\n", d->stored_path, d->stored_text);
  else
    fprintf(out, "  GEMM tuning     none stored (CLBlast's defaults; `clspeech bench --tune` searches)\n");
  if (d->have_peak)
    fprintf(out,
            "  peak            FMA %.1f GFLOP/s; device copy %.2f GB/s; host->device %.2f GB/s; device->host %.2f GB/s "
            "(%zu MiB)\n",
            d->peak.fma_gflops, d->peak.copy_gbs, d->peak.host_to_device_gbs, d->peak.device_to_host_gbs,
            d->peak.transfer_bytes >> 20);
  if (d->have_mfcc)
    fprintf(out, "  MFCC on device  %d x %.2f s of audio: %.3f ms, %.1f audio-s/s\n", run->batch,
            d->mfcc.audio_seconds / run->batch, d->mfcc.ms, per_second(d->mfcc.audio_seconds, d->mfcc.ms));
  for (int h = 0; h < d->n_models; h++)
    if (d->models[h].done) {
      print_model(out, run, d, &d->models[h]);
      print_profile(out, d, &d->models[h]);
    }
  if (d->tuned) print_tuning(out, d);
  if (d->own_tuned) bench_print_own_tuning(out, d);
  if (d->error) fprintf(out, "  FAILED: %s\n", d->error);
  fprintf(out, "\n");
}

void bench_print_summary(FILE *out, const bench_run *run) {
  if (run->n_devices < 2) return;
  fprintf(out, "training step, frames/s:\n");
  for (int k = 0; k < run->n_devices; k++) {
    const bench_device_result *d = &run->devices[k];
    char id[16];
    device_id(d->info, id, sizeof id);
    fprintf(out, "  %-6s %-50.50s", id, d->info->name);
    for (int h = 0; h < d->n_models; h++)
      if (d->models[h].done)
        fprintf(out, "  H=%d %.1f", d->models[h].n_hidden, per_second(d->models[h].train.frames, d->models[h].train.ms));
    fprintf(out, "\n");
  }
  if (run->towers_measured)
    fprintf(out, "  all devices as towers: H=%d %.1f\n", run->n_hidden[0], per_second(run->towers.frames, run->towers.ms));
  else
    fprintf(out, "  all devices as towers: %s\n", run->towers_note);
}

/* ---- JSON ---- */

static json_t *json_params(const cls_gemm_params *p) {
  json_t *o = json_object();
  for (int i = 0; i < p->n; i++) o = jo_set(o, p->names[i], json_integer((json_int_t)p->values[i]));
  return o;
}

static json_t *json_train(const cls_bench_train *t) {
  json_t *o = json_object();
  o = jo_set(o, "ms", jo_real(t->ms));
  o = jo_set(o, "frames", jo_real(t->frames));
  o = jo_set(o, "frames_per_second", jo_real(per_second(t->frames, t->ms)));
  o = jo_set(o, "audio_seconds_per_second", jo_real(per_second(t->frames * t->frame_ms / 1e3, t->ms)));
  o = jo_set(o, "parameters", json_integer((json_int_t)t->n_params));
  return o;
}

static json_t *json_profile_rows(const bench_device_result *d, const cls_bench_profile *p,
                                 const cls_bench_profile_row *r, int n) {
  const double peak = d->have_peak ? d->peak.fma_gflops : 0;
  json_t *rows = json_array();
  for (int i = 0; i < n; i++) {
    const double g = bench_gflops(r[i].flops, r[i].ms);
    json_t *o = json_object();
    o = jo_set(o, "name", jo_text(r[i].name));
    o = jo_set(o, "group", jo_text(cls_profile_group_name(r[i].group)));
    o = jo_set(o, "calls", json_integer(r[i].calls));
    o = jo_set(o, "ms", jo_real(r[i].ms));
    o = jo_set(o, "percent_of_step", jo_real(p->wall_ms > 0 ? 100 * r[i].ms / p->wall_ms : NAN));
    o = jo_set(o, "gflops", r[i].flops > 0 ? jo_real(g) : json_null());
    o = jo_set(o, "percent_of_peak", r[i].flops > 0 && peak > 0 ? jo_real(100 * g / peak) : json_null());
    o = jo_set(o, "estimated", json_boolean(r[i].estimated));
    rows = jo_push(rows, o);
  }
  return rows;
}

static json_t *json_profile(const bench_device_result *d, const cls_bench_profile *p) {
  json_t *o = json_object();
  o = jo_set(o, "wall_ms", jo_real(p->wall_ms));
  o = jo_set(o, "device_ms", jo_real(p->device_ms));
  o = jo_set(o, "commands", json_integer(p->commands));
  o = jo_set(o, "gemm_events", json_boolean(p->gemm_events));
  o = jo_set(o, "rows", json_profile_rows(d, p, p->rows, p->n_rows));
  o = jo_set(o, "gemm_estimates", json_profile_rows(d, p, p->gemm_estimates, p->n_gemm_estimates));
  return o;
}

static json_t *json_model(const bench_run *run, const bench_device_result *d, const bench_model_result *m) {
  const double peak = d->have_peak ? d->peak.fma_gflops : 0;
  json_t *gemm = json_array();
  for (int i = 0; i < m->n_shapes; i++) {
    const cls_gemm_shape *s = &m->shapes[i];
    double g = bench_gflops(cls_gemm_flops(s), m->gemm_ms[i]);
    json_t *o = json_object();
    o = jo_set(o, "name", jo_text(s->name));
    o = jo_set(o, "m", json_integer(s->m));
    o = jo_set(o, "n", json_integer(s->n));
    o = jo_set(o, "k", json_integer(s->k));
    o = jo_set(o, "trans_a", json_boolean(s->trans_a));
    o = jo_set(o, "trans_b", json_boolean(s->trans_b));
    o = jo_set(o, "calls_per_step", json_integer(s->calls));
    o = jo_set(o, "calls_per_run", json_integer(m->gemm_calls_per_run[i]));
    o = jo_set(o, "ms", jo_real(m->gemm_ms[i]));
    o = jo_set(o, "gflops", jo_real(g));
    o = jo_set(o, "percent_of_peak", jo_real(peak > 0 ? 100 * g / peak : NAN));
    const double best = bench_gflops(cls_gemm_flops(s), m->gemm_best_ms[i]);
    o = jo_set(o, "best_ms", jo_real(m->gemm_best_ms[i]));
    o = jo_set(o, "best_percent_of_peak", jo_real(peak > 0 ? 100 * best / peak : NAN));
    const bool full = d->have_peak && m->gemm_full_runs[i] > 0;
    o = jo_set(o, "full_speed_runs", d->have_peak ? json_integer(m->gemm_full_runs[i]) : json_null());
    o = jo_set(o, "full_speed_ms", jo_real(full ? m->gemm_full_ms[i] : NAN));
    o = jo_set(o, "full_speed_percent_of_peak",
               jo_real(full && peak > 0 ? 100 * bench_gflops(cls_gemm_flops(s), m->gemm_full_ms[i]) / peak : NAN));
    gemm = jo_push(gemm, o);
  }
  double ms, flops;
  gemm_step(m, m->gemm_ms, &ms, &flops);
  json_t *step = json_object();
  step = jo_set(step, "ms", jo_real(ms));
  step = jo_set(step, "gflops", jo_real(bench_gflops(flops, ms)));
  step = jo_set(step, "percent_of_peak", jo_real(peak > 0 ? 100 * bench_gflops(flops, ms) / peak : NAN));
  json_t *lstm = json_object();
  lstm = jo_set(lstm, "forward_ms_per_step", jo_real(m->ops.lstm_fwd_ms / run->time));
  lstm = jo_set(lstm, "backward_ms_per_step", jo_real(m->ops.lstm_bwd_ms / run->time));
  lstm = jo_set(lstm, "forward_gflops", jo_real(bench_gflops(m->ops.lstm_fwd_flops, m->ops.lstm_fwd_ms)));
  lstm = jo_set(lstm, "backward_gflops", jo_real(bench_gflops(m->ops.lstm_bwd_flops, m->ops.lstm_bwd_ms)));
  json_t *ctc = json_object();
  ctc = jo_set(ctc, "ms", jo_real(m->ops.ctc_ms));
  ctc = jo_set(ctc, "labels", json_integer(m->ops.ctc_labels));
  ctc = jo_set(ctc, "frames_per_second", jo_real(per_second(m->train.frames, m->ops.ctc_ms)));
  json_t *adam = json_object();
  adam = jo_set(adam, "ms", jo_real(m->ops.adam_ms));
  adam = jo_set(adam, "parameters", json_integer((json_int_t)m->ops.n_params));
  adam = jo_set(adam, "gbs", jo_real(m->ops.adam_ms > 0 ? m->ops.adam_bytes / (m->ops.adam_ms * 1e6) : 0));
  json_t *o = json_object();
  o = jo_set(o, "n_hidden", json_integer(m->n_hidden));
  o = jo_set(o, "gemm", gemm);
  o = jo_set(o, "gemm_step", step);
  o = jo_set(o, "peak_beside_best_gflops", jo_real(d->have_peak ? m->probe_best_gflops : NAN));
  o = jo_set(o, "lstm", lstm);
  o = jo_set(o, "ctc", ctc);
  o = jo_set(o, "adam", adam);
  o = jo_set(o, "train_step", json_train(&m->train));
  o = jo_set(o, "step_profile", m->profile.n_rows ? json_profile(d, &m->profile) : json_null());
  o = jo_set(o, "train_step_after_tuning", m->have_train_after ? json_train(&m->train_after) : json_null());
  return o;
}

static json_t *json_tuning(const bench_device_result *d) {
  const cls_gemm_tune_result *t = &d->tune;
  json_t *winners = json_object();
  for (int k = 0; k < t->winners.n; k++)
    winners = jo_set(winners, t->winners.kernels[k].kernel, json_params(&t->winners.kernels[k]));
  json_t *candidates = json_array();
  for (int c = 0; c < t->candidates; c++) {
    const cls_gemm_candidate *k = &t->candidate[c];
    const cls_gemm_params *p[2] = {&k->xgemm, &k->direct};
    const cls_tune_state state[2] = {k->xgemm_state, k->direct_state};
    const double ms[2] = {k->xgemm_ms, k->direct_ms};
    const bool best[2] = {c == t->best_xgemm, c == t->best_direct};
    json_t *pair = json_object();
    for (int j = 0; j < 2; j++) {
      bool timed = state[j] == CLS_TUNE_TIMED || state[j] == CLS_TUNE_DROPPED;
      json_t *o = json_object();
      o = jo_set(o, "state", jo_text(cls_tune_state_name(state[j])));
      o = jo_set(o, "step_ms", timed ? jo_real(ms[j]) : json_null());
      o = jo_set(o, "best", json_boolean(best[j]));
      o = jo_set(o, "parameters", json_params(p[j]));
      pair = jo_set(pair, p[j]->kernel, o);
    }
    candidates = jo_push(candidates, pair);
  }
  json_t *shapes = json_array();
  for (int i = 0; i < t->n_shapes; i++) {
    const cls_gemm_shape *s = &d->tune_shapes[i];
    json_t *o = json_object();
    o = jo_set(o, "name", jo_text(s->name));
    o = jo_set(o, "n_hidden", json_integer(s->n_hidden));
    o = jo_set(o, "m", json_integer(s->m));
    o = jo_set(o, "n", json_integer(s->n));
    o = jo_set(o, "k", json_integer(s->k));
    o = jo_set(o, "before_gflops", jo_real(bench_gflops(cls_gemm_flops(s), t->before_ms[i])));
    o = jo_set(o, "after_gflops", jo_real(bench_gflops(cls_gemm_flops(s), t->after_ms[i])));
    shapes = jo_push(shapes, o);
  }
  json_t *o = json_object();
  o = jo_set(o, "stored", json_boolean(t->stored));
  o = jo_set(o, "file", jo_text(t->stored ? t->path : NULL));
  o = jo_set(o, "kept_defaults", json_boolean(t->winners.n == 0));
  o = jo_set(o, "winners", winners);
  o = jo_set(o, "candidate_pairs", json_integer(t->candidates));
  o = jo_set(o, "pair_min_indirect_size", json_integer(t->split));
  o = jo_set(o, "candidates", candidates);
  o = jo_set(o, "rejected", json_integer(t->rejected));
  o = jo_set(o, "last_rejection", jo_text(t->rejected ? t->last_rejection : NULL));
  o = jo_set(o, "seconds", jo_real(t->seconds));
  o = jo_set(o, "before_step_ms", jo_real(t->before_step_ms));
  o = jo_set(o, "after_step_ms", jo_real(t->after_step_ms));
  o = jo_set(o, "shapes", shapes);
  return o;
}

static json_t *json_device(const bench_run *run, const bench_device_result *d) {
  const cls_device_info *i = d->info;
  char id[16];
  device_id(i, id, sizeof id);
  json_t *tuning = json_object();
  tuning = jo_set(tuning, "file", jo_text(d->stored != CLS_TUNING_NONE ? d->stored_path : NULL));
  tuning = jo_set(tuning, "state",
                  jo_text(d->stored == CLS_TUNING_NONE  ? "none"
                          : d->stored == CLS_TUNING_BAD ? "ignored"
                          : d->stored_applied           ? "loaded"
                                                        : "not_loaded"));
  tuning = jo_set(tuning, "detail", jo_text(d->stored != CLS_TUNING_NONE ? d->stored_text : NULL));
  json_t *peak = json_null();
  if (d->have_peak) {
    peak = json_object();
    peak = jo_set(peak, "fma_gflops", jo_real(d->peak.fma_gflops));
    peak = jo_set(peak, "copy_gbs", jo_real(d->peak.copy_gbs));
    peak = jo_set(peak, "host_to_device_gbs", jo_real(d->peak.host_to_device_gbs));
    peak = jo_set(peak, "device_to_host_gbs", jo_real(d->peak.device_to_host_gbs));
    peak = jo_set(peak, "transfer_bytes", json_integer((json_int_t)d->peak.transfer_bytes));
  }
  json_t *mfcc = json_null();
  if (d->have_mfcc) {
    mfcc = json_object();
    mfcc = jo_set(mfcc, "ms", jo_real(d->mfcc.ms));
    mfcc = jo_set(mfcc, "audio_seconds", jo_real(d->mfcc.audio_seconds));
    mfcc = jo_set(mfcc, "audio_seconds_per_second", jo_real(per_second(d->mfcc.audio_seconds, d->mfcc.ms)));
  }
  json_t *models = json_array();
  for (int h = 0; h < d->n_models; h++)
    if (d->models[h].done) models = jo_push(models, json_model(run, d, &d->models[h]));
  json_t *o = json_object();
  o = jo_set(o, "id", jo_text(id));
  o = jo_set(o, "name", jo_text(i->name));
  o = jo_set(o, "kind", jo_text(cls_device_kind_name(i->kind)));
  o = jo_set(o, "vendor", jo_text(i->vendor));
  o = jo_set(o, "platform_name", jo_text(i->platform_name));
  o = jo_set(o, "driver_version", jo_text(i->driver_version));
  o = jo_set(o, "compute_units", json_integer(i->compute_units));
  o = jo_set(o, "error", jo_text(d->error));
  o = jo_set(o, "gemm_tuning", tuning);
  o = jo_set(o, "peak", peak);
  o = jo_set(o, "mfcc", mfcc);
  o = jo_set(o, "models", models);
  o = jo_set(o, "tuning", d->tuned ? json_tuning(d) : json_null());
  o = jo_set(o, "own_tuning", d->own_tuned ? bench_json_own_tuning(d) : json_null());
  return o;
}

int bench_write_json(const char *path, const bench_run *run, cls_error *err) {
  json_t *n_hidden = json_array();
  for (int h = 0; h < run->n_n_hidden; h++) n_hidden = jo_push(n_hidden, json_integer(run->n_hidden[h]));
  json_t *config = json_object();
  config = jo_set(config, "n_hidden", n_hidden);
  config = jo_set(config, "batch", json_integer(run->batch));
  config = jo_set(config, "time", json_integer(run->time));
  config = jo_set(config, "frame_ms", json_integer(20));
  config = jo_set(config, "runs", json_integer(run->runs));
  config = jo_set(config, "tune", json_boolean(run->tune));
  config = jo_set(config, "selection", jo_text(run->selection));
  json_t *devices = json_array();
  for (int k = 0; k < run->n_devices; k++) devices = jo_push(devices, json_device(run, &run->devices[k]));
  json_t *root = json_object();
  root = jo_set(root, "clspeech_version", jo_text(cls_version()));
  root = jo_set(root, "schema", jo_text("clspeech-bench-1"));
  root = jo_set(root, "config", config);
  root = jo_set(root, "devices", devices);
  root = jo_set(root, "towers", run->towers_measured ? json_train(&run->towers) : json_null());
  if (!root) {
    cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory building the JSON", path);
    return -1;
  }
  if (!strcmp(path, "-")) {
    int bad = jo_dump(root, stdout) != 0 || fflush(stdout) != 0;
    if (bad) cls_error_set(err, CLS_ERR_IO, "standard output: write failed");
    return bad ? -1 : 0;
  }
  cls_output *o = NULL; /* the output rule (clspeech/base.h) */
  if (cls_output_open(path, &o, err) != CLS_OK) {
    json_decref(root);
    return -1;
  }
  if (jo_dump(root, cls_output_file(o)) != 0) {
    cls_output_abort(o);
    cls_error_set(err, CLS_ERR_IO, "%s: write failed", path);
    return -1;
  }
  return cls_output_commit(o, path, err) == CLS_OK ? 0 : -1;
}

/* ---- SVG ---- */

static void xml_text(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default:
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
  }
}

#define MAX_SERIES (2 * BENCH_MAX_HIDDEN + 2)
/* Series colours: the peak in grey, then one hue per H, a lighter shade of it after tuning. */
static const char *peak_color = "#6b6b6b";
static const char *hues[][2] = {{"#4e79a7", "#a0cbe8"}, {"#f28e2b", "#ffbe7d"}, {"#59a14f", "#8cd17d"},
                                {"#e15759", "#ff9d9a"}, {"#b07aa1", "#d4a6c8"}, {"#9c755f", "#d7b5a6"},
                                {"#499894", "#86bcb6"}, {"#b6992d", "#f1ce63"}};

/* A "nice" axis maximum, at least v: 1, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten. */
static double nice_max(double v) {
  if (!(v > 0)) return 1;
  static const double steps[] = {1, 2, 2.5, 3, 4, 5, 6, 8, 10};
  double p = pow(10, floor(log10(v)));
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
    if (v <= steps[i] * p * (1 + 1e-9)) return steps[i] * p;
  return 10 * p;
}

/* 950, 1.23k, 60.5k, 1.2M */
static void compact(double v, char *out, size_t cap) {
  if (v >= 1e6) snprintf(out, cap, "%.3gM", v / 1e6);
  else if (v >= 1e3) snprintf(out, cap, "%.3gk", v / 1e3);
  else snprintf(out, cap, "%.3g", v);
}

typedef struct panel {
  const char *title;
  int n_series;
  char names[MAX_SERIES][48];
  const char *colors[MAX_SERIES];
  double v[16][MAX_SERIES]; /* [device][series], 0: no bar */
} panel;

static void add_series(panel *p, const char *color, const char *name) {
  p->colors[p->n_series] = color;
  snprintf(p->names[p->n_series++], sizeof p->names[0], "%s", name);
}

static void draw_panel(FILE *f, const bench_run *run, const panel *p, double x0, double y0, double w, double h) {
  const double left = 50, bottom = 58, top = 30, ph = h - top - bottom, pw = w - left - 10;
  const int groups = run->n_devices < 16 ? run->n_devices : 16;
  double vmax = 0;
  char num[32];
  for (int g = 0; g < groups; g++)
    for (int s = 0; s < p->n_series; s++) vmax = p->v[g][s] > vmax ? p->v[g][s] : vmax;
  vmax = nice_max(vmax);
  fprintf(f, "<g transform=\"translate(%.1f,%.1f)\">\n", x0, y0);
  fprintf(f, "<text x=\"%.1f\" y=\"18\" font-size=\"13\" text-anchor=\"middle\" font-weight=\"bold\">", left + pw / 2);
  xml_text(f, p->title);
  fprintf(f, "</text>\n");
  for (int t = 0; t <= 5; t++) {
    double y = top + ph - ph * t / 5.0;
    compact(vmax * t / 5.0, num, sizeof num);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left, y, left + pw, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%s</text>\n", left - 4, y + 3, num);
  }
  const double gw = groups ? pw / groups : pw, bw = (gw * 0.8) / (p->n_series ? p->n_series : 1);
  for (int g = 0; g < groups; g++) {
    const bench_device_result *d = &run->devices[g];
    for (int s = 0; s < p->n_series; s++) {
      double v = p->v[g][s], bh = ph * v / vmax, x = left + g * gw + gw * 0.1 + s * bw;
      if (!(v > 0)) continue;
      fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", x, top + ph - bh,
              bw * 0.92, bh, p->colors[s]);
      xml_text(f, p->names[s]);
      compact(v, num, sizeof num);
      fprintf(f, ": %.4g</title></rect>\n", v);
      fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%s</text>\n", x + bw * 0.46,
              top + ph - bh - 2, num);
    }
    char label[64];
    snprintf(label, sizeof label, "%d:%d %.26s", d->info->platform_index, d->info->device_index, d->info->name);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">", left + g * gw + gw / 2, top + ph + 13);
    xml_text(f, label);
    fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"#555\" text-anchor=\"middle\">%s%s</text>\n",
            left + g * gw + gw / 2, top + ph + 24, cls_device_kind_name(d->info->kind),
            d->stored_applied ? ", stored GEMM tuning" : "");
  }
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", left, top + ph, left + pw, top + ph);
  for (int s = 0; s < p->n_series; s++) {
    double lx = left + (s % 3) * (pw / 3), ly = top + ph + 40 + (s / 3) * 13;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" fill=\"%s\"/>", lx, ly - 8, p->colors[s]);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", lx + 12, ly);
    xml_text(f, p->names[s]);
    fprintf(f, "</text>\n");
  }
  fprintf(f, "</g>\n");
}

int bench_write_svg(const char *path, const bench_run *run, cls_error *err) {
  static panel flops, frames; /* large: not on the stack */
  memset(&flops, 0, sizeof flops);
  memset(&frames, 0, sizeof frames);
  flops.title = "GFLOP/s: FMA peak, SGEMM mix of a training step";
  frames.title = "training step: frames/s (20 ms of audio each)";
  bool any_tuned = false;
  for (int g = 0; g < run->n_devices; g++) any_tuned |= run->devices[g].tuned;
  add_series(&flops, peak_color, "measured FMA peak");
  for (int h = 0; h < run->n_n_hidden; h++) {
    char name[48];
    snprintf(name, sizeof name, "SGEMM H=%d", run->n_hidden[h]);
    add_series(&flops, hues[h][0], name);
    snprintf(name, sizeof name, "SGEMM H=%d, tuned", run->n_hidden[h]);
    if (any_tuned) add_series(&flops, hues[h][1], name);
    snprintf(name, sizeof name, "H=%d", run->n_hidden[h]);
    add_series(&frames, hues[h][0], name);
    snprintf(name, sizeof name, "H=%d, tuned", run->n_hidden[h]);
    if (any_tuned) add_series(&frames, hues[h][1], name);
  }
  for (int g = 0; g < run->n_devices && g < 16; g++) {
    const bench_device_result *d = &run->devices[g];
    flops.v[g][0] = d->have_peak ? d->peak.fma_gflops : 0;
    for (int h = 0; h < d->n_models; h++) {
      const bench_model_result *m = &d->models[h];
      int hs = 0;
      while (hs < run->n_n_hidden && run->n_hidden[hs] != m->n_hidden) hs++;
      if (!m->done || hs == run->n_n_hidden) continue;
      int stride = any_tuned ? 2 : 1;
      double ms, fl;
      gemm_step(m, m->gemm_ms, &ms, &fl);
      flops.v[g][1 + hs * stride] = bench_gflops(fl, ms);
      frames.v[g][hs * stride] = per_second(m->train.frames, m->train.ms);
      if (any_tuned && d->tuned) {
        double after = 0;
        for (int i = 0; i < d->tune.n_shapes; i++)
          if (d->tune_shapes[i].n_hidden == m->n_hidden) after += d->tune_shapes[i].calls * d->tune.after_ms[i];
        flops.v[g][2 + hs * stride] = bench_gflops(fl, after);
        if (m->have_train_after) frames.v[g][1 + hs * stride] = per_second(m->train_after.frames, m->train_after.ms);
      }
    }
  }
  cls_output *o = NULL; /* the output rule (clspeech/base.h) */
  if (cls_output_open(path, &o, err) != CLS_OK) return -1;
  FILE *f = cls_output_file(o);
  const double w = 1000, h = 460;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
             "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
             w, h, w, h);
  fprintf(f, "<text x=\"10\" y=\"18\" font-size=\"12\">clspeech %s bench: B=%d, T=%d, median of %d runs</text>\n",
          cls_version(), run->batch, run->time, run->runs);
  draw_panel(f, run, &flops, 0, 30, w / 2, h - 40);
  draw_panel(f, run, &frames, w / 2, 30, w / 2, h - 40);
  fprintf(f, "</svg>\n");
  return cls_output_commit(o, path, err) == CLS_OK ? 0 : -1;
}
