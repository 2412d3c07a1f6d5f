#!/usr/bin/env python3
"""Feature throughput of clspeech (host path and each OpenCL device) beside TensorFlow's own
AudioSpectrogram + Mfcc ops on the same batch (tensorflow-cpu from PyPI, its default threads: every
core), in one run, with the ratio (clspeech audio-s/s over TensorFlow's: above 1 means clspeech is
faster).

    python3 bench/compare_features.py [--audio data/deepspeech-smoke/LDC93S1.wav] [--batch 16]

The first run installs tensorflow-cpu into the comparisons' venv (build/bench-venv, or
$CLSPEECH_BENCH_VENV; see bench/peer.py), beside PyTorch."""
import argparse
import os
import statistics
import sys
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402

if __name__ == "__main__":
    peer.enter(["tensorflow-cpu", "numpy"], ["tensorflow", "numpy"])

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--audio", default=os.path.join(HERE, "..", "data", "deepspeech-smoke", "LDC93S1.wav"))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--devices", default=None)
    args = ap.parse_args()
    cmd = [os.path.join(args.build, "bench_features"), "--json", "--audio", args.audio, "--batch", str(args.batch),
           "--reps", str(args.reps)] + (["--devices", args.devices] if args.devices else [])
    ours = peer.json_lines(cmd)
    with wave.open(args.audio) as w:
        rate = w.getframerate()
        samples = (np.frombuffer(w.readframes(w.getnframes()), "<i2") / 32767.0).astype(np.float32)

    @tf.function
    def feats(x):
        spec = tf.raw_ops.AudioSpectrogram(input=x[:, None], window_size=512, stride=320, magnitude_squared=True)
        return tf.raw_ops.Mfcc(spectrogram=spec, sample_rate=rate, upper_frequency_limit=rate / 2,
                               lower_frequency_limit=20.0, filterbank_channel_count=40, dct_coefficient_count=26)

    x = tf.constant(samples)
    feats(x)
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        for _ in range(args.batch):
            feats(x).numpy()
        times.append(time.perf_counter() - t0)
    audio_s = len(samples) / rate * args.batch
    tf_rate = audio_s / statistics.median(times)
    tag = f"TF {tf.__version__} CPU"
    print(f"{args.batch} x {len(samples) / rate:.2f} s of {os.path.basename(args.audio)}, median of {args.reps}")
    print(f"peer: TensorFlow {tf.__version__} ({'PyPI venv' if sys.prefix != sys.base_prefix else sys.prefix}), "
          f"CPU, intra-op threads {tf.config.threading.get_intra_op_parallelism_threads() or 'default (every core)'}, "
          f"oneDNN {'on' if os.environ.get('TF_ENABLE_ONEDNN_OPTS', '1') != '0' else 'off'}")
    print(f"{'path':<52} {'ms/batch':>10} {'audio-s/s':>12} {'vs TF':>7}  peer")
    print(f"{'TensorFlow ' + tf.__version__ + ' AudioSpectrogram+Mfcc (CPU)':<52} {statistics.median(times) * 1e3:>10.2f} "
          f"{tf_rate:>12.1f} {1.0:>7.2f}  {tag}")
    for r in ours:
        print(f"{r['path'][:52]:<52} {r['ms']:>10.2f} {r['audio_seconds_per_second']:>12.1f} "
              f"{r['audio_seconds_per_second'] / tf_rate:>7.2f}  {tag}")


if __name__ == "__main__":
    main()
