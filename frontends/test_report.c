/* The test pass of `clspeech train` (see test_report.h): per test set, the engine's evaluation
 * (cls_evaluate: one pass, CTC beam search or greedy decoding with --beam_width 1, an utterance too
 * long for the towers streamed) and DeepSpeech's report printed from it: "Test on FILE - WER: w,
 * CER: c, loss: l" and the best, median and worst --report_count samples with their src and res;
 * --test_output_file gets every sample as JSON. */
#include "test_report.h"

#include <stdio.h>

#include "cli.h"
#include "clspeech/evaluate.h"
#include "json_out.h"
#include "transcript.h"

#define RULE "--------------------------------------------------------------------------------\n"

static void print_sample(const cls_eval_sample *r) {
  printf("WER: %f, CER: %f, loss: %f\n", r->stats.wer, r->stats.cer, r->loss);
  printf(" - wav: file://%s\n - src: \"%s\"\n - res: \"%s\"\n", r->wav_path, r->src, r->res);
  printf(RULE);
}

static void print_set(const cls_eval_set_report *s) {
  printf("Test on %s - WER: %f, CER: %f, loss: %f\n", s->name, s->wer, s->cer, s->mean_loss);
  printf(RULE);
  if (s->n_samples == 0) return;
  const char *titles[3] = {"Best WER:", "Median WER:", "Worst WER:"};
  const int *lists[3] = {s->best, s->median, s->worst};
  const int counts[3] = {s->n_best, s->n_median, s->n_worst};
  for (int part = 0; part < 3; part++) {
    printf("%s\n" RULE, titles[part]);
    for (int i = 0; i < counts[part]; i++) print_sample(&s->samples[lists[part][i]]);
  }
}

/* Every sample of the set as --test_output_file's objects, appended to `samples`. */
static json_t *json_samples(json_t *samples, const cls_eval_set_report *s) {
  for (int i = 0; i < s->n_samples; i++) {
    const cls_eval_sample *r = &s->samples[i];
    json_t *o = json_object();
    o = jo_set(o, "wav_filename", jo_text(r->wav_path));
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
  return samples;
}

int test_report_run(cls_engine *engine, cls_trainer *trainer, const cls_alphabet *alphabet, const train_flags *f,
                    const data_set *sets, int n_sets, progress_printer *progress) {
  cls_output *json_out = NULL; /* the output rule (clspeech/base.h) */
  json_t *samples = NULL; /* every sample of every set, written at the end */
  if (*f->test_output_file) {
    cls_error err;
    if (cls_output_open(f->test_output_file, &json_out, &err) != CLS_OK) {
      fprintf(stderr, "clspeech train: --test_output_file: %s\n", err.text);
      return CLI_EXIT_FAILURE;
    }
    samples = json_array();
  }
  cls_eval_request req = cls_eval_request_default();
  req.n_sets = 1; /* one set a call: each set's report printed before the next is evaluated */
  req.batch_size = f->test_batch_size;
  req.beam = transcript_beam_options(f);
  req.report_count = f->report_count;
  req.by_cer = f->bytes_output_mode; /* DeepSpeech's order in bytes mode: by CER */
  req.progress = progress_print;
  req.progress_user = progress;
  int rc = 0;
  for (int s = 0; s < n_sets && !rc; s++) {
    const cls_eval_input in = {sets[s].name, sets[s].ds, NULL};
    req.sets = &in;
    printf("Testing model on %s\n", sets[s].name);
    cls_eval_report *report = NULL;
    cls_status st = cls_evaluate(trainer, alphabet, &req, &report);
    if (st != CLS_OK) {
      rc = cli_report("train", engine, st);
      break;
    }
    print_set(&report->sets[0]);
    if (json_out) samples = json_samples(samples, &report->sets[0]);
    cls_eval_report_free(report);
  }
  if (json_out) {
    cls_error err;
    bool written = jo_dump(samples, cls_output_file(json_out)) == 0;
    cls_status st = written ? cls_output_commit(json_out, f->test_output_file, &err) : CLS_ERR_IO;
    if (!written) cls_output_abort(json_out);
    if (st != CLS_OK && !rc) {
      fprintf(stderr, "clspeech train: --test_output_file %s: write failed%s%s\n", f->test_output_file,
              written ? ": " : "", written ? err.text : "");
      rc = CLI_EXIT_FAILURE;
    }
  }
  return rc;
}
