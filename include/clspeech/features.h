/* clspeech public API, features layer: audio input (libsndfile, downmix, resampling), DeepSpeech's
 * MFCC features on the host (the reference, exactly TensorFlow's ops) and on an OpenCL device, and
 * the on-disk feature cache. */
#ifndef CLSPEECH_FEATURES_H
#define CLSPEECH_FEATURES_H

#include <stddef.h>
#include <stdint.h>
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- audio ---- */
/* Audio input through libsndfile (WAV of any PCM width or float, FLAC, Ogg Vorbis): decoding to
 * float samples, downmixing several channels to mono by averaging, and resampling to the model's
 * rate with libsamplerate's best sinc converter. */



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
  CLS_AUDIO_TRUNCATED = 4,  /* the header promises more sample data than the file holds */
  CLS_AUDIO_BAD_HEADER = 5  /* a rate, channel count or length out of bounds, or a length the file's
                               size or its last sample belies (detail: which, with the numbers) */
} cls_audio_problem;

/* The bounds every file's header is held to before anything is allocated from it: the sample rate,
 * the channels, the duration (the hard cap on one utterance, for training and transcription alike),
 * and for compressed data the most samples one byte of the file may claim (FLAC's best case, digital
 * silence in 65535-sample blocks, is about 4700 per byte). */
#define CLS_AUDIO_MIN_RATE 1000
#define CLS_AUDIO_MAX_RATE 384000
#define CLS_AUDIO_MAX_CHANNELS 64
#define CLS_AUDIO_MAX_SECONDS (4 * 3600)
#define CLS_AUDIO_MAX_SAMPLES_PER_BYTE 8192

/* Checks a file from its header alone, without decoding the samples: it opens, libsndfile reads it, it
 * holds samples, its rate, channels and length are within the bounds above, the length fits the
 * file's size (uncompressed data: exactly; compressed: the bound above), and for compressed data its
 * last promised sample can be sought and decoded. `detail` receives the system's or libsndfile's
 * reason for the first two problems and the numbers for CLS_AUDIO_BAD_HEADER, as CLS_ERR_IO (callers word
 * their own messages; may be NULL). */
cls_audio_problem cls_audio_probe(const char *path, cls_audio_header *header, cls_error *detail);

/* Reads `path` into mono float samples at `target_rate` (0: keep the file's rate). 16-bit PCM is
 * scaled by 1/32767, as DeepSpeech's training reads WAV (numpy int16 / iinfo(int16).max); wider PCM
 * by 1/(2^(bits-1)-1) likewise; float and Vorbis data are taken as decoded. On an error `err` names
 * the file and says what is wrong (missing, not audio, truncated, no samples). */
cls_status cls_audio_read(const char *path, int target_rate, cls_audio *out, cls_error *err);
void cls_audio_free(cls_audio *audio);

/* The same decoding a chunk at a time, for audio too long to hold (transcription streams it): the
 * file checked as cls_audio_probe does, then mono samples at `target_rate` (0: the file's) in the
 * order and with the values cls_audio_read gives (resampling runs the same converter incrementally).
 * Nothing is allocated from the header's claims: memory is bounded by the chunk. */
typedef struct cls_audio_stream cls_audio_stream;

/* Opens `path`; *header (may be NULL) receives the file's header. Errors as cls_audio_read's. */
cls_status cls_audio_stream_open(const char *path, int target_rate, cls_audio_stream **out, cls_audio_header *header,
                                 cls_error *err);

/* Up to `cap` samples into out[]; *got 0 means the end. A file that ends before its header's length
 * or fails to decode is CLS_ERR_IO with `err` naming it. */
cls_status cls_audio_stream_read(cls_audio_stream *s, float *out, size_t cap, size_t *got, cls_error *err);
void cls_audio_stream_close(cls_audio_stream *s);

/* ---- mfcc ---- */
/* DeepSpeech's features, exactly as TensorFlow's AudioSpectrogram + Mfcc ops compute them: a
 * periodic Hann window, a real FFT of the next power of two, the squared magnitude, 40 triangular
 * mel channels over the square-rooted magnitudes (20 Hz .. rate/2), log with a 1e-12 floor, and a
 * DCT-II scaled by sqrt(2/40) keeping 26 coefficients. This file holds the configuration, the
 * tables derived from it (shared with the device path) and the plain-C host implementation. */



typedef struct cls_mfcc_config {
  int sample_rate;    /* Hz (--audio_sample_rate, 16000) */
  int win_len_ms;     /* --feature_win_len: 32 */
  int win_step_ms;    /* --feature_win_step: 20 */
  int n_coeff;        /* DCT coefficients kept: 26 */
  int n_channels;     /* mel channels: 40 */
  double lower_hz;    /* 20 */
  double upper_hz;    /* sample_rate / 2 */
} cls_mfcc_config;

/* DeepSpeech's defaults at a sample rate. */
cls_mfcc_config cls_mfcc_default(int sample_rate);

