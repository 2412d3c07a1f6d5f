/* Streams a WAV file through a trained model with the speech-to-text API (clspeech/stt.h), as a live
 * source would: 20 ms pieces fed one at a time, the intermediate transcript printed whenever it changes
 * (with the audio time, and the milliseconds the feed and the intermediate decode took), then the final
 * transcript alone on the last line. MODEL is a checkpoint folder written by `clspeech train` or a model
 * package from `clspeech export` (.clsm, its scorer on when it has one); the WAV
 * (16-bit PCM; several channels are averaged) may be at any rate: the stream resamples it to the model's.
 *   cc stt_stream.c $(pkg-config --cflags --libs clspeech) -o stt_stream && ./stt_stream MODEL FILE.wav
 * Exit status 0, 1 when the model or the file cannot be used, 2 for a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clspeech/base.h>
#include <clspeech/stt.h>
#include <sndfile.h>

/* The whole file as 16-bit mono samples (channels averaged); NULL after printing why. */
static short *read_wav(const char *path, size_t *n, int *rate) {
  SF_INFO info;
  memset(&info, 0, sizeof info);
  SNDFILE *f = sf_open(path, SFM_READ, &info);
  if (!f) {
    fprintf(stderr, "stt_stream: %s: %s\n", path, sf_strerror(NULL));
    return NULL;
  }
  const size_t frames = info.frames > 0 ? (size_t)info.frames : 0, ch = (size_t)info.channels;
  short *all = malloc(frames * ch * sizeof *all + 1);
  short *mono = malloc(frames * sizeof *mono + 1);
  const sf_count_t got = all && mono ? sf_readf_short(f, all, (sf_count_t)frames) : 0;
  sf_close(f);
  if (!all || !mono || got <= 0) {
    fprintf(stderr, "stt_stream: %s: %s\n", path, all && mono ? "no samples" : "out of memory");
    free(all);
    free(mono);
    return NULL;
  }
  for (sf_count_t i = 0; i < got; i++) {
    long sum = 0;
    for (size_t c = 0; c < ch; c++) sum += all[(size_t)i * ch + c];
    mono[i] = (short)(sum / (long)ch);
  }
  free(all);
  *n = (size_t)got;
  *rate = info.samplerate;
  return mono;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: stt_stream MODEL FILE.wav\n");
    return 2;
  }
  char detail[1024];
  cls_stt_model *model = NULL;
  int rc = cls_stt_model_create(argv[1], NULL, &model, detail, sizeof detail);
  if (rc != CLS_STT_OK) {
    fprintf(stderr, "stt_stream: %s: %s\n", cls_stt_error_message(rc), detail);
    return 1;
  }
  size_t n = 0;
  int rate = 0;
  short *pcm = read_wav(argv[2], &n, &rate);
  cls_stt_stream *stream = NULL; /* at the file's rate: resampled to the model's when they differ */
  if (pcm) rc = cls_stt_stream_create_at(model, rate, &stream);
  const size_t piece = (size_t)rate / 50; /* 20 ms */
  char *last = NULL, *text = NULL;
  for (size_t at = 0; pcm && rc == CLS_STT_OK && at < n; at += piece) {
    const size_t k = n - at < piece ? n - at : piece;
    const double t0 = cls_now_ms();
    rc = cls_stt_stream_feed(stream, pcm + at, k);
    const double t1 = cls_now_ms();
    if (rc == CLS_STT_OK) rc = cls_stt_stream_intermediate(stream, &text);
    const double t2 = cls_now_ms();
    if (rc == CLS_STT_OK && (!last || strcmp(last, text) != 0)) {
      printf("%7.3f s  feed %6.2f ms  decode %6.2f ms  \"%s\"\n", cls_stt_stream_seconds(stream), t1 - t0, t2 - t1,
             text);
      cls_stt_string_free(last);
      last = text;
    } else {
      cls_stt_string_free(text);
    }
    text = NULL;
  }
  if (pcm && rc == CLS_STT_OK) rc = cls_stt_stream_finish(stream, &text);
  if (pcm && rc == CLS_STT_OK) printf("%s\n", text);
  else if (pcm)
    fprintf(stderr, "stt_stream: %s: %s\n", cls_stt_error_message(rc),
            stream ? cls_stt_stream_detail(stream) : cls_stt_model_detail(model));
  const int status = pcm && rc == CLS_STT_OK ? 0 : 1;
  cls_stt_string_free(text);
  cls_stt_string_free(last);
  cls_stt_stream_free(stream);
  cls_stt_model_free(model);
  free(pcm);
  return status;
}
