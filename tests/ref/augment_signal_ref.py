#!/usr/bin/env python3
"""Reference for --augment's signal-domain augmentations and overlay (engine/features/augment/signal_domain.c,
overlay.c), in numpy and independent of the C code: DeepSpeech 0.9.3's TimeMask, Dropout, Add and
Multiply on its signal [time, 1] (util/augmentations.py; a time mask's ms times audio_sample_rate / 1000)
and Overlay.apply (util/audio.py max_dbfs, normalize_audio), with clspeech's Philox draws (the picks and
element draws of tests/ref/augment_ref.py, the samples as rows of 4 values) in place of TensorFlow's and
with each overlay layer's first clip and offset drawn (draws 3 + 2L and 4 + 2L) in place of DeepSpeech's
shared queue. Writes tests/fixtures/augment_signal.safetensors:

  - `input`, `pool`, `pool_starts`: an utterance's samples and the overlay's source clips, end to end;
  - `out`: [cases, n] the utterance after every host augmentation of the specifications in the metadata
    (sample domain first, then signal, each in command-line order) for each (utterance, clock) case;
  - `overlay_draws`: [rows, 6] float64 (case, augmentation, snr dB, layers, -1, -1) for each overlay
    applied, followed by one row (case, augmentation, layer, clip, offset, -2) per layer.
Codec has no reference here (libopus is not numpy's); test_augment_signal checks its properties.

    python3 tests/ref/augment_signal_ref.py          (numpy only)
"""
import json
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import augment_ref  # noqa: E402
from augment_ref import element_normal, element_uniform, pick, pick_uniform, value_range  # noqa: E402
from augment_sample_ref import max_dbfs, normalize, signal  # noqa: E402
from fixture_io import save  # noqa: E402

OVERLAY = ("sample", [("snr", False, "3.0"), ("layers", True, "1")])


def parse(spec):
    """augment_ref's parser, with overlay's parameters known and its source left out."""
    kinds = dict(augment_ref.KINDS, overlay=OVERLAY)
    saved, augment_ref.KINDS = augment_ref.KINDS, kinds
    try:
        out = augment_ref.parse(re.sub(r",?source=[^,\]]*", "", spec).replace("[,", "["))
    finally:
        augment_ref.KINDS = saved
    out["name"] = spec.partition("[")[0]
    return out


def overlay_starts(pool, seed, epoch, utt, aug, layers):
    starts = []
    for layer in range(layers):
        clip = min(len(pool) - 1, int(math.floor(pick_uniform(seed, epoch, utt, aug, 3 + 2 * layer) * len(pool))))
        offset = int(math.floor(pick_uniform(seed, epoch, utt, aug, 4 + 2 * layer) * len(pool[clip])))
        starts.append((clip, min(offset, len(pool[clip]) - 1)))
    return starts


def overlay(x, pool, snr_db, starts):
    """Overlay.apply: the layers laid end to end (in float64), mixed at snr_db, renormalised."""
    audio = x.astype(np.float64)
    mix = np.zeros_like(audio)
    for clip, offset in starts:
        at, src = 0, pool[clip][offset:]
        while at < len(audio):
            take = min(len(src), len(audio) - at)
            mix[at:at + take] += src[:take]
            at += take
            clip = (clip + 1) % len(pool)
            src = pool[clip]
    orig = max_dbfs(audio)
    gain = min(1e300, math.pow(10.0, (orig - max_dbfs(mix) - snr_db) / 20.0))
    return normalize(audio + mix * gain, orig).astype(np.float32)


