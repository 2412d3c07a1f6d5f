/* clspeech public API, eval layer: evaluating a model on test sets, as DeepSpeech 0.9's evaluate.py
 * does — every utterance run through the trainer's lead tower (one too long for the tower streamed in
 * chunks), its logits decoded on the host (CTC beam search, or greedy), then per set the corpus WER and
 * CER, the mean loss, every sample's figures and the best, median and worst samples of DeepSpeech's
 * report. The engine prints nothing: the caller formats the report (`clspeech train --test_files`
 * prints DeepSpeech's text and writes --test_output_file's JSON from it). */
#ifndef CLSPEECH_EVALUATE_H
#define CLSPEECH_EVALUATE_H

#include <stdbool.h>
#include <stddef.h>
#include "base.h"
#include "data.h"
#include "decode.h"
#include "train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One test set: a loaded data set, or CSV files that the call loads (and frees). */
typedef struct cls_eval_input {
  const char *name;           /* the set's name in the report and the progress; NULL: csv_files, else "set K" */
  const cls_dataset *dataset; /* a set the caller loaded (cls_dataset_load), read only; or NULL and: */
  const char *csv_files;      /* one CSV path or several separated by commas, merged into one set, loaded
                                 with cls_eval_request.dataset_options; what was skipped goes to the
                                 engine's log as a notice */
} cls_eval_input;

typedef struct cls_eval_request {
  const cls_eval_input *sets; /* [n_sets], evaluated in this order */
  int n_sets;
  cls_dataset_options dataset_options; /* for csv_files (alphabet NULL: cls_evaluate's alphabet) */
  int batch_size;             /* utterances per evaluation batch, at most the trainer's max_batch
                                 (DeepSpeech's --test_batch_size) */
  cls_beam_options beam;      /* the CTC prefix beam search (--beam_width, --cutoff_prob, --cutoff_top_n);
                                 beam.beam_width <= 1: greedy decoding instead, as `clspeech` does */
  int report_count;           /* DeepSpeech's --report_count: how many best, median and worst samples */
  bool by_cer;                /* order the report by CER instead of WER (DeepSpeech's --bytes_output_mode) */
  const char *phase;          /* the progress reports' phase; NULL: "Test" */
  cls_progress_fn progress;   /* may be NULL: a report per batch, and one when each set is finished */
  void *progress_user;
} cls_eval_request;

/* No sets; DeepSpeech's defaults: batch size 1, the beam search's defaults (cls_beam_options_default:
 * width 1024), report_count 5, ordered by WER; dataset_options zero (16 kHz, DeepSpeech's window and step,
 * the alphabet of the call), phase "Test", no progress. */
cls_eval_request cls_eval_request_default(void);

/* One utterance's result (evaluate_tools.py's process_decode_result). */
typedef struct cls_eval_sample {
  char *wav_path;             /* the audio file, as the data set resolved it */
  char *src;                  /* the transcript (ground truth) */
  char *res;                  /* the decoded transcript (may be "") */
  double loss;                /* its CTC loss (a float computed on the device, or on the host when streamed) */
  cls_wer_sample stats;       /* word and character edit distances and lengths, its WER and CER */
} cls_eval_sample;

typedef struct cls_eval_set_report {
  char *name;
  int n_samples;
  double wer, cer;            /* corpus figures (cls_wer_corpus: summed distances over summed lengths, at most 1) */
  double mean_loss;           /* mean of the samples' losses (0 for an empty set) */
  cls_eval_sample *samples;   /* [n_samples] in the set's order (DeepSpeech's: ascending wav_filesize) */
  /* DeepSpeech's report (cls_eval_select): indices into samples, each list in report order */
  int *best, *median, *worst;
  int n_best, n_median, n_worst;
} cls_eval_set_report;

typedef struct cls_eval_report {
  cls_eval_set_report *sets;  /* [n_sets], as the request named them */
  int n_sets;
} cls_eval_report;

/* Evaluates the trainer's current parameters (load them first: cls_trainer_load with evaluation 1) on
 * every set of the request, on the lead tower without dropout (cls_trainer_evaluate): batches of
 * batch_size utterances; an utterance of more frames than the trainer's max_frames streamed alone through
 * a forward-only replica, its logits decoded chunk by chunk. Every utterance of a set is decoded with
 * the request's decoder into text over `alphabet` (which must be the model's: size + 1 classes) and
 * compared with its transcript. The trainer must hold the sets' longest transcripts (max_label of
 * cls_trainer_create) for the utterances that run in batches.
 * On CLS_OK, *out is a report the caller frees with cls_eval_report_free. On an error, *out is NULL and
 * the engine's error text (cls_engine_error) says what failed: CLS_ERR_INVALID_ARGUMENT for a bad
 * request (no sets, a batch size past the trainer's, an alphabet of another size, bad beam options) or
 * a set that cannot be decoded; a set's loading error (CLS_ERR_IO, CLS_ERR_INVALID_ARGUMENT, naming the
 * file and line); the trainer's errors. */