typedef struct cls_mfcc_tables {
  cls_mfcc_config cfg;
  int window;          /* samples per frame: rate * win_len / 1000 */
  int step;            /* samples between frames */
  int fft_len;         /* next power of two >= window */
  int n_bins;          /* fft_len / 2 + 1 */
  int start, end;      /* spectrum bins that feed the filterbank, inclusive */
  double *hann;        /* [window] periodic Hann */
  int *band;           /* [n_bins] channel whose falling side bin i feeds (-1: only the first rising side; -2 unused) */
  double *weight;      /* [n_bins] share of bin i for channel band[i]; 1 - share goes to band[i] + 1 */
  double *dct;         /* [n_coeff, n_channels] sqrt(2/n) cos(i pi/n (j + 1/2)) */
  double *twiddle;     /* [fft_len] cos, sin of -2 pi k / fft_len for k < fft_len/2 (host FFT) */
} cls_mfcc_tables;

/* The bounds of a feature configuration: 1000 .. 384000 Hz, windows and steps of 1 .. 1000 ms (so
 * the FFT stays within 2^19 points). */
#define CLS_MFCC_MIN_RATE 1000
#define CLS_MFCC_MAX_RATE 384000
#define CLS_MFCC_MAX_MS 1000

/* Validates the configuration (within the bounds above; window and step must be whole samples, as
 * DeepSpeech requires) and derives the tables; `err` says what is wrong otherwise. */
cls_status cls_mfcc_tables_create(const cls_mfcc_config *cfg, cls_mfcc_tables **out, cls_error *err);
void cls_mfcc_tables_destroy(cls_mfcc_tables *t);

/* Frames in n samples: 1 + (n - window) / step, 0 when shorter than one window (no end padding). */
size_t cls_mfcc_frames(const cls_mfcc_tables *t, size_t n_samples);

/* The frames of an audio file from its header alone, as training's data set and transcription count
 * them (the one rule; the decoded audio then gives `frames`, or one more when resampled). */
typedef struct cls_frame_count {
  int64_t n_samples;   /* samples at `rate`: the header's, or when the file's rate differs
                          frames * rate / file rate rounded down */
  int64_t frames;      /* 1 + (n_samples - window) / step, 0 when shorter than one window */
  int64_t max_frames;  /* the most decoding can give, to size buffers by: when resampled, the frames of
                          one sample more (the resampler may give one more); else `frames` */
} cls_frame_count;

/* For a header at the model's `rate` with feature window and step in samples (the tables' window
 * and step). A header of no audio or no rate (a failed probe's), or a rate, window or step not
 * positive, counts zero of each. */
cls_frame_count cls_audio_frame_count(const cls_audio_header *header, int rate, int window, int step);

/* Seconds of audio at `rate` that `frames` frames span, ((frames - 1) * step + window) / rate: the
 * inverse of the frame count (0 frames: one window). */
double cls_frames_seconds(int64_t frames, int rate, int window, int step);

/* Host features: out [frames, n_coeff] for cls_mfcc_frames(t, n) frames. Double precision inside,
 * with the spectrogram rounded to float between the two stages as TensorFlow's ops pass it. */
void cls_mfcc_host(const cls_mfcc_tables *t, const float *samples, size_t n, float *out);

/* ---- feature_cache ---- */
/* On-disk cache of per-file features (--feature_cache DIR), so that later epochs skip decoding
 * and feature computation. An entry is keyed by a SHA-256 of the file's path, size and
 * modification time and of every feature parameter; it carries a checksum and is written to a
 * temporary file and renamed. A stale, corrupt or unreadable entry is a miss, never an error. */



/* Key of `audio_path` under `cfg`; fails (CLS_ERR_IO, err names the file) when it cannot be stat'ed. */
cls_status cls_feature_cache_key(const char *audio_path, const cls_mfcc_config *cfg, char key[65], cls_error *err);

/* On a hit, *features (malloc'ed, [*frames, n_coeff]) and *frames; 1 hit, 0 miss. */
int cls_feature_cache_load(const char *dir, const char *key, int n_coeff, float **features, size_t *frames);

/* Stores an entry (creating dir); CLS_ERR_IO with err set when it cannot. */
cls_status cls_feature_cache_store(const char *dir, const char *key, int n_coeff, const float *features, size_t frames,
                                   cls_error *err);

/* ---- features on an OpenCL device ---- */
/* DeepSpeech's features computed on a device (framing and window kernel, clFFT, filterbank + log +
 * DCT kernel), for `clspeech features --features_device` and benchmarks; training uses the same
 * plan through the engine's own entry. The engine type is declared here only by name, so that the
 * host features above need nothing of the device layer. */
typedef struct cls_engine cls_engine;
typedef struct cls_mfcc_plan cls_mfcc_plan;

/* A plan for engine device `device` with the tables' configuration (the plan keeps a pointer to
 * `tables`). */
cls_status cls_mfcc_create(cls_engine *engine, int device, const cls_mfcc_tables *tables, cls_mfcc_plan **out);
void cls_mfcc_destroy(cls_mfcc_plan *plan);

