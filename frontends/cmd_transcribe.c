/* `clspeech transcribe --checkpoint_dir DIR --audio FILE [FILE...]`: the transcript of each audio
 * file (any format and rate the audio frontend reads) from a trained checkpoint (--load_evaluate:
 * best_dev, else the latest train checkpoint), decoded with the CTC beam search. The network's
 * geometry comes from the checkpoint, the alphabet and the feature geometry from the checkpoint
 * folder (alphabet.txt, features.txt, written by `clspeech train`); a flag given for one of them must
 * agree. Folders from before those files take them from the flags. `--model FILE.clsm` runs a model
 * package (`clspeech export`) instead: geometry, alphabet, features and scorer from the package. The
 * model runs forward only, each file streamed through it in chunks of --stream_frames frames (time
 * linear in the file's length, memory bounded by the chunk; features on the host). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clspeech/lm.h"
#include "clspeech/package.h"
#include "clspeech/data.h"
#include "clspeech/evaluate.h"
#include "clspeech/features.h"
#include "clspeech/model.h"
#include "model_setup.h"
#include "train_flags.h"
#include "transcribe.h"
#include "transcript.h"

typedef struct transcribe_ctx {
  cls_ctc_decoder *decoder; /* the file being streamed */
  int n_classes;
  cls_status decode_status; /* the decoder's error, which stopped the stream */
} transcribe_ctx;

/* Each chunk's logits go straight to the decoder: no file's logits are kept. */
static cls_status on_chunk(void *user, int64_t first, int n, const float *logits) {
  (void)first;
  transcribe_ctx *c = user;
  c->decode_status = cls_ctc_decoder_feed(c->decoder, logits, n, (size_t)c->n_classes);
  return c->decode_status;
}

/* One file streamed and decoded chunk by chunk, its transcript printed. 0, CLI_EXIT_FAILURE for a
 * decoding failure (the next files still run), or -1 with *st set for an engine error. */
static int transcribe_file(const char *command, cls_infer *infer, const cls_alphabet *alphabet, const train_flags *f,
                           int n_classes, const char *file, cls_status *st) {
  transcribe_ctx c = {NULL, n_classes, CLS_OK};
  c.decode_status = transcript_begin(f, n_classes, &c.decoder);
  char *text = NULL;
  *st = CLS_OK;
  if (c.decode_status == CLS_OK) *st = cls_infer_stream(infer, file, on_chunk, &c, NULL);
  if (c.decode_status == CLS_OK && *st == CLS_OK)
    c.decode_status = cls_ctc_decoder_transcript(c.decoder, alphabet, &text);
  cls_ctc_decoder_free(c.decoder);
  int rc = 0;
  if (c.decode_status != CLS_OK) {
    fprintf(stderr, "clspeech %s: %s: decoding failed (%s)\n", command, file, cls_status_string(c.decode_status));
    *st = CLS_OK;
    rc = CLI_EXIT_FAILURE;
  } else if (*st != CLS_OK) {
    rc = -1;
  } else {
    printf("%s: %s\n", file, text);
    fflush(stdout);
  }
  free(text);
  return rc;
}

/* Everything one `clspeech transcribe` run holds. Stays where it is: `all` points into `f` and
 * `stream_frames`. */
typedef struct transcribe_cmd {
  const char *command;     /* "transcribe", or "train" for its --one_shot_infer */
  train_flags f;
  cli_flag all[TRAIN_FLAGS_COUNT + 3];
  int n_flags;
  int stream_frames;
  const char *files[257];
  int n_files;
  const char *model_path;  /* --model: a package in place of the checkpoint folder */
  model_setup m;
  cls_lm *packaged_lm;     /* the package's scorer model, under f.loaded_scorer */
  cls_infer_config ic;
} transcribe_cmd;

/* The flags (training's, --audio and --stream_frames) parsed and checked, the files listed. 0, -1 after
 * --help (exit status 0), or the exit status. */
