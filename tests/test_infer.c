/* The forward-only replica and what transcription shares with training (label `train`): one frame
 * count from an audio header (the data set's, bounding what decoding gives); the one checkpoint
 * choice (auto, best, last, with the trainer's error texts); the checkpoint folder's description
 * (alphabet copy, features.txt) and the checkpoint's geometry; and the forward-only replica's logits
 * against a training tower's evaluation of the same parameters, bit for bit, on the device and host
 * feature paths, holding exactly the tower's device memory less the gradient and Adam m and v. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "data_present.h"
#include "clspeech/features.h"
#include "clspeech/model.h"
#include "data_files.h"
#include "model/infer.h"
#include "model/tower.h"
#include "ops_test.h"

static const cls_model_config model = {26, 9, 24, 29, 20.0f, 0};

static void check_frame_count(void) {
  const char *files[3] = {SMOKE "/LDC93S1.wav", SMOKE "/LDC93S1_pcms16le_2_44100.wav",
                          SMOKE "/LDC93S1_pcms16le_1_8000.wav"};
  cls_mfcc_config fc = cls_mfcc_default(16000);
  cls_mfcc_tables *t = NULL;
  cls_error err;
  CHECK_INT(cls_mfcc_tables_create(&fc, &t, &err), CLS_OK);
  if (!t) return;
  /* a header of no audio (a failed probe's: rate 0) counts nothing; it divided by zero */
  cls_audio_header none;
  memset(&none, 0, sizeof none);
  const cls_frame_count zero = cls_audio_frame_count(&none, 16000, t->window, t->step);
  CHECK(zero.n_samples == 0 && zero.frames == 0 && zero.max_frames == 0, "a rate-0 header: %lld samples, %lld frames",
        (long long)zero.n_samples, (long long)zero.frames);
  for (int i = 0; i < 3; i++) {
    cls_audio_header h;
    CHECK_INT(cls_audio_probe(files[i], &h, NULL), CLS_AUDIO_FINE);
    cls_frame_count c = cls_audio_frame_count(&h, 16000, t->window, t->step);
    cls_audio a;
    CHECK_INT(cls_audio_read(files[i], 16000, &a, &err), CLS_OK);
    int64_t decoded = (int64_t)cls_mfcc_frames(t, a.n_samples);
    printf("  %s: header %lld samples at %d Hz: %lld samples, %lld frames (at most %lld); decoded %lld frames\n",
           files[i], h.frames, h.sample_rate, (long long)c.n_samples, (long long)c.frames, (long long)c.max_frames,
           (long long)decoded);
    CHECK(decoded >= c.frames && decoded <= c.max_frames, "%s: decoded %lld frames outside [%lld, %lld]", files[i],
          (long long)decoded, (long long)c.frames, (long long)c.max_frames);
    if (h.sample_rate == 16000) {
      CHECK_INT(c.n_samples, h.frames);
      CHECK_INT(c.max_frames, c.frames);
    } else {
      CHECK_INT(c.n_samples, h.frames * 16000 / h.sample_rate);
      CHECK_INT(c.max_frames, (int64_t)cls_mfcc_frames(t, (size_t)c.n_samples + 1));
    }
    CHECK_INT(c.frames, (int64_t)cls_mfcc_frames(t, (size_t)c.n_samples));
    cls_audio_free(&a);
  }
  /* The data set counts a sample's frames with the same rule. */
  cls_alphabet *alpha = smoke_alphabet();
  cls_dataset_options dopt = {alpha, 16000, t->window, t->step, 0, 0, 0, 0};
  cls_dataset *ds = NULL;
  CHECK_INT(cls_dataset_load(SMOKE "/ldc93s1_8k.csv", &dopt, &ds, &err), CLS_OK);
  const cls_sample *s = ds ? cls_dataset_sample(ds, 0) : NULL;
  cls_audio_header h;
  cls_audio_probe(s ? s->path : "", &h, NULL);
  cls_frame_count c = cls_audio_frame_count(&h, 16000, t->window, t->step);
  CHECK(s && s->frames == c.frames && s->n_samples == c.n_samples, "data set: %d frames, count: %lld",
        s ? s->frames : -1, (long long)c.frames);
  cls_dataset_destroy(ds);
  cls_alphabet_destroy(alpha);
  cls_mfcc_tables_destroy(t);
}

