#!/usr/bin/env python3
"""Reference for --augment (kernels/augment.cl, engine/features/augment/device_ops.c), in numpy and independent
of the C code: DeepSpeech 0.9.3's value ranges and picks (util/helpers.py get_value_range,
pick_value_from_range), its mask placement (util/augmentations.py FrequencyMask, TimeMask) and the
element operations (dropout to 0, add N(0, s), multiply by N(1, s)), with clspeech's Philox draws
(tests/ref/philox.py) in place of TensorFlow's stateless ones. Writes tests/fixtures/augment.safetensors:

  - `draws`: for the specifications in the metadata and a few (utterance, clock, frames), the operations
    an utterance gets ([n, 8] int32, the value's float bits in word 5);
  - `kernels`: given operations (the drawn values) on a small spectrum and small features made by a
    formula, the spectrogram's kept values (1) and dropped ones (0), and the augmented features.

    python3 tests/ref/augment_ref.py          (numpy only)
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import save  # noqa: E402
from philox import philox4x32_10  # noqa: E402

TAG = 0xA06E47
PICK, UNIFORM, NORMAL = 0, 1, 2
FREQ, TIME, DROPOUT, ADD, MULTIPLY = 1, 2, 3, 4, 5
SPECTROGRAM, FEATURES = 0, 1

# name: (default domain, [(param, integer, default)])
KINDS = {
    "frequency_mask": ("spectrogram", [("n", True, "3"), ("size", True, "2")]),
    "time_mask": ("spectrogram", [("n", True, "3"), ("size", False, "10.0")]),
    "dropout": ("spectrogram", [("rate", False, "0.05")]),
    "add": ("features", [("stddev", False, "5")]),
    "multiply": ("features", [("stddev", False, "5")]),
}


def value_range(text, integer):
    """DeepSpeech's get_value_range: (start, end, r)."""
    kind = int if integer else float
    r = kind(0)
    parts = text.split("~")
    if len(parts) == 2:
        text, r = parts[0], kind(parts[1])
    elif len(parts) > 2:
        raise ValueError(text)
    parts = text.split(":")
    if len(parts) == 1:
        parts.append(parts[0])
    elif len(parts) > 2:
        raise ValueError(text)
    return (kind(parts[0]), kind(parts[1]), r)


def parse(spec):
    name, _, rest = spec.partition("[")
    domain, params = KINDS[name]
    given = dict(kv.split("=") for kv in rest.rstrip("]").split(",")) if rest else {}
    out = {"kind": name, "p": float(given.pop("p", 1.0)), "domain": given.pop("domain", domain), "params": []}
    for pname, integer, default in params:
        out["params"].append(value_range(given.pop(pname, default), integer))
    assert not given, given
    return out


def block(seed, epoch, utt, aug, purpose, counter):
    counter = np.asarray(counter, np.uint64)
    ctr = np.stack(np.broadcast_arrays(counter, np.uint64(utt), np.uint64((aug & 0xFFFF) | (purpose << 16)),
                                       np.uint64(TAG)), axis=-1)
    return philox4x32_10(ctr, (seed, epoch))


def pick_uniform(seed, epoch, utt, aug, k):
    return float(block(seed, epoch, utt, aug, PICK, k)[0]) / 4294967296.0


def pick(rng, integer, clock, u):
    start, end, r = rng
    centre = start + clock * (end - start)
    x = (centre - r) + (2.0 * r) * u
    return float(np.rint(x)) if integer else x


