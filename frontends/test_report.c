/* The test pass of `clspeech train` (see test_report.h): per test set, one evaluation pass whose
 * batches are decoded on the host as they arrive (CTC beam search, or greedy with --beam_width 1; an
 * utterance too long for the towers is streamed, and decoded a chunk at a time),
 * then DeepSpeech's report: "Test on FILE - WER: w, CER: c, loss: l" and the best, median and worst
 * --report_count samples with their src and res; --test_output_file gets every sample as JSON. */
#include "test_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clspeech/decode.h"
#include "json_out.h"
#include "transcript.h"

typedef struct sample_result {
  char *src, *res;
  float loss;
  cls_wer_sample stats;
} sample_result;

typedef struct decode_ctx {
  const cls_alphabet *alphabet;
  const train_flags *flags;
  int n_classes;
  sample_result *results;
  const data_set *set;
  cls_ctc_decoder *decoder; /* the utterance being streamed */
  cls_status status;
  char err[512];
} decode_ctx;

/* Decodes every utterance of an evaluated batch: logits [time*batch, C] time-major. */
static void on_batch(void *user, int first, int batch, int time, const float *logits, const int *frames,
                     const float *losses) {
  decode_ctx *c = user;
  const size_t cap = (size_t)time * 8 + 8;
  char *text = malloc(cap);
  for (int b = 0; text && b < batch; b++) {
    cls_status st = transcript_decode(c->alphabet, c->flags, logits + (size_t)b * c->n_classes, frames[b], c->n_classes,
                                      (size_t)batch * c->n_classes, text, cap);
    if (st != CLS_OK) {
      c->status = st;
      snprintf(c->err, sizeof c->err, "decoding %s failed", c->set->utts[first + b].path);
      continue;
    }
    sample_result *r = &c->results[first + b];
    r->res = strdup(text);
    r->src = strdup(cls_dataset_sample(c->set->ds, first + b)->transcript);
    r->loss = losses[b];
    cls_wer_sample ws;
    if (cls_wer_sample_compute(r->src, r->res, &ws) == CLS_OK) r->stats = ws;
  }
  free(text);
}

/* A streamed utterance: its decoder fed chunk by chunk, the result kept once its loss comes. */
static void on_chunk(void *user, int index, int64_t first, int n, const float *logits, const float *loss) {
  decode_ctx *c = user;
  (void)first;
  cls_status st = CLS_OK;
  if (!c->decoder) st = transcript_begin(c->flags, c->n_classes, &c->decoder);
  if (st == CLS_OK && !loss) st = cls_ctc_decoder_feed(c->decoder, logits, n, (size_t)c->n_classes);
  if (st == CLS_OK && loss) {
    char *text = NULL;
    st = transcript_finish(c->decoder, c->alphabet, &text);
    if (st == CLS_OK) {
      sample_result *r = &c->results[index];
      r->res = text;
      r->src = strdup(cls_dataset_sample(c->set->ds, index)->transcript);
      r->loss = *loss;
      cls_wer_sample ws;
      if (cls_wer_sample_compute(r->src, r->res, &ws) == CLS_OK) r->stats = ws;
    }
  }
  if (loss || st != CLS_OK) {
    cls_ctc_decoder_free(c->decoder);
    c->decoder = NULL;
  }
  if (st != CLS_OK && c->status == CLS_OK) {
    c->status = st;
    snprintf(c->err, sizeof c->err, "decoding %s failed", c->set->utts[index].path);
  }
}

static void print_sample(const sample_result *r, const char *path) {
  printf("WER: %f, CER: %f, loss: %f\n", r->stats.wer, r->stats.cer, r->loss);
  printf(" - wav: file://%s\n - src: \"%s\"\n - res: \"%s\"\n", path, r->src, r->res);
  printf("--------------------------------------------------------------------------------\n");
}

