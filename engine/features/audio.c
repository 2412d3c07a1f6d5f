/* Audio decoding, downmixing and resampling (see clspeech/features.h). Owns the libsndfile and libsamplerate
 * calls and the checks of a file's header against sane bounds and the file's real size; no feature
 * computation here. Decoding runs a block at a time (cls_audio_stream); the whole-file read is that
 * stream into a buffer grown as samples arrive, never sized from the header alone. */
#include "clspeech/features.h"

#include <errno.h>
#include <samplerate.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { BLOCK = 4096 }; /* frames decoded per libsndfile call */

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

/* Containers whose length is a number in a header rather than the size of the data. */
static int claimed_length(int major) {
#ifdef SF_FORMAT_MPEG
  if (major == SF_FORMAT_MPEG) return 1;
#endif
  return major == SF_FORMAT_FLAC || major == SF_FORMAT_OGG;
}

/* Bytes one sample takes in the file for uncompressed data, 0 for compressed data (whose size per
   sample varies): FLAC's and Ogg's subtypes name the decoded width, not the stored one. */
static int sample_bytes(int format) {
  if (claimed_length(format & SF_FORMAT_TYPEMASK)) return 0;
  const int bits = pcm_bits(format);
  if (bits) return bits / 8;
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_FLOAT: return 4;
    case SF_FORMAT_DOUBLE: return 8;
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW: return 1;
    default: return 0;
  }
}

/* The header's rate, channels and length against the bounds and the file's `size` in bytes, and for
   a claimed length (FLAC, Ogg, MPEG) the last promised sample sought and decoded. CLS_AUDIO_FINE or
   CLS_AUDIO_BAD_HEADER with `detail` saying why. Allocates nothing from the header. */
static cls_audio_problem check_header(SNDFILE *f, const SF_INFO *info, long long size, cls_error *detail) {
  if (info->samplerate < CLS_AUDIO_MIN_RATE || info->samplerate > CLS_AUDIO_MAX_RATE) {
    cls_error_set(detail, CLS_ERR_IO, "its header gives a sample rate of %d Hz, outside %d .. %d Hz", info->samplerate,
             CLS_AUDIO_MIN_RATE, CLS_AUDIO_MAX_RATE);
    return CLS_AUDIO_BAD_HEADER;
  }
  if (info->channels > CLS_AUDIO_MAX_CHANNELS) {
    cls_error_set(detail, CLS_ERR_IO, "its header gives %d channels, more than %d", info->channels, CLS_AUDIO_MAX_CHANNELS);
    return CLS_AUDIO_BAD_HEADER;
  }
  const long long frames = (long long)info->frames, ch = info->channels;
  if (frames / info->samplerate >= CLS_AUDIO_MAX_SECONDS) {
    cls_error_set(detail, CLS_ERR_IO, "its header claims %lld samples (%.0f s at %d Hz), more than the %d s limit", frames,
             (double)frames / info->samplerate, info->samplerate, CLS_AUDIO_MAX_SECONDS);
    return CLS_AUDIO_BAD_HEADER;
  }
  /* frames < 4 h at <= 384 kHz and ch <= 64: the products below stay far from overflow */
  const int bytes = sample_bytes(info->format);
  if (bytes > 0 && frames * ch * bytes > size) {
    cls_error_set(detail, CLS_ERR_IO, "its header claims %lld samples x %lld channels of %d bytes, the file holds %lld bytes",
             frames, ch, bytes, size);
    return CLS_AUDIO_BAD_HEADER;
  }
  if (bytes == 0) {
    if (frames * ch > size * CLS_AUDIO_MAX_SAMPLES_PER_BYTE) {
      cls_error_set(detail, CLS_ERR_IO, "its header claims %lld samples x %lld channels (%.0f s) in a file of %lld bytes", frames, ch,
               (double)frames / info->samplerate, size);
      return CLS_AUDIO_BAD_HEADER;
    }
    /* A stream whose length is a bare claim (FLAC's STREAMINFO, Ogg's last granule position) must hold
       up to its last sample (a seek is a bisection, not a decode). Compressed data in other containers
       (ADPCM, GSM in WAV, ...) takes its length from the data's size, checked by libsndfile. */
    const int major = info->format & SF_FORMAT_TYPEMASK;
    float last[CLS_AUDIO_MAX_CHANNELS];
    if (claimed_length(major) &&
        (sf_seek(f, (sf_count_t)(frames - 1), SEEK_SET) != (sf_count_t)(frames - 1) || sf_readf_float(f, last, 1) != 1 ||
         sf_seek(f, 0, SEEK_SET) != 0)) {
      cls_error_set(detail, CLS_ERR_IO, "its header claims %lld samples (%.2f s), but the data ends before the last of them", frames,
               (double)frames / info->samplerate);
      return CLS_AUDIO_BAD_HEADER;
    }
  }
  return CLS_AUDIO_FINE;
}

