/* `clspeech transcribe --checkpoint_dir DIR --audio FILE [FILE...]`: the transcript of each audio
 * file (any format and rate the audio frontend reads) from a trained checkpoint (--load_evaluate:
 * best_dev, else the latest train checkpoint), decoded with the CTC beam search. The network's
 * geometry comes from the checkpoint, the alphabet and the feature geometry from the checkpoint
 * folder (alphabet.txt, features.txt, written by `clspeech train`); a flag given for one of them must
 * agree. Folders from before those files take them from the flags. The model runs forward only, each
 * file streamed through it in chunks of --stream_frames frames (time linear in the file's length,
 * memory bounded by the chunk; features on the host). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "clspeech/data.h"
#include "clspeech/evaluate.h"
#include "clspeech/features.h"
#include "clspeech/model.h"
#include "train_flags.h"
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
static int transcribe_file(cls_infer *infer, const cls_alphabet *alphabet, const train_flags *f, int n_classes,
                           const char *file, cls_status *st) {
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
    fprintf(stderr, "clspeech transcribe: %s: decoding failed (%s)\n", file, cls_status_string(c.decode_status));
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

/* An explicit flag that disagrees with the checkpoint folder is a usage error naming both. */
static int disagrees(const cli_flag *flags, int n, const char *name, int given, int stored, const char *file) {
  if (!cli_flag_seen(flags, n, name) || given == stored) return 0;
  fprintf(stderr, "clspeech transcribe: --%s %d disagrees with %s %d in %s\n", name, given, name, stored, file);
  return 1;
}

/* The alphabet: the checkpoint folder's copy, checked against an explicit --alphabet_config_path,
 * else (a folder from before the copy) --alphabet_config_path; `stored` receives the file it came
 * from. 0 or the exit status. */
static int load_alphabet(const train_flags *f, const cli_flag *flags, int n_flags, cls_alphabet **out, char *stored,
                         size_t cap) {
  char why[256];
  cls_error err;
  snprintf(stored, cap, "%s/%s", f->load_checkpoint_dir, CLS_CHECKPOINT_ALPHABET);
  struct stat sb;
  const int in_folder = stat(stored, &sb) == 0;
  const int given = cli_flag_seen(flags, n_flags, "alphabet_config_path") || !in_folder;
  cls_alphabet *flag_alphabet = NULL;
  if (given && cls_alphabet_load(f->alphabet_config_path, &flag_alphabet, &err) != CLS_OK) {
    fprintf(stderr, "clspeech transcribe: --alphabet_config_path: %s\n", err.text);
    return CLI_EXIT_USAGE;
  }
  if (!in_folder) {
    snprintf(stored, cap, "%s", f->alphabet_config_path);
    *out = flag_alphabet;
    return 0;
  }
  if (cls_alphabet_load(stored, out, &err) != CLS_OK) {
    fprintf(stderr, "clspeech transcribe: %s\n", err.text);
    cls_alphabet_destroy(flag_alphabet);
    return CLI_EXIT_FAILURE;
  }
  int rc = 0;
  if (flag_alphabet && cls_alphabet_differs(flag_alphabet, *out, why, sizeof why)) {
    fprintf(stderr, "clspeech transcribe: --alphabet_config_path %s disagrees with %s: %s\n", f->alphabet_config_path,
            stored, why);
    cls_alphabet_destroy(*out);
    *out = NULL;
    rc = CLI_EXIT_USAGE;
  }
  cls_alphabet_destroy(flag_alphabet);
  return rc;
}

/* The feature geometry: the checkpoint folder's features.txt, checked against explicit flags, else
 * the flags. 0 or the exit status. */
