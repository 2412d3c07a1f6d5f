/* The device half of an evaluation (clspeech/evaluate.h): per test set (loaded here from CSV files, or
 * the caller's), one pass of the trainer without dropout (cls_trainer_evaluate) whose logits
 * are kept on the host per utterance — a batch's utterances copied out of its time-major block, a
 * streamed utterance gathered chunk by chunk — with its transcript, audio path and loss, for decoding
 * (eval_decode.c). cls_eval_logits and the store's freeing. It prints nothing; errors go to the
 * engine's error text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/log.h"
#include "eval/eval_parts.h"
#include "train/trainer.h"

/* One set's pass: what the callbacks need, and the first failure (the pass cannot be stopped from a
 * callback: later utterances are then skipped). */
typedef struct logits_pass {
  int n_classes;
  const cls_alphabet *alphabet;
  const cls_beam_options *beam;
  cls_eval_sample *decoded;        /* [n] decoded as they complete (cls_evaluate), or NULL: logits kept */
  int decode_failed;               /* the failure is the decoder's */
  const cls_dataset *ds;
  cls_eval_sample_logits *samples; /* [n] the set's */
  int capacity;                    /* frames allocated for the utterance being streamed */
  cls_status status;
  int failed;                      /* the utterance that failed */
  size_t bytes;                    /* logits kept so far */
} logits_pass;

static void fail_at(logits_pass *p, int index, cls_status st) {
  if (st == CLS_OK || p->status != CLS_OK) return;
  p->status = st;
  p->failed = index;
}

/* Utterance `index` complete with its loss: its transcript and path copied; decoded at once and its
 * logits freed when the pass decodes. */
static cls_status finish_sample(logits_pass *p, int index, double loss) {
  const cls_sample *x = cls_dataset_sample(p->ds, index);
  cls_eval_sample_logits *s = &p->samples[index];
  s->loss = loss;
  s->src = strdup(x->transcript);
  s->wav_path = strdup(x->path);
  if (!s->src || !s->wav_path) return CLS_ERR_OUT_OF_MEMORY;
  if (!p->decoded) {
    p->bytes += (size_t)s->frames * (size_t)p->n_classes * sizeof(float);
    return CLS_OK;
  }
  cls_status st = cls_eval_sample_decode(s, p->n_classes, p->alphabet, p->beam, &p->decoded[index]);
  free(s->logits);
  s->logits = NULL;
  p->decode_failed = st != CLS_OK;
  return st;
}

/* Room for `frames` frames of utterance s's logits (grown by doubling while it streams). */
static cls_status reserve(logits_pass *p, cls_eval_sample_logits *s, int frames) {
  if (frames <= p->capacity) return CLS_OK;
  int cap = p->capacity > 0 ? p->capacity : 64;
  while (cap < frames) cap = cap > INT32_MAX / 2 ? frames : cap * 2;
  float *grown = realloc(s->logits, (size_t)cap * (size_t)p->n_classes * sizeof *grown);
  if (!grown) return CLS_ERR_OUT_OF_MEMORY;
  s->logits = grown;
  p->capacity = cap;
  return CLS_OK;
}

/* A batch's logits [time*batch, C] time-major: utterance b is logits + b*C at stride batch*C. */
static void on_batch(void *user, int first, int batch, int time, const float *logits, const int *frames,
                     const float *losses) {
  logits_pass *p = user;
  const size_t C = (size_t)p->n_classes;
  (void)time;
  for (int b = 0; b < batch && p->status == CLS_OK; b++) {
    cls_eval_sample_logits *s = &p->samples[first + b];
    cls_status st = CLS_OK;
    s->frames = frames[b];
    if (frames[b] > 0) {
      s->logits = malloc((size_t)frames[b] * C * sizeof *s->logits);
      if (!s->logits) st = CLS_ERR_OUT_OF_MEMORY;
      for (int t = 0; st == CLS_OK && t < frames[b]; t++)
        memcpy(s->logits + (size_t)t * C, logits + ((size_t)t * (size_t)batch + (size_t)b) * C, C * sizeof *logits);
    }
    if (st == CLS_OK) st = finish_sample(p, first + b, losses[b]);
    fail_at(p, first + b, st);
  }
}

/* A streamed utterance: its chunks appended, finished when its loss comes. */
static void on_chunk(void *user, int index, int64_t first, int n, const float *logits, const float *loss) {
  logits_pass *p = user;
  cls_eval_sample_logits *s = &p->samples[index];
  const size_t C = (size_t)p->n_classes;
  cls_status st = p->status;
  if (st == CLS_OK && !loss && n > 0) {
    if (first != s->frames || s->frames > INT32_MAX - n) st = CLS_ERR_INVALID_ARGUMENT; /* chunks come in order */
    if (st == CLS_OK) st = reserve(p, s, s->frames + n);
    if (st == CLS_OK) {
      memcpy(s->logits + (size_t)s->frames * C, logits, (size_t)n * C * sizeof *logits);
      s->frames += n;
    }
  }
  if (st == CLS_OK && loss) st = finish_sample(p, index, *loss);
  if (loss || st != CLS_OK) p->capacity = 0;
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
  if (st != CLS_OK) return cls_fail_wrap(e, st, &err, NULL);
  char report[4096];
  cls_dataset_format_report(*owned, report, sizeof report);
  size_t len = strlen(report);
  if (len && report[len - 1] == '\n') report[len - 1] = '\0';
  cls_log(e, CLS_LOG_NOTICE, "test set %s: %s", in->csv_files, report);
  *ds = *owned;
  return CLS_OK;
}

