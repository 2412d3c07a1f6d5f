/* clspeech public API, decode layer: CTC decoding on the host (greedy and DeepSpeech's prefix beam
 * search) and the evaluation metrics (WER, CER, DeepSpeech's report order). Host-only: no OpenCL. */
#ifndef CLSPEECH_DECODE_H
#define CLSPEECH_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- decode ---- */
/* Host-side CTC decoding of one utterance's logits as read back from a device: greedy (best path)
 * decoding, and the CTC prefix beam search of DeepSpeech 0.9's ds_ctcdecoder, with or without its
 * language-model scorer (scorer.h) (the decoder `clspeech train --test_files` and `clspeech
 * transcribe` use). Blank = class C-1. No shared state: several threads may decode at once (and share
 * one scorer). */

typedef struct cls_scorer cls_scorer; /* scorer.h */



/* Layout of the input, for both decoders: T frames of C classes, element (t, k) at
 * logits[t*stride + k], stride >= C. For one utterance of a time-major batch [T_max, B, C] (row
 * t*B + b), pass logits + b*C, stride B*C and T = that utterance's length. */

/* Greedy decoding (TF's ctc_greedy_decoder with merge_repeated=True): the argmax class of each frame
 * (the lowest index on ties), repeats merged, then blanks dropped. `out` holds at least T labels;
 * *n_out receives their number. Raw logits, log-probabilities or probabilities give the same result.
 * CLS_ERR_INVALID_ARGUMENT for bad sizes or a NaN in the input. */
cls_status cls_ctc_greedy_host(const float *logits, int T, int C, size_t stride, int32_t *out, int *n_out);

typedef struct cls_beam_options {
  int beam_width;       /* prefixes kept after each frame (DeepSpeech --beam_width: 1024) */
  double cutoff_prob;   /* keep the most probable classes of a frame until their probabilities add up
                         * to cutoff_prob (1.0 = keep every class; DeepSpeech --cutoff_prob: 1.0) */
  int cutoff_top_n;     /* ...but at most cutoff_top_n classes (DeepSpeech --cutoff_top_n: 300). As in
                         * ds_ctcdecoder 0.9, this limit only applies together with cutoff_prob < 1.0:
                         * with cutoff_prob = 1.0 every class is kept whatever cutoff_top_n is. */
  int delay_expansion;  /* 1 (DeepSpeech): frames before the first one whose blank probability is below
                         * 0.999 are skipped; they only shift every prefix's score by the same amount
                         * (the sum of their log P(blank)). 0: every frame counts, and scores are exact
                         * log-probabilities (what TF's decoder reports). */
  const cls_scorer *scorer; /* a language model (scorer.h), or NULL for none (DeepSpeech --scorer_path) */
  double lm_alpha;      /* with a scorer: the weight of ln P(word | history) (DeepSpeech --lm_alpha) */
  double lm_beta;       /* with a scorer: the bonus per word (DeepSpeech --lm_beta) */
  /* With a scorer: DeepSpeech 0.9's hot-words. n_hot_words word ids of the scorer's language model
   * (cls_lm_word_id) and a finite boost each (borrowed: they must outlive the decoder). When a space
   * scores a word, the boost of every hot word among that n-gram's words (the word and the order-1
   * words before it) is added to ln P(word | history) before lm_alpha weighs it, as ds_ctcdecoder
   * 0.9.3 does; the last word scored at the end (no space after it) gets no boost, as there. A positive
   * boost makes the word likelier, a negative one rarer. Not part of cls_scorer_transcript_score. */
  const int32_t *hot_words;
  const double *hot_boosts;
  int n_hot_words;
  /* 1: the labels are UTF-8 bytes (DeepSpeech's --bytes_output_mode: C = 256, label i is byte i+1,
   * clspeech/data.h's cls_alphabet_bytes), and both decoders give whole, valid UTF-8 characters only.
   * The beam search extends a prefix only by a byte that keeps it a valid UTF-8 prefix (so no
   * overlong form, surrogate or value past U+10FFFF), and a result whose last character is
   * unfinished at the end leaves that character's bytes out (its score is the whole prefix's, and
   * two results can then hold the same labels).
   * Greedy decoding keeps the best path's whole valid characters: a byte that cannot start a
   * character is dropped, and so is an unfinished character, where the next byte does not continue
   * it (that byte read afresh) and at the end. Required with a scorer over the bytes labels.
   * 0 (the default): labels are characters. C != 256 with 1 is CLS_ERR_INVALID_ARGUMENT. */
  int utf8_bytes;
} cls_beam_options;

/* DeepSpeech's defaults: beam_width 1024, cutoff_prob 1.0, cutoff_top_n 300, delay_expansion 1, no
 * scorer and no hot-words, character labels (utf8_bytes 0), lm_alpha 0.931289039105002 and lm_beta 1.1834137581510284 (CLS_LM_ALPHA_DEFAULT/_BETA_). */
cls_beam_options cls_beam_options_default(void);

typedef struct cls_beam_result {
  int32_t *labels;   /* the prefix: `length` classes in 0..C-2 (NULL when length is 0) */
  int32_t *frames;   /* for each label, the frame at which its highest-probability entry happened
                      * (DeepSpeech's metadata timestep; seconds = frame * feature window step) */
  int length;
  double log_prob;   /* ln P(prefix | logits), summed over the alignments the beam kept, plus with a
                      * scorer its terms (cls_scorer_transcript_score): DeepSpeech's "confidence";
                      * see delay_expansion */
} cls_beam_result;