def utterance_ops(augs, seed, epoch, utt, clock, n_frames, n_bins, win_step_ms):
    clock = min(1.0, max(0.0, clock))
    ops = []
    for want, dom in (("spectrogram", SPECTROGRAM), ("features", FEATURES)):
        for j, a in enumerate(augs):
            if a["domain"] != want or pick_uniform(seed, epoch, utt, j, 0) >= a["p"]:
                continue
            u = lambda k: pick_uniform(seed, epoch, utt, j, k)  # noqa: E731
            if a["kind"] in ("frequency_mask", "time_mask"):
                freq = a["kind"] == "frequency_mask"
                extent = n_bins if freq else n_frames
                n = int(pick(a["params"][0], True, clock, u(1)))
                for i in range(n):
                    size = pick(a["params"][1], freq, clock, u(2 + 2 * i))
                    if not freq:
                        size = math.trunc(size * (1.0 / win_step_ms))  # ms -> frames, tf.cast truncates
                    s = int(max(1.0, min(extent - 1.0, size)))
                    if extent - s <= 0:
                        continue
                    at = int(math.floor(u(3 + 2 * i) * (extent - s)))
                    ops.append([FREQ if freq else TIME, SPECTROGRAM, at, at + s, j, 0.0])
            else:
                v = pick(a["params"][0], False, clock, u(1))
                kind = {"dropout": DROPOUT, "add": ADD, "multiply": MULTIPLY}[a["kind"]]
                ops.append([kind, dom, 0, 0, j, max(0.0, v) if kind == DROPOUT else v])
    return ops


def pack(ops):
    out = np.zeros((len(ops), 8), np.int32)
    for i, (kind, dom, lo, hi, aug, value) in enumerate(ops):
        out[i, :5] = (kind, dom, lo, hi, aug)
        out[i, 5] = np.array([value], np.float32).view(np.int32)[0]
    return out


