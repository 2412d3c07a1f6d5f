/* The batch loader's worker threads (data/batch_loader.h): the same utterances through a loader of 1
 * worker and of 4 give byte-identical batches (audio, frames, labels, audio_seconds, windows, errors)
 * on the device-features path, with --augment's host augmentations (codec, volume, reverb, resample,
 * tempo's frames, the signal domain's masks and noise) and on the host-features path through the
 * feature cache; a batch with two unreadable files reports the first with any number of workers; and
 * a loader stopped mid-epoch with 4 workers busy returns promptly (ASan: and leaks nothing). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "data_present.h"
#include "data_files.h"
#include "clspeech/features.h"
#include "data/batch_loader.h"

#define N_UTTS 14
#define MAX_AUGS 8

/* A growing byte record of everything a loader's batches carry. */
typedef struct record {
  unsigned char *bytes;
  size_t n, cap;
} record;

static void put(record *r, const void *p, size_t n) {
  if (r->n + n > r->cap) {
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->n + n) cap *= 2;
    unsigned char *grown = realloc(r->bytes, cap);
    if (!grown) abort();
    r->bytes = grown;
    r->cap = cap;
  }
  if (n) memcpy(r->bytes + r->n, p, n);
  r->n += n;
}

static void put_batch(record *r, const cls_host_batch *b, int n_coeff, int n_context) {
  put(r, &b->batch, sizeof b->batch);
  put(r, &b->first, sizeof b->first);
  put(r, &b->error.status, sizeof b->error.status);
  put(r, b->error.text, strlen(b->error.text) + 1);
  if (b->error.status != CLS_OK) return; /* the rest of a failed batch is unspecified */
  put(r, &b->time, sizeof b->time);
  put(r, &b->max_label, sizeof b->max_label);
  put(r, &b->audio_seconds, sizeof b->audio_seconds);
  put(r, &b->augmented, sizeof b->augmented);
  put(r, b->frames, (size_t)b->batch * sizeof *b->frames);
  put(r, b->label_len, (size_t)b->batch * sizeof *b->label_len);
  put(r, b->labels, (size_t)b->batch * (size_t)b->max_label * sizeof *b->labels);
  if (b->host_windows) {
    put(r, b->windows, (size_t)b->time * (size_t)b->batch * (size_t)((2 * n_context + 1) * n_coeff) * sizeof(float));
    return;
  }
  for (int i = 0; i < b->batch; i++) {
    put(r, &b->n_audio[i], sizeof b->n_audio[i]);
    put(r, b->audio[i], b->n_audio[i] * sizeof(float));
  }
}

/* Every batch of utts through a loader of `workers` workers, recorded. */
static record load_all(const cls_utterance *u, int n, int batch, cls_loader_options o, int workers) {
  record r = {0};
  o.workers = workers;
  cls_loader *l = NULL;
  cls_error err;
  CHECK(cls_loader_start(u, n, batch, &o, &l, &err) == CLS_OK, "loader: %s", err.text);
  int batches = 0;
  for (cls_host_batch *b; l && (b = cls_loader_next(l)); batches++) {
    put_batch(&r, b, o.tables->cfg.n_coeff, o.n_context);
    cls_loader_done(l, b);
  }
  cls_loader_stop(l);
  CHECK_INT(batches, (n + batch - 1) / batch);
  return r;
}

static void same_with_workers(const char *what, const cls_utterance *u, int n, int batch, cls_loader_options o) {
  record one = load_all(u, n, batch, o, 1);
  for (int workers = 2; workers <= 4; workers += 2) {
    record many = load_all(u, n, batch, o, workers);
    CHECK(one.n > 0 && one.n == many.n && !memcmp(one.bytes, many.bytes, one.n),
          "%s: the batches of %d workers (%zu bytes) differ from one worker's (%zu bytes)", what, workers, many.n,
          one.n);
    free(many.bytes);
  }
  free(one.bytes);
}