/* The pass over an opened set: its utterances and frame counts handed to the trainer. */
static cls_status run_pass(cls_trainer *t, const cls_eval_request *req, const char *name, logits_pass *p) {
  cls_engine *e = cls_trainer_crew(t)->e;
  const int n = cls_dataset_size(p->ds);
  cls_utterance *utts = calloc((size_t)(n ? n : 1), sizeof *utts);
  int *frames = calloc((size_t)(n ? n : 1), sizeof *frames);
  cls_status st = utts && frames ? CLS_OK : cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %s", name);
  for (int i = 0; st == CLS_OK && i < n; i++) {
    const cls_sample *x = cls_dataset_sample(p->ds, i);
    utts[i] = (cls_utterance){x->path, x->labels, x->n_labels};
    frames[i] = x->frames;
  }
  if (st == CLS_OK) {
    const cls_eval_set es = {name, utts, n, frames};
    cls_trainer_eval_request pass = {&es, req->batch_size, req->phase ? req->phase : "Test", on_batch, on_chunk, p,
                                     req->progress, req->progress_user};
    st = cls_trainer_evaluate(t, &pass, NULL);
  }
  if (st == CLS_OK && p->status != CLS_OK)
    st = cls_fail(e, p->status, "%s: %s %s failed: %s", name, p->decode_failed ? "decoding" : "keeping the logits of",
                  utts[p->failed].path, cls_status_string(p->status));
  for (int i = 0; st == CLS_OK && i < n; i++) /* the pass hands every utterance over exactly once */
    if (!p->samples[i].src)
      st = cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "%s: %s was not evaluated", name, utts[i].path);
  free(utts);
  free(frames);
  return st;
}

cls_status cls_eval_set_logits_run(cls_trainer *t, const cls_alphabet *alphabet, const cls_eval_request *req, int k,
                                   cls_eval_set_logits *out, size_t *memory_bytes, cls_eval_set_report *decode_into) {
  cls_engine *e = cls_trainer_crew(t)->e;
  const cls_eval_input *in = &req->sets[k];
  char fallback[32];
  snprintf(fallback, sizeof fallback, "set %d", k);
  memset(out, 0, sizeof *out);
  out->name = strdup(in->name ? in->name : in->csv_files && !in->dataset ? in->csv_files : fallback);
  if (!out->name) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  const cls_dataset *ds = NULL;
  cls_dataset *owned = NULL;
  cls_status st = open_set(e, alphabet, req, k, &ds, &owned);
  if (st != CLS_OK) return st;
  const int n = cls_dataset_size(ds);
  out->samples = calloc((size_t)(n ? n : 1), sizeof *out->samples);
  if (out->samples) out->n_samples = n;
  if (decode_into) { /* the report's samples, filled as the utterances complete */
    decode_into->name = strdup(out->name);
    decode_into->samples = calloc((size_t)(n ? n : 1), sizeof *decode_into->samples);
    if (decode_into->samples) decode_into->n_samples = n;
  }
  if (!out->samples || (decode_into && (!decode_into->name || !decode_into->samples)))
    st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %s", out->name);
  logits_pass p = {cls_alphabet_size(alphabet) + 1, alphabet, &req->beam, decode_into ? decode_into->samples : NULL, 0,
                   ds, out->samples, 0, CLS_OK, -1, 0};
  if (st == CLS_OK) st = run_pass(t, req, out->name, &p);
  if (memory_bytes) *memory_bytes += p.bytes;
  cls_dataset_destroy(owned);
  return st;
}

void cls_eval_set_logits_clear(cls_eval_set_logits *set) {
  for (int i = 0; set->samples && i < set->n_samples; i++) {
    free(set->samples[i].wav_path);
    free(set->samples[i].src);
    free(set->samples[i].logits);
  }
  free(set->samples);
  free(set->name);
  memset(set, 0, sizeof *set);
}

cls_status cls_eval_logits(cls_trainer *t, const cls_alphabet *alphabet, const cls_eval_request *req,
                           cls_eval_logits_store **out) {
  *out = NULL;
  cls_status st = cls_eval_check_request(t, alphabet, req);
  if (st != CLS_OK) return st;
  cls_eval_logits_store *s = calloc(1, sizeof *s);
  if (s) s->sets = calloc((size_t)req->n_sets, sizeof *s->sets);
  if (!s || !s->sets) {
    free(s);
    return cls_fail(cls_trainer_crew(t)->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  s->n_classes = cls_alphabet_size(alphabet) + 1;
  s->n_sets = req->n_sets;
  for (int k = 0; st == CLS_OK && k < req->n_sets; k++)
    st = cls_eval_set_logits_run(t, alphabet, req, k, &s->sets[k], &s->memory_bytes, NULL);
  if (st != CLS_OK) {
    cls_eval_logits_free(s);
    return st;
  }
  *out = s;
  return CLS_OK;
}

void cls_eval_logits_free(cls_eval_logits_store *logits) {
  if (!logits) return;
  for (int k = 0; k < logits->n_sets; k++) cls_eval_set_logits_clear(&logits->sets[k]);
  free(logits->sets);
  free(logits);
}
