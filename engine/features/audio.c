/* Audio decoding, downmixing and resampling (see clspeech/features.h). Owns the libsndfile and libsamplerate
 * calls; no feature computation here. */
#include "clspeech/features.h"

#include <errno.h>
#include <samplerate.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Bits of integer PCM in a libsndfile subtype, 0 for float or compressed data. */
static int pcm_bits(int format) {
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8: return 8;
    case SF_FORMAT_PCM_16: return 16;
    case SF_FORMAT_PCM_24: return 24;
    case SF_FORMAT_PCM_32: return 32;
    default: return 0;
  }
}

/* Opens the file with libsndfile and checks its header; on CLS_AUDIO_FINE *out is the open file. */
static cls_audio_problem open_checked(const char *path, SF_INFO *info, SNDFILE **out, char *detail, size_t cap) {
  *out = NULL;
  if (cap) detail[0] = '\0';
  struct stat sb;
  if (stat(path, &sb) != 0) {
    snprintf(detail, cap, "%s", strerror(errno));
    return CLS_AUDIO_MISSING;
  }
  if (S_ISDIR(sb.st_mode)) {
    snprintf(detail, cap, "%s", strerror(EISDIR));
    return CLS_AUDIO_MISSING;
  }
  FILE *probe = fopen(path, "rb");
  if (!probe) {
    snprintf(detail, cap, "%s", strerror(errno));
    return CLS_AUDIO_MISSING;
  }
  fclose(probe);
  memset(info, 0, sizeof *info);
  SNDFILE *f = sf_open(path, SFM_READ, info);
  if (!f) {
    snprintf(detail, cap, "%s", sf_strerror(NULL));
    return CLS_AUDIO_NOT_AUDIO;
  }
  if (info->frames <= 0 || info->channels <= 0 || info->samplerate <= 0) {
    sf_close(f);
    return CLS_AUDIO_EMPTY;
  }
  /* A WAV cut short keeps the length its header promised; libsndfile notes it in its log as
     "data : N (should be M)" and reads what is there. That is a damaged file, not a short one. */
  char log[2048] = "";
  sf_command(f, SFC_GET_LOG_INFO, log, sizeof log);
  const char *data_line = strstr(log, "\ndata : ");
  const char *line_end = data_line ? strchr(data_line + 1, '\n') : NULL;
  const char *should = data_line ? strstr(data_line, "(should be") : NULL;
  if (should && (!line_end || should < line_end)) {
    sf_close(f);
    return CLS_AUDIO_TRUNCATED;
  }
  *out = f;
  return CLS_AUDIO_FINE;
}

cls_audio_problem cls_audio_probe(const char *path, cls_audio_header *h, char *detail, size_t cap) {
  SF_INFO info;
  SNDFILE *f = NULL;
  cls_audio_problem p = open_checked(path, &info, &f, detail, cap);
  if (p != CLS_AUDIO_FINE) return p;
  h->frames = (long long)info.frames;
  h->sample_rate = info.samplerate;
  h->channels = info.channels;
  sf_close(f);
  return CLS_AUDIO_FINE;
}

cls_status cls_audio_read(const char *path, int target_rate, cls_audio *out, char *err, size_t err_cap) {
  memset(out, 0, sizeof *out);
  SF_INFO info;
  SNDFILE *f = NULL;
  char why[512];
  switch (open_checked(path, &info, &f, why, sizeof why)) {
    case CLS_AUDIO_FINE: break;
    case CLS_AUDIO_MISSING:
      snprintf(err, err_cap, "%s: cannot open: %s", path, why);
      return CLS_ERR_IO;
    case CLS_AUDIO_NOT_AUDIO:
      snprintf(err, err_cap, "%s: not a readable audio file (%s)", path, why);
      return CLS_ERR_IO;
    case CLS_AUDIO_EMPTY:
      snprintf(err, err_cap, "%s: holds no audio samples", path);
      return CLS_ERR_IO;
    case CLS_AUDIO_TRUNCATED:
      snprintf(err, err_cap, "%s: truncated audio file: its header promises more sample data than the file holds", path);
      return CLS_ERR_IO;
  }
  const size_t frames = (size_t)info.frames, ch = (size_t)info.channels;
  float *mono = malloc(frames * sizeof *mono);
  int bits = pcm_bits(info.format);
  size_t got = 0;
  if (mono && bits > 0) {
    /* Integers, scaled by the type's maximum as DeepSpeech's training does; libsndfile's own float
       conversion would divide by 2^(bits-1). Read as int (left-aligned 32-bit) and rescale. */
    int *buf = malloc(4096 * ch * sizeof *buf);
    const double scale = 1.0 / ((double)(1u << (bits - 1)) - 1.0) / (double)(1u << (32 - bits)) / (double)ch;
    while (buf) {
      sf_count_t n = sf_readf_int(f, buf, 4096);
      if (n <= 0) break;
      for (sf_count_t i = 0; i < n && got < frames; i++, got++) {
        double sum = 0;
        for (size_t c = 0; c < ch; c++) sum += (double)buf[(size_t)i * ch + c];
        mono[got] = (float)(sum * scale);
      }
    }
    free(buf);
  } else if (mono) {
    float *buf = malloc(4096 * ch * sizeof *buf);
    while (buf) {
      sf_count_t n = sf_readf_float(f, buf, 4096);
      if (n <= 0) break;
      for (sf_count_t i = 0; i < n && got < frames; i++, got++) {
        double sum = 0;
        for (size_t c = 0; c < ch; c++) sum += buf[(size_t)i * ch + c];
        mono[got] = (float)(sum / (double)ch);
      }
    }
    free(buf);
  }
  int sf_err = sf_error(f);
  sf_close(f);
  if (!mono) {
    snprintf(err, err_cap, "%s: out of memory for %zu samples", path, frames);
    return CLS_ERR_OUT_OF_MEMORY;
  }
  if (got < frames || sf_err != SF_ERR_NO_ERROR) {
    free(mono);
    snprintf(err, err_cap, "%s: truncated or corrupt audio: decoded %zu of %zu samples", path, got, frames);
    return CLS_ERR_IO;
  }
  out->samples = mono;
  out->n_samples = frames;
  out->sample_rate = info.samplerate;
  out->source_rate = info.samplerate;
  out->source_channels = info.channels;
  if (target_rate > 0 && target_rate != info.samplerate) {
    double ratio = (double)target_rate / info.samplerate;
    size_t n_out = (size_t)((double)frames * ratio) + 1;
    float *res = malloc(n_out * sizeof *res);
    SRC_DATA d;
    memset(&d, 0, sizeof d);
    d.data_in = mono;
    d.input_frames = (long)frames;
    d.data_out = res;
    d.output_frames = (long)n_out;
    d.src_ratio = ratio;
    int rc = res ? src_simple(&d, SRC_SINC_BEST_QUALITY, 1) : -1;
    if (rc != 0) {
      free(res);
      cls_audio_free(out);
      snprintf(err, err_cap, "%s: resampling from %d Hz to %d Hz failed: %s", path, info.samplerate, target_rate,
               rc > 0 ? src_strerror(rc) : "out of memory");
      return CLS_ERR_IO;
    }
    free(mono);
    out->samples = res;
    out->n_samples = (size_t)d.output_frames_gen;
    out->sample_rate = target_rate;
  }
  return CLS_OK;
}

void cls_audio_free(cls_audio *a) {
  if (!a) return;
  free(a->samples);
  a->samples = NULL;
  a->n_samples = 0;
}
