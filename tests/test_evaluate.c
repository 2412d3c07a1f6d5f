/* The public evaluation call (clspeech/evaluate.h). DeepSpeech's choice of best, median and worst
 * samples (cls_eval_select) on hand-made samples whose report order is worked out by hand. Then
 * cls_evaluate on a checkpoint made here whose weights are all zero but the output bias, so that the
 * network gives the same logits at every frame whatever the audio: every utterance decodes to "e"
 * (greedy and beam search), the WER/CER of the known transcripts are known exactly (LDC93S1: 51 of 52
 * characters, 11 of 11 words; formats.csv's "eight two" 8/9, "four eight five seven" 20/21) and the
 * LDC93S1 loss is a CTC loss of constant log-probabilities, computed here in double (within 2e-6
 * relative: the device's float32 CTC, as test_ctc bounds it). The same on a trainer too short for the
 * long utterances, which streams them: the same transcripts and losses within 2e-6 relative. Bad
 * requests are refused with their reason. Evaluation in two halves: cls_eval_logits + cls_eval_decode
 * give exactly cls_evaluate's report (batched and streamed); on a store of pseudo-random logits, four
 * threads decoding it at once (beam search) give exactly the single-threaded reports; a NaN logit and a
 * wrong alphabet are refused, naming the utterance. Needs data. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "data_present.h"
#include "test_rng.h"
#include "clspeech/clspeech.h"
#include "clspeech/evaluate.h"
#include "clspeech/model.h"
#include "data_files.h"

#define FORMATS CLS_TEST_DATA "/formats/formats.csv"

enum { N_HIDDEN = 16, N_CLASSES = 29 };
static const double E_BIAS = 10.0; /* the output bias of 'e'; every other class 0 */

/* ---- the pure selection ---- */

static cls_eval_sample sample(double wer, double cer, double loss) {
  cls_eval_sample s;
  memset(&s, 0, sizeof s);
  s.stats.wer = wer;
  s.stats.cer = cer;
  s.loss = loss;
  return s;
}

static void check_list(const char *what, const int *got, int n_got, const int *want, int n_want) {
  int same = n_got == n_want;
  for (int i = 0; same && i < n_want; i++) same = got[i] == want[i];
  char g[128] = "", w[128] = "";
  for (int i = 0; i < n_got && i < 16; i++) snprintf(g + strlen(g), sizeof g - strlen(g), " %d", got[i]);
  for (int i = 0; i < n_want; i++) snprintf(w + strlen(w), sizeof w - strlen(w), " %d", want[i]);
  CHECK(same, "%s: got [%s ], expected [%s ]", what, g, w);
}