cls_status cls_evaluate(cls_trainer *trainer, const cls_alphabet *alphabet, const cls_eval_request *request,
                        cls_eval_report **out);

/* Frees a report and everything in it; NULL is a no-op. */
void cls_eval_report_free(cls_eval_report *report);

/* ---- evaluation in two halves: the logits once, then decoding as often as wanted ----
 * cls_evaluate is cls_eval_logits (the device pass) followed by cls_eval_decode (the host's decoding
 * and the report), one set at a time. Kept apart, the logits of a dev set are computed once and
 * decoded with many decoder settings (`clspeech lm_optimizer` searches lm_alpha and lm_beta so). */

/* One utterance's logits, as the pass produced them. */
typedef struct cls_eval_sample_logits {
  char *wav_path;             /* the audio file, as the data set resolved it */
  char *src;                  /* the transcript (ground truth) */
  double loss;                /* its CTC loss, as cls_eval_sample.loss */
  int frames;                 /* T */
  float *logits;              /* [frames][n_classes] row-major, before softmax (NULL when frames is 0) */
} cls_eval_sample_logits;

typedef struct cls_eval_set_logits {
  char *name;                 /* as cls_eval_set_report.name */
  int n_samples;
  cls_eval_sample_logits *samples; /* [n_samples] in the set's order */
} cls_eval_set_logits;

/* The logits of every set of a request, held in host memory: frames x n_classes x 4 bytes per
 * utterance (the demo's dev set, 73 utterances of about 150 frames x 29 classes: 1.3 MB; an hour of
 * audio at DeepSpeech's 20 ms step and 29 classes: 21 MB). Read-only once made. */
typedef struct cls_eval_logits_store {
  int n_classes;
  cls_eval_set_logits *sets;  /* [n_sets], as the request named them */
  int n_sets;
  size_t memory_bytes;        /* the logits' host memory (sum of frames x n_classes x 4) */
} cls_eval_logits_store;

/* The first half of cls_evaluate: every utterance of the request's sets through the trainer's lead tower
 * exactly as cls_evaluate runs them (batches of request->batch_size; an utterance longer than the
 * trainer's max_frames streamed alone, its chunks gathered), keeping each one's logits, transcript,
 * audio path and loss. The request's beam, report_count and by_cer are not used. The same requirements
 * and errors as cls_evaluate (but for the decoder's); on CLS_OK *out is freed with cls_eval_logits_free,
 * on an error it is NULL. */
cls_status cls_eval_logits(cls_trainer *trainer, const cls_alphabet *alphabet, const cls_eval_request *request,
                           cls_eval_logits_store **out);

/* The second half: every utterance of `logits` decoded with `beam` (beam_width <= 1: greedy, as
 * cls_evaluate) into text over `alphabet` (size + 1 = logits->n_classes), and the report cls_evaluate
 * builds from it (report_count and by_cer as in cls_eval_request): for the same trainer, request and
 * sets, cls_eval_logits + cls_eval_decode give exactly cls_evaluate's report. Uses no engine and
 * reads `logits` only: several threads may decode the same logits at once (sharing a scorer too).
 * On CLS_OK *out is a report freed with cls_eval_report_free; on an error *out is NULL and `err` (may
 * be NULL) names the set and utterance: CLS_ERR_INVALID_ARGUMENT for bad beam options, an alphabet of
 * another size, a negative report_count or logits the decoder refuses (a NaN); CLS_ERR_OUT_OF_MEMORY. */
cls_status cls_eval_decode(const cls_eval_logits_store *logits, const cls_alphabet *alphabet,
                           const cls_beam_options *beam, int report_count, bool by_cer, cls_eval_report **out,
                           cls_error *err);

/* Frees the logits; NULL is a no-op. */
void cls_eval_logits_free(cls_eval_logits_store *logits);

/* DeepSpeech's choice of samples to print (evaluate_tools.py's print_report): the samples in report
 * order (cls_report_order: loss descending, then stably WER ascending, or CER with by_cer), then the
 * first report_count as best, report_count around the middle as median and the last report_count as
 * worst, with Python's slice rules (cls_report_select). best, median and worst each have room for n
 * indices; they receive indices into samples in report order, their counts in *n_best, *n_median,
 * *n_worst. A pure function. CLS_ERR_INVALID_ARGUMENT for n or report_count below 0. */
cls_status cls_eval_select(const cls_eval_sample *samples, int n, int report_count, bool by_cer, int *best,
                           int *n_best, int *median, int *n_median, int *worst, int *n_worst);

/* The best result a decoder holds so far (cls_ctc_decoder_finish) as UTF-8 text over `alphabet`, in a
 * malloc'ed *text the caller frees ("" for an empty result). The decoder is left as it was.
 * CLS_ERR_INVALID_ARGUMENT for a label outside the alphabet; CLS_ERR_OUT_OF_MEMORY; the decoder's error.
 * *text is NULL on an error. */
cls_status cls_ctc_decoder_transcript(cls_ctc_decoder *decoder, const cls_alphabet *alphabet, char **text);

#ifdef __cplusplus
}
#endif
#endif