def signal_domain(a, x, seed, epoch, utt, aug, clock, rate):
    i = np.arange(len(x))
    t, c = i // 4, i % 4
    v = pick(a["params"][0], False, clock, pick_uniform(seed, epoch, utt, aug, 1))
    x = x.copy()
    if a["kind"] == "time_mask":
        n = int(pick(a["params"][0], True, clock, pick_uniform(seed, epoch, utt, aug, 1)))
        for k in range(n):
            size = pick(a["params"][1], False, clock, pick_uniform(seed, epoch, utt, aug, 2 + 2 * k))
            size = math.trunc(size * (rate / 1000.0))  # int(size * units_per_ms)
            s = int(max(1.0, min(len(x) - 1.0, size)))
            if len(x) - s <= 0:
                continue
            at = int(math.floor(pick_uniform(seed, epoch, utt, aug, 3 + 2 * k) * (len(x) - s)))
            x[at:at + s] = 0
    elif a["kind"] == "dropout":
        x = np.where(element_uniform(seed, epoch, utt, aug, t, c, 4) < np.float32(max(0.0, v)), x * np.float32(0), x)
    elif a["kind"] == "add":
        x = x + np.float32(v) * element_normal(seed, epoch, utt, aug, t, c, 4)
    elif a["kind"] == "multiply":
        x = x * (np.float32(v) * element_normal(seed, epoch, utt, aug, t, c, 4) + np.float32(1))
    return x.astype(np.float32)


def host_augment(augs, pool, x, seed, epoch, utt, clock, rate, draws, case):
    clock = min(1.0, max(0.0, clock))
    x = x.astype(np.float32)
    for j, a in enumerate(augs):  # the sample domain (here only overlay)
        if a["name"] != "overlay" or pick_uniform(seed, epoch, utt, j, 0) >= a["p"]:
            continue
        snr = pick(a["params"][0], False, clock, pick_uniform(seed, epoch, utt, j, 1))
        layers = int(pick(a["params"][1], True, clock, pick_uniform(seed, epoch, utt, j, 2)))
        starts = overlay_starts(pool, seed, epoch, utt, j, layers)
        draws.append([case, j, snr, layers, -1, -1])
        draws.extend([case, j, layer, clip, offset, -2] for layer, (clip, offset) in enumerate(starts))
        x = overlay(x, pool, snr, starts)
    for j, a in enumerate(augs):  # then the signal domain
        if a["domain"] == "signal" and pick_uniform(seed, epoch, utt, j, 0) < a["p"]:
            x = signal_domain(a, x, seed, epoch, utt, j, clock, rate)
    return x


def make_pool():
    """Three clips: noise-like chirps of different lengths and levels."""
    clips = []
    for k, length in enumerate([700, 1300, 450]):
        i = np.arange(length)
        clips.append((0.3 + 0.2 * k) * np.sin(0.01 * (k + 1) * i * i / 50.0 + k) * np.cos(0.37 * i))
    return [c.astype(np.float32) for c in clips]


SPECS = ["add[domain=signal,p=0.8,stddev=0.01:0.05~0.01]", "overlay[source=noise.csv,snr=5:15~3,layers=1:3]",
         "time_mask[domain=signal,n=1:3~1,size=5:40~5]", "frequency_mask", "dropout[domain=signal,p=0.7,rate=0.05:0.3~0.05]",
         "multiply[domain=signal,stddev=0.1~0.05]", "overlay[source=other.csv,p=0.5,snr=-3~2,layers=2]"]
SEED, EPOCH, RATE, N = 31337, 4, 16000, 4000
CASES = [(0, 0.0), (1, 0.2), (2, 0.5), (9, 0.7), (1000, 1.0), (77777, 0.35), (3, -0.5), (12, 0.95)]


def main():
    augs = [parse(s) for s in SPECS]
    pool = make_pool()
    x = signal(N, RATE)
    draws, outs = [], []
    for case, (utt, clock) in enumerate(CASES):
        outs.append(host_augment(augs, pool, x, SEED, EPOCH, utt, clock, RATE, draws, case))
    starts = np.cumsum([0] + [len(c) for c in pool]).astype(np.int64)
    tensors = {"input": x, "pool": np.concatenate(pool), "pool_starts": starts, "out": np.stack(outs),
               "overlay_draws": np.array(draws, np.float64).reshape(-1, 6)}
    meta = {"specs": json.dumps(SPECS), "seed": SEED, "epoch": EPOCH, "rate": RATE, "cases": json.dumps(CASES)}
    save("augment_signal.safetensors", tensors, meta)


if __name__ == "__main__":
    main()