static void test_select(void) {
  /* Report order: WER ascending, then loss descending, then the original position:
   * WER 0: #3 (loss 8), #1 (5); 0.25: #5; 0.5: #0, #4 (both loss 10: position); 1: #6 (7), #2 (3). */
  const cls_eval_sample s[7] = {sample(0.5, 0.1, 10), sample(0.0, 0.9, 5), sample(1.0, 0.3, 3), sample(0.0, 0.5, 8),
                                sample(0.5, 0.2, 10), sample(0.25, 0.0, 1), sample(1.0, 0.3, 7)};
  int best[7], median[7], worst[7], nb = -1, nm = -1, nw = -1;
  CHECK_INT(cls_eval_select(s, 7, 2, false, best, &nb, median, &nm, worst, &nw), CLS_OK);
  /* order 3 1 5 0 4 6 2; median = order[7//2 - 1 : 7//2 + 1] = order[2:4] */
  check_list("best by WER", best, nb, (const int[]){3, 1}, 2);
  check_list("median by WER", median, nm, (const int[]){5, 0}, 2);
  check_list("worst by WER", worst, nw, (const int[]){6, 2}, 2);
  /* By CER: 0.0 #5; 0.1 #0; 0.2 #4; 0.3 #6 (loss 7), #2 (3); 0.5 #3; 0.9 #1. */
  CHECK_INT(cls_eval_select(s, 7, 2, true, best, &nb, median, &nm, worst, &nw), CLS_OK);
  check_list("best by CER", best, nb, (const int[]){5, 0}, 2);
  check_list("median by CER", median, nm, (const int[]){4, 6}, 2);
  check_list("worst by CER", worst, nw, (const int[]){3, 1}, 2);
  /* report_count 3 over 7: median order[3 - 1 : 3 + 2] = order[2:5]. */
  CHECK_INT(cls_eval_select(s, 7, 3, false, best, &nb, median, &nm, worst, &nw), CLS_OK);
  check_list("best of 3", best, nb, (const int[]){3, 1, 5}, 3);
  check_list("median of 3", median, nm, (const int[]){5, 0, 4}, 3);
  check_list("worst of 3", worst, nw, (const int[]){4, 6, 2}, 3);
  /* Two samples, report_count 5 (Python's slices): best and worst both, the median order[-1:4] = order[1:2]. */
  const cls_eval_sample two[2] = {sample(1.0, 1.0, 2), sample(0.0, 0.0, 1)};
  CHECK_INT(cls_eval_select(two, 2, 5, false, best, &nb, median, &nm, worst, &nw), CLS_OK);
  check_list("best of two", best, nb, (const int[]){1, 0}, 2);
  check_list("median of two", median, nm, (const int[]){0}, 1);
  check_list("worst of two", worst, nw, (const int[]){1, 0}, 2);
  /* report_count 0: no best, no median, every sample as worst (samples[-0:]). */
  CHECK_INT(cls_eval_select(two, 2, 0, false, best, &nb, median, &nm, worst, &nw), CLS_OK);
  CHECK(nb == 0 && nm == 0, "report_count 0: %d best, %d median", nb, nm);
  check_list("worst of report_count 0", worst, nw, (const int[]){1, 0}, 2);
  /* A NaN loss sorts first among equal WERs (as the highest loss). */
  const cls_eval_sample nan3[3] = {sample(0.5, 0, 4), sample(0.5, 0, NAN), sample(0.5, 0, INFINITY)};
  CHECK_INT(cls_eval_select(nan3, 3, 1, false, best, &nb, median, &nm, worst, &nw), CLS_OK);
  check_list("NaN first", best, nb, (const int[]){1}, 1);
  check_list("finite last", worst, nw, (const int[]){0}, 1);
  CHECK_INT(cls_eval_select(two, 2, -1, false, best, &nb, median, &nm, worst, &nw), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_eval_select(two, 0, 5, false, best, &nb, median, &nm, worst, &nw), CLS_OK);
  CHECK(nb == 0 && nm == 0 && nw == 0, "no samples: %d %d %d", nb, nm, nw);
}

/* ---- the evaluation call ---- */

/* CTC loss (-ln P(labels)) of T frames that all have the log-probabilities lp[C] (blank C-1), in double. */
static double ctc_constant(const int32_t *labels, int L, const double *lp, int C, int T) {
  const int S = 2 * L + 1;
  double *a = malloc((size_t)S * sizeof *a), *b = malloc((size_t)S * sizeof *b);
  for (int s = 0; s < S; s++) a[s] = -INFINITY;
  a[0] = lp[C - 1];
  a[1] = lp[labels[0]];
  for (int t = 1; t < T; t++) {
    for (int s = 0; s < S; s++) {
      const int k = s % 2 ? labels[s / 2] : C - 1;
      double m = a[s], x[3] = {a[s], s > 0 ? a[s - 1] : -INFINITY, -INFINITY};
      if (s > 1 && s % 2 && labels[s / 2] != labels[s / 2 - 1]) x[2] = a[s - 2];
      for (int i = 1; i < 3; i++) m = x[i] > m ? x[i] : m;
      double sum = 0;
      for (int i = 0; i < 3; i++) sum += m == -INFINITY ? 0 : exp(x[i] - m);
      b[s] = m == -INFINITY ? -INFINITY : m + log(sum) + lp[k];
    }
    double *swap = a;
    a = b;
    b = swap;
  }
  double m = fmax(a[S - 1], a[S - 2]);
  double loss = -(m + log(exp(a[S - 1] - m) + exp(a[S - 2] - m)));
  free(a);
  free(b);
  return loss;
}

