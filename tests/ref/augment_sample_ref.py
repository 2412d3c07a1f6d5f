#!/usr/bin/env python3
"""Reference for --augment's sample-domain augmentations (engine/features/augment/host_pass.c), in numpy and
independent of the C code: DeepSpeech 0.9.3's definitions (util/augmentations.py Volume, Reverb;
util/audio.py max_dbfs, gain_db_to_ratio, normalize_audio) and its picks (pick_value_from_range), with
clspeech's Philox draws (tests/ref/philox.py, the key and counters of kernels/augment_draw.h) in place of
Python's random module. Writes tests/fixtures/augment_sample.safetensors:

  - `draw_*`: for the specifications and (utterance, clock) cases in the metadata, the operations each
    utterance gets: [n, 4] float64 rows (augmentation index, kind, value 0, value 1), kind 0 volume,
    1 reverb, 2 resample; `draw_counts` per case;
  - `volume_*`, `reverb_*`: an input signal and its augmented copies for the parameters in the metadata.
Resample has no reference here (libsamplerate's converter is not numpy's); test_augment_sample checks
its properties instead.

    python3 tests/ref/augment_sample_ref.py          (numpy only)
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from augment_ref import block, pick, value_range  # noqa: E402
from fixture_io import save  # noqa: E402

PICK = 0
VOLUME, REVERB, RESAMPLE = 0, 1, 2
# name: (kind code or None for a graph augmentation, [(param, integer, default)])
KINDS = {
    "volume": (VOLUME, [("dbfs", False, "3.0103")]),
    "reverb": (REVERB, [("delay", False, "20.0"), ("decay", False, "10.0")]),
    "resample": (RESAMPLE, [("rate", True, "8000")]),
    "frequency_mask": (None, [("n", True, "3"), ("size", True, "2")]),
}


def parse(spec):
    name, _, rest = spec.partition("[")
    code, params = KINDS[name]
    given = dict(kv.split("=") for kv in rest.rstrip("]").split(",")) if rest else {}
    out = {"code": code, "p": float(given.pop("p", 1.0)), "params": []}
    for pname, integer, default in params:
        out["params"].append((value_range(given.pop(pname, default), integer), integer))
    return out


def pick_uniform(seed, epoch, utt, aug, k):
    return float(block(seed, epoch, utt, aug, PICK, k)[0]) / 4294967296.0


def sample_ops(augs, seed, epoch, utt, clock):
    clock = min(1.0, max(0.0, clock))
    ops = []
    for j, a in enumerate(augs):
        if a["code"] is None or pick_uniform(seed, epoch, utt, j, 0) >= a["p"]:
            continue
        values = [pick(rng, integer, clock, pick_uniform(seed, epoch, utt, j, 1 + i))
                  for i, (rng, integer) in enumerate(a["params"])]
        if a["code"] == REVERB:  # clspeech takes a delay or decay a radius carried below 0 as 0
            values = [max(0.0, v) for v in values]
        values += [0.0] * (2 - len(values))
        ops.append([j, a["code"], values[0], values[1]])
    return ops


# util/audio.py
def max_dbfs(x):
    return 20.0 * math.log10(max(1e-16, max(abs(float(np.min(x))), abs(float(np.max(x)))))) + 3.0103


def normalize(x, dbfs):
    """normalize_audio: x * gain, clipped; float32 data stays float32 (the gain is a Python float)."""
    gain = math.pow(10.0, (dbfs - max_dbfs(x)) / 20.0)
    return np.maximum(np.minimum(x * x.dtype.type(gain), 1.0), -1.0).astype(x.dtype)


def volume(x, dbfs):
    return normalize(x.astype(np.float32), dbfs)


def reverb(x, rate, delay, decay):
    audio = np.array(x, dtype=np.float64)
    orig = max_dbfs(audio)
    g = math.pow(10.0, -decay / 20.0)
    result = np.copy(audio)
    primes = [17, 19, 23, 29, 31]
    for prime in primes:
        layer = np.copy(audio)
        d = max(16, math.floor(delay * (prime / primes[0]) * rate / 1000.0))
        for w in range(len(audio) // d):  # window by window: each echo feeds the next
            w1, w2 = w * d, (w + 1) * d
            width = min(len(audio) - w2, d)
            layer[w2:w2 + width] += g * layer[w1:w1 + width]
        result += layer
    return normalize(result, orig).astype(np.float32)


def signal(n, rate):
    """A decaying two-tone burst with a deterministic ripple, peak about 0.6."""
    t = np.arange(n) / rate
    env = np.exp(-3.0 * t) * np.minimum(1.0, t * 50.0)
    x = 0.45 * np.sin(2 * np.pi * 440.0 * t) + 0.15 * np.sin(2 * np.pi * 2900.0 * t + 0.3)
    x += 0.02 * np.sin(2 * np.pi * 37.0 * t) * np.cos(2 * np.pi * 5100.0 * t)
    return (x * env).astype(np.float32)


SPECS = ["volume[p=0.6,dbfs=-30:-5~4]", "frequency_mask", "reverb[p=0.8,delay=5:60~10,decay=2:12~1.5]",
         "resample[p=0.5,rate=4000:12000~1500]", "volume", "reverb[delay=2~20,decay=1~20]"]
DRAW_SEED, DRAW_EPOCH = 90210, 3
CASES = [(0, 0.0), (1, 0.1), (2, 0.5), (77, 0.9), (4096, 1.0), (123456, 0.33), (5, 1.5)]
RATE, N = 16000, 1500
VOLUMES = [3.0103, -6.0, -25.5, 12.0]            # 12 dBFS clips
REVERBS = [(20.0, 10.0), (0.3, 3.0), (7.5, 0.0), (400.0, 6.0)]  # (delay ms, decay dB): 0.3 ms -> 16 samples; 400 ms > N


def main():
    augs = [parse(s) for s in SPECS]
    counts, rows = [], []
    for utt, clock in CASES:
        ops = sample_ops(augs, DRAW_SEED, DRAW_EPOCH, utt, clock)
        counts.append(len(ops))
        rows.extend(ops)
    x = signal(N, RATE)
    tensors = {
        "draw_counts": np.array(counts, np.int32),
        "draw_ops": np.array(rows, np.float64).reshape(-1, 4),
        "input": x,
        "volume_out": np.stack([volume(x, d) for d in VOLUMES]),
        "reverb_out": np.stack([reverb(x, RATE, d, k) for d, k in REVERBS]),
    }
    meta = {"specs": json.dumps(SPECS), "draw_seed": DRAW_SEED, "draw_epoch": DRAW_EPOCH, "cases": json.dumps(CASES),
            "rate": RATE, "volumes": json.dumps(VOLUMES), "reverbs": json.dumps(REVERBS)}
    save("augment_sample.safetensors", tensors, meta)


if __name__ == "__main__":
    main()
