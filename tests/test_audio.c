/* The audio frontend: libsndfile decoding and scaling against Python's reading of the same WAV,
 * host MFCC features against TensorFlow's AudioSpectrogram + Mfcc (fixtures from
 * tests/ref/make_mfcc_fixtures.py), WAV/FLAC/OGG copies of the same speech, downmixing and
 * resampling, and bad input with the messages a user sees. Needs data. */
#include <unistd.h>

#include "check.h"
#include "data_present.h"
#include "clspeech/features.h"
#include "features/mfcc_device.h"
#include "ops_test.h"


/* Features of a file through the host path; *frames set; NULL on error (err filled). */
static float *host_features(const char *path, int rate, size_t *frames, cls_error *err) {
  cls_audio a;
  if (cls_audio_read(path, rate, &a, err) != CLS_OK) return NULL;
  cls_mfcc_config cfg = cls_mfcc_default(a.sample_rate);
  cls_mfcc_tables *t = NULL;
  float *out = NULL;
  if (cls_mfcc_tables_create(&cfg, &t, err) == CLS_OK) {
    *frames = cls_mfcc_frames(t, a.n_samples);
    out = malloc((*frames ? *frames : 1) * (size_t)cfg.n_coeff * sizeof *out);
    if (out) cls_mfcc_host(t, a.samples, a.n_samples, out);
  }
  cls_mfcc_tables_destroy(t);
  cls_audio_free(&a);
  return out;
}

/* Reads a fixture's audio: its "file" under the shared data (the path in path[cap]), at its "sample_rate",
   which it returns (a CHECK fails when the file cannot be read). */
static int read_fixture_audio(const cls_safetensors *fx, cls_audio *a, char *path, size_t cap) {
  cls_error err;
  snprintf(path, cap, "%s/%s", CLS_TEST_DATA, fx ? cls_safetensors_meta(fx, "file") : "?");
  int rate = fx ? tst_meta_int(fx, "sample_rate") : 16000;
  CHECK_INT(cls_audio_read(path, rate, a, &err), CLS_OK);
  return rate;
}

static void tf_case(const char *fixture) {
  cls_safetensors *fx = tst_fixture(fixture);
  if (!fx) return;
  char path[1024];
  cls_error err;
  cls_audio a;
  int rate = read_fixture_audio(fx, &a, path, sizeof path), frames_ref = tst_meta_int(fx, "frames");
  const float *first = tst_tensor(fx, "first_samples", CLS_F32, 256);
  if (a.samples && first) {
    CHECK_INT(a.n_samples, tst_meta_int(fx, "n_samples"));
    char what[256];
    snprintf(what, sizeof what, "%s samples (int16/32767)", fixture);
    tst_compare(what, a.samples, first, 256, 0, 0); /* the same scaling, exactly */
  }
  cls_audio_free(&a);
  size_t frames = 0;
  float *feats = host_features(path, rate, &frames, &err);
  CHECK(feats != NULL, "%s", err.text);
  CHECK_INT(frames, frames_ref);
  const float *ref = tst_tensor(fx, "features", CLS_F32, (int64_t)frames_ref * 26);
  if (feats && ref && (int)frames == frames_ref) {
    char what[256];
    snprintf(what, sizeof what, "%s host MFCC vs TF", fixture);
    /* Both evaluate in double with a float32 spectrogram between the stages; only the FFT algorithm
       differs (radix-2 here, Ooura in TF). Bound: 2e-5 absolute + 1e-5 relative per coefficient. */
    tst_compare(what, feats, ref, (size_t)frames * 26, 1e-5, 2e-5);
  }
  free(feats);
  cls_safetensors_free(fx);
}

/* Pearson correlation of two feature matrices' values. */
static double correlation(const float *a, const float *b, size_t n) {
  double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; i++) {
    ma += a[i];
    mb += b[i];
  }
  ma /= (double)n;
  mb /= (double)n;
  for (size_t i = 0; i < n; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / sqrt(saa * sbb);
}

/* The device path on every device: one batch of the 16 kHz clips (different lengths) and the 8 kHz
   clip alone, features against TensorFlow's, and the context windows against the features. */
