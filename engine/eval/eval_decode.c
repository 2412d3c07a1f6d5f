/* The host half of an evaluation (clspeech/evaluate.h): each utterance's kept logits (eval_logits.c)
 * decoded — CTC beam search, with or without a scorer, or greedy — into text, its WER/CER against its
 * transcript, then per set the corpus figures, the mean loss and DeepSpeech's best, median and worst
 * samples (cls_eval_select). cls_eval_decode. No engine and no shared state: the logits are only read,
 * so several threads may decode the same store at once; errors go to the caller's cls_error. */
#include <stdlib.h>
#include <string.h>

#include "eval/eval_parts.h"

cls_status cls_eval_sample_decode(const cls_eval_sample_logits *s, int n_classes, const cls_alphabet *alphabet,
                                  const cls_beam_options *beam, cls_eval_sample *r) {
  cls_ctc_decoder *d = NULL;
  cls_beam_options o = *beam;
  o.utf8_bytes = cls_alphabet_is_bytes(alphabet); /* bytes labels: whole UTF-8 characters only */
  cls_status st = cls_ctc_decoder_begin(n_classes, o.beam_width <= 1, &o, &d);
  if (st == CLS_OK) st = cls_ctc_decoder_feed(d, s->logits, s->frames, (size_t)n_classes);
  if (st == CLS_OK) st = cls_ctc_decoder_transcript(d, alphabet, &r->res);
  cls_ctc_decoder_free(d);
  if (st != CLS_OK) return st;
  r->src = strdup(s->src);
  r->wav_path = strdup(s->wav_path);
  r->loss = s->loss;
  if (!r->src || !r->wav_path) return CLS_ERR_OUT_OF_MEMORY;
  return cls_wer_sample_compute(r->src, r->res, &r->stats);
}

cls_status cls_eval_set_summarise(int report_count, bool by_cer, cls_eval_set_report *r, cls_error *err) {
  const int n = r->n_samples;
  cls_wer_sample *stats = malloc((size_t)(n ? n : 1) * sizeof *stats);
  r->best = malloc((size_t)(n ? 3 * n : 1) * sizeof *r->best);
  if (!stats || !r->best) {
    free(stats);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory for the report of %s", r->name);
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
  cls_status st = cls_eval_select(r->samples, n, report_count, by_cer, r->best, &r->n_best, r->median, &r->n_median,
                                  r->worst, &r->n_worst);
  return st == CLS_OK ? CLS_OK : cls_error_set(err, st, "choosing the report's samples of %s failed", r->name);
}

cls_status cls_eval_set_decode(const cls_eval_set_logits *set, int n_classes, const cls_alphabet *alphabet,
                               const cls_beam_options *beam, int report_count, bool by_cer, cls_eval_set_report *out,
                               cls_error *err) {
  const int n = set->n_samples;
  out->name = strdup(set->name);
  out->samples = calloc((size_t)(n ? n : 1), sizeof *out->samples);
  if (!out->name || !out->samples) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  out->n_samples = n;
  for (int i = 0; i < n; i++) {
    cls_status st = cls_eval_sample_decode(&set->samples[i], n_classes, alphabet, beam, &out->samples[i]);
    if (st != CLS_OK)
      return cls_error_set(err, st, "%s: decoding %s failed: %s", set->name, set->samples[i].wav_path,
                           cls_status_string(st));
  }
  return cls_eval_set_summarise(report_count, by_cer, out, err);
}

cls_status cls_eval_decode(const cls_eval_logits_store *logits, const cls_alphabet *alphabet,
                           const cls_beam_options *beam, int report_count, bool by_cer, cls_eval_report **out,
                           cls_error *err) {
  *out = NULL;
  if (!logits || !alphabet || !beam)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "decoding: no logits, alphabet or beam options");
  if (cls_alphabet_size(alphabet) + 1 != logits->n_classes)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "decoding: an alphabet of %d labels for logits of %d classes",
                         cls_alphabet_size(alphabet), logits->n_classes);
  if (report_count < 0)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "decoding: report_count %d is negative", report_count);
  cls_ctc_decoder *probe = NULL; /* the decoder's options checked before any work */
  cls_status st = cls_ctc_decoder_begin(logits->n_classes, beam->beam_width <= 1, beam, &probe);
  cls_ctc_decoder_free(probe);
  if (st != CLS_OK)
    return cls_error_set(err, st, "decoding: bad beam search options (width %d, cutoff_prob %g, cutoff_top_n %d)",
                         beam->beam_width, beam->cutoff_prob, beam->cutoff_top_n);
  cls_eval_report *r = calloc(1, sizeof *r);
  if (r) r->sets = calloc((size_t)(logits->n_sets ? logits->n_sets : 1), sizeof *r->sets);
  if (!r || !r->sets) {
    free(r);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  r->n_sets = logits->n_sets;
  for (int k = 0; st == CLS_OK && k < logits->n_sets; k++)
    st = cls_eval_set_decode(&logits->sets[k], logits->n_classes, alphabet, beam, report_count, by_cer, &r->sets[k],
                             err);
  if (st != CLS_OK) {
    cls_eval_report_free(r);
    return st;
  }
  *out = r;
  return CLS_OK;
}
