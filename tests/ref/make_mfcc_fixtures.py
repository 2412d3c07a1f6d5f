#!/usr/bin/env python3
"""Reference features from TensorFlow's own ops, as DeepSpeech 0.9 computes them
(util/feeding.py: audio_spectrogram with magnitude_squared, then mfcc with 26 coefficients and the
upper limit at half the rate; lower limit 20 Hz and 40 channels are the op defaults), on clips of
data. Samples are read as DeepSpeech's training reads WAV: int16 / 32767.

    pip install tensorflow-cpu && python3 tests/ref/make_mfcc_fixtures.py
"""
import os
import sys
import wave

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import save  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data")


def features(samples, rate, win_ms=32, step_ms=20):
    window, step = rate * win_ms // 1000, rate * step_ms // 1000
    spec = tf.raw_ops.AudioSpectrogram(input=samples[:, None], window_size=window, stride=step, magnitude_squared=True)
    mfcc = tf.raw_ops.Mfcc(spectrogram=spec, sample_rate=rate, upper_frequency_limit=rate / 2,
                           lower_frequency_limit=20.0, filterbank_channel_count=40, dct_coefficient_count=26)
    return np.reshape(mfcc.numpy(), [-1, 26]).astype(np.float32)


def case(name, relpath):
    with wave.open(os.path.join(DATA, relpath)) as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1, relpath
        rate = w.getframerate()
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    samples = (pcm / np.iinfo(np.int16).max).astype(np.float32)
    feats = features(samples, rate)
    save(f"mfcc_{name}.safetensors", {"features": feats, "first_samples": samples[:256]},
         {"file": relpath, "sample_rate": rate, "n_samples": len(samples), "frames": feats.shape[0],
          "generator": f"tensorflow {tf.__version__}: tf.raw_ops.AudioSpectrogram + tf.raw_ops.Mfcc"})


if __name__ == "__main__":
    case("ldc93s1", "deepspeech-smoke/LDC93S1.wav")
    case("ldc93s1_8k", "deepspeech-smoke/LDC93S1_pcms16le_1_8000.wav")
    case("digits1", "formats/digits-1.wav")
    case("stars", "deepspeech-smoke/new-home-in-the-stars-16k.wav")