static void device_case(tst_env *env, int dev, const char *const *fixtures, int n) {
  cls_safetensors *fx[8];
  cls_audio audio[8];
  const float *samples[8];
  size_t n_samples[8];
  char path[1024];
  cls_error err;
  int rate = 0;
  for (int i = 0; i < n; i++) {
    fx[i] = tst_fixture(fixtures[i]);
    rate = read_fixture_audio(fx[i], &audio[i], path, sizeof path);
    samples[i] = audio[i].samples;
    n_samples[i] = audio[i].n_samples;
  }
  cls_mfcc_config cfg = cls_mfcc_default(rate);
  cls_mfcc_tables *t = NULL;
  CHECK_INT(cls_mfcc_tables_create(&cfg, &t, &err), CLS_OK);
  cls_mfcc_plan *plan = NULL;
  cls_status st = cls_mfcc_create(env->engine, dev, t, &plan);
  CHECK(st == CLS_OK, "mfcc plan: %s", cls_engine_error(env->engine));
  size_t total = 0;
  for (int i = 0; i < n; i++) total += cls_mfcc_frames(t, n_samples[i]);
  float *feats = malloc(total * 26 * sizeof *feats);
  int frames[8], T = 0;
  const int width = 19 * 26;
  cl_mem windows = NULL;
  if (plan) {
    /* Room for T*B rows; T is known after the call, so size for the longest clip. */
    size_t max_f = 0;
    for (int i = 0; i < n; i++) max_f = cls_mfcc_frames(t, n_samples[i]) > max_f ? cls_mfcc_frames(t, n_samples[i]) : max_f;
    windows = tst_buffer(env, dev, NULL, (3 + max_f * (size_t)n * width) * sizeof(float));
    st = cls_mfcc_compute(plan, tst_queue(env, dev), n, samples, n_samples, 9, cls_buf_at(windows, 3), &T, frames, feats);
    CHECK(st == CLS_OK, "mfcc compute: %s", cls_engine_error(env->engine));
  }
  size_t base = 0;
  for (int i = 0; plan && st == CLS_OK && i < n; i++) {
    const float *ref = tst_tensor(fx[i], "features", CLS_F32, (int64_t)frames[i] * 26);
    char what[256];
    snprintf(what, sizeof what, "device %s", fixtures[i]);
    /* With fp64 the device frames and transforms in double as TF does: within 1e-4 absolute +
       1e-5 relative per coefficient (the float32 filterbank and DCT). Without fp64 the float32
       FFT's noise floor shows in near-empty bins, which the log magnifies: only natural
       recordings are compared, within 2e-3 absolute. */
    int fp64 = cls_engine_device(env->engine, dev)->fp64;
    int synthetic = strstr(fixtures[i], "digits") != NULL;
    if (ref && (fp64 || !synthetic))
      tst_compare(what, feats + base * 26, ref, (size_t)frames[i] * 26, fp64 ? 1e-5 : 1e-4, fp64 ? 1e-4 : 2e-3);
    base += (size_t)frames[i];
  }
  if (plan && st == CLS_OK) {
    size_t rows = (size_t)T * (size_t)n;
    float *win = malloc(rows * width * sizeof *win), *expect = calloc(rows * width, sizeof *expect);
    cl_int e2 = clEnqueueReadBuffer(tst_queue(env, dev), windows, CL_TRUE, 3 * sizeof(float), rows * width * sizeof(float),
                                    win, 0, NULL, NULL);
    CHECK(e2 == CL_SUCCESS, "reading windows");
    size_t fb = 0;
    for (int b = 0; b < n; b++) {
      for (int tt = 0; tt < T; tt++)
        for (int w = 0; w < 19; w++) {
          int src = tt - 9 + w;
          if (src >= 0 && src < frames[b])
            memcpy(expect + ((size_t)tt * n + b) * width + (size_t)w * 26, feats + (fb + (size_t)src) * 26, 26 * sizeof(float));
        }
      fb += (size_t)frames[b];
    }
    tst_compare("context windows [T*B, 494] time-major", win, expect, rows * width, 0, 0);
    free(win);
    free(expect);
  }
  if (windows) clReleaseMemObject(windows);
  cls_mfcc_destroy(plan);
  cls_mfcc_tables_destroy(t);
  free(feats);
  for (int i = 0; i < n; i++) {
    cls_audio_free(&audio[i]);
    cls_safetensors_free(fx[i]);
  }
}

