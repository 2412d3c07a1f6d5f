/* The evaluation report's host-side parts (clspeech/evaluate.h): DeepSpeech's choice of best, median
 * and worst samples, a decoder's best result as text, and freeing a report. The bottom of the folder:
 * it calls no other file of it, and has no device work and no trainer (the pass that fills a report is
 * evaluate.c's). */
#include <stdlib.h>

#include "clspeech/evaluate.h"

cls_status cls_eval_select(const cls_eval_sample *samples, int n, int report_count, bool by_cer, int *best,
                           int *n_best, int *median, int *n_median, int *worst, int *n_worst) {
  *n_best = *n_median = *n_worst = 0;
  cls_report_sections sec;
  cls_status st = cls_report_select(n, report_count, &sec);
  if (st != CLS_OK || n == 0) return st;
  cls_wer_sample *stats = malloc((size_t)n * sizeof *stats);
  double *losses = malloc((size_t)n * sizeof *losses);
  int *order = malloc((size_t)n * sizeof *order);
  if (!stats || !losses || !order) st = CLS_ERR_OUT_OF_MEMORY;
  for (int i = 0; st == CLS_OK && i < n; i++) {
    stats[i] = samples[i].stats;
    losses[i] = samples[i].loss;
  }
  if (st == CLS_OK) st = cls_report_order(stats, losses, n, by_cer, order);
  if (st == CLS_OK) {
    for (int i = sec.best_begin; i < sec.best_end; i++) best[(*n_best)++] = order[i];
    for (int i = sec.median_begin; i < sec.median_end; i++) median[(*n_median)++] = order[i];
    for (int i = sec.worst_begin; i < sec.worst_end; i++) worst[(*n_worst)++] = order[i];
  }
  free(stats);
  free(losses);
  free(order);
  return st;
}

cls_status cls_ctc_decoder_transcript(cls_ctc_decoder *decoder, const cls_alphabet *alphabet, char **text) {
  *text = NULL;
  cls_beam_result best;
  int got = 0;
  cls_status st = cls_ctc_decoder_finish(decoder, &best, 1, &got);
  if (st != CLS_OK) return st;
  const int length = got > 0 ? best.length : 0;
  const size_t cap = (size_t)length * 4 + 1; /* a label is one codepoint: at most 4 bytes of UTF-8 */
  char *out = malloc(cap);
  if (!out) st = CLS_ERR_OUT_OF_MEMORY;
  if (st == CLS_OK) {
    out[0] = '\0';
    if (length > 0) st = cls_alphabet_decode(alphabet, best.labels, length, out, cap);
  }
  cls_beam_results_free(&best, got);
  if (st != CLS_OK) {
    free(out);
    return st;
  }
  *text = out;
  return CLS_OK;
}

void cls_eval_report_free(cls_eval_report *report) {
  if (!report) return;
  for (int s = 0; s < report->n_sets; s++) {
    cls_eval_set_report *set = &report->sets[s];
    for (int i = 0; set->samples && i < set->n_samples; i++) {
      free(set->samples[i].wav_path);
      free(set->samples[i].src);
      free(set->samples[i].res);
    }
    free(set->samples);
    free(set->best); /* median and worst share its allocation */
    free(set->name);
  }
  free(report->sets);
  free(report);
}