static void check_choice_and_folder(void) {
  char dir[700], path[4400];
  cls_error err;
  snprintf(dir, sizeof dir, "%s", tmp_path("ckpt"));
  int is_best = -1;
  CHECK_INT(cls_checkpoint_choose(dir, CLS_LOAD_AUTO, path, sizeof path, &is_best, &err), CLS_ERR_IO);
  CHECK(strstr(err.text, "no checkpoint to load in ") && strstr(err.text, dir), "auto without checkpoints: %s", err.text);
  CHECK_INT(cls_checkpoint_choose(dir, CLS_LOAD_BEST, path, sizeof path, NULL, &err), CLS_ERR_IO);
  CHECK(strstr(err.text, "no best validating checkpoint in ") && strstr(err.text, dir), "best without checkpoints: %s", err.text);
  CHECK_INT(cls_checkpoint_choose("", CLS_LOAD_LAST, path, sizeof path, NULL, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "no checkpoint to load in (no --checkpoint_dir)");

  cls_param_view views[CLS_MODEL_N_TENSORS];
  size_t n = cls_model_layout(&model, views);
  float *p = calloc(n, sizeof *p);
  cls_checkpoint_vars s;
  memset(&s, 0, sizeof s);
  s.global_step = 3;
  s.adam = cls_adam_state_init(0.9f, 0.999f);
  char saved[4400];
  remember(dir);
  CHECK_INT(cls_checkpoint_save_in(dir, "train", 2, &model, p, p, p, &s, NULL, 0, saved, sizeof saved, &err), CLS_OK);
  remember(saved);
  remember(tmp_path("ckpt/checkpoint"));
  CHECK_INT(cls_checkpoint_choose(dir, CLS_LOAD_AUTO, path, sizeof path, &is_best, &err), CLS_OK);
  CHECK(!strcmp(path, saved) && is_best == 0, "auto with a train checkpoint: %s (best %d)", path, is_best);
  CHECK_INT(cls_checkpoint_choose(dir, CLS_LOAD_BEST, path, sizeof path, NULL, &err), CLS_ERR_IO);
  s.global_step = 2;
  char best[4400];
  CHECK_INT(cls_checkpoint_save_in(dir, "best_dev", 1, &model, p, p, p, &s, NULL, 0, best, sizeof best, &err),
            CLS_OK);
  remember(best);
  remember(tmp_path("ckpt/best_dev_checkpoint"));
  CHECK_INT(cls_checkpoint_choose(dir, CLS_LOAD_AUTO, path, sizeof path, &is_best, &err), CLS_OK);
  CHECK(!strcmp(path, best) && is_best == 1, "auto with best_dev: %s (best %d)", path, is_best);
  CHECK_INT(cls_checkpoint_choose(dir, CLS_LOAD_LAST, path, sizeof path, &is_best, &err), CLS_OK);
  CHECK(!strcmp(path, saved) && is_best == 0, "last: %s", path);
  free(p);

  cls_model_config got;
  memset(&got, 0, sizeof got);
  CHECK_INT(cls_checkpoint_peek_model(saved, &got, &err), CLS_OK);
  CHECK(got.n_input == 26 && got.n_context == 9 && got.n_hidden == 24 && got.n_classes == 29 && got.relu_clip == 20.0f,
        "geometry %d %d %d %d %g", got.n_input, got.n_context, got.n_hidden, got.n_classes, (double)got.relu_clip);

  /* The folder's description: none yet, then written and read back; a damaged file is an error. */
  int rate = 0, len = 0, step = 0, found = -1;
  CHECK_INT(cls_checkpoint_read_features(dir, &rate, &len, &step, &found, &err), CLS_OK);
  CHECK_INT(found, 0);
  CHECK_INT(cls_checkpoint_describe(dir, SMOKE "/alphabet.txt", 8000, 25, 10, &err), CLS_OK);
  remember(tmp_path("ckpt/alphabet.txt"));
  remember(tmp_path("ckpt/features.txt"));
  CHECK_INT(cls_checkpoint_read_features(dir, &rate, &len, &step, &found, &err), CLS_OK);
  CHECK(found == 1 && rate == 8000 && len == 25 && step == 10, "read back %d: %d %d %d", found, rate, len, step);
  char *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  CHECK_INT(cls_read_file(SMOKE "/alphabet.txt", &a, &na, &err), CLS_OK);
  CHECK_INT(cls_read_file(tmp_path("ckpt/alphabet.txt"), &b, &nb, &err), CLS_OK);
  CHECK(a && b && na == nb && !memcmp(a, b, na), "alphabet.txt is not a byte copy (%zu, %zu bytes)", na, nb);
  free(a);
  free(b);
  write_text("ckpt/features.txt", "audio_sample_rate=16000\nfeature_win_len=x\n");
  CHECK_INT(cls_checkpoint_read_features(dir, &rate, &len, &step, &found, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "features.txt:2: ");
  write_text("ckpt/features.txt", "audio_sample_rate=16000\nfeature_win_len=32\n");
  CHECK_INT(cls_checkpoint_read_features(dir, &rate, &len, &step, &found, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "no feature_win_step");
}

typedef struct collected {
  float *logits;  /* [n batches][rows * C] */
  int time[4], batch[4], first[4], n;
} collected;

static void collect(void *user, int first, int batch, int time, const float *logits, const int *frames) {
  collected *c = user;
  (void)frames;
  if (c->n >= 4) return;
  size_t count = (size_t)time * (size_t)batch * (size_t)model.n_classes;
  c->logits = realloc(c->logits, ((size_t)c->n + 1) * 400 * 2 * model.n_classes * sizeof(float));
  memcpy(c->logits + (size_t)c->n * 400 * 2 * model.n_classes, logits, count * sizeof(float));
  c->time[c->n] = time;
  c->batch[c->n] = batch;
  c->first[c->n] = first;
  c->n++;
}

/* Infer against a tower's evaluation of the same parameters (the old transcription path). */
static void check_against_tower(cls_engine *e, int device, int host_features) {
  const char *paths[3] = {SMOKE "/LDC93S1.wav", CLS_TEST_DATA "/formats/digits-1.flac",
                          SMOKE "/LDC93S1_pcms16le_2_44100.wav"};
  const int max_frames = 400;
  cls_error err;
  cls_mfcc_config fc = cls_mfcc_default(16000);
  cls_mfcc_tables *tables = NULL;
  CHECK_INT(cls_mfcc_tables_create(&fc, &tables, &err), CLS_OK);
  cls_tower_config tc = {model, tables, host_features, 2, max_frames, 1, NULL, 0, 0};
  cls_tower *tower = NULL;
  CHECK_INT(cls_tower_create(e, device, &tc, &tower), CLS_OK);
  cls_infer_config ic = {model, fc, host_features, NULL, 2, max_frames, 0, 0};
  cls_infer *infer = NULL;
  CHECK_INT(cls_infer_create(e, device, &ic, &infer), CLS_OK);
  if (!tower || !infer) {
    cls_tower_destroy(tower);
    cls_infer_destroy(infer);
    cls_mfcc_tables_destroy(tables);
    return;
  }
  const size_t n = cls_tower_param_count(tower), pb = n * sizeof(float);
  printf("  device memory (%s features): tower %zu bytes, forward-only %zu bytes (parameters %zu bytes)\n",
         host_features ? "host" : "device", cls_tower_device_bytes(tower), cls_infer_device_bytes(infer), pb);
  CHECK(cls_infer_device_bytes(infer) == cls_tower_device_bytes(tower) - 3 * pb,
        "forward-only replica holds %zu bytes, the tower %zu less 3 x %zu (gradient, Adam m and v)",
        cls_infer_device_bytes(infer), cls_tower_device_bytes(tower), pb);
  float *p = malloc(pb), *zeros = calloc(n, sizeof *zeros);
  for (size_t i = 0; i < n; i++) p[i] = 0.2f * sinf((float)i * 0.37f);
  CHECK_INT(cls_tower_write_state(tower, p, zeros, zeros), CLS_OK);
  /* The replica takes the same parameters from a checkpoint (Adam slots not read). */
  cls_checkpoint_vars s;
  memset(&s, 0, sizeof s);
  s.adam = cls_adam_state_init(0.9f, 0.999f);
  const char *ckpt = tmp_path(host_features ? "host.safetensors" : "device.safetensors");
  CHECK_INT(cls_checkpoint_save(ckpt, &model, p, zeros, zeros, &s, NULL, 0, &err), CLS_OK);
  remember(ckpt);
  CHECK_INT(cls_infer_load(infer, ckpt), CLS_OK);

  collected got;
  memset(&got, 0, sizeof got);
  CHECK_INT(cls_infer_run(infer, paths, 3, 2, collect, &got), CLS_OK);
  CHECK_INT(got.n, 2);
  cls_utterance u[3];
  for (int i = 0; i < 3; i++) u[i] = (cls_utterance){paths[i], NULL, 0};
  cls_loader_options lo = {.tables = tables, .n_context = model.n_context, .host_features = host_features, .depth = 1};
  cls_loader *l = NULL;
  CHECK_INT(cls_loader_start(u, 3, 2, &lo, &l, &err), CLS_OK);
  float *logits = malloc((size_t)max_frames * 2 * model.n_classes * sizeof *logits), losses[2];
  int k = 0;
  for (cls_host_batch *b; l && (b = cls_loader_next(l)); k++) {
    int time = 0;
    CHECK_INT(cls_tower_evaluate(tower, b, losses, logits, &time), CLS_OK);
    if (k < got.n) {
      size_t count = (size_t)time * (size_t)b->batch * (size_t)model.n_classes;
      CHECK(got.time[k] == time && got.batch[k] == b->batch && got.first[k] == b->first, "batch %d: %d x %d", k,
            got.batch[k], got.time[k]);
      CHECK(!memcmp(got.logits + (size_t)k * 400 * 2 * model.n_classes, logits, count * sizeof(float)),
            "batch %d (%s features): the forward-only logits differ from the tower's", k,
            host_features ? "host" : "device");
    }
    cls_loader_done(l, b);
  }
  cls_loader_stop(l);
  CHECK_INT(k, 2);
  /* A checkpoint of another shape is an error naming the tensor. */
  cls_model_config wide = model;
  wide.n_hidden = 32;
  cls_param_view views[CLS_MODEL_N_TENSORS];
  float *q = calloc(cls_model_layout(&wide, views), sizeof *q);
  const char *other = tmp_path("wide.safetensors");
  CHECK_INT(cls_checkpoint_save(other, &wide, q, q, q, &s, NULL, 0, &err), CLS_OK);
  remember(other);
  CHECK_INT(cls_infer_load(infer, other), CLS_ERR_IO);
  CHECK_CONTAINS(cls_engine_error(e), "layer_1/weights");
  free(q);
  free(logits);
  free(got.logits);
  free(p);
  free(zeros);
  cls_tower_destroy(tower);
  cls_infer_destroy(infer);
  cls_mfcc_tables_destroy(tables);
}

/* All the logits of each file of a run (one utterance per call). */
typedef struct per_file {
  float *logits[3];
  int frames[3];
} per_file;

static void keep_file(void *user, int first, int batch, int time, const float *logits, const int *frames) {
  per_file *p = user;
  if (batch != 1 || first < 0 || first >= 3 || frames[0] != time) return;
  size_t count = (size_t)time * (size_t)model.n_classes;
  p->logits[first] = malloc(count * sizeof(float));
  if (p->logits[first]) memcpy(p->logits[first], logits, count * sizeof(float));
  p->frames[first] = time;
}

/* Logits of the files with the replica whole (stream 0) or streamed in chunks of `stream` frames. */
static per_file run_files(cls_engine *e, int device, const float *params, const char *const *paths, int stream) {
  per_file got;
  memset(&got, 0, sizeof got);
  cls_infer_config ic = {model, cls_mfcc_default(16000), 1, NULL, 1, stream ? 1 : 400, 0, stream};
  cls_infer *infer = NULL;
  CHECK_INT(cls_infer_create(e, device, &ic, &infer), CLS_OK);
  if (infer) {
    CHECK_INT(cls_infer_write_params(infer, params), CLS_OK);
    CHECK_INT(cls_infer_run(infer, paths, 3, 1, keep_file, &got), CLS_OK);
  }
  cls_infer_destroy(infer);
  return got;
}

/* cls_infer_stream's chunks: in order, each at most the chunk, covering the file's frames; a callback's
 * error stops the stream and comes back as is; a replica made without streaming refuses. */
typedef struct chunk_seen {
  int64_t next;
  int calls, out_of_order, stop_after;
} chunk_seen;

static cls_status see_chunk(void *user, int64_t first, int n, const float *logits) {
  chunk_seen *c = user;
  if (first != c->next || n < 1 || n > 50 || !logits) c->out_of_order++;
  c->next = first + n;
  return ++c->calls == c->stop_after ? CLS_ERR_IO : CLS_OK;
}

static void check_stream_chunks(cls_engine *e, int device, const float *params, const char *path, int frames) {
  cls_infer_config ic = {model, cls_mfcc_default(16000), 1, NULL, 1, 1, 0, 50};
  cls_infer *infer = NULL;
  CHECK_INT(cls_infer_create(e, device, &ic, &infer), CLS_OK);
  if (!infer) return;
  CHECK_INT(cls_infer_write_params(infer, params), CLS_OK);
  chunk_seen c = {0, 0, 0, 0};
  int64_t got = 0;
  CHECK_INT(cls_infer_stream(infer, path, see_chunk, &c, &got), CLS_OK);
  CHECK(got == frames && c.next == frames && c.calls == (frames + 49) / 50 && c.out_of_order == 0,
        "streamed %lld frames in %d chunks (%d out of order), expected %d frames", (long long)got, c.calls,
        c.out_of_order, frames);
  chunk_seen stop = {0, 0, 0, 2};
  CHECK_INT(cls_infer_stream(infer, path, see_chunk, &stop, NULL), CLS_ERR_IO);
  CHECK_INT(stop.calls, 2);
  cls_infer_destroy(infer);
  cls_infer_config whole = {model, cls_mfcc_default(16000), 1, NULL, 1, 400, 0, 0};
  CHECK_INT(cls_infer_create(e, device, &whole, &infer), CLS_OK);
  if (infer) CHECK_INT(cls_infer_stream(infer, path, see_chunk, &c, NULL), CLS_ERR_INVALID_ARGUMENT);
  cls_infer_destroy(infer);
}

/* Streaming (issue 15): an utterance run in chunks, the audio, features and context windows a chunk at
 * a time and the LSTM state carried over, gives the whole utterance's logits. Chunks of 7 and 16
 * frames (shorter than the 2 x 9 frames of context, so a chunk's windows reach into the chunks on both
 * sides), 50, and one chunk larger than the file. The features and windows are the same values; the
 * GEMMs see other row counts, whose blocking may change a sum's order: bound 1e-5 absolute on logits
 * of magnitude ~1 (measured below). */
static void check_streaming(cls_engine *e, int device) {
  const char *paths[3] = {SMOKE "/LDC93S1.wav", CLS_TEST_DATA "/formats/digits-1.flac",
                          SMOKE "/LDC93S1_pcms16le_2_44100.wav"};
  cls_param_view views[CLS_MODEL_N_TENSORS];
  const size_t n = cls_model_layout(&model, views);
  float *p = malloc(n * sizeof *p);
  for (size_t i = 0; i < n; i++) p[i] = 0.2f * sinf((float)i * 0.37f);
  per_file whole = run_files(e, device, p, paths, 0);
  const int chunks[4] = {7, 16, 50, 1000};
  for (int c = 0; c < 4; c++) {
    per_file got = run_files(e, device, p, paths, chunks[c]);
    for (int f = 0; f < 3; f++) {
      CHECK(got.frames[f] == whole.frames[f] && got.frames[f] > 0, "%s in chunks of %d: %d frames, whole %d", paths[f],
            chunks[c], got.frames[f], whole.frames[f]);
      if (got.frames[f] != whole.frames[f] || !got.logits[f] || !whole.logits[f]) continue;
      char what[256];
      snprintf(what, sizeof what, "streamed in chunks of %d vs whole: %s", chunks[c], strrchr(paths[f], '/') + 1);
      tst_compare(what, got.logits[f], whole.logits[f], (size_t)got.frames[f] * model.n_classes, 0, 1e-5);
    }
    for (int f = 0; f < 3; f++) free(got.logits[f]);
  }
  for (int f = 0; f < 3; f++) free(whole.logits[f]);
  /* Streaming takes one utterance at a time. */
  cls_infer_config bad = {model, cls_mfcc_default(16000), 1, NULL, 2, 1, 0, 16};
  cls_infer *infer = NULL;
  CHECK_INT(cls_infer_create(e, device, &bad, &infer), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_engine_error(e), "one utterance at a time");
  check_stream_chunks(e, device, p, paths[0], whole.frames[0]);
  free(p);
}

int main(void) {
  if (!data_present()) return check_finish("test_infer");
  if (!data_files_open("test_infer")) return 1;
  check_frame_count();
  check_choice_and_folder();
  cls_engine_options eo = cls_engine_options_from_environment();
  eo.log_level = CLS_LOG_INFO;
  cls_engine *e = NULL;
  CHECK_INT(cls_engine_create(&eo, &e), CLS_OK);
  int sel[8], n_sel = 0;
  CHECK_INT(cls_engine_select(e, "0:0", sel, 8, &n_sel), CLS_OK);
  CHECK_INT(cls_engine_prepare(e, sel, &n_sel), CLS_OK);
  if (n_sel >= 1) {
    check_against_tower(e, sel[0], 0);
    check_against_tower(e, sel[0], 1);
    check_streaming(e, sel[0]);
  }
  cls_engine_destroy(e);
  data_files_close();
  return check_finish("test_infer");
}