/* Opens the file with libsndfile and checks its header; on CLS_AUDIO_FINE *out is the open file. */
static cls_audio_problem open_checked(const char *path, SF_INFO *info, SNDFILE **out, cls_error *detail) {
  *out = NULL;
  cls_error_clear(detail);
  struct stat sb;
  if (stat(path, &sb) != 0) {
    cls_error_set(detail, CLS_ERR_IO, "%s", strerror(errno));
    return CLS_AUDIO_MISSING;
  }
  if (S_ISDIR(sb.st_mode)) {
    cls_error_set(detail, CLS_ERR_IO, "%s", strerror(EISDIR));
    return CLS_AUDIO_MISSING;
  }
  FILE *probe = fopen(path, "rb");
  if (!probe) {
    cls_error_set(detail, CLS_ERR_IO, "%s", strerror(errno));
    return CLS_AUDIO_MISSING;
  }
  fclose(probe);
  if (!S_ISREG(sb.st_mode)) {
    cls_error_set(detail, CLS_ERR_IO, "not a regular file");
    return CLS_AUDIO_NOT_AUDIO;
  }
  memset(info, 0, sizeof *info);
  SNDFILE *f = sf_open(path, SFM_READ, info);
  if (!f) {
    cls_error_set(detail, CLS_ERR_IO, "%s", sf_strerror(NULL));
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
  cls_audio_problem p = check_header(f, info, (long long)sb.st_size, detail);
  if (p != CLS_AUDIO_FINE) {
    sf_close(f);
    return p;
  }
  *out = f;
  return CLS_AUDIO_FINE;
}

cls_audio_problem cls_audio_probe(const char *path, cls_audio_header *h, cls_error *detail) {
  SF_INFO info;
  SNDFILE *f = NULL;
  cls_audio_problem p = open_checked(path, &info, &f, detail);
  if (p != CLS_AUDIO_FINE) return p;
  h->frames = (long long)info.frames;
  h->sample_rate = info.samplerate;
  h->channels = info.channels;
  sf_close(f);
  return CLS_AUDIO_FINE;
}

struct cls_audio_stream {
  char *path;
  SNDFILE *f;
  SF_INFO info;
  int target_rate;
  int bits;             /* integer PCM width, 0: decoded as float */
  double scale;         /* integer PCM: left-aligned int to DeepSpeech's scale, over the channels */
  long long decoded;    /* frames decoded so far (at most info.frames) */
  int eof;              /* the file's samples are all decoded */
  int *ibuf;            /* [BLOCK * channels] */
  float *fbuf;          /* [BLOCK * channels] */
  float *mono;          /* [BLOCK] decoded, not yet handed out (or resampled) */
  size_t mono_n, mono_at;
  SRC_STATE *src;       /* resampling, NULL when the rates agree */
  double ratio;
  int src_done;
};

void cls_audio_stream_close(cls_audio_stream *s) {
  if (!s) return;
  if (s->f) sf_close(s->f);
  if (s->src) src_delete(s->src);
  free(s->path);
  free(s->ibuf);
  free(s->fbuf);
  free(s->mono);
  free(s);
}

cls_status cls_audio_stream_open(const char *path, int target_rate, cls_audio_stream **out, cls_audio_header *header,
                                 cls_error *err) {
  *out = NULL;
  SF_INFO info;
  SNDFILE *f = NULL;
  cls_error why;
  switch (open_checked(path, &info, &f, &why)) {
    case CLS_AUDIO_FINE: break;
    case CLS_AUDIO_MISSING:
      return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, why.text);
    case CLS_AUDIO_NOT_AUDIO:
      return cls_error_set(err, CLS_ERR_IO, "%s: not a readable audio file (%s)", path, why.text);
    case CLS_AUDIO_EMPTY:
      return cls_error_set(err, CLS_ERR_IO, "%s: holds no audio samples", path);
    case CLS_AUDIO_TRUNCATED:
      return cls_error_set(err, CLS_ERR_IO,
                           "%s: truncated audio file: its header promises more sample data than the file holds", path);
    case CLS_AUDIO_BAD_HEADER:
      return cls_error_set(err, CLS_ERR_IO, "%s: implausible audio header: %s", path, why.text);
  }
  cls_audio_stream *s = calloc(1, sizeof *s);
  const size_t ch = (size_t)info.channels;
  if (s) {
    s->f = f;
    s->info = info;
    s->path = strdup(path);
    s->bits = pcm_bits(info.format);
    if (s->bits) s->ibuf = malloc(BLOCK * ch * sizeof *s->ibuf);
    else s->fbuf = malloc(BLOCK * ch * sizeof *s->fbuf);
    s->mono = malloc(BLOCK * sizeof *s->mono);
  }
  if (!s || !s->path || (!s->ibuf && !s->fbuf) || !s->mono) {
    if (s) cls_audio_stream_close(s);
    else sf_close(f);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of host memory for decoding", path);
  }
  /* Integers, scaled by the type's maximum as DeepSpeech's training does; libsndfile's own float
     conversion would divide by 2^(bits-1). Read as int (left-aligned 32-bit) and rescale. */
  if (s->bits)
    s->scale = 1.0 / ((double)(1u << (s->bits - 1)) - 1.0) / (double)(1u << (32 - s->bits)) / (double)ch;
  s->target_rate = target_rate > 0 ? target_rate : info.samplerate;
  if (s->target_rate != info.samplerate) {
    int rc = 0;
    s->src = src_new(SRC_SINC_BEST_QUALITY, 1, &rc);
    s->ratio = (double)s->target_rate / info.samplerate;
    if (!s->src) {
      cls_error_set(err, CLS_ERR_IO, "%s: resampling from %d Hz to %d Hz failed: %s", path, info.samplerate,
                    s->target_rate, src_strerror(rc));
      cls_audio_stream_close(s);
      return CLS_ERR_IO;
    }
  }
  if (header) *header = (cls_audio_header){(long long)info.frames, info.samplerate, info.channels};
  *out = s;
  return CLS_OK;
}