/* A checkpoint in dir: every weight and bias 0 but layer_6/bias[label] = E_BIAS. */
static int write_checkpoint(const char *dir, int label) {
  cls_model_config cfg = cls_model_config_deepspeech(N_HIDDEN, N_CLASSES);
  cls_param_view v[CLS_MODEL_N_TENSORS];
  size_t n = cls_model_layout(&cfg, v);
  float *p = calloc(n, sizeof *p), *m = calloc(n, sizeof *m), *vv = calloc(n, sizeof *vv);
  for (int i = 0; p && i < CLS_MODEL_N_TENSORS; i++)
    if (!strcmp(v[i].name, "layer_6/bias")) p[v[i].offset + (size_t)label] = (float)E_BIAS;
  cls_checkpoint_vars st;
  memset(&st, 0, sizeof st);
  st.learning_rate = 0.001f;
  st.adam = cls_adam_state_init(0.9f, 0.999f);
  char path[1024];
  cls_error err;
  cls_error_clear(&err);
  cls_status s = p && m && vv ? cls_checkpoint_save_in(dir, "train", 1, &cfg, p, m, vv, &st, NULL, 0, path, sizeof path, &err)
                              : CLS_ERR_OUT_OF_MEMORY;
  CHECK(s == CLS_OK, "checkpoint: %s", err.text);
  free(p);
  free(m);
  free(vv);
  return s == CLS_OK;
}

static int progress_finished;
static void on_progress(void *user, const cls_progress *p) {
  (void)user;
  if (p->finished && !strcmp(p->phase, "Test")) progress_finished++;
}

static cls_trainer *make_trainer(cls_engine *e, int dev, const char *dir, int max_batch, int max_frames) {
  cls_train_options o = cls_train_options_default(N_HIDDEN, N_CLASSES);
  o.load_checkpoint_dir = dir;
  cls_trainer *t = NULL;
  cls_status st = cls_trainer_create(e, &dev, 1, &o, max_batch, max_frames, 64, &t);
  CHECK(st == CLS_OK, "trainer: %s", cls_engine_error(e));
  if (st == CLS_OK) st = cls_trainer_load(t, CLS_LOAD_LAST, 1);
  CHECK(st == CLS_OK, "load: %s", cls_engine_error(e));
  return t;
}

/* The figures of a sample decoded to "e": every character but one 'e' is an edit; no word matches. */
static void check_e_sample(const cls_eval_sample *s) {
  const int chars = (int)strlen(s->src), words = !strcmp(s->src, LDC_TEXT) ? 11 : !strcmp(s->src, "eight two") ? 2 : 4;
  CHECK(!strcmp(s->res, "e"), "%s decoded to \"%s\", expected \"e\"", s->wav_path, s->res);
  CHECK_INT(s->stats.char_distance, chars - 1);
  CHECK_INT(s->stats.char_length, chars);
  CHECK_INT(s->stats.word_distance, words);
  CHECK_INT(s->stats.word_length, words);
  CHECK(s->stats.cer == (double)(chars - 1) / chars && s->stats.wer == 1.0, "%s: CER %g WER %g", s->wav_path,
        s->stats.cer, s->stats.wer);
  CHECK(isfinite(s->loss) && s->loss > 0, "%s: loss %g", s->wav_path, s->loss);
}