/* CTC prefix beam search, as ds_ctcdecoder 0.9 does it. Per frame: log-softmax of the
 * logits (in double; raw logits or log-probabilities both work), the classes pruned by cutoff_prob and
 * cutoff_top_n, then every kept prefix is extended by every kept class, tracking for each prefix the
 * log-probabilities of its alignments ending in blank and in a non-blank (a repeated label extends the
 * prefix only after a blank), identical prefixes merged, and the beam_width best prefixes kept.
 *
 * With a scorer (options->scorer), as DeepSpeech's Scorer: a prefix grows only along the spellings of
 * the model's vocabulary words (a letter must continue a word of the vocabulary trie, a space must end
 * a whole word: no leading or double spaces); extending a prefix by a space adds lm_alpha * ln P(the
 * word it ends | the words before, from <s>) + lm_beta to that extension; with a full beam, extensions
 * whose score before that term is below the worst prefix's + log P(blank) - max(0, lm_beta) are
 * skipped (ds_ctcdecoder's min_cutoff); at the end a prefix whose last word has no space after it gets
 * that word's term too, ln P being CLS_LM_OOV_SCORE (-1000) when the word is only a prefix of
 * vocabulary words, and the results are ranked by these totals. With a character-level scorer
 * (cls_lm_characters, DeepSpeech's UTF-8 mode) there are no spaces: a prefix grows only along the
 * spellings of vocabulary characters, each character's term is added to the extension by the label
 * that completes it, and at the end an unfinished character scores CLS_LM_OOV_SCORE.
 *
 * The best prefixes at the end, best first (ties: the smaller last label first, then a fixed order),
 * at most max_results, are written to results[0..*n_results-1]; results[0] is the prediction (it can
 * be empty). There is always at least one result. Free them with cls_beam_results_free.
 *
 * Prefixes live in a trie (node = parent + label) with a hash table from (parent, label) to node, so
 * extending a prefix and merging identical ones are O(1) (expected); an extension becomes a node only
 * if it survives the frame's pruning, and a node is freed once it has left the beam and has no
 * descendant left; every 256 frames the start all prefixes share leaves the trie for a plain array, so
 * the trie holds the prefixes' recent labels, not the whole transcript (an hour is about 100k labels).
 * The W best of the about W*K extensions are found by a selection (expected linear), not a sort.
 * Time O(T * W * K) for beam width W and K kept classes per frame (plus O(C log C) per frame when
 * cutoff_prob < 1), memory O(W*K + the trie of the beam's prefixes + the labels). Measured on one AMD
 * EPYC (Zen 4) core with flat logits, C=29, W=1024: T=150 about 25 ms, T=1000 about 0.19 s
 * (`bench_decode --time 150,1000`, bench/bench_decode.c).
 *
 * A prefix's score sums only the alignments whose prefixes stayed in the beam, so it is a lower bound
 * of ln P(prefix) (the negative CTC loss of that label sequence) that depends on the pruning; TF's
 * ctc_beam_search_decoder prunes differently and agrees with it to a few hundredths of a nat.
 * CLS_ERR_INVALID_ARGUMENT for bad sizes or options, a NaN or +inf in the input, or a frame whose
 * logits are all -inf; CLS_ERR_OUT_OF_MEMORY. On an error no result is left allocated. */
cls_status cls_ctc_beam_search(const float *logits, int T, int C, size_t stride, const cls_beam_options *options,
                               cls_beam_result *results, int max_results, int *n_results);

/* Frees the labels and frames of n results (and zeroes them); NULL or n <= 0 is a no-op. */
void cls_beam_results_free(cls_beam_result *results, int n);

/* The same decoders fed a chunk of frames at a time, so that an utterance's logits need not be held
 * at once (`clspeech transcribe` streams hours of audio through it): begin, feed the frames in order in
 * chunks of any size, finish. The state carried between chunks is the greedy decoder's previous argmax
 * and labels so far, or the beam search's prefixes (the trie, each prefix's blank and non-blank
 * log-probabilities) and whether delay_expansion has started expanding; memory is that state, not the
 * frames fed. Results are bit-identical whatever the chunking: cls_ctc_greedy_host and
 * cls_ctc_beam_search are begin + one feed + finish.
 *
 * begin: C classes (blank = C-1); greedy != 0: greedy decoding (of the options only utf8_bytes counts), else the beam search
 * with `options` (NULL: the defaults). CLS_ERR_INVALID_ARGUMENT for C < 1 or bad options.
 * feed: T frames at logits[t*stride + k] (T may be 0). An error (bad sizes, a NaN, for the beam search
 * also +inf or a frame of all -inf; out of memory) sticks: every later feed and finish returns it.
 * finish: the results for the frames fed so far, as cls_ctc_beam_search gives them (greedy: one result,
 * its labels with the frame each began at, log_prob 0); free them with cls_beam_results_free. The
 * decoder is left as it was: feeding may go on and finish be called again.
 * free: NULL is a no-op. */
typedef struct cls_ctc_decoder cls_ctc_decoder;

cls_status cls_ctc_decoder_begin(int C, int greedy, const cls_beam_options *options, cls_ctc_decoder **out);
cls_status cls_ctc_decoder_feed(cls_ctc_decoder *decoder, const float *logits, int T, size_t stride);
cls_status cls_ctc_decoder_finish(cls_ctc_decoder *decoder, cls_beam_result *results, int max_results,
                                  int *n_results);
void cls_ctc_decoder_free(cls_ctc_decoder *decoder);

/* ---- wer ---- */
/* Evaluation metrics as DeepSpeech 0.9's evaluate.py and util/evaluate_tools.py compute them:
 * Levenshtein distances over Unicode codepoints (UTF-8 text) and over whitespace-separated words,
 * per-sample CER/WER, the clipped corpus WER/CER (wer_cer_batch), and the order and selection of the
 * samples its report prints (best, median and worst). */



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

#ifdef __cplusplus
}
#endif
#endif