static const char *const files[] = {
    SMOKE "/LDC93S1.wav",
    SMOKE "/LDC93S1_pcms16le_1_8000.wav",
    SMOKE "/LDC93S1_pcms16le_2_44100.wav",
    CLS_TEST_DATA "/formats/digits-1.wav",
    CLS_TEST_DATA "/formats/digits-1.flac",
    CLS_TEST_DATA "/formats/digits-2.ogg",
    SMOKE "/LDC93S1_pcms16le_1_16000.wav",
};

static int32_t labels[N_UTTS][N_UTTS + 1];

static void utterances(cls_utterance *u) {
  for (int i = 0; i < N_UTTS; i++) {
    for (int j = 0; j <= i; j++) labels[i][j] = 1 + (i * 7 + j) % 28;
    u[i] = (cls_utterance){files[i % 7], labels[i], 1 + i % 5 * 3};
  }
}

static void test_identical(const cls_mfcc_tables *t) {
  cls_utterance u[N_UTTS];
  utterances(u);
  cls_loader_options o = {.tables = t, .n_context = 9, .depth = 2};
  same_with_workers("decoded audio", u, N_UTTS, 4, o);

  static const char *const specs[] = {"codec[p=0.8,bitrate=8000~4000]", "volume[p=0.5]", "reverb[p=0.5]",
                                      "resample[p=0.5]", "tempo[p=0.5]", "time_mask[p=0.5,domain=signal]",
                                      "dropout[p=0.5,domain=signal]", "add[p=0.5,domain=signal]"};
  cls_augmentation augs[MAX_AUGS];
  int n_augs = 0;
  for (int i = 0; i < (int)(sizeof specs / sizeof *specs); i++) {
    cls_error err;
    cls_status st = cls_augment_parse(specs[i], &augs[n_augs], &err);
    CHECK(st == CLS_OK, "%s: %s", specs[i], err.text);
    if (st == CLS_OK) n_augs++;
  }
  cls_loader_options a = {.tables = t, .n_context = 9, .depth = 3, .augment = 1, .run_epoch = 1, .epochs = 3,
                          .epoch_size = N_UTTS, .index_local = 4, .index_global = 4, .epoch_key = 5,
                          .augs = augs, .n_augs = n_augs, .seed = 1234};
  same_with_workers("augmented audio", u, N_UTTS, 4, a);
  record plain = load_all(u, N_UTTS, 4, o, 1), augmented = load_all(u, N_UTTS, 4, a, 1);
  CHECK(plain.n != augmented.n || memcmp(plain.bytes, augmented.bytes, plain.n) != 0,
        "the augmented batches equal the plain ones: no augmentation was applied");
  free(plain.bytes);
  free(augmented.bytes);
  same_with_workers("augmented audio, batches of 5", u, N_UTTS, 5, a);

  cls_loader_options h = {.tables = t, .n_context = 9, .depth = 2, .host_features = 1};
  same_with_workers("host features", u, N_UTTS, 4, h);
  h.feature_cache = tmp_path("cache");
  free(load_all(u, N_UTTS, 4, h, 4).bytes); /* the cache filled (a hit's seconds come from its frames) */
  for (int i = 0; i < 7; i++) { /* every file is in it, so the next pass reads the cache */
    char key[65];
    float *feats = NULL;
    size_t frames = 0;
    CHECK(cls_feature_cache_key(files[i], &t->cfg, key, NULL) == CLS_OK &&
              cls_feature_cache_load(h.feature_cache, key, t->cfg.n_coeff, &feats, &frames),
          "%s: not in the feature cache after a pass", files[i]);
    free(feats);
  }
  same_with_workers("host features through the cache", u, N_UTTS, 4, h);
}