int test_report_run(cls_engine *engine, cls_trainer *trainer, const cls_alphabet *alphabet, const train_flags *f,
                    const data_set *sets, int n_sets, progress_printer *progress) {
  FILE *json_out = NULL;
  json_t *samples = NULL; /* every sample of every set, written at the end */
  if (*f->test_output_file) {
    json_out = fopen(f->test_output_file, "w");
    if (!json_out) {
      fprintf(stderr, "clspeech train: --test_output_file %s: cannot write\n", f->test_output_file);
      return CLI_EXIT_FAILURE;
    }
    samples = json_array();
  }
  int rc = 0;
  for (int s = 0; s < n_sets && !rc; s++) {
    const data_set *set = &sets[s];
    decode_ctx c = {alphabet, f, cls_alphabet_size(alphabet) + 1,
                    calloc((size_t)(set->n ? set->n : 1), sizeof(sample_result)), set, NULL, CLS_OK, ""};
    cls_eval_set es = data_set_eval(set);
    double mean_loss = 0;
    int64_t steps = 0;
    printf("Testing model on %s\n", set->name);
    cls_status st = cls_trainer_evaluate_streaming(trainer, &es, f->test_batch_size, "Test", on_batch, on_chunk, &c,
                                                   progress_print, progress, &mean_loss, &steps);
    cls_ctc_decoder_free(c.decoder); /* an error mid-stream */
    if (st != CLS_OK) rc = cli_report("train", engine, st);
    else if (c.status != CLS_OK) {
      fprintf(stderr, "clspeech train: %s\n", c.err);
      rc = CLI_EXIT_FAILURE;
    }
    if (!rc) {
      cls_wer_sample *stats = malloc((size_t)(set->n ? set->n : 1) * sizeof *stats);
      double *losses = malloc((size_t)(set->n ? set->n : 1) * sizeof *losses), loss_sum = 0;
      for (int i = 0; i < set->n; i++) {
        stats[i] = c.results[i].stats;
        losses[i] = c.results[i].loss;
        loss_sum += c.results[i].loss;
      }
      double wer = 0, cer = 0;
      cls_wer_corpus(stats, set->n, &wer, &cer);
      printf("Test on %s - WER: %f, CER: %f, loss: %f\n", set->name, wer, cer, set->n ? loss_sum / set->n : 0.0);
      printf("--------------------------------------------------------------------------------\n");
      int *order = malloc((size_t)(set->n ? set->n : 1) * sizeof *order);
      cls_report_order(stats, losses, set->n, false, order);
      cls_report_sections sec;
      cls_report_select(set->n, f->report_count, &sec);
      const char *titles[3] = {"Best WER:", "Median WER:", "Worst WER:"};
      const int ranges[3][2] = {{sec.best_begin, sec.best_end}, {sec.median_begin, sec.median_end},
                                {sec.worst_begin, sec.worst_end}};
      for (int part = 0; part < 3 && set->n > 0; part++) {
        int from = ranges[part][0], to = ranges[part][1];
        printf("%s\n--------------------------------------------------------------------------------\n", titles[part]);
        for (int i = from; i < to; i++) print_sample(&c.results[order[i]], set->utts[order[i]].path);
      }
      for (int i = 0; json_out && i < set->n; i++) {
        const sample_result *r = &c.results[i];
        json_t *o = json_object();
        o = jo_set(o, "wav_filename", jo_text(set->utts[i].path));
        o = jo_set(o, "src", jo_text(r->src));
        o = jo_set(o, "res", jo_text(r->res));
        o = jo_set(o, "loss", jo_real(r->loss));
        o = jo_set(o, "char_distance", json_integer(r->stats.char_distance));
        o = jo_set(o, "char_length", json_integer(r->stats.char_length));
        o = jo_set(o, "word_distance", json_integer(r->stats.word_distance));
        o = jo_set(o, "word_length", json_integer(r->stats.word_length));
        o = jo_set(o, "cer", jo_real(r->stats.cer));
        o = jo_set(o, "wer", jo_real(r->stats.wer));
        samples = jo_push(samples, o);
      }
      free(order);
      free(stats);
      free(losses);
    }
    for (int i = 0; i < set->n; i++) {
      free(c.results[i].src);
      free(c.results[i].res);
    }
    free(c.results);
  }
  if (json_out) {
    bool written = jo_dump(samples, json_out) == 0;
    if ((fclose(json_out) != 0 || !written) && !rc) {
      fprintf(stderr, "clspeech train: --test_output_file %s: write failed\n", f->test_output_file);
      rc = CLI_EXIT_FAILURE;
    }
  }
  return rc;
}
