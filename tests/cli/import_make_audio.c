/* The import tests' audio writer: `import_make_audio IN OUT` reads IN with libsndfile and writes its
 * samples to OUT in the format OUT's extension names (.mp3: MPEG layer III through lame; .flac: 16-bit
 * FLAC; .opus: Ogg Opus; .wav: 32-bit float WAV, so that a lossy file's decoded samples are kept exactly). */
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ends(const char *s, const char *t) {
  size_t n = strlen(s), m = strlen(t);
  return n >= m && strcmp(s + n - m, t) == 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: import_make_audio IN OUT\n");
    return 2;
  }
  SF_INFO in_info = {0};
  SNDFILE *in = sf_open(argv[1], SFM_READ, &in_info);
  if (!in) {
    fprintf(stderr, "%s: %s\n", argv[1], sf_strerror(NULL));
    return 1;
  }
  int format;
  if (ends(argv[2], ".mp3")) format = SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
  else if (ends(argv[2], ".flac")) format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
  else if (ends(argv[2], ".opus")) format = SF_FORMAT_OGG | SF_FORMAT_OPUS;
  else format = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
  SF_INFO out_info = {0};
  out_info.samplerate = in_info.samplerate;
  out_info.channels = in_info.channels;
  out_info.format = format;
  SNDFILE *out = sf_open(argv[2], SFM_WRITE, &out_info);
  if (!out) {
    fprintf(stderr, "%s: %s\n", argv[2], sf_strerror(NULL));
    sf_close(in);
    return 1;
  }
  float buf[4096];
  const sf_count_t per = 4096 / in_info.channels;
  sf_count_t n;
  while ((n = sf_readf_float(in, buf, per)) > 0) {
    if (sf_writef_float(out, buf, n) != n) {
      fprintf(stderr, "%s: %s\n", argv[2], sf_strerror(out));
      return 1;
    }
  }
  sf_close(in);
  return sf_close(out) == 0 ? 0 : 1;
}