/* Runs the request and checks what every report must hold; returns the report. */
static cls_eval_report *run(cls_engine *e, cls_trainer *t, const cls_alphabet *a, const cls_eval_request *req,
                            double ldc_loss) {
  cls_eval_report *r = NULL;
  progress_finished = 0;
  cls_status st = cls_evaluate(t, a, req, &r);
  CHECK(st == CLS_OK && r, "evaluate: %s", cls_engine_error(e));
  if (!r) return NULL;
  CHECK_INT(r->n_sets, 2);
  CHECK_INT(progress_finished, 2);
  const cls_eval_set_report *ldc = &r->sets[0], *fm = &r->sets[1];
  CHECK(!strcmp(ldc->name, "ldc") && !strcmp(fm->name, FORMATS), "names %s, %s", ldc->name, fm->name);
  CHECK_INT(ldc->n_samples, 1);
  CHECK_INT(fm->n_samples, 6);
  if (ldc->n_samples != 1 || fm->n_samples != 6) return r;
  const cls_eval_sample *s = &ldc->samples[0];
  check_e_sample(s);
  CHECK(!strcmp(s->src, LDC_TEXT), "src %s", s->src);
  CHECK(strstr(s->wav_path, "LDC93S1.wav") != NULL, "wav %s", s->wav_path);
  CHECK(fabs(s->loss - ldc_loss) <= 2e-6 * ldc_loss, "LDC93S1 loss %.6f, expected %.6f (2e-6 relative)", s->loss,
        ldc_loss);
  CHECK(ldc->wer == 1.0 && ldc->cer == 51.0 / 52.0 && ldc->mean_loss == s->loss, "LDC93S1 set: WER %g CER %g loss %g",
        ldc->wer, ldc->cer, ldc->mean_loss);
  CHECK(ldc->n_best == 1 && ldc->n_median == 1 && ldc->n_worst == 1 && !ldc->best[0] && !ldc->median[0] &&
            !ldc->worst[0],
        "one sample: best/median/worst %d/%d/%d", ldc->n_best, ldc->n_median, ldc->n_worst);
  double sum = 0;
  for (int i = 0; i < 6; i++) {
    check_e_sample(&fm->samples[i]);
    sum += fm->samples[i].loss;
  }
  /* 3 x "eight two" (8 of 9) and 3 x "four eight five seven" (20 of 21) */
  CHECK(fm->wer == 1.0 && fabs(fm->cer - 28.0 / 30.0) < 1e-15, "formats: WER %g CER %.17g", fm->wer, fm->cer);
  CHECK(fabs(fm->mean_loss - sum / 6) <= 1e-12 * sum, "formats: mean loss %g, samples' mean %g", fm->mean_loss,
        sum / 6);
  int best[6], median[6], worst[6], nb, nm, nw;
  CHECK_INT(cls_eval_select(fm->samples, 6, 2, false, best, &nb, median, &nm, worst, &nw), CLS_OK);
  check_list("formats best", fm->best, fm->n_best, best, nb);
  check_list("formats median", fm->median, fm->n_median, median, nm);
  check_list("formats worst", fm->worst, fm->n_worst, worst, nw);
  CHECK(nb == 2 && nm == 2 && nw == 2, "report_count 2 of 6: %d %d %d", nb, nm, nw);
  return r;
}

/* ---- evaluation in two halves ---- */

/* Two reports equal in every field (the doubles bit for bit). */
static void check_same_report(const char *what, const cls_eval_report *a, const cls_eval_report *b) {
  CHECK(a && b && a->n_sets == b->n_sets, "%s: sets %d and %d", what, a ? a->n_sets : -1, b ? b->n_sets : -1);
  for (int k = 0; a && b && k < a->n_sets && k < b->n_sets; k++) {
    const cls_eval_set_report *x = &a->sets[k], *y = &b->sets[k];
    CHECK(!strcmp(x->name, y->name) && x->n_samples == y->n_samples && x->wer == y->wer && x->cer == y->cer &&
              x->mean_loss == y->mean_loss,
          "%s: set %d: %s %d WER %.17g CER %.17g loss %.17g against %s %d %.17g %.17g %.17g", what, k, x->name,
          x->n_samples, x->wer, x->cer, x->mean_loss, y->name, y->n_samples, y->wer, y->cer, y->mean_loss);
    if (x->n_samples != y->n_samples) continue;
    for (int i = 0; i < x->n_samples; i++) {
      const cls_eval_sample *p = &x->samples[i], *q = &y->samples[i];
      CHECK(!strcmp(p->wav_path, q->wav_path) && !strcmp(p->src, q->src) && !strcmp(p->res, q->res) &&
                p->loss == q->loss && !memcmp(&p->stats, &q->stats, sizeof p->stats),
            "%s: set %d sample %d: \"%s\" loss %.9g against \"%s\" loss %.9g", what, k, i, p->res, p->loss, q->res,
            q->loss);
    }
    check_list(what, x->best, x->n_best, y->best, y->n_best);
    check_list(what, x->median, x->n_median, y->median, y->n_median);
    check_list(what, x->worst, x->n_worst, y->worst, y->n_worst);
  }
}