def element_uniform(seed, epoch, utt, aug, t, c, width):
    """Columns 4g .. 4g+3 of row t: the words of block t ceil(width / 4) + g."""
    t, c = np.asarray(t, np.uint64), np.asarray(c, np.uint64)
    words = block(seed, epoch, utt, aug, UNIFORM, t * np.uint64((width + 3) // 4) + (c >> np.uint64(2)))
    w = np.take_along_axis(words, (c & np.uint64(3)).astype(np.int64)[..., None], axis=-1)[..., 0]
    return (w >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)


def element_normal(seed, epoch, utt, aug, t, c, width):
    """Columns 2h, 2h + 1 of row t: words (0, 1) and (2, 3) of block t ceil(width / 2) + h, Box-Muller."""
    t, c = np.asarray(t, np.uint64), np.asarray(c, np.uint64)
    words = block(seed, epoch, utt, aug, NORMAL, t * np.uint64((width + 1) // 2) + (c >> np.uint64(1)))
    w = ((c & np.uint64(1)) * np.uint64(2)).astype(np.int64)
    w0 = np.take_along_axis(words, w[..., None], axis=-1)[..., 0]
    w1 = np.take_along_axis(words, (w + 1)[..., None], axis=-1)[..., 0]
    u1 = ((w0 >> np.uint64(8)) + np.uint64(1)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    u2 = (w1 >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    return (np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(np.float32(6.28318530717958647692) * u2)).astype(np.float32)


def apply_spectrogram(ops, seed, epoch, utt, n_frames, n_bins):
    keep = np.ones((n_frames, n_bins), np.uint8)
    t, b = np.meshgrid(np.arange(n_frames), np.arange(n_bins), indexing="ij")
    for kind, dom, lo, hi, aug, value in ops:
        if dom != SPECTROGRAM:
            continue
        if kind == FREQ:
            keep[:, lo:hi] = 0
        elif kind == TIME:
            keep[lo:hi, :] = 0
        elif kind == DROPOUT:
            keep[element_uniform(seed, epoch, utt, aug, t, b, n_bins) < np.float32(value)] = 0
    return keep


def apply_features(ops, seed, epoch, utt, x):
    x = x.astype(np.float32).copy()
    n_frames, n_coeff = x.shape
    t, c = np.meshgrid(np.arange(n_frames), np.arange(n_coeff), indexing="ij")
    for kind, dom, lo, hi, aug, value in ops:
        if dom != FEATURES:
            continue
        value = np.float32(value)
        if kind == DROPOUT:
            x = np.where(element_uniform(seed, epoch, utt, aug, t, c, n_coeff) < value, x * np.float32(0), x)
        elif kind == ADD:
            x = x + value * element_normal(seed, epoch, utt, aug, t, c, n_coeff)
        elif kind == MULTIPLY:
            x = x * (value * element_normal(seed, epoch, utt, aug, t, c, n_coeff) + np.float32(1))
    return x.astype(np.float32)


# The formulas the C test fills its inputs with (exact in float32).
def spectrum_input(n_frames, n_bins):
    f, k = np.meshgrid(np.arange(n_frames), np.arange(n_bins), indexing="ij")
    re = ((f * 37 + k * 11) % 101) / 8.0 - 6.0
    im = ((f * 13 + k * 7) % 53) / 4.0 - 6.5
    return np.stack([re, im], axis=-1).astype(np.float32)


def features_input(n_frames, n_coeff):
    f, c = np.meshgrid(np.arange(n_frames), np.arange(n_coeff), indexing="ij")
    return (((f * 29 + c * 17) % 97) / 4.0 - 12.0).astype(np.float32)


SPECS = ["frequency_mask[p=0.8,n=1:4~1,size=2:6]", "time_mask[n=2~1,size=20:80~15]",
         "dropout[p=0.5,rate=0.1:0.3~0.05]", "add[p=0.7,stddev=0.5~0.25]", "multiply[stddev=0:0.4]",
         "dropout[domain=features,rate=0.2]"]
DRAW_SEED, DRAW_EPOCH, N_BINS, WIN_STEP = 4242, 2, 257, 20
CASES = [(0, 0.0, 145), (1, 0.25, 50), (7, 0.5, 2), (100, 0.9, 1), (12345, 1.0, 300), (3, 0.6, 145)]

KSEED, KEPOCH = 1234, 3
K_UTTS = [(5, 6), (9, 5)]  # (index in the epoch, frames)
K_OPS = [
    [[FREQ, SPECTROGRAM, 10, 13, 0, 0.0], [TIME, SPECTROGRAM, 2, 4, 1, 0.0], [DROPOUT, SPECTROGRAM, 0, 0, 2, 0.3],
     [ADD, FEATURES, 0, 0, 3, 0.7], [MULTIPLY, FEATURES, 0, 0, 4, 0.2], [DROPOUT, FEATURES, 0, 0, 5, 0.25]],
    [[DROPOUT, SPECTROGRAM, 0, 0, 0, 0.5], [FREQ, SPECTROGRAM, 250, 257, 1, 0.0], [MULTIPLY, FEATURES, 0, 0, 2, 1.5],
     [ADD, FEATURES, 0, 0, 3, 2.0]],
]


def main():
    augs = [parse(s) for s in SPECS]
    tensors, counts = {}, []
    all_ops = []
    for utt, clock, frames in CASES:
        ops = utterance_ops(augs, DRAW_SEED, DRAW_EPOCH, utt, clock, frames, N_BINS, WIN_STEP)
        counts.append(len(ops))
        all_ops.extend(ops)
    tensors["draw_counts"] = np.array(counts, np.int32)
    tensors["draw_ops"] = pack(all_ops)
    keeps, feats = [], []
    for (utt, frames), ops in zip(K_UTTS, K_OPS):
        keeps.append(apply_spectrogram(ops, KSEED, KEPOCH, utt, frames, N_BINS))
        feats.append(apply_features(ops, KSEED, KEPOCH, utt, features_input(sum(f for _, f in K_UTTS), 26)[
            sum(f for _, f in K_UTTS[:len(feats)]):][:frames]))
    tensors["kernel_ops"] = pack([op for ops in K_OPS for op in ops])
    tensors["kernel_op_counts"] = np.array([len(o) for o in K_OPS], np.int32)
    tensors["spectrum_keep"] = np.concatenate(keeps).astype(np.uint8)
    tensors["features_out"] = np.concatenate(feats)
    meta = {"specs": json.dumps(SPECS), "draw_seed": DRAW_SEED, "draw_epoch": DRAW_EPOCH, "n_bins": N_BINS,
            "win_step_ms": WIN_STEP, "cases": json.dumps(CASES), "kernel_seed": KSEED, "kernel_epoch": KEPOCH,
            "kernel_utts": json.dumps(K_UTTS)}
    save("augment.safetensors", tensors, meta)


if __name__ == "__main__":
    main()