/* One plan over batches of different sizes: the FFT runs chunk by chunk (cls_mfcc_fft_chunk), so a clip's
   features must not depend on where its frames fall among the chunks, nor on a plan that ran a longer
   batch before. Bit-exact: each frame's transform is the same arithmetic wherever it lies. Then the same
   batch through one transform over the whole capacity (chunk 0, the path of a device whose alignment
   allows no chunk) must give the same features, bit for bit. */
static void device_chunks_case(tst_env *env, int dev, const char *const *fixtures, int n) {
  enum { COPIES = 4 };
  cls_audio audio[8];
  const float *samples[8 * COPIES];
  size_t n_samples[8 * COPIES];
  char path[1024];
  cls_error err;
  int rate = 16000;
  for (int i = 0; i < n; i++) {
    cls_safetensors *fx = tst_fixture(fixtures[i]);
    rate = read_fixture_audio(fx, &audio[i], path, sizeof path);
    cls_safetensors_free(fx);
  }
  /* The clips in turn, COPIES times: n * COPIES utterances, each copy at another place among the chunks. */
  for (int c = 0; c < COPIES; c++)
    for (int i = 0; i < n; i++) {
      samples[c * n + i] = audio[i].samples;
      n_samples[c * n + i] = audio[i].n_samples;
    }
  cls_mfcc_config cfg = cls_mfcc_default(rate);
  cls_mfcc_tables *t = NULL;
  CHECK_INT(cls_mfcc_tables_create(&cfg, &t, &err), CLS_OK);
  if (!t) {
    for (int i = 0; i < n; i++) cls_audio_free(&audio[i]);
    return;
  }
  cls_mfcc_plan *fresh = NULL, *reused = NULL;
  CHECK(cls_mfcc_create(env->engine, dev, t, &fresh) == CLS_OK, "mfcc plan: %s", cls_engine_error(env->engine));
  CHECK(cls_mfcc_create(env->engine, dev, t, &reused) == CLS_OK, "mfcc plan: %s", cls_engine_error(env->engine));
  size_t total = 0, first = cls_mfcc_frames(t, n_samples[0]);
  for (int i = 0; i < n * COPIES; i++) total += cls_mfcc_frames(t, n_samples[i]);
  float *all = malloc(total * 26 * sizeof *all), *alone = malloc(first * 26 * sizeof *alone);
  float *after = malloc(first * 26 * sizeof *after);
  int frames[8 * COPIES];
  cl_command_queue q = tst_queue(env, dev);
  const cls_buf none = {NULL, 0};
  if (fresh && reused && all && alone && after) {
    const size_t chunk = cls_mfcc_fft_chunk(reused);
    printf("  %zu frames in %zu FFT chunks of %zu\n", total, chunk ? (total + chunk - 1) / chunk : 1, chunk);
    /* CPU devices (PoCL) align buffers to 128 bytes: the chunked path is the one under test there. */
    if (cls_engine_device(env->engine, dev)->kind == CLS_DEVICE_CPU)
      CHECK(chunk > 0 && chunk < total, "FFT chunk %zu for %zu frames: the test needs several chunks", chunk, total);
    CHECK(cls_mfcc_compute(fresh, q, 1, samples, n_samples, 0, none, NULL, frames, alone) == CLS_OK, "alone: %s",
          cls_engine_error(env->engine));
    CHECK(cls_mfcc_compute(reused, q, n * COPIES, samples, n_samples, 0, none, NULL, frames, all) == CLS_OK,
          "batch: %s", cls_engine_error(env->engine));
    size_t base = 0;
    for (int u = 0; u < n * COPIES; u++) {
      const int clip = u % n;
      size_t clip_base = 0;
      for (int i = 0; i < clip; i++) clip_base += (size_t)frames[i];
      if (u >= n) {
        char what[256];
        snprintf(what, sizeof what, "copy %d of %s (frames from %zu) vs its first copy (from %zu)", u / n,
                 fixtures[clip], base, clip_base);
        tst_compare(what, all + base * 26, all + clip_base * 26, (size_t)frames[u] * 26, 0, 0);
      }
      base += (size_t)frames[u];
    }
    tst_compare("first clip in the batch vs alone", all, alone, first * 26, 0, 0);
    CHECK(cls_mfcc_compute(reused, q, 1, samples, n_samples, 0, none, NULL, frames, after) == CLS_OK,
          "after the batch: %s", cls_engine_error(env->engine));
    tst_compare("first clip alone after a longer batch vs on a fresh plan", after, alone, first * 26, 0, 0);
    cls_mfcc_plan *whole = NULL;
    float *one = malloc(total * 26 * sizeof *one);
    CHECK(cls_mfcc_create(env->engine, dev, t, &whole) == CLS_OK, "mfcc plan: %s", cls_engine_error(env->engine));
    if (whole && one) {
      cls_mfcc_set_fft_chunk(whole, 0);
      CHECK(cls_mfcc_fft_chunk(whole) == 0, "chunk %zu after setting 0", cls_mfcc_fft_chunk(whole));
      CHECK(cls_mfcc_compute(whole, q, n * COPIES, samples, n_samples, 0, none, NULL, frames, one) == CLS_OK,
            "one transform: %s", cls_engine_error(env->engine));
      tst_compare("the batch in one transform over the capacity vs by chunks", one, all, total * 26, 0, 0);
    }
    free(one);
    cls_mfcc_destroy(whole);
    /* A batch of no frames (shorter than one window) frames and transforms nothing, and fails nothing. */
    const float *tiny[1] = {audio[0].samples};
    size_t tiny_n[1] = {100};
    int tiny_frames[1] = {-1};
    CHECK(cls_mfcc_compute(reused, q, 1, tiny, tiny_n, 0, none, NULL, tiny_frames, NULL) == CLS_OK,
          "no frames: %s", cls_engine_error(env->engine));
    CHECK_INT(tiny_frames[0], 0);
  }
  free(all);
  free(alone);
  free(after);
  cls_mfcc_destroy(fresh);
  cls_mfcc_destroy(reused);
  cls_mfcc_tables_destroy(t);
  for (int i = 0; i < n; i++) cls_audio_free(&audio[i]);
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(data, 1, n, f);
    fclose(f);
  }
}

