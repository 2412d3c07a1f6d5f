/* The evaluation pass of clspeech/evaluate.h: per test set (loaded here from CSV files, or the caller's),
 * one pass of the trainer without dropout (cls_trainer_evaluate_streaming) whose logits are decoded on
 * the host as they arrive — a batch's utterances one by one, a streamed utterance a chunk at a time —
 * then each sample's WER/CER against its transcript, the set's corpus figures and DeepSpeech's best,
 * median and worst samples (eval_report.c). It prints nothing; errors go to the engine's error text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/evaluate.h"
#include "device/log.h"
#include "train/trainer.h"

/* One set's pass: what the callbacks need, and the first decoding error (the pass cannot be stopped
 * from a callback: later utterances are then skipped). */
typedef struct set_pass {
  const cls_alphabet *alphabet;
  const cls_eval_request *req;
  int n_classes;
  const cls_dataset *ds;
  cls_eval_sample *samples;  /* [n] the set report's */
  cls_ctc_decoder *decoder;  /* the utterance being streamed */
  cls_status status;
  int failed;                /* the utterance whose decoding failed */
} set_pass;

static cls_status begin_decoder(const set_pass *p, cls_ctc_decoder **out) {
  return cls_ctc_decoder_begin(p->n_classes, p->req->beam.beam_width <= 1, &p->req->beam, out);
}

/* Utterance `index` decoded to `text` (taken) with its loss: the sample's figures. */
static cls_status finish_sample(set_pass *p, int index, char *text, double loss) {
  const cls_sample *x = cls_dataset_sample(p->ds, index);
  cls_eval_sample *r = &p->samples[index];
  r->res = text;
  r->src = strdup(x->transcript);
  r->wav_path = strdup(x->path);
  r->loss = loss;
  if (!r->src || !r->wav_path) return CLS_ERR_OUT_OF_MEMORY;
  return cls_wer_sample_compute(r->src, r->res, &r->stats);
}

static void fail_at(set_pass *p, int index, cls_status st) {
  if (st == CLS_OK || p->status != CLS_OK) return;
  p->status = st;
  p->failed = index;
}

/* A batch's logits [time*batch, C] time-major: utterance b is logits + b*C at stride batch*C. */
static void on_batch(void *user, int first, int batch, int time, const float *logits, const int *frames,
                     const float *losses) {
  set_pass *p = user;
  (void)time;
  for (int b = 0; b < batch && p->status == CLS_OK; b++) {
    cls_ctc_decoder *d = NULL;
    char *text = NULL;
    cls_status st = begin_decoder(p, &d);
    if (st == CLS_OK)
      st = cls_ctc_decoder_feed(d, logits + (size_t)b * p->n_classes, frames[b], (size_t)batch * p->n_classes);
    if (st == CLS_OK) st = cls_ctc_decoder_transcript(d, p->alphabet, &text);
    cls_ctc_decoder_free(d);
    if (st == CLS_OK) st = finish_sample(p, first + b, text, losses[b]);
    else free(text);
    fail_at(p, first + b, st);
  }
}

/* A streamed utterance: its decoder fed chunk by chunk, finished when its loss comes. */
static void on_chunk(void *user, int index, int64_t first, int n, const float *logits, const float *loss) {
  set_pass *p = user;
  (void)first;
  cls_status st = p->status;
  if (st == CLS_OK && !p->decoder) st = begin_decoder(p, &p->decoder);
  if (st == CLS_OK && !loss) st = cls_ctc_decoder_feed(p->decoder, logits, n, (size_t)p->n_classes);
  if (st == CLS_OK && loss) {
    char *text = NULL;
    st = cls_ctc_decoder_transcript(p->decoder, p->alphabet, &text);
    if (st == CLS_OK) st = finish_sample(p, index, text, *loss);
  }
  if (loss || st != CLS_OK) {
    cls_ctc_decoder_free(p->decoder);
    p->decoder = NULL;
  }
  fail_at(p, index, st);
}

/* The request's set `k` as a data set: the caller's, or loaded into *owned. */
static cls_status open_set(cls_engine *e, const cls_alphabet *alphabet, const cls_eval_request *req, int k,
                           const cls_dataset **ds, cls_dataset **owned) {
  const cls_eval_input *in = &req->sets[k];
  *owned = NULL;
  *ds = in->dataset;
  if (in->dataset) return CLS_OK;
  if (!in->csv_files || !*in->csv_files)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "evaluation set %d: neither a data set nor CSV files", k);
  cls_dataset_options o = req->dataset_options;
  if (!o.alphabet) o.alphabet = alphabet;
  cls_error err;
  cls_status st = cls_dataset_load(in->csv_files, &o, owned, &err);
  if (st != CLS_OK) return cls_fail(e, st, "%s", err.text);
  char report[4096];
  cls_dataset_format_report(*owned, report, sizeof report);
  size_t len = strlen(report);
  if (len && report[len - 1] == '\n') report[len - 1] = '\0';
  cls_log(e, CLS_LOG_NOTICE, "test set %s: %s", in->csv_files, report);
  *ds = *owned;
  return CLS_OK;
}

