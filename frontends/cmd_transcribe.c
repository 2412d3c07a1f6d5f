/* `clspeech transcribe --checkpoint_dir DIR --audio FILE [FILE...]`: the transcript of each audio
 * file (any format and rate the audio frontend reads) from a trained checkpoint (--load_evaluate:
 * best_dev, else the latest train checkpoint), decoded with the CTC beam search. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/data.h"
#include "clspeech/features.h"
#include "clspeech/model.h"
#include "cli.h"
#include "transcript.h"
#include "train_flags.h"

typedef struct transcribe_ctx {
  const cls_alphabet *alphabet;
  const train_flags *flags;
  const char *const *files;
  int n_classes;
  int failed;
} transcribe_ctx;

static void on_batch(void *user, int first, int batch, int time, const float *logits, const int *frames,
                     const float *losses) {
  transcribe_ctx *c = user;
  (void)losses;
  const size_t cap = (size_t)time * 8 + 8;
  char *text = malloc(cap);
  for (int b = 0; b < batch; b++) {
    if (text && transcript_decode(c->alphabet, c->flags, logits + (size_t)b * c->n_classes, frames[b], c->n_classes,
                                  (size_t)batch * c->n_classes, text, cap) == CLS_OK) {
      printf("%s: %s\n", c->files[first + b], text);
    } else {
      fprintf(stderr, "clspeech transcribe: %s: decoding failed\n", c->files[first + b]);
      c->failed = 1;
    }
  }
  free(text);
  fflush(stdout);
}

int cmd_transcribe(int argc, char **argv) {
  train_flags f;
  train_flags_defaults(&f);
  f.beam_width = 1024;
  int n_flags = 0;
  cli_flag *table = train_flags_table(&f, &n_flags);
  cli_flag all[80];
  memcpy(all, table, (size_t)n_flags * sizeof *table);
  all[n_flags++] = (cli_flag){"audio", CLI_STRING, &f.audio, "the audio file to transcribe (more may follow as arguments)",
                              false};
  const char *extra[256];
  int n_extra = 0;
  int rc = cli_parse_flags(argc, argv, 2, all, n_flags, "transcribe",
                           "Transcribes audio files with a trained checkpoint.", extra, 256, &n_extra);
  if (rc) return rc == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
  if ((rc = train_flags_finish(&f, "transcribe"))) return rc;
  const char *files[257];
  int n_files = 0;
  if (*f.audio) files[n_files++] = f.audio;
  for (int i = 0; i < n_extra; i++) files[n_files++] = extra[i];
  if (n_files == 0) {
    fprintf(stderr, "clspeech transcribe: --audio FILE is required\n");
    return CLI_EXIT_USAGE;
  }
  char err[2048], path[4400];
  const char *kind = !strcmp(f.load_evaluate, "last") ? "train" : "best_dev";
  if (cls_checkpoint_find(f.load_checkpoint_dir, kind, path, sizeof path, err, sizeof err) != CLS_OK &&
      (strcmp(f.load_evaluate, "auto") ||
       cls_checkpoint_find(f.load_checkpoint_dir, "train", path, sizeof path, err, sizeof err) != CLS_OK)) {
    fprintf(stderr, "clspeech transcribe: %s\n", err);
    return CLI_EXIT_FAILURE;
  }
  int n_hidden = 0, n_classes = 0;
  if (cls_checkpoint_peek(path, &n_hidden, &n_classes, err, sizeof err) != CLS_OK) {
    fprintf(stderr, "clspeech transcribe: %s\n", err);
    return CLI_EXIT_FAILURE;
  }
  cls_alphabet *alphabet = NULL;
  if (cls_alphabet_load(f.alphabet_config_path, &alphabet, err, sizeof err) != CLS_OK) {
    fprintf(stderr, "clspeech transcribe: --alphabet_config_path: %s\n", err);
    return CLI_EXIT_USAGE;
  }
  if (cls_alphabet_size(alphabet) + 1 != n_classes) {
    fprintf(stderr, "clspeech transcribe: %s has %d classes, but %s gives %d labels (+1 blank)\n", path, n_classes,
            f.alphabet_config_path, cls_alphabet_size(alphabet));
    cls_alphabet_destroy(alphabet);
    return CLI_EXIT_USAGE;
  }
  f.n_hidden = n_hidden;
  cls_train_options opt = train_flags_options(&f, n_classes);
  cls_mfcc_tables *tables = NULL;
  cls_mfcc_tables_create(&opt.features, &tables, err, sizeof err);
  cls_utterance *utts = calloc((size_t)n_files, sizeof *utts);
  int max_frames = 1;
  for (int i = 0; i < n_files && !rc; i++) {
    /* The header is enough to size the model: frames at the model's rate, rounded up by one
       sample for the resampler. The batch loader decodes the audio once, on its thread. */
    cls_audio_header h;
    char why[512];
    if (cls_audio_probe(files[i], &h, why, sizeof why) != CLS_AUDIO_FINE) {
      cls_audio a;
      cls_audio_read(files[i], f.audio_sample_rate, &a, err, sizeof err); /* for its worded error */
      cls_audio_free(&a);
      fprintf(stderr, "clspeech transcribe: %s\n", err);
      rc = CLI_EXIT_FAILURE;
      break;
    }
    long long n = h.sample_rate == f.audio_sample_rate ? h.frames
                                                       : h.frames * f.audio_sample_rate / h.sample_rate + 1;
    int frames = tables ? (int)cls_mfcc_frames(tables, (size_t)n) : 0;
    if (frames <= 0) {
      fprintf(stderr, "clspeech transcribe: %s: shorter than one feature window\n", files[i]);
      rc = CLI_EXIT_FAILURE;
    }
    if (frames > max_frames) max_frames = frames;
    utts[i] = (cls_utterance){files[i], NULL, 0};
  }
  cls_engine *engine = NULL;
  cls_trainer *trainer = NULL;
  int sel[64], n_sel = 0;
  cls_status st = CLS_OK;
  if (!rc) rc = cli_open_devices("transcribe", f.devices, &engine, sel, 64, &n_sel);
  if (!rc) {
    st = cls_trainer_create(engine, sel, 1, &opt, 1, max_frames, 1, &trainer);
    if (st == CLS_OK) st = cls_trainer_load(trainer, f.load_evaluate_mode, 1);
    transcribe_ctx c = {alphabet, &f, files, n_classes, 0};
    cls_eval_set set = {"audio", utts, n_files};
    if (st == CLS_OK) st = cls_trainer_evaluate(trainer, &set, 1, "Transcribe", on_batch, &c, NULL, NULL, NULL, NULL);
    if (st != CLS_OK) rc = cli_report("transcribe", engine, st);
    else if (c.failed) rc = CLI_EXIT_FAILURE;
  }
  cls_trainer_destroy(trainer);
  cls_engine_destroy(engine);
  cls_mfcc_tables_destroy(tables);
  cls_alphabet_destroy(alphabet);
  free(utts);
  return rc;
}
