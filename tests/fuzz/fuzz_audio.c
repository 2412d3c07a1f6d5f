/* libFuzzer target: the audio reader (engine/features/audio.c) on arbitrary bytes. The input is
 * written to one temporary file (the cls_audio API takes paths), then probed, read whole at its own
 * rate and resampled to 16 kHz, and streamed in small odd-sized chunks; the three must agree with each
 * other and with the probe's header. Any crash, sanitizer report, leak or failed agreement is a find.
 * Seeds: tests/fuzz/corpus/audio (see its README). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clspeech/features.h"
#include "fuzz_files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tmp_path[64];

static void remove_tmp(void) {
  if (tmp_path[0]) unlink(tmp_path);
}

/* The input as a file; 0 on failure (the input is then skipped). */
static int write_input(const uint8_t *data, size_t size) {
  if (!tmp_path[0]) {
    snprintf(tmp_path, sizeof tmp_path, "/tmp/clspeech-fuzz-audio-XXXXXX");
    int fd = mkstemp(tmp_path);
    if (fd < 0) {
      tmp_path[0] = '\0';
      return 0;
    }
    close(fd);
    atexit(remove_tmp);
  }
  return fuzz_write_file(tmp_path, data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1 << 20) || !write_input(data, size)) return 0;
  cls_audio_header h;
  cls_error detail, err;
  const int fine = cls_audio_probe(tmp_path, &h, &detail) == CLS_AUDIO_FINE;
  if (fine && (h.sample_rate < CLS_AUDIO_MIN_RATE || h.sample_rate > CLS_AUDIO_MAX_RATE || h.channels < 1 ||
               h.channels > CLS_AUDIO_MAX_CHANNELS || h.frames < 1))
    abort(); /* the probe let through a header out of bounds */
  cls_audio a;
  cls_status st = cls_audio_read(tmp_path, 0, &a, &err);
  if (st == CLS_OK) {
    if (!fine || (long long)a.n_samples != h.frames) abort(); /* a read the probe did not vouch for */
    /* The stream gives the same samples in chunks of 7. */
    cls_audio_stream *s = NULL;
    if (cls_audio_stream_open(tmp_path, 0, &s, NULL, &err) == CLS_OK) {
      float chunk[7];
      size_t at = 0, got = 0;
      while (cls_audio_stream_read(s, chunk, 7, &got, &err) == CLS_OK && got > 0) {
        if (at + got > a.n_samples || memcmp(chunk, a.samples + at, got * sizeof *chunk)) abort();
        at += got;
      }
      cls_audio_stream_close(s);
    }
    cls_audio_free(&a);
    /* Resampled (the rate differs for most inputs); bounded by the checked header. */
    if (h.frames < 200000 && cls_audio_read(tmp_path, 16000, &a, &err) == CLS_OK) {
      if ((double)a.n_samples > (double)h.frames * 16000.0 / h.sample_rate + 2) abort();
      cls_audio_free(&a);
    }
  } else if (!strstr(err.text, tmp_path)) {
    abort(); /* every error names the file */
  }
  return 0;
}