/* Two unreadable files in one batch (one not audio, one missing): the batch names the first. */
static void test_first_error(const cls_mfcc_tables *t) {
  cls_utterance u[N_UTTS];
  utterances(u);
  const char *bad1 = CLS_TEST_DATA "/formats/formats.csv", *bad2 = CLS_TEST_DATA "/formats/missing.wav";
  u[3].path = bad1;
  u[6].path = bad2;
  static const char *const spec = "codec[p=1,bitrate=8000~4000]";
  cls_augmentation aug;
  cls_error err;
  CHECK(cls_augment_parse(spec, &aug, &err) == CLS_OK, "%s: %s", spec, err.text);
  for (int augment = 0; augment < 2; augment++)
    for (int workers = 1; workers <= 4; workers++)
      for (int rep = 0; rep < (workers > 1 ? 4 : 1); rep++) {
        cls_loader_options o = {.tables = t, .n_context = 9, .depth = 2, .workers = workers, .augment = augment,
                                .epochs = 1, .epoch_size = N_UTTS, .augs = &aug, .n_augs = augment, .seed = 9};
        cls_loader *l = NULL;
        CHECK(cls_loader_start(u, N_UTTS, 8, &o, &l, &err) == CLS_OK, "loader: %s", err.text);
        cls_host_batch *b = l ? cls_loader_next(l) : NULL;
        CHECK(b && b->error.status != CLS_OK, "a batch with unreadable files loaded (%d workers)", workers);
        if (b) {
          CHECK_CONTAINS(b->error.text, bad1);
          CHECK(!strstr(b->error.text, bad2), "%d workers named the later file: %s", workers, b->error.text);
          for (int i = 4; i < b->batch; i++) CHECK(!b->audio[i], "audio after the failing utterance %d", i);
          cls_loader_done(l, b);
        }
        b = l ? cls_loader_next(l) : NULL; /* the next batch loads */
        CHECK(b && b->error.status == CLS_OK, "the batch after: %s", b ? b->error.text : "none");
        if (b) cls_loader_done(l, b);
        cls_loader_stop(l);
      }
}

/* Stopping with batches left and workers busy (codec on every utterance) joins them promptly. */
static void test_stop(const cls_mfcc_tables *t) {
  enum { N = 64 };
  cls_utterance u[N];
  for (int i = 0; i < N; i++) u[i] = (cls_utterance){files[i % 7], labels[0], 1};
  cls_augmentation aug;
  cls_error err;
  CHECK(cls_augment_parse("codec[p=1,bitrate=8000~4000]", &aug, &err) == CLS_OK, "codec: %s", err.text);
  for (int taken = 0; taken < 3; taken++) {
    cls_loader_options o = {.tables = t, .n_context = 9, .depth = 3, .workers = 4, .augment = 1, .epochs = 1,
                            .epoch_size = N, .augs = &aug, .n_augs = 1};
    cls_loader *l = NULL;
    CHECK(cls_loader_start(u, N, 8, &o, &l, &err) == CLS_OK, "loader: %s", err.text);
    cls_host_batch *b = NULL;
    for (int k = 0; l && k < taken && (b = cls_loader_next(l)); k++)
      if (k + 1 < taken) cls_loader_done(l, b); /* the last one taken is still held at the stop */
    const double t0 = (cls_now_ms() / 1e3);
    cls_loader_stop(l);
    const double s = (cls_now_ms() / 1e3) - t0;
    /* at most the utterances under way: one each, ~0.1 s of codec at most (sanitizers ~10x) */
    CHECK(s < 5.0, "stopping with %d batches taken took %.2f s", taken, s);
    printf("  stop with %d batches taken, 4 workers busy with codec: %.3f s\n", taken, s);
  }
}

int main(void) {
  if (!data_present()) return check_finish("test_batch_loader");
  if (!data_files_open("test_batch_loader")) return 1;
  cls_mfcc_config cfg = cls_mfcc_default(16000);
  cls_mfcc_tables *t = NULL;
  cls_error err;
  CHECK(cls_mfcc_tables_create(&cfg, &t, &err) == CLS_OK, "tables: %s", err.text);
  if (t) {
    CHECK(cls_loader_workers(1, 8) == 1 && cls_loader_workers(6, 4) == 4, "explicit workers");
    const int automatic = cls_loader_workers(0, 8);
    CHECK(automatic >= 1 && automatic <= 8 && cls_loader_workers(0, 2) <= 2, "automatic workers %d", automatic);
    test_identical(t);
    test_first_error(t);
    test_stop(t);
  }
  cls_mfcc_tables_destroy(t);
  remove_dir(tmp_path("cache"));
  data_files_close();
  return check_finish("test_batch_loader");
}