/* The set's figures and DeepSpeech's choice of samples, once every sample is in. */
static cls_status summarise(cls_engine *e, const cls_eval_request *req, cls_eval_set_report *r) {
  const int n = r->n_samples;
  cls_wer_sample *stats = malloc((size_t)(n ? n : 1) * sizeof *stats);
  r->best = malloc((size_t)(n ? 3 * n : 1) * sizeof *r->best);
  if (!stats || !r->best) {
    free(stats);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for the report of %s", r->name);
  }
  r->median = r->best + n;
  r->worst = r->best + 2 * n;
  double loss_sum = 0;
  for (int i = 0; i < n; i++) {
    stats[i] = r->samples[i].stats;
    loss_sum += r->samples[i].loss;
  }
  cls_wer_corpus(stats, n, &r->wer, &r->cer);
  free(stats);
  r->mean_loss = n ? loss_sum / n : 0.0;
  cls_status st = cls_eval_select(r->samples, n, req->report_count, req->by_cer, r->best, &r->n_best, r->median,
                                  &r->n_median, r->worst, &r->n_worst);
  return st == CLS_OK ? CLS_OK : cls_fail(e, st, "choosing the report's samples of %s failed", r->name);
}

/* One set: its pass, every utterance decoded, then its figures into r. */
static cls_status evaluate_set(cls_trainer *t, const cls_alphabet *alphabet, const cls_eval_request *req, int k,
                               cls_eval_set_report *r) {
  cls_engine *e = cls_trainer_crew(t)->e;
  const cls_eval_input *in = &req->sets[k];
  const cls_dataset *ds = NULL;
  cls_dataset *owned = NULL;
  char fallback[32];
  snprintf(fallback, sizeof fallback, "set %d", k);
  r->name = strdup(in->name ? in->name : in->csv_files && !in->dataset ? in->csv_files : fallback);
  if (!r->name) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cls_status st = open_set(e, alphabet, req, k, &ds, &owned);
  if (st != CLS_OK) return st;
  const int n = cls_dataset_size(ds);
  cls_utterance *utts = calloc((size_t)(n ? n : 1), sizeof *utts);
  int *frames = calloc((size_t)(n ? n : 1), sizeof *frames);
  r->samples = calloc((size_t)(n ? n : 1), sizeof *r->samples);
  if (!utts || !frames || !r->samples) st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %s", r->name);
  if (st == CLS_OK) r->n_samples = n;
  for (int i = 0; st == CLS_OK && i < n; i++) {
    const cls_sample *x = cls_dataset_sample(ds, i);
    utts[i] = (cls_utterance){x->path, x->labels, x->n_labels};
    frames[i] = x->frames;
  }
  set_pass p = {alphabet, req, cls_alphabet_size(alphabet) + 1, ds, r->samples, NULL, CLS_OK, -1};
  if (st == CLS_OK) {
    const cls_eval_set es = {r->name, utts, n, frames};
    double step_loss = 0;
    int64_t steps = 0;
    st = cls_trainer_evaluate_streaming(t, &es, req->batch_size, req->phase ? req->phase : "Test", on_batch, on_chunk,
                                        &p, req->progress, req->progress_user, &step_loss, &steps);
  }
  cls_ctc_decoder_free(p.decoder); /* an error mid-stream */
  if (st == CLS_OK && p.status != CLS_OK)
    st = cls_fail(e, p.status, "%s: decoding %s failed: %s", r->name, utts[p.failed].path, cls_status_string(p.status));
  for (int i = 0; st == CLS_OK && i < n; i++) /* the pass hands every utterance over exactly once */
    if (!r->samples[i].res)
      st = cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "%s: %s was not evaluated", r->name, utts[i].path);
  free(utts);
  free(frames);
  cls_dataset_destroy(owned);
  return st == CLS_OK ? summarise(e, req, r) : st;
}

cls_status cls_evaluate(cls_trainer *t, const cls_alphabet *alphabet, const cls_eval_request *req,
                        cls_eval_report **out) {
  *out = NULL;
  const cls_crew *c = cls_trainer_crew(t);
  cls_engine *e = c->e;
  if (!alphabet || !req || !req->sets || req->n_sets < 1)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "evaluation: no alphabet, or no set to evaluate");
  if (cls_alphabet_size(alphabet) + 1 != c->o.model.n_classes)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "evaluation: an alphabet of %d labels for a model of %d classes",
                    cls_alphabet_size(alphabet), c->o.model.n_classes);
  if (req->batch_size < 1 || req->batch_size > c->max_batch)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "evaluation batch size %d: the trainer takes 1 .. %d",
                    req->batch_size, c->max_batch);
  if (req->report_count < 0)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "evaluation report_count %d is negative", req->report_count);
  cls_ctc_decoder *probe = NULL; /* the decoder's options checked before any work */
  cls_status st = cls_ctc_decoder_begin(c->o.model.n_classes, req->beam.beam_width <= 1, &req->beam, &probe);
  cls_ctc_decoder_free(probe);
  if (st != CLS_OK)
    return cls_fail(e, st, "evaluation: bad beam search options (width %d, cutoff_prob %g, cutoff_top_n %d)",
                    req->beam.beam_width, req->beam.cutoff_prob, req->beam.cutoff_top_n);
  cls_eval_report *r = calloc(1, sizeof *r);
  if (r) r->sets = calloc((size_t)req->n_sets, sizeof *r->sets);
  if (!r || !r->sets) {
    free(r);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  r->n_sets = req->n_sets;
  for (int k = 0; st == CLS_OK && k < req->n_sets; k++) st = evaluate_set(t, alphabet, req, k, &r->sets[k]);
  if (st != CLS_OK) {
    cls_eval_report_free(r);
    return st;
  }
  *out = r;
  return CLS_OK;
}