/* A FLAC made from digits-1.flac: its STREAMINFO (as the only metadata block) claiming `total`
 * samples, followed by the first `frame_bytes` bytes of its audio frames (all of them when larger). */
static void write_flac(const char *path, const unsigned char *src, size_t n, unsigned long long total,
                       size_t frame_bytes) {
  size_t at = 4; /* skip the metadata blocks to the first frame */
  while (at + 4 <= n) {
    size_t len = ((size_t)src[at + 1] << 16) | ((size_t)src[at + 2] << 8) | src[at + 3];
    int last = src[at] & 0x80;
    at += 4 + len;
    if (last) break;
  }
  if (frame_bytes > n - at) frame_bytes = n - at;
  unsigned char *out = malloc(42 + frame_bytes);
  memcpy(out, src, 42);
  out[4] = 0x80; /* STREAMINFO, the last metadata block */
  out[21] = (unsigned char)((out[21] & 0xf0) | ((total >> 32) & 0x0f));
  for (int i = 0; i < 4; i++) out[22 + i] = (unsigned char)(total >> (24 - 8 * i));
  memcpy(out + 42, src + at, frame_bytes);
  write_file(path, out, 42 + frame_bytes);
  free(out);
}

/* Expects the file rejected from its header alone (probe and read), the read's error naming it and
 * containing `why`. */
static void expect_bad_header(const char *path, const char *name, const char *why) {
  cls_audio_header h;
  cls_error detail, err;
  CHECK_INT(cls_audio_probe(path, &h, &detail), CLS_AUDIO_BAD_HEADER);
  CHECK_INT(detail.status, CLS_ERR_IO);
  CHECK_CONTAINS(detail.text, why);
  cls_audio a;
  CHECK_INT(cls_audio_read(path, 16000, &a, &err), CLS_ERR_IO);
  char want[256];
  snprintf(want, sizeof want, "%s: implausible audio header: ", name);
  CHECK_CONTAINS(err.text, want);
  CHECK_CONTAINS(err.text, why);
  cls_audio_stream *s = NULL;
  CHECK_INT(cls_audio_stream_open(path, 16000, &s, NULL, &err), CLS_ERR_IO);
  CHECK(s == NULL, "no stream for %s", name);
}

/* Headers that lie (issue 15): each rejected at the header, before anything is allocated from it, with
 * the file named. Made here from a real FLAC and by hand: a 1 Hz WAV, FLACs claiming 70 minutes in
 * 106 bytes and in a real 11 KB file of 0.9 s, and one claiming 2^34 samples. */