/* Decodes the next block into s->mono (downmixed); s->eof once the header's frames are all there. */
static cls_status decode_block(cls_audio_stream *s, cls_error *err) {
  const size_t ch = (size_t)s->info.channels;
  const long long left = (long long)s->info.frames - s->decoded;
  const sf_count_t want = left < BLOCK ? (sf_count_t)left : BLOCK;
  sf_count_t n = 0;
  if (want > 0) n = s->bits ? sf_readf_int(s->f, s->ibuf, want) : sf_readf_float(s->f, s->fbuf, want);
  if (n < 0) n = 0;
  for (sf_count_t i = 0; i < n; i++) {
    double sum = 0;
    if (s->bits) {
      for (size_t c = 0; c < ch; c++) sum += (double)s->ibuf[(size_t)i * ch + c];
      s->mono[i] = (float)(sum * s->scale);
    } else {
      for (size_t c = 0; c < ch; c++) sum += s->fbuf[(size_t)i * ch + c];
      s->mono[i] = (float)(sum / (double)ch);
    }
  }
  s->mono_n = (size_t)n;
  s->mono_at = 0;
  s->decoded += n;
  if (s->decoded >= (long long)s->info.frames) s->eof = 1;
  else if (n == 0 || sf_error(s->f) != SF_ERR_NO_ERROR) {
    return cls_error_set(err, CLS_ERR_IO, "%s: truncated or corrupt audio: decoded %lld of %lld samples", s->path,
                         s->decoded, (long long)s->info.frames);
  }
  return CLS_OK;
}