/* Features of `batch` utterances (host samples, mono at the tables' rate) on the plan's device,
 * through its own queue, read back to the host: features [sum frames, n_coeff], the utterances'
 * frames concatenated; frames[b] (may be NULL) receives each utterance's frame count. Blocks until
 * the features are on the host. */
cls_status cls_mfcc_compute_host(cls_mfcc_plan *plan, int batch, const float *const *samples, const size_t *n_samples,
                                 int *frames, float *features);

/* ---- augmentation ---- */
/* DeepSpeech 0.9.3's --augment NAME[k=v,...] (training/deepspeech_training/util/augmentations.py):
 * every augmentation it has, parsed and checked into a typed entry. A parameter's value is a range:
 * `v` (constant), `v~r` (uniform within +-r), `a:b` (the centre moves from a to b as training's clock
 * goes 0 -> 1), `a:b~r`; integer parameters take integers only and their picks are rounded (half to
 * even). `p` (default 1) is the probability per utterance; time_mask, dropout, add and multiply also
 * take `domain` (signal, spectrogram or features). Which of them training runs is
 * cls_augment_check_supported's to say. */

typedef enum cls_augment_kind {
  CLS_AUGMENT_OVERLAY,        /* sample domain: source, snr, layers */
  CLS_AUGMENT_CODEC,          /* bitrate */
  CLS_AUGMENT_REVERB,         /* delay, decay */
  CLS_AUGMENT_RESAMPLE,       /* rate */
  CLS_AUGMENT_VOLUME,         /* dbfs */
  CLS_AUGMENT_PITCH,          /* spectrogram domain: pitch */
  CLS_AUGMENT_TEMPO,          /* factor, max_time (a plain number) */
  CLS_AUGMENT_WARP,           /* nt, nf, wt, wf */
  CLS_AUGMENT_FREQUENCY_MASK, /* n, size (bins) */
  CLS_AUGMENT_TIME_MASK,      /* n, size (ms); domain */
  CLS_AUGMENT_DROPOUT,        /* rate; domain */
  CLS_AUGMENT_ADD,            /* stddev; domain (default features) */
  CLS_AUGMENT_MULTIPLY,       /* stddev; domain (default features) */
  CLS_AUGMENT_N_KINDS
} cls_augment_kind;

typedef enum cls_augment_domain {
  CLS_AUGMENT_SAMPLE,      /* the decoded audio, before the graph (overlay, codec, reverb, resample, volume) */
  CLS_AUGMENT_SIGNAL,      /* the graph's audio signal */
  CLS_AUGMENT_SPECTROGRAM, /* the power spectrogram [frames, fft_len/2+1] */
  CLS_AUGMENT_FEATURES     /* the MFCC features [frames, n_coeff] */
} cls_augment_domain;

typedef struct cls_value_range {
  double start, end, r; /* centre start + clock (end - start), then uniform within +-r */
} cls_value_range;

#define CLS_AUGMENT_MAX_PARAMS 4
#define CLS_AUGMENT_MAX_SOURCE 4096

typedef struct cls_augmentation {
  cls_augment_kind kind;
  cls_augment_domain domain;
  double p;                                      /* per-utterance probability, [0, 1] */
  cls_value_range param[CLS_AUGMENT_MAX_PARAMS]; /* in cls_augment_param_name's order, defaults filled */
  char source[CLS_AUGMENT_MAX_SOURCE];           /* overlay's source (a CSV or sample DB) */
} cls_augmentation;

/* Parses one --augment value into *out (defaults filled). CLS_ERR_INVALID_ARGUMENT with `err` naming the
 * piece at fault: an unknown augmentation or parameter, a repeated parameter, a malformed value or range,
 * p outside [0, 1], a negative size, count, rate or deviation, a missing overlay source. */
cls_status cls_augment_parse(const char *spec, cls_augmentation *out, cls_error *err);
/* DeepSpeech's name of a kind ("frequency_mask"), and of its parameter i (NULL past the last; the
 * overlay's "source" is not among them). */
const char *cls_augment_kind_name(cls_augment_kind kind);
const char *cls_augment_param_name(cls_augment_kind kind, int i);
/* Whether parameter i of a kind takes integers only (its picks rounded). */
int cls_augment_param_integer(cls_augment_kind kind, int i);
/* Whether training runs this augmentation: every one DeepSpeech 0.9.3 has, in every domain it allows
 * (the host runs overlay, codec, volume, reverb, resample and the signal domain's time_mask, dropout,
 * add and multiply; the device feature path runs pitch, tempo, warp, frequency_mask, and time_mask,
 * dropout, add and multiply in the spectrogram and features domains). CLS_ERR_INVALID_ARGUMENT with
 * `err` saying why otherwise: a pitch or tempo range that can pick values at or below 0, or codec when
 * libsndfile cannot encode Ogg/Opus (a tiny round trip in memory). An overlay's source is not looked
 * at here (cls_overlay_source_check). */
cls_status cls_augment_check_supported(const cls_augmentation *a, cls_error *err);

#ifdef __cplusplus
}
#endif
#endif