/* cls_eval_logits + cls_eval_decode against cls_evaluate's report for the same request. */
static void check_two_halves(cls_engine *e, cls_trainer *t, const cls_alphabet *a, const cls_eval_request *req,
                             const cls_eval_report *want, const char *what) {
  cls_eval_logits_store *logits = NULL;
  cls_status st = cls_eval_logits(t, a, req, &logits);
  CHECK(st == CLS_OK && logits, "%s: eval_logits: %s", what, cls_engine_error(e));
  if (!logits) return;
  size_t bytes = 0;
  for (int k = 0; k < logits->n_sets; k++)
    for (int i = 0; i < logits->sets[k].n_samples; i++)
      bytes += (size_t)logits->sets[k].samples[i].frames * N_CLASSES * sizeof(float);
  CHECK(logits->n_classes == N_CLASSES && logits->memory_bytes == bytes && bytes > 0, "%s: %d classes, %zu bytes of %zu",
        what, logits->n_classes, logits->memory_bytes, bytes);
  cls_eval_report *got = NULL;
  cls_error err = {0};
  st = cls_eval_decode(logits, a, &req->beam, req->report_count, req->by_cer, &got, &err);
  CHECK(st == CLS_OK, "%s: eval_decode: %s", what, err.text);
  check_same_report(what, want, got);
  cls_eval_report_free(got);
  cls_eval_logits_free(logits);
}

/* A store of pseudo-random logits (test_rng.h): 2 sets of 7 utterances of 40 .. 160 frames, each
 * frame favouring one class by a random margin, transcripts of a few words. */

static cls_eval_logits_store *random_store(void) {
  static const char *texts[] = {"she had your", "dark suit", "in greasy wash water", "all year", "eight two", "e"};
  cls_eval_logits_store *s = calloc(1, sizeof *s);
  s->n_classes = N_CLASSES;
  s->n_sets = 2;
  s->sets = calloc(2, sizeof *s->sets);
  for (int k = 0; k < 2; k++) {
    cls_eval_set_logits *set = &s->sets[k];
    set->name = strdup(k ? "random b" : "random a");
    set->n_samples = 7;
    set->samples = calloc(7, sizeof *set->samples);
    for (int i = 0; i < 7; i++) {
      cls_eval_sample_logits *x = &set->samples[i];
      char path[32];
      snprintf(path, sizeof path, "random-%d-%d.wav", k, i);
      x->wav_path = strdup(path);
      x->src = strdup(texts[(k * 7 + i) % 6]);
      x->loss = 10.0 * uniform01();
      x->frames = 40 + (int)(120 * uniform01());
      x->logits = malloc((size_t)x->frames * N_CLASSES * sizeof *x->logits);
      for (int t = 0; t < x->frames; t++) {
        const int top = (int)(N_CLASSES * uniform01());
        for (int c = 0; c < N_CLASSES; c++)
          x->logits[t * N_CLASSES + c] = (float)(2.0 * uniform01() + (c == top ? 4.0 * uniform01() : 0.0));
      }
      s->memory_bytes += (size_t)x->frames * N_CLASSES * sizeof(float);
    }
  }
  return s;
}

typedef struct decode_job {
  const cls_eval_logits_store *logits;
  const cls_alphabet *alphabet;
  cls_beam_options beam;
  cls_eval_report *report;
  cls_status status;
  cls_error err;
} decode_job;

static void *decode_thread(void *user) {
  decode_job *j = user;
  j->status = cls_eval_decode(j->logits, j->alphabet, &j->beam, 3, false, &j->report, &j->err);
  return NULL;
}

/* Four threads decoding the same store at once (two beam widths, each twice) give exactly what one
 * thread alone gives; bad input is refused with the utterance named. */