static int load_features(train_flags *f, const cli_flag *flags, int n_flags) {
  char file[4200];
  cls_error err;
  int rate = 0, len = 0, step = 0, found = 0;
  if (cls_checkpoint_read_features(f->load_checkpoint_dir, &rate, &len, &step, &found, &err) != CLS_OK) {
    fprintf(stderr, "clspeech transcribe: %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  if (!found) return 0;
  snprintf(file, sizeof file, "%s/%s", f->load_checkpoint_dir, CLS_CHECKPOINT_FEATURES);
  if (disagrees(flags, n_flags, "audio_sample_rate", f->audio_sample_rate, rate, file) ||
      disagrees(flags, n_flags, "feature_win_len", f->feature_win_len, len, file) ||
      disagrees(flags, n_flags, "feature_win_step", f->feature_win_step, step, file))
    return CLI_EXIT_USAGE;
  f->audio_sample_rate = rate;
  f->feature_win_len = len;
  f->feature_win_step = step;
  return 0;
}

/* Everything one `clspeech transcribe` run holds. Stays where it is: `all` points into `f` and
 * `stream_frames`. */
typedef struct transcribe_cmd {
  train_flags f;
  cli_flag all[80];
  int n_flags;
  int stream_frames;
  const char *files[257];
  int n_files;
  char path[4400]; /* the checkpoint */
  cls_model_config model;
  cls_alphabet *alphabet;
  char alphabet_file[4200];
  cls_infer_config ic;
} transcribe_cmd;

/* The flags (training's, --audio and --stream_frames) parsed and checked, the files listed. 0, -1 after
 * --help (exit status 0), or the exit status. */
static int parse_transcribe_flags(transcribe_cmd *c, int argc, char **argv) {
  train_flags_defaults(&c->f);
  c->f.beam_width = 1024;
  cli_flag *table = train_flags_table(&c->f, &c->n_flags);
  memcpy(c->all, table, (size_t)c->n_flags * sizeof *table);
  c->all[c->n_flags++] = (cli_flag){"audio", CLI_STRING, &c->f.audio,
                                    "the audio file to transcribe (more may follow as arguments)", false};
  c->stream_frames = 1024;
  c->all[c->n_flags++] = (cli_flag){"stream_frames", CLI_INT, &c->stream_frames,
                                    "frames per chunk: each file is decoded, featurised and run through the model a "
                                    "chunk at a time, the LSTM state carried over, so memory does not grow with the "
                                    "file (1 .. 65536)",
                                    false};
  const char *extra[256];
  int n_extra = 0;
  int rc = cli_parse_flags(argc, argv, 2, c->all, c->n_flags, "transcribe",
                           "Transcribes audio files with a trained checkpoint.", extra, 256, &n_extra);
  if (rc) return rc == 1 ? -1 : CLI_EXIT_USAGE;
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

/* The checkpoint chosen (--load_evaluate) and its model, the feature geometry and the alphabet, each
 * checked against the flags given and the model's classes; the inference configuration from them. 0 or
 * the exit status. */
static int load_checkpoint_setup(transcribe_cmd *c) {
  cls_error err;
  if (cls_checkpoint_choose(c->f.load_checkpoint_dir, c->f.load_evaluate_mode, c->path, sizeof c->path, NULL, &err) !=
          CLS_OK ||
      cls_checkpoint_peek_model(c->path, &c->model, &err) != CLS_OK) {
    fprintf(stderr, "clspeech transcribe: %s\n", err.text);
    return CLI_EXIT_FAILURE;
  }
  if (disagrees(c->all, c->n_flags, "n_hidden", c->f.n_hidden, c->model.n_hidden, c->path)) return CLI_EXIT_USAGE;
  if (cli_flag_seen(c->all, c->n_flags, "relu_clip") && (float)c->f.relu_clip != c->model.relu_clip) {
    fprintf(stderr, "clspeech transcribe: --relu_clip %g disagrees with relu_clip %g in %s\n", c->f.relu_clip,
            (double)c->model.relu_clip, c->path);
    return CLI_EXIT_USAGE;
  }
  int rc = load_features(&c->f, c->all, c->n_flags);
  if (!rc) rc = load_alphabet(&c->f, c->all, c->n_flags, &c->alphabet, c->alphabet_file, sizeof c->alphabet_file);
  if (rc) return rc;
  if (cls_alphabet_size(c->alphabet) + 1 != c->model.n_classes) {
    fprintf(stderr, "clspeech transcribe: %s has %d classes, but %s gives %d labels (+1 blank)\n", c->path,
            c->model.n_classes, c->alphabet_file, cls_alphabet_size(c->alphabet));
    return CLI_EXIT_USAGE;
  }
  c->f.n_hidden = c->model.n_hidden;
  c->ic = (cls_infer_config){c->model, cls_mfcc_default(c->f.audio_sample_rate), !strcmp(c->f.features_device, "host"),
                             c->f.feature_cache, 1, 1, c->f.log_placement, c->stream_frames};
  c->ic.features.win_len_ms = c->f.feature_win_len;
  c->ic.features.win_step_ms = c->f.feature_win_step;
  return 0;
}

/* Each file checked from its header before any work (the model then runs a chunk at a time): readable
 * and at least one feature window long. 0 or the exit status. */
static int check_audio_files(const transcribe_cmd *c) {
  cls_error err;
  cls_mfcc_tables *tables = NULL;
  if (cls_mfcc_tables_create(&c->ic.features, &tables, &err) != CLS_OK) {
    fprintf(stderr, "clspeech transcribe: %s\n", err.text);
    return CLI_EXIT_USAGE;
  }
  int rc = 0;
  for (int i = 0; i < c->n_files && !rc; i++) {
    cls_audio_header h;
    char why[512];
    if (cls_audio_probe(c->files[i], &h, why, sizeof why) != CLS_AUDIO_FINE) {
      cls_audio a;
      cls_audio_read(c->files[i], c->f.audio_sample_rate, &a, &err); /* for its worded error */
      cls_audio_free(&a);
      fprintf(stderr, "clspeech transcribe: %s\n", err.text);
      rc = CLI_EXIT_FAILURE;
      break;
    }
    cls_frame_count count = cls_audio_frame_count(&h, c->f.audio_sample_rate, tables->window, tables->step);
    if (count.max_frames <= 0) {
      fprintf(stderr, "clspeech transcribe: %s: shorter than one feature window\n", c->files[i]);
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
  int rc = cli_open_devices("transcribe", c->f.devices, &engine, sel, CLS_MAX_DEVICES, &n_sel);
  if (rc) return rc;
  cls_status st = cls_infer_create(engine, sel[0], &c->ic, &infer);
  if (st == CLS_OK) st = cls_infer_load(infer, c->path);
  for (int i = 0; i < c->n_files && st == CLS_OK; i++)
    if (transcribe_file(infer, c->alphabet, &c->f, c->model.n_classes, c->files[i], &st) > 0) rc = CLI_EXIT_FAILURE;
  if (st != CLS_OK) rc = cli_report("transcribe", engine, st);
  cls_infer_destroy(infer);
  cls_engine_destroy(engine);
  return rc;
}

int cmd_transcribe(int argc, char **argv) {
  transcribe_cmd c;
  memset(&c, 0, sizeof c);
  int rc = parse_transcribe_flags(&c, argc, argv);
  if (rc < 0) return CLI_EXIT_OK;
  if (!rc && !(rc = load_checkpoint_setup(&c)) && !(rc = check_audio_files(&c)) &&
      !(rc = transcript_scorer_load(&c.f, c.alphabet, "transcribe")))
    rc = transcribe_files(&c);
  transcript_scorer_free(&c.f);
  cls_alphabet_destroy(c.alphabet);
  return rc;
}