static int parse_transcribe_flags(transcribe_cmd *c, int argc, char **argv) {
  train_flags_defaults(&c->f);
  c->f.beam_width = 1024;
  c->n_flags = train_flags_table(&c->f, c->all);
  c->all[c->n_flags++] = (cli_flag){"audio", CLI_STRING, &c->f.audio,
                                    "the audio file to transcribe (more may follow as arguments)", false};
  c->model_path = "";
  c->all[c->n_flags++] = (cli_flag){"model", CLI_STRING, &c->model_path,
                                    "a model package (.clsm, `clspeech export`) to run in place of the checkpoint "
                                    "folder: its geometry, alphabet, feature settings and scorer",
                                    false};
  c->stream_frames = 1024;
  c->all[c->n_flags++] = (cli_flag){"stream_frames", CLI_INT, &c->stream_frames,
                                    "frames per chunk: each file is decoded, featurised and run through the model a "
                                    "chunk at a time, the LSTM state carried over, so memory does not grow with the "
                                    "file (1 .. 65536)",
                                    false};
  const char *extra[256];
  int n_extra = 0;
  int rc = cli_parse_flags(argc, argv, 2, c->all, c->n_flags, "transcribe",
                           "Transcribes audio files with a trained checkpoint or a model package.", extra, 256,
                           &n_extra);
  if (rc) return rc == 1 ? -1 : CLI_EXIT_USAGE;
  if (*c->model_path && (cli_flag_seen(c->all, c->n_flags, "checkpoint_dir") ||
                         cli_flag_seen(c->all, c->n_flags, "load_checkpoint_dir"))) {
    fprintf(stderr, "clspeech transcribe: --model and --checkpoint_dir/--load_checkpoint_dir exclude each other\n");
    return CLI_EXIT_USAGE;
  }
  if ((rc = train_flags_finish(&c->f, "transcribe"))) return rc;
  if (c->stream_frames < 1 || c->stream_frames > 65536) {
    fprintf(stderr, "clspeech transcribe: --stream_frames %d: must be 1 .. 65536\n", c->stream_frames);
    return CLI_EXIT_USAGE;
  }
  if (*c->f.audio) c->files[c->n_files++] = c->f.audio;
  for (int i = 0; i < n_extra; i++) c->files[c->n_files++] = extra[i];
  if (c->n_files == 0) {
    fprintf(stderr, "clspeech transcribe: --audio FILE is required\n");
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* The model (the checkpoint --load_evaluate chooses, or the package of --model), the feature settings
 * and the alphabet, each checked against the flags given and the model's classes; the inference
 * configuration from them. 0 or the exit status. */
static int load_setup(transcribe_cmd *c) {
  int rc = *c->model_path ? model_setup_from_package(c->command, c->model_path, &c->f, c->all, c->n_flags, &c->m)
                          : model_setup_from_checkpoint(c->command, &c->f, c->all, c->n_flags, &c->m);
  if (rc) return rc;
  c->ic = (cls_infer_config){c->m.model, cls_mfcc_default(c->f.audio_sample_rate), !strcmp(c->f.features_device, "host"),
                             c->f.feature_cache, 1, 1, c->f.log_placement, c->stream_frames};
  c->ic.features.win_len_ms = c->f.feature_win_len;
  c->ic.features.win_step_ms = c->f.feature_win_step;
  return 0;
}

/* The scorer: --scorer_path when given ('' for none), else the package's with its lm_alpha and lm_beta
 * unless those flags are given. 0 or the exit status. */
static int load_scorer(transcribe_cmd *c) {
  const cls_package_info *in = c->m.package ? cls_package_get_info(c->m.package) : NULL;
  if (!in || !in->scorer || cli_flag_seen(c->all, c->n_flags, "scorer_path") || c->f.beam_width <= 1)
    return transcript_scorer_load(&c->f, c->m.alphabet, c->command);
  if (!cli_flag_seen(c->all, c->n_flags, "lm_alpha")) c->f.lm_alpha = in->lm_alpha;
  if (!cli_flag_seen(c->all, c->n_flags, "lm_beta")) c->f.lm_beta = in->lm_beta;
  char name[CLS_PATH_CAP];
  snprintf(name, sizeof name, "%s (scorer)", c->model_path);
  return transcript_scorer_from_binary(&c->f, c->m.alphabet, in->scorer, in->scorer_bytes, name, c->command,
                                       &c->packaged_lm);
}

/* Each file checked from its header before any work (the model then runs a chunk at a time): readable
 * and at least one feature window long. 0 or the exit status. */
static int check_audio_files(const transcribe_cmd *c) {
  cls_error err;
  cls_mfcc_tables *tables = NULL;
  if (cls_mfcc_tables_create(&c->ic.features, &tables, &err) != CLS_OK) {
    fprintf(stderr, "clspeech %s: %s\n", c->command, err.text);
    return CLI_EXIT_USAGE;
  }
  int rc = 0;
  for (int i = 0; i < c->n_files && !rc; i++) {
    cls_audio_header h;
    if (cls_audio_probe(c->files[i], &h, NULL) != CLS_AUDIO_FINE) {
      cls_audio a;
      cls_audio_read(c->files[i], c->f.audio_sample_rate, &a, &err); /* for its worded error */
      cls_audio_free(&a);
      fprintf(stderr, "clspeech %s: %s\n", c->command, err.text);
      rc = CLI_EXIT_FAILURE;
      break;
    }
    if (!c->f.normalize_sample_rate && h.sample_rate != c->f.audio_sample_rate) {
      fprintf(stderr,
              "clspeech %s: %s: the audio is at %d Hz, not --audio_sample_rate %d, and --normalize_sample_rate is "
              "false (no resampling)\n",
              c->command, c->files[i], h.sample_rate, c->f.audio_sample_rate);
      rc = CLI_EXIT_FAILURE;
      break;
    }
    cls_frame_count count = cls_audio_frame_count(&h, c->f.audio_sample_rate, tables->window, tables->step);
    if (count.max_frames <= 0) {
      fprintf(stderr, "clspeech %s: %s: shorter than one feature window\n", c->command, c->files[i]);
      rc = CLI_EXIT_FAILURE;
    }
  }
  cls_mfcc_tables_destroy(tables);
  return rc;
}

/* The model on the first device selected (transcription has no use for towers), loaded, and each file
 * transcribed; a file that fails to decode does not stop the next. 0 or the exit status. */
static int transcribe_files(const transcribe_cmd *c) {
  cls_engine *engine = NULL;
  cls_infer *infer = NULL;
  int sel[CLS_MAX_DEVICES], n_sel = 0;
  int rc = cli_open_devices(c->command, c->f.devices, &engine, sel, CLS_MAX_DEVICES, &n_sel);
  if (rc) return rc;
  cls_status st = cls_infer_create(engine, sel[0], &c->ic, &infer);
  if (st == CLS_OK) st = c->m.package ? cls_infer_load_package(infer, c->m.package) : cls_infer_load(infer, c->m.path);
  for (int i = 0; i < c->n_files && st == CLS_OK; i++)
    if (transcribe_file(c->command, infer, c->m.alphabet, &c->f, c->m.model.n_classes, c->files[i], &st) > 0) rc = CLI_EXIT_FAILURE;
  if (st != CLS_OK) rc = cli_report(c->command, engine, st);
  cls_infer_destroy(infer);
  cls_engine_destroy(engine);
  return rc;
}

/* The files transcribed from the parsed flags: the model and scorer loaded, the files checked, each one
 * decoded; everything freed. 0 or the exit status. */
static int run(transcribe_cmd *c) {
  int rc = load_setup(c);
  if (!rc && !(rc = check_audio_files(c)) && !(rc = load_scorer(c))) rc = transcribe_files(c);
  transcript_scorer_free(&c->f);
  cls_lm_destroy(c->packaged_lm);
  model_setup_free(&c->m);
  return rc;
}

int cmd_transcribe(int argc, char **argv) {
  transcribe_cmd c;
  memset(&c, 0, sizeof c);
  c.command = "transcribe";
  int rc = parse_transcribe_flags(&c, argc, argv);
  if (rc < 0) return CLI_EXIT_OK;
  if (rc) {
    transcript_scorer_free(&c.f);
    return rc;
  }
  return run(&c);
}

int transcribe_one_shot(const char *command, const train_flags *f, const cli_flag *flags, int n_flags,
                        const char *checkpoint_dir, const char *file) {
  transcribe_cmd *c = calloc(1, sizeof *c);
  if (!c || n_flags > (int)(sizeof c->all / sizeof *c->all)) {
    fprintf(stderr, "clspeech %s: --one_shot_infer: out of memory\n", command);
    free(c);
    return CLI_EXIT_FAILURE;
  }
  c->command = command;
  c->f = *f;
  c->f.loaded_scorer = NULL; /* the caller's stays the caller's */
  c->f.load_checkpoint_dir = checkpoint_dir;
  memcpy(c->all, flags, (size_t)n_flags * sizeof *flags);
  c->n_flags = n_flags;
  c->stream_frames = 1024;
  c->model_path = "";
  c->files[c->n_files++] = file;
  const int rc = run(c);
  free(c);
  return rc;
}
