/* --augment's codec (features/augment/codec.h): an Ogg/Opus file written to and read back from memory
 * through libsndfile's virtual I/O. Host-only; nothing here prints or exits. */
#include "features/augment/codec.h"

#include <sndfile.h>
#include <stdlib.h>
#include <string.h>

#include "features/augment/resample.h"

/* The in-memory file. */
typedef struct memfile {
  unsigned char *data;
  sf_count_t len, cap, pos;
} memfile;

static sf_count_t mem_length(void *user) { return ((memfile *)user)->len; }

static sf_count_t mem_seek(sf_count_t offset, int whence, void *user) {
  memfile *m = user;
  const sf_count_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->len : 0;
  if (base + offset < 0) return -1;
  m->pos = base + offset;
  return m->pos;
}

static sf_count_t mem_read(void *ptr, sf_count_t count, void *user) {
  memfile *m = user;
  const sf_count_t left = m->pos < m->len ? m->len - m->pos : 0, got = count < left ? count : left;
  if (got > 0) memcpy(ptr, m->data + m->pos, (size_t)got);
  m->pos += got;
  return got;
}

static sf_count_t mem_write(const void *ptr, sf_count_t count, void *user) {
  memfile *m = user;
  if (m->pos + count > m->cap) {
    sf_count_t cap = m->cap ? m->cap : 65536;
    while (cap < m->pos + count) cap *= 2;
    unsigned char *d = realloc(m->data, (size_t)cap);
    if (!d) return 0;
    m->data = d;
    m->cap = cap;
  }
  if (m->pos > m->len) memset(m->data + m->len, 0, (size_t)(m->pos - m->len));
  memcpy(m->data + m->pos, ptr, (size_t)count);
  m->pos += count;
  if (m->pos > m->len) m->len = m->pos;
  return count;
}

static sf_count_t mem_tell(void *user) { return ((memfile *)user)->pos; }

int cls_codec_rate(int rate) {
  static const int opus_rates[5] = {8000, 12000, 16000, 24000, 48000};
  for (int i = 0; i < 5; i++)
    if (rate <= opus_rates[i]) return opus_rates[i];
  return 48000;
}

double cls_codec_level(int bitrate) {
  bitrate = bitrate < CLS_CODEC_MIN_BITRATE ? CLS_CODEC_MIN_BITRATE
            : bitrate > CLS_CODEC_MAX_BITRATE ? CLS_CODEC_MAX_BITRATE
                                              : bitrate;
  /* libsndfile: bitrate = (int)((1 - q) 250000 + 6000); half a bit more keeps the truncation at `bitrate`.
     Below 6000 bps q exceeds 1, which libsndfile passes on unchecked. */
  return 1.0 - ((double)bitrate - 6000.0 + 0.5) / 250000.0;
}

/* y[m] at an Opus rate through the codec, in place (zero-filled past the decoded end); no samples: nothing
   to encode (libsndfile cannot reopen an Ogg/Opus stream of no frames). libsndfile's reason for a failed
   open is process-wide state another loader thread may be writing (sf_strerror(NULL)): fixed text then;
   a handle's own errors come by number (sf_error_number's fixed strings). */
static cls_status round_trip(float *y, size_t m, int rate, void *user, cls_error *err) {
  const int bitrate = *(const int *)user;
  if (m == 0) return CLS_OK;
  SF_VIRTUAL_IO io = {mem_length, mem_seek, mem_read, mem_write, mem_tell};
  memfile f = {NULL, 0, 0, 0};
  SF_INFO info = {.samplerate = rate, .channels = 1, .format = SF_FORMAT_OGG | SF_FORMAT_OPUS};
  cls_status st = CLS_OK;
  SNDFILE *w = sf_open_virtual(&io, SFM_WRITE, &info, &f);
  double level = cls_codec_level(bitrate);
  if (!w) {
    st = cls_error_set(err, CLS_ERR_IO,
                       "codec: libsndfile cannot start an Ogg/Opus encoder at %d Hz (built without Opus, or out of "
                       "memory)",
                       rate);
  } else {
    if (sf_command(w, SFC_SET_COMPRESSION_LEVEL, &level, sizeof level) != SF_TRUE)
      st = cls_error_set(err, CLS_ERR_IO, "codec: libsndfile refused the Opus bitrate %d bps", bitrate);
    if (st == CLS_OK && sf_writef_float(w, y, (sf_count_t)m) != (sf_count_t)m)
      st = cls_error_set(err, CLS_ERR_IO, "codec: Opus encoding at %d Hz failed: %s", rate,
                         sf_error_number(sf_error(w)));
    const int closed = sf_close(w); /* flushes the last Ogg pages */
    if (st == CLS_OK && closed != 0)
      st = cls_error_set(err, CLS_ERR_IO, "codec: finishing the Opus stream at %d Hz failed: %s", rate,
                         sf_error_number(closed));
  }
  size_t got = 0;
  if (st == CLS_OK) {
    f.pos = 0;
    SF_INFO back = {0};
    SNDFILE *r = sf_open_virtual(&io, SFM_READ, &back, &f);
    if (!r) {
      st = cls_error_set(err, CLS_ERR_IO, "codec: libsndfile cannot decode the Ogg/Opus stream it wrote (%lld bytes)",
                         (long long)f.len);
    } else {
      const sf_count_t n = back.channels == 1 ? sf_readf_float(r, y, (sf_count_t)m) : -1;
      if (n < 0) st = cls_error_set(err, CLS_ERR_IO, "codec: decoding gave %d channels, not 1", back.channels);
      got = n > 0 ? (size_t)n : 0;
      sf_close(r);
    }
  }
  if (st == CLS_OK) memset(y + got, 0, (m - got) * sizeof *y);
  free(f.data);
  return st;
}

cls_status cls_augment_codec(float *x, size_t n, int rate, int bitrate, cls_error *err) {
  return cls_augment_through_rate(x, n, rate, cls_codec_rate(rate), round_trip, &bitrate, err);
}

cls_status cls_codec_probe(int rate, cls_error *err) {
  float y[160] = {0}; /* 10 ms at 16 kHz: one short Opus frame */
  int bitrate = 16000;
  for (int i = 0; i < 160; i++) y[i] = (float)((i % 16) - 8) / 32.0f;
  return round_trip(y, 160, rate, &bitrate, err);
}
