/* Audio input through libsndfile (WAV of any PCM width or float, FLAC, Ogg Vorbis): decoding to
 * float samples, downmixing several channels to mono by averaging, and resampling to the model's
 * rate with libsamplerate's best sinc converter. */
#ifndef CLS_AUDIO_H
#define CLS_AUDIO_H

#include <stddef.h>

#include "clspeech.h"

typedef struct cls_audio {
  float *samples;        /* mono, at sample_rate */
  size_t n_samples;
  int sample_rate;
  int source_rate;       /* the file's rate; differs from sample_rate when resampled */
  int source_channels;
} cls_audio;

typedef struct cls_audio_header {
  long long frames;   /* samples per channel */
  int sample_rate;
  int channels;
} cls_audio_header;

typedef enum cls_audio_problem {
  CLS_AUDIO_FINE = 0,
  CLS_AUDIO_MISSING = 1,    /* cannot be opened (detail: the system's reason) */
  CLS_AUDIO_NOT_AUDIO = 2,  /* libsndfile does not read it (detail: libsndfile's reason) */
  CLS_AUDIO_EMPTY = 3,      /* no samples */
  CLS_AUDIO_TRUNCATED = 4   /* the header promises more sample data than the file holds */
} cls_audio_problem;

/* Checks a file from its header alone, without decoding samples: it opens, libsndfile reads it, it
 * holds samples, and it is not cut short. `detail` receives the system's or libsndfile's reason for
 * the first two problems (callers word their own messages). */
cls_audio_problem cls_audio_probe(const char *path, cls_audio_header *header, char *detail, size_t cap);

/* Reads `path` into mono float samples at `target_rate` (0: keep the file's rate). 16-bit PCM is
 * scaled by 1/32767, as DeepSpeech's training reads WAV (numpy int16 / iinfo(int16).max); wider PCM
 * by 1/(2^(bits-1)-1) likewise; float and Vorbis data are taken as decoded. On an error `err` names
 * the file and says what is wrong (missing, not audio, truncated, no samples). */
cls_status cls_audio_read(const char *path, int target_rate, cls_audio *out, char *err, size_t err_cap);
void cls_audio_free(cls_audio *audio);

#endif
