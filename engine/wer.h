/* Evaluation metrics as DeepSpeech 0.9's evaluate.py and util/evaluate_tools.py compute them:
 * Levenshtein distances over Unicode codepoints (UTF-8 text) and over whitespace-separated words,
 * per-sample CER/WER, the clipped corpus WER/CER (wer_cer_batch), and the order and selection of the
 * samples its report prints (best, median and worst). */
#ifndef CLS_WER_H
#define CLS_WER_H

#include <stdbool.h>
#include <stdint.h>

#include "clspeech.h"

/* Levenshtein distance (insertion, deletion and substitution each cost 1) between two sequences of
 * integers. */
cls_status cls_levenshtein(const int32_t *a, int na, const int32_t *b, int nb, int *distance);

/* The codepoints of NUL-terminated UTF-8 text: writes up to `cap` of them to `out` (may be NULL when
 * cap is 0) and their total number to *n. CLS_ERR_INVALID_ARGUMENT for text that is not valid UTF-8
 * (a truncated or overlong sequence, a surrogate, a value above U+10FFFF). */
cls_status cls_utf8_codepoints(const char *text, int32_t *out, int cap, int *n);

/* Whether a codepoint is whitespace as Python's str.isspace() says (what str.split() splits on):
 * U+0009..U+000D, U+001C..U+001F, space, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029,
 * U+202F, U+205F, U+3000. */
bool cls_is_space(int32_t codepoint);

/* Distance between the codepoint sequences of two UTF-8 texts, and the number of codepoints of `a`
 * (the ground truth): DeepSpeech's levenshtein(gt, pred) and len(gt). */
cls_status cls_char_distance(const char *a, const char *b, int *distance, int *length_a);

/* Distance between the word sequences of two UTF-8 texts (split on runs of whitespace, as Python's
 * str.split() with no argument), and the number of words of `a`: levenshtein(gt.split(), pred.split())
 * and len(gt.split()). Words are equal when their codepoints are. */
cls_status cls_word_distance(const char *a, const char *b, int *distance, int *words_a);

/* One sample's figures (evaluate_tools.py's process_decode_result). cer = char_distance/char_length
 * and wer = word_distance/word_length; they are not clipped and can exceed 1. DeepSpeech divides by
 * zero for a ground truth without characters or words (an exception); here a zero length counts as 1,
 * so that rate is the distance itself (0 when the prediction is empty too). */
typedef struct cls_wer_sample {
  int char_distance, char_length;
  int word_distance, word_length;
  double cer, wer;
} cls_wer_sample;

cls_status cls_wer_sample_compute(const char *ground_truth, const char *prediction, cls_wer_sample *out);

/* Corpus figures (wer_cer_batch): WER = sum of word distances / sum of word lengths and CER = sum of
 * char distances / sum of char lengths, each clipped to at most 1.0 (a zero total length counts as
 * 1, as above). Either output may be NULL. */
void cls_wer_corpus(const cls_wer_sample *samples, int n, double *wer, double *cer);

/* The order of DeepSpeech's report: the samples sorted by loss, highest first, then stably by WER
 * ascending (by CER when by_cer, DeepSpeech's --bytes_output_mode). Equivalently: WER ascending, then
 * loss descending, then the original position. A NaN loss counts as higher than any other (an
 * infinite loss comes next). Writes the permutation to order[0..n): order[i] is the index of the
 * sample at report position i. */
cls_status cls_report_order(const cls_wer_sample *samples, const double *losses, int n, bool by_cer, int *order);

/* Which report positions (into the order above) DeepSpeech prints for report_count N (default 5):
 * best = samples[:N], median = samples[n//2 - N//2 : n//2 + ceil(N/2)], worst = samples[-N:], with
 * Python's slice rules, which this reproduces exactly: with fewer than N samples every section holds
 * them all except the median, whose negative start wraps around (n = 2, N = 5 prints only sample 1),
 * and N = 0 prints nothing as best or median but every sample as worst (samples[-0:]). Each section
 * is the half-open range [begin, end) of positions. CLS_ERR_INVALID_ARGUMENT for n or N below 0. */
typedef struct cls_report_sections {
  int best_begin, best_end;
  int median_begin, median_end;
  int worst_begin, worst_end;
} cls_report_sections;

cls_status cls_report_select(int n, int report_count, cls_report_sections *out);

#endif