static void test_decode_threads(const cls_alphabet *a) {
  cls_eval_logits_store *s = random_store();
  decode_job alone[2], jobs[4];
  for (int w = 0; w < 2; w++) {
    alone[w] = (decode_job){s, a, cls_beam_options_default(), NULL, CLS_OK, {0}};
    alone[w].beam.beam_width = w ? 64 : 8;
    decode_thread(&alone[w]);
    CHECK(alone[w].status == CLS_OK, "decode alone: %s", alone[w].err.text);
  }
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = alone[i % 2];
    jobs[i].report = NULL;
    CHECK_INT(pthread_create(&th[i], NULL, decode_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) {
    CHECK(jobs[i].status == CLS_OK, "decode thread %d: %s", i, jobs[i].err.text);
    check_same_report(i % 2 ? "beam 64, threads" : "beam 8, threads", alone[i % 2].report, jobs[i].report);
    cls_eval_report_free(jobs[i].report);
  }
  int words = 0;
  for (int i = 0; alone[1].report && i < alone[1].report->sets[0].n_samples; i++)
    words += (int)strlen(alone[1].report->sets[0].samples[i].res) > 0;
  CHECK(words >= 5, "beam 64 decoded only %d of 7 random utterances to text", words);
  printf("  random logits: %zu bytes, beam 64 WER %.3f / %.3f\n", s->memory_bytes,
         alone[1].report ? alone[1].report->sets[0].wer : -1.0, alone[1].report ? alone[1].report->sets[1].wer : -1.0);
  for (int w = 0; w < 2; w++) cls_eval_report_free(alone[w].report);

  cls_error err = {0};
  cls_eval_report *r = (cls_eval_report *)s; /* not NULL, so that the call must clear it */
  s->sets[1].samples[3].logits[5] = NAN;
  cls_beam_options beam = cls_beam_options_default();
  beam.beam_width = 8;
  CHECK_INT(cls_eval_decode(s, a, &beam, 3, false, &r, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK(r == NULL, "a failed decoding leaves a report");
  CHECK_CONTAINS(err.text, "random b: decoding random-1-3.wav failed");
  cls_alphabet *small = NULL;
  CHECK_INT(cls_alphabet_parse("a\n \n", 4, "small", &small, NULL), CLS_OK);
  CHECK_INT(cls_eval_decode(s, small, &beam, 3, false, &r, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "an alphabet of 2 labels for logits of 29 classes");
  cls_alphabet_destroy(small);
  cls_eval_logits_free(s);
}

static void test_evaluate(cls_engine *e, int dev, const cls_alphabet *a, const char *dir, const cls_dataset *ldc) {
  const int e_label = cls_alphabet_index(a, 'e');
  if (!write_checkpoint(dir, e_label)) return;
  double lp[N_CLASSES];
  const double lse = log(exp(E_BIAS) + (N_CLASSES - 1));
  for (int k = 0; k < N_CLASSES; k++) lp[k] = (k == e_label ? E_BIAS : 0.0) - lse;
  const cls_sample *x = cls_dataset_sample(ldc, 0);
  const double ldc_loss = ctc_constant(x->labels, x->n_labels, lp, N_CLASSES, x->frames);
  printf("  LDC93S1: %d frames, reference loss %.6f\n", x->frames, ldc_loss);

  const cls_eval_input sets[2] = {{"ldc", ldc, NULL}, {NULL, NULL, FORMATS}};
  cls_eval_request req = cls_eval_request_default();
  req.sets = sets;
  req.n_sets = 2;
  req.batch_size = 3;
  req.beam.beam_width = 1; /* greedy */
  req.report_count = 2;
  req.progress = on_progress;

  cls_trainer *t = make_trainer(e, dev, dir, 3, x->frames + 1); /* every utterance in batches */
  if (!t) return;
  cls_eval_report *greedy = run(e, t, a, &req, ldc_loss);
  check_two_halves(e, t, a, &req, greedy, "greedy, batched");
  req.beam.beam_width = 16;
  cls_eval_report *beam = run(e, t, a, &req, ldc_loss);
  check_two_halves(e, t, a, &req, beam, "beam 16, batched");
  cls_eval_report_free(beam);

  /* Bad requests: nothing comes back, the reason does. */
  cls_eval_report *r = (cls_eval_report *)&req; /* not NULL, so that the call must clear it */
  req.batch_size = 4;
  CHECK_INT(cls_evaluate(t, a, &req, &r), CLS_ERR_INVALID_ARGUMENT);
  CHECK(r == NULL, "a refused request leaves a report");
  CHECK_CONTAINS(cls_engine_error(e), "batch size 4: the trainer takes 1 .. 3");
  req.batch_size = 1;
  req.report_count = -1;
  CHECK_INT(cls_evaluate(t, a, &req, &r), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "report_count -1");
  req.report_count = 5;
  const cls_eval_input missing = {NULL, NULL, "/nonexistent/test.csv"};
  req.sets = &missing;
  req.n_sets = 1;
  CHECK_INT(cls_evaluate(t, a, &req, &r), CLS_ERR_IO);
  CHECK_CONTAINS(cls_engine_error(e), "/nonexistent/test.csv");
  CHECK(r == NULL, "a failed evaluation leaves a report");
  cls_trainer_destroy(t);

  /* A trainer of 40 frames: LDC93S1 (145) and digits-2 (80) stream in chunks, digits-1 runs in batches. */
  req.sets = sets;
  req.n_sets = 2;
  req.batch_size = 2;
  req.beam.beam_width = 1;
  req.report_count = 2;
  t = make_trainer(e, dev, dir, 2, 40);
  cls_eval_report *streamed = t ? run(e, t, a, &req, ldc_loss) : NULL;
  if (streamed) check_two_halves(e, t, a, &req, streamed, "greedy, streamed");
  for (int k = 0; greedy && streamed && k < 2; k++) {
    const cls_eval_set_report *g = &greedy->sets[k], *s = &streamed->sets[k];
    for (int i = 0; i < g->n_samples && i < s->n_samples; i++)
      CHECK(!strcmp(g->samples[i].wav_path, s->samples[i].wav_path) && !strcmp(g->samples[i].res, s->samples[i].res) &&
                fabs(g->samples[i].loss - s->samples[i].loss) <= 2e-6 * g->samples[i].loss,
            "%s: batched %.6f \"%s\", streamed %.6f \"%s\"", g->samples[i].wav_path, g->samples[i].loss,
            g->samples[i].res, s->samples[i].loss, s->samples[i].res);
  }
  if (streamed) printf("  LDC93S1 loss batched %.6f, streamed %.6f\n", greedy ? greedy->sets[0].samples[0].loss : 0.0,
                       streamed->sets[0].samples[0].loss);
  cls_eval_report_free(streamed);
  cls_eval_report_free(greedy);
  cls_trainer_destroy(t);
}

int main(void) {
  if (!data_present()) return check_finish("test_evaluate");
  test_select();
  cls_alphabet *a = NULL;
  cls_dataset *ldc = shared_dataset(SMOKE "/ldc93s1.csv", &a);
  if (a) test_decode_threads(a);
  cls_engine *e = NULL;
  CHECK_INT(cls_engine_create(NULL, &e), CLS_OK);
  int sel[8], n_sel = 0;
  CHECK_INT(cls_engine_select(e, "all", sel, 8, &n_sel), CLS_OK);
  CHECK_INT(cls_engine_prepare(e, sel, &n_sel), CLS_OK);
  char dir[] = "/tmp/clspeech-evaluate-XXXXXX";
  if (ldc && n_sel > 0 && mkdtemp(dir)) {
    printf("device %s\n", cls_engine_device(e, sel[0])->name);
    test_evaluate(e, sel[0], a, dir, ldc);
    char path[256];
    snprintf(path, sizeof path, "%s/train-0.safetensors", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/checkpoint", dir);
    unlink(path);
    rmdir(dir);
  }
  cls_engine_destroy(e);
  cls_dataset_destroy(ldc);
  cls_alphabet_destroy(a);
  return check_finish("test_evaluate");
}
