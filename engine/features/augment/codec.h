/* --augment's codec on the host (host_pass.c applies it in the sample domain): DeepSpeech 0.9.3's
 * Codec, a lossy round trip of the utterance through Opus at a bitrate. Here libsndfile's Ogg/Opus
 * encoder and decoder in memory (sf_open_virtual); libsndfile 1.2 sets libopus's target bitrate from
 * SFC_SET_COMPRESSION_LEVEL q as (int)((1 - q) 250000 + 6000) bps per channel, which is inverted here.
 * Host-only: base and libsndfile/libsamplerate. */
#ifndef CLS_FEATURES_AUGMENT_CODEC_H
#define CLS_FEATURES_AUGMENT_CODEC_H

#include <stddef.h>

#include "clspeech/base.h"

/* Opus's lowest and libsndfile's highest target bitrate (bps, mono): a drawn bitrate is clamped to them. */
#define CLS_CODEC_MIN_BITRATE 500
#define CLS_CODEC_MAX_BITRATE 256000

/* The sample rate the codec runs at for audio at `rate`: rate itself when Opus takes it (8, 12, 16, 24
 * or 48 kHz), else the next of those above it (48 kHz above 48 kHz). */
int cls_codec_rate(int rate);

/* The compression level libsndfile maps to `bitrate` bps (clamped as above). */
double cls_codec_level(int bitrate);

/* x[n] at `rate` Hz encoded to Ogg/Opus at `bitrate` bps and decoded back, in place, mono: at
 * cls_codec_rate(rate) (libsamplerate's round trip through resample.h's wrapper where it is not
 * `rate`), kept at exactly n samples with no lag (libsndfile's decoder drops the encoder's pre-skip;
 * a shorter decode is zero-filled; audio too short to leave a sample at that rate is kept as it is).
 * CLS_ERR_OUT_OF_MEMORY, or CLS_ERR_IO with libsndfile's reason. */
cls_status cls_augment_codec(float *x, size_t n, int rate, int bitrate, cls_error *err);

/* Whether this libsndfile encodes and decodes Ogg/Opus at `rate` Hz (an Opus rate): a round trip of 160
 * samples in memory, about a millisecond. CLS_ERR_IO with the reason when not (a libsndfile built
 * without Opus; a rate Opus does not take). */
cls_status cls_codec_probe(int rate, cls_error *err);

#endif