static void hostile_headers(void) {
  char dir[] = "/tmp/clspeech-hostile-XXXXXX", path[1024], src[1024];
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(src, sizeof src, "%s/formats/digits-1.flac", CLS_TEST_DATA);
  FILE *f = fopen(src, "rb");
  unsigned char *flac = malloc(1 << 20);
  size_t n = f ? fread(flac, 1, 1 << 20, f) : 0;
  if (f) fclose(f);
  CHECK(n > 1000, "reading %s", src);
  /* A 1 Hz WAV: 16-bit mono, 2000 samples. */
  unsigned char wav[44 + 4000];
  memset(wav, 0, sizeof wav);
  const unsigned hdr[] = {0x46464952u, 36 + 4000, 0x45564157u, 0x20746d66u, 16, 0x00010001u, 1, 2, 0x00100002u,
                          0x61746164u, 4000};
  memcpy(wav, hdr, sizeof hdr);
  snprintf(path, sizeof path, "%s/one-hertz.wav", dir);
  write_file(path, wav, sizeof wav);
  expect_bad_header(path, "one-hertz.wav", "sample rate of 1 Hz");
  /* 70 minutes (67200000 samples at 16 kHz) claimed by 106 bytes. */
  snprintf(path, sizeof path, "%s/seventy-minutes-106-bytes.flac", dir);
  write_flac(path, flac, n, 67200000ull, 64);
  expect_bad_header(path, "seventy-minutes-106-bytes.flac", "claims 67200000 samples x 1 channels (4200 s) in a file of 106 bytes");
  /* 70 minutes claimed by the whole of a real 0.9 s file: its last sample cannot be found. */
  snprintf(path, sizeof path, "%s/seventy-minutes.flac", dir);
  write_flac(path, flac, n, 67200000ull, n);
  expect_bad_header(path, "seventy-minutes.flac", "claims 67200000 samples (4200.00 s), but the data ends before");
  /* 2^34 samples: past the duration limit. */
  snprintf(path, sizeof path, "%s/two-to-the-34.flac", dir);
  write_flac(path, flac, n, 1ull << 34, 64);
  expect_bad_header(path, "two-to-the-34.flac", "claims 17179869184 samples");
  /* The same file with its true length still reads, bit for bit as the original. */
  snprintf(path, sizeof path, "%s/honest.flac", dir);
  write_flac(path, flac, n, 14534, n);
  cls_audio a, b;
  cls_error err;
  CHECK_INT(cls_audio_read(path, 16000, &a, &err), CLS_OK);
  CHECK_INT(cls_audio_read(src, 16000, &b, &err), CLS_OK);
  CHECK(a.n_samples == 14534 && b.n_samples == 14534 && !memcmp(a.samples, b.samples, 14534 * sizeof(float)),
        "the honest copy decodes as the original (%zu samples)", a.n_samples);
  cls_audio_free(&a);
  cls_audio_free(&b);
  const char *names[] = {"one-hertz.wav", "seventy-minutes-106-bytes.flac", "seventy-minutes.flac", "two-to-the-34.flac",
                         "honest.flac"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);
  free(flac);
}