cls_status cls_audio_stream_read(cls_audio_stream *s, float *out, size_t cap, size_t *got, cls_error *err) {
  *got = 0;
  cls_status st = CLS_OK;
  while (*got < cap && st == CLS_OK) {
    if (s->mono_at == s->mono_n && !s->eof) {
      st = decode_block(s, err);
      continue;
    }
    const size_t avail = s->mono_n - s->mono_at;
    if (!s->src) {
      if (avail == 0) break; /* the end */
      size_t n = avail < cap - *got ? avail : cap - *got;
      memcpy(out + *got, s->mono + s->mono_at, n * sizeof *out);
      s->mono_at += n;
      *got += n;
      continue;
    }
    if (s->src_done) break;
    SRC_DATA d;
    memset(&d, 0, sizeof d);
    d.data_in = s->mono + s->mono_at;
    d.input_frames = (long)avail;
    d.data_out = out + *got;
    d.output_frames = (long)(cap - *got);
    d.src_ratio = s->ratio;
    d.end_of_input = s->eof;
    int rc = src_process(s->src, &d);
    if (rc != 0) {
      return cls_error_set(err, CLS_ERR_IO, "%s: resampling from %d Hz to %d Hz failed: %s", s->path,
                           s->info.samplerate, s->target_rate, src_strerror(rc));
    }
    s->mono_at += (size_t)d.input_frames_used;
    *got += (size_t)d.output_frames_gen;
    if (s->eof && s->mono_at == s->mono_n && d.output_frames_gen == 0) s->src_done = 1;
  }
  return st;
}

cls_status cls_audio_read(const char *path, int target_rate, cls_audio *out, cls_error *err) {
  memset(out, 0, sizeof *out);
  cls_audio_stream *s = NULL;
  cls_audio_header h;
  cls_status st = cls_audio_stream_open(path, target_rate, &s, &h, err);
  if (st != CLS_OK) return st;
  /* Grown as samples arrive; the most there can be is bounded by the checked header (and the
     resampler's ratio), so a lying header cannot make this allocate what the file does not hold. */
  size_t cap = 0, n = 0;
  float *buf = NULL;
  for (;;) {
    if (n == cap) {
      size_t grown = cap ? cap * 2 : (size_t)BLOCK * 4;
      float *b = realloc(buf, grown * sizeof *b);
      if (!b) {
        st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of host memory after %zu samples", path, n);
        break;
      }
      buf = b;
      cap = grown;
    }
    size_t got = 0;
    st = cls_audio_stream_read(s, buf + n, cap - n, &got, err);
    if (st != CLS_OK || got == 0) break;
    n += got;
  }
  cls_audio_stream_close(s);
  if (st != CLS_OK) {
    free(buf);
    return st;
  }
  out->samples = buf;
  out->n_samples = n;
  out->sample_rate = target_rate > 0 ? target_rate : h.sample_rate;
  out->source_rate = h.sample_rate;
  out->source_channels = h.channels;
  return CLS_OK;
}

void cls_audio_free(cls_audio *a) {
  if (!a) return;
  free(a->samples);
  a->samples = NULL;
  a->n_samples = 0;
}
