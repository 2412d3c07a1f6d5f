/* Transcripts from logits (see transcript.h). */
#include "transcript.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "clspeech/evaluate.h"
#include "clspeech/lm.h"

cls_beam_options transcript_beam_options(const train_flags *f) {
  cls_beam_options bo = cls_beam_options_default();
  bo.beam_width = f->beam_width;
  bo.cutoff_prob = f->cutoff_prob;
  bo.cutoff_top_n = f->cutoff_top_n;
  bo.scorer = f->loaded_scorer;
  bo.lm_alpha = f->lm_alpha;
  bo.lm_beta = f->lm_beta;
  bo.utf8_bytes = f->bytes_output_mode; /* model_setup sets it from a bytes-mode model's alphabet */
  return bo;
}

/* The labels' texts for a scorer; NULL when out of memory (after saying so). */
static const char **alphabet_labels(const cls_alphabet *alphabet, const char *command) {
  const int n = cls_alphabet_size(alphabet);
  const char **labels = malloc((size_t)n * sizeof *labels);
  if (!labels) {
    fprintf(stderr, "clspeech %s: out of memory\n", command);
    return NULL;
  }
  for (int i = 0; i < n; i++) labels[i] = cls_alphabet_label(alphabet, i);
  return labels;
}

/* The line saying what was loaded, and the words the alphabet cannot spell. */
static void report_scorer(const train_flags *f, const cls_scorer_info *info, const char *name, double t0,
                          const char *command) {
  const cls_lm *lm = cls_scorer_lm(f->loaded_scorer);
  int64_t ngrams = 0;
  for (int k = 1; k <= cls_lm_order(lm); k++) ngrams += cls_lm_count(lm, k);
  fprintf(stderr, "clspeech %s: scorer %s: %d-gram, %lld words, %lld n-grams, %.1f MiB, loaded in %.2f s; "
          "lm_alpha %g, lm_beta %g\n", command, name, cls_lm_order(lm), (long long)info->words,
          (long long)ngrams, (double)(cls_lm_memory_bytes(lm) + info->memory_bytes) / 1048576.0,
          (cls_now_ms() - t0) / 1000.0, f->lm_alpha, f->lm_beta);
  if (info->skipped > 0)
    fprintf(stderr, "clspeech %s: warning: scorer %s: %lld words have characters outside the alphabet and are never "
            "decoded (%s%s)\n", command, name, (long long)info->skipped, info->skipped_examples,
            info->skipped > 3 ? ", ..." : "");
}

int transcript_scorer_load(train_flags *f, const cls_alphabet *alphabet, const char *command) {
  if (!*f->scorer_path) return 0;
  if (f->beam_width <= 1) {
    fprintf(stderr, "clspeech %s: warning: --scorer_path is not used by greedy decoding (--beam_width 1)\n", command);
    return 0;
  }
  const char **labels = alphabet_labels(alphabet, command);
  if (!labels) return CLI_EXIT_FAILURE;
  cls_scorer_info info;
  cls_error err = {0};
  const double t0 = cls_now_ms();
  cls_status st = cls_scorer_load(f->scorer_path, labels, cls_alphabet_size(alphabet), &f->loaded_scorer, &info, &err);
  free(labels);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech %s: --scorer_path: %s\n", command, err.text);
    return CLI_EXIT_FAILURE;
  }
  report_scorer(f, &info, f->scorer_path, t0, command);
  return 0;
}

int transcript_scorer_from_binary(train_flags *f, const cls_alphabet *alphabet, const void *bytes, size_t size,
                                  const char *name, const char *command, cls_lm **lm) {
  const char **labels = alphabet_labels(alphabet, command);
  if (!labels) return CLI_EXIT_FAILURE;
  cls_scorer_info info;
  cls_error err = {0};
  const double t0 = cls_now_ms();
  cls_status st = cls_lm_parse_binary(bytes, size, name, lm, &err);
  if (st == CLS_OK) st = cls_scorer_create(*lm, labels, cls_alphabet_size(alphabet), &f->loaded_scorer, &info, &err);
  free(labels);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech %s: %s\n", command, err.text);
    return CLI_EXIT_FAILURE;
  }
  report_scorer(f, &info, name, t0, command);
  return 0;
}

void transcript_scorer_free(train_flags *f) {
  cls_scorer_destroy(f->loaded_scorer);
  f->loaded_scorer = NULL;
}

cls_status transcript_begin(const train_flags *f, int n_classes, cls_ctc_decoder **out) {
  const cls_beam_options bo = transcript_beam_options(f);
  return cls_ctc_decoder_begin(n_classes, f->beam_width <= 1, &bo, out);
}