int main(void) {
  if (!data_present()) return check_finish("test_audio");
  tf_case("mfcc_ldc93s1.safetensors");
  tf_case("mfcc_ldc93s1_8k.safetensors");
  tf_case("mfcc_digits1.safetensors");
  tf_case("mfcc_stars.safetensors");

  tst_env env;
  if (tst_open(&env)) {
    const char *clips16[] = {"mfcc_ldc93s1.safetensors", "mfcc_digits1.safetensors", "mfcc_stars.safetensors"};
    const char *clips8[] = {"mfcc_ldc93s1_8k.safetensors"};
    for (int i = 0; i < env.n_devices; i++) {
      printf("device %s\n", tst_device_name(&env, env.devices[i]));
      device_case(&env, env.devices[i], clips16, 3);
      device_case(&env, env.devices[i], clips8, 1);
      device_chunks_case(&env, env.devices[i], clips16, 3);
    }
    tst_close_env(&env);
  }

  /* The same speech as WAV, FLAC and OGG. */
  char path[1024];
  cls_error err;
  size_t fw = 0, ff = 0, fo = 0;
  snprintf(path, sizeof path, "%s/formats/digits-1.wav", CLS_TEST_DATA);
  float *wav = host_features(path, 16000, &fw, &err);
  snprintf(path, sizeof path, "%s/formats/digits-1.flac", CLS_TEST_DATA);
  float *flac = host_features(path, 16000, &ff, &err);
  snprintf(path, sizeof path, "%s/formats/digits-1.ogg", CLS_TEST_DATA);
  float *ogg = host_features(path, 16000, &fo, &err);
  CHECK(wav && flac && ogg, "decoding the three formats: %s", err.text);
  if (wav && flac && ogg) {
    CHECK_INT(ff, fw);
    if (ff == fw) tst_compare("FLAC features vs WAV (bit-exact)", flac, wav, fw * 26, 0, 0);
    /* Vorbis is lossy (quality 3) and drops quiet high-frequency content, which the log
       filterbank magnifies: the features agree as a whole, not value by value (measured 0.944). */
    size_t n = (fo < fw ? fo : fw) * 26;
    double r = correlation(ogg, wav, n);
    printf("  OGG vs WAV: %zu vs %zu frames, correlation of the features %.4f\n", fo, fw, r);
    CHECK(fo == fw, "OGG frames %zu vs WAV %zu", fo, fw);
    CHECK(r > 0.9, "OGG features correlate with WAV's at %.4f", r);
  }
  free(wav);
  free(flac);
  free(ogg);

  /* 44.1 kHz stereo, downmixed and resampled to 16 kHz, against the 16 kHz mono original. */
  cls_audio a16, a44;
  snprintf(path, sizeof path, "%s/deepspeech-smoke/LDC93S1_pcms16le_1_16000.wav", CLS_TEST_DATA);
  CHECK_INT(cls_audio_read(path, 16000, &a16, &err), CLS_OK);
  snprintf(path, sizeof path, "%s/deepspeech-smoke/LDC93S1_pcms16le_2_44100.wav", CLS_TEST_DATA);
  CHECK_INT(cls_audio_read(path, 16000, &a44, &err), CLS_OK);
  CHECK(a44.source_rate == 44100 && a44.source_channels == 2 && a44.sample_rate == 16000, "resampled stereo: %d Hz, %d ch",
        a44.source_rate, a44.source_channels);
  if (a16.samples && a44.samples) {
    long diff = (long)a44.n_samples - (long)a16.n_samples;
    CHECK(labs(diff) <= 2, "resampled length %zu vs %zu", a44.n_samples, a16.n_samples);
    cls_mfcc_config cfg = cls_mfcc_default(16000);
    cls_mfcc_tables *tab = NULL;
    cls_mfcc_tables_create(&cfg, &tab, &err);
    size_t n = a44.n_samples < a16.n_samples ? a44.n_samples : a16.n_samples, frames = cls_mfcc_frames(tab, n);
    float *f16 = malloc(frames * 26 * sizeof *f16), *f44 = malloc(frames * 26 * sizeof *f44);
    cls_mfcc_host(tab, a16.samples, n, f16);
    cls_mfcc_host(tab, a44.samples, n, f44);
    double r = correlation(f44, f16, frames * 26);
    printf("  44.1 kHz stereo -> 16 kHz: features correlate with the 16 kHz original's at %.4f\n", r);
    CHECK(r > 0.97, "resampled features correlate at %.4f", r);
    free(f16);
    free(f44);
    cls_mfcc_tables_destroy(tab);
  }
  cls_audio_free(&a16);
  cls_audio_free(&a44);

  /* Bad input: each a clear error naming the file. */
  char dir[] = "/tmp/clspeech-audio-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  cls_audio bad;
  snprintf(path, sizeof path, "%s/missing.wav", dir);
  CHECK_INT(cls_audio_read(path, 16000, &bad, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "missing.wav: cannot open");
  snprintf(path, sizeof path, "%s/text.wav", dir);
  write_file(path, "this is not audio at all, just text\n", 36);
  CHECK_INT(cls_audio_read(path, 16000, &bad, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "text.wav: not a readable audio file");
  /* A WAV cut off in the middle of its data. */
  char src[1024];
  snprintf(src, sizeof src, "%s/deepspeech-smoke/LDC93S1.wav", CLS_TEST_DATA);
  FILE *f = fopen(src, "rb");
  unsigned char *buf = malloc(100000);
  size_t got = f ? fread(buf, 1, 100000, f) : 0;
  if (f) fclose(f);
  snprintf(path, sizeof path, "%s/truncated.wav", dir);
  write_file(path, buf, got / 2);
  CHECK_INT(cls_audio_read(path, 16000, &bad, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "truncated.wav: truncated audio file");
  /* A WAV header with no samples. */
  snprintf(path, sizeof path, "%s/empty.wav", dir);
  unsigned char hdr[44];
  memcpy(hdr, buf, 44);
  hdr[40] = hdr[41] = hdr[42] = hdr[43] = 0;
  unsigned riff = 36;
  memcpy(hdr + 4, &riff, 4);
  write_file(path, hdr, 44);
  CHECK_INT(cls_audio_read(path, 16000, &bad, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "empty.wav: holds no audio samples");
  /* Shorter than one window: zero frames. */
  snprintf(path, sizeof path, "%s/short.wav", dir);
  unsigned data_len = 200 * 2;
  memcpy(hdr + 40, &data_len, 4);
  riff = 36 + data_len;
  memcpy(hdr + 4, &riff, 4);
  memcpy(buf, hdr, 44);
  write_file(path, buf, 44 + data_len);
  size_t frames = 99;
  float *feats = host_features(path, 16000, &frames, &err);
  CHECK(feats != NULL && frames == 0, "a 200-sample file has %zu frames", frames);
  free(feats);
  free(buf);
  const char *names[] = {"text.wav", "truncated.wav", "empty.wav", "short.wav"};
  for (size_t i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);

  hostile_headers();

  /* The feature cache: a round trip, keys that change with the parameters and the file, and a
     corrupt entry read as a miss. */
  {
    char cdir[] = "/tmp/clspeech-featcache-XXXXXX", key1[65], key2[65], key3[65], fpath[512];
    CHECK(mkdtemp(cdir) != NULL, "mkdtemp");
    snprintf(fpath, sizeof fpath, "%s/a.wav", cdir);
    write_file(fpath, "RIFF", 4);
    cls_mfcc_config c1 = cls_mfcc_default(16000), c2 = c1;
    c2.win_step_ms = 10;
    CHECK_INT(cls_feature_cache_key(fpath, &c1, key1, &err), CLS_OK);
    CHECK_INT(cls_feature_cache_key(fpath, &c2, key2, &err), CLS_OK);
    CHECK(strcmp(key1, key2) != 0, "parameters change the key");
    write_file(fpath, "RIFFx", 5);
    CHECK_INT(cls_feature_cache_key(fpath, &c1, key3, &err), CLS_OK);
    CHECK(strcmp(key1, key3) != 0, "a changed file changes the key");
    float data[52], *cached = NULL;
    for (int i = 0; i < 52; i++) data[i] = (float)i * 0.5f - 3.0f;
    size_t nf = 0;
    CHECK_INT(cls_feature_cache_load(cdir, key3, 26, &cached, &nf), 0);
    CHECK_INT(cls_feature_cache_store(cdir, key3, 26, data, 2, &err), CLS_OK);
    CHECK_INT(cls_feature_cache_load(cdir, key3, 26, &cached, &nf), 1);
    CHECK(nf == 2 && cached && !memcmp(cached, data, sizeof data), "cached features round trip");
    free(cached);
    char entry[600];
    snprintf(entry, sizeof entry, "%s/%s.feat", cdir, key3);
    FILE *ef = fopen(entry, "r+b");
    if (ef) {
      fseek(ef, 60, SEEK_SET);
      fputc(0x7f, ef);
      fclose(ef);
    }
    cached = NULL;
    CHECK_INT(cls_feature_cache_load(cdir, key3, 26, &cached, &nf), 0);
    CHECK(cached == NULL, "a corrupt entry is a miss");
    snprintf(fpath, sizeof fpath, "%s/missing.wav", cdir);
    CHECK_INT(cls_feature_cache_key(fpath, &c1, key1, &err), CLS_ERR_IO);
    unlink(entry);
    snprintf(fpath, sizeof fpath, "%s/a.wav", cdir);
    unlink(fpath);
    rmdir(cdir);
  }

  /* Window and step must be whole samples. */
  cls_mfcc_config cfg = cls_mfcc_default(22050);
  cls_mfcc_tables *t = NULL;
  CHECK_INT(cls_mfcc_tables_create(&cfg, &t, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "must be whole numbers of samples");
  return check_finish("test_audio");
}
