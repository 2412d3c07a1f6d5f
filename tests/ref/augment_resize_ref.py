#!/usr/bin/env python3
"""Reference for --augment's power-spectrogram path (kernels/augment_resize.cl, engine/features/
augment/power.c): DeepSpeech 0.9.3's Pitch, Tempo and Warp (util/augmentations.py) with TensorFlow's own
legacy image ops (tf.compat.v1.image.resize_bilinear and resize_bicubic, align_corners and half-pixel
centres off, as TF1 ran them), dense_image_warp's bilinear gather in numpy after TensorFlow's formula
(tf.contrib / tensorflow_addons: query = grid - flow, floor clipped to [0, size - 2], alpha to [0, 1]),
and the masks, dropout, add and multiply on the power with clspeech's Philox draws (augment_ref.py).
An utterance's operations are applied one after another in their listed order: the device's stages
must give the same. Also the host's draws of these operations (engine/features/augment/device_ops.c,
tempo.c): an utterance's operations with their stages, tempo's frames (int(frames / factor),
capped at max_time, raised to the transcript, capped at the tower's frames) and warp's deviations.
Writes tests/fixtures/augment_resize.safetensors, for each case:

  CASE.re [sum frames, bins]       the spectrum's real part (imaginary 0), multiples of 1/64 whose
                                   squares float32 holds exactly;
  CASE.frames [B], CASE.op_first [B + 1], CASE.ops [n, 8], CASE.utt [B];
  CASE.power [sum out frames, bins] the expected power; CASE.out_frames [B];

and for the draws of the metadata's `draw_specs` (separated by ';'): draws.cases [n, 4] (utterance,
frames, transcript, the tower's frames), draws.clock [n], draws.counts [n], draws.ops [sum counts, 8],
draws.frames [n] (after the tempos).

    /work/ref-venv/bin/python tests/ref/augment_resize_ref.py     (needs tensorflow)
"""
import math
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from augment_ref import NORMAL, block, element_normal, element_uniform, pick, pick_uniform, value_range  # noqa: E402
from fixture_io import save  # noqa: E402

FREQ, TIME, DROPOUT, ADD, MULTIPLY, PITCH, TEMPO, WARP = 1, 2, 3, 4, 5, 6, 7, 8
SPECTROGRAM = 0
SEED, EPOCH = 4242, 3
N_BINS = 33


def f32bits(v):
    return int(np.array([v], np.float32).view(np.int32)[0])


def op(kind, lo=0, hi=0, aug=0, value=0.0, stage=0, value2=0.0):
    return [kind, SPECTROGRAM, lo, hi, aug, f32bits(value), stage, f32bits(value2)]


def resize_bilinear(p, h, w):
    x = tf.constant(p[None, :, :, None], tf.float32)
    return tf.compat.v1.image.resize_bilinear(x, [h, w], align_corners=False, half_pixel_centers=False).numpy()[0, :, :, 0]


def normal_pair(utt, aug, counter):
    """The two normals of Philox block `counter` (words 0, 1 and 2, 3), as augment_resize.cl draws them."""
    words = block(SEED, EPOCH, utt, aug, NORMAL, np.uint64(counter))
    out = []
    for k in range(2):
        u1 = np.float32(((int(words[2 * k]) >> 8) + 1) * (1.0 / 16777216.0))
        u2 = np.float32((int(words[2 * k + 1]) >> 8) * (1.0 / 16777216.0))
        out.append(np.float32(np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(np.float32(6.28318530717958647692) * u2)))
    return out


def warp(p, utt, aug, nt, nf, wt, wf):
    T, F = p.shape
    if T < 2 or F < 2:
        return p.copy()
    grid = np.zeros((nt + 2, nf + 2, 2), np.float32)
    for i in range(nt):
        for j in range(nf):
            zt, zf = normal_pair(utt, aug, i * nf + j)
            grid[i + 1, j + 1] = [zt * np.float32(wt), zf * np.float32(wf)]
    flows = tf.compat.v1.image.resize_bicubic(tf.constant(grid[None]), [T, F], align_corners=False,
                                              half_pixel_centers=False).numpy()[0]
    gy, gx = np.meshgrid(np.arange(T, dtype=np.float32), np.arange(F, dtype=np.float32), indexing="ij")
    q = [gy - flows[..., 0], gx - flows[..., 1]]
    floors, alphas = [], []
    for dim, size in enumerate((T, F)):
        fl = np.minimum(np.maximum(np.float32(0), np.floor(q[dim])), np.float32(size - 2))
        floors.append(fl.astype(np.int64))
        alphas.append(np.minimum(np.maximum(np.float32(0), (q[dim] - fl).astype(np.float32)), np.float32(1)))
    y0, x0 = floors
    tl, tr, bl, br = p[y0, x0], p[y0, x0 + 1], p[y0 + 1, x0], p[y0 + 1, x0 + 1]
    top = alphas[1] * (tr - tl) + tl
    bottom = alphas[1] * (br - bl) + bl
    return (alphas[0] * (bottom - top) + top).astype(np.float32)


def apply(p, ops, utt):
    """An utterance's operations on its power [T, bins], in order."""
    p = p.astype(np.float32).copy()
    for o in ops:
        kind, lo, hi, aug = o[0], o[2], o[3], o[4]
        value = np.array([o[5]], np.int32).view(np.float32)[0]
        value2 = np.array([o[7]], np.int32).view(np.float32)[0]
        T, F = p.shape
        t, c = np.meshgrid(np.arange(T), np.arange(F), indexing="ij")
        if kind == FREQ:
            p[:, lo:hi] *= np.float32(0)
        elif kind == TIME:
            p[lo:hi] *= np.float32(0)
        elif kind == DROPOUT:
            p = np.where(element_uniform(SEED, EPOCH, utt, aug, t, c, F) < value, p * np.float32(0), p)
        elif kind in (ADD, MULTIPLY):
            noise = (value * element_normal(SEED, EPOCH, utt, aug, t, c, F)).astype(np.float32)
            p = np.maximum(p + noise if kind == ADD else p * (noise + np.float32(1)), np.float32(0))
        elif kind == PITCH:
            out = np.zeros_like(p)
            wide = resize_bilinear(p, T, lo)
            out[:, :min(F, lo)] = wide[:, :min(F, lo)]
            p = out
        elif kind == TEMPO:
            assert lo == T
            p = resize_bilinear(p, hi, F)
        elif kind == WARP:
            p = warp(p, utt, aug, lo, hi, value, value2)
        p = p.astype(np.float32)
    return p


def spectrum(frames, salt, smooth):
    """Real parts k / 64: smooth (1 .. 2, slowly varying: the warp's gather is then insensitive to the
    last bits of its flows) or rough (1 .. 10, neighbours far apart)."""
    t, c = np.meshgrid(np.arange(frames), np.arange(N_BINS), indexing="ij")
    if smooth:
        k = 64 + (t * 3 + c * 2 + salt) % 64
    else:
        k = 64 + (t * 37 + c * 101 + salt * 13) % 577
    return (k / 64.0).astype(np.float32)


def case(name, frames, ops, utts, smooth, out):
    re = [spectrum(f, b, smooth) for b, f in enumerate(frames)]
    power = [apply(r * r, o, u) for r, o, u in zip(re, ops, utts)]
    first = np.cumsum([0] + [len(o) for o in ops]).astype(np.int32)
    flat = [x for o in ops for x in o] or [[0] * 8]
    out[name + ".re"] = np.concatenate(re)
    out[name + ".frames"] = np.array(frames, np.int32)
    out[name + ".op_first"] = first
    out[name + ".ops"] = np.array(flat, np.int32).reshape(-1, 8)
    out[name + ".utt"] = np.array(utts, np.int32)
    out[name + ".power"] = np.concatenate(power)
    out[name + ".out_frames"] = np.array([p.shape[0] for p in power], np.int32)


# The draws: DeepSpeech's defaults of the kinds used, (name, integer, default) per parameter.
DRAW_KINDS = {
    "frequency_mask": ("spectrogram", [("n", True, "3"), ("size", True, "2")]),
    "time_mask": ("spectrogram", [("n", True, "3"), ("size", False, "10.0")]),
    "add": ("features", [("stddev", False, "5")]),
    "pitch": ("spectrogram", [("pitch", False, "1.075~0.125")]),
    "tempo": ("spectrogram", [("factor", False, "1.1"), ("max_time", False, "-1")]),
    "warp": ("spectrogram", [("nt", True, "1"), ("nf", True, "1"), ("wt", False, "0.1"), ("wf", False, "0.0")]),
}
DRAW_SPECS = ["frequency_mask[n=1,size=5]", "pitch[p=0.7,pitch=1:1.2~0.2]", "time_mask[n=2,size=60]",
              "tempo[p=0.8,factor=0.8:1.3~0.3,max_time=2000]", "warp[p=0.9,nt=0:3~1,nf=2,wt=0.1~0.05,wf=0.05]",
              "add[domain=spectrogram,stddev=0.3]", "time_mask[domain=features,n=1,size=40~20]"]
DRAW_SEED, DRAW_EPOCH, WIN_STEP = 777, 2, 20


def parse_spec(spec):
    name, _, rest = spec.partition("[")
    domain, params = DRAW_KINDS[name]
    given = dict(kv.split("=") for kv in rest.rstrip("]").split(",")) if rest else {}
    a = {"kind": name, "p": float(given.pop("p", 1.0)), "domain": given.pop("domain", domain)}
    a["params"] = [value_range(given.pop(n, d), i) for n, i, d in params]
    assert not given, given
    return a


def draw(augs, utt, clock, frames, transcript, room):
    """An utterance's operations as device_ops.c lists them, from DeepSpeech's formulas; and its frames."""
    f32 = np.float32
    clock = min(1.0, max(0.0, clock))
    ops, stage = [], 0
    for domain, code in (("spectrogram", 0), ("features", 1)):
        for j, a in enumerate(augs):
            if a["domain"] != domain or pick_uniform(DRAW_SEED, DRAW_EPOCH, utt, j, 0) >= a["p"]:
                continue
            u = lambda k: pick_uniform(DRAW_SEED, DRAW_EPOCH, utt, j, k)  # noqa: E731
            at = stage if code == 0 else 0
            kind = a["kind"]
            if kind in ("frequency_mask", "time_mask"):
                extent = N_BINS_DRAW if kind == "frequency_mask" else frames
                for i in range(int(pick(a["params"][0], True, clock, u(1)))):
                    size = pick(a["params"][1], kind == "frequency_mask", clock, u(2 + 2 * i))
                    if kind == "time_mask":
                        size = math.trunc(size / WIN_STEP)
                    width = int(max(1.0, min(extent - 1.0, size)))
                    if extent - width > 0:
                        lo = int(math.floor(u(3 + 2 * i) * (extent - width)))
                        ops.append(op(FREQ if kind == "frequency_mask" else TIME, lo, lo + width, j, 0.0, at))
                        ops[-1][1] = code
            elif kind == "add":
                ops.append(op(ADD, 0, 0, j, pick(a["params"][0], False, clock, u(1)), at))
                ops[-1][1] = code
            elif kind == "pitch":
                v = pick(a["params"][0], False, clock, u(1))
                wide = min(max(int(f32(N_BINS_DRAW) * f32(v)), 1), 1 << 24)  # DeepSpeech: int(float32(bins) * pitch)
                ops.append(op(PITCH, wide, N_BINS_DRAW, j, v, stage))
                stage += 1
            elif kind == "tempo":
                v = pick(a["params"][0], False, clock, u(1))
                t = float(f32(frames) / f32(v))
                if a["params"][1][0] > 0:  # max_time in ms, then the transcript, then the tower's room
                    t = min(t, float(f32(a["params"][1][0]) * f32(1.0 / WIN_STEP)))
                t = max(math.trunc(t), transcript)
                t = max(min(t, room) if room > 0 else t, 1)
                ops.append(op(TEMPO, frames, t, j, v, stage))
                frames, stage = t, stage + 1
            elif kind == "warp":
                v = [pick(a["params"][i], i < 2, clock, u(1 + i)) for i in range(4)]
                nt, nf = int(max(0, v[0])), int(max(0, v[1]))
                wt = f32(max(0.0, v[2])) * f32(frames) / f32(2 * (nt + 1))
                wf = f32(max(0.0, v[3])) * f32(N_BINS_DRAW) / f32(2 * (nf + 1))
                ops.append(op(WARP, nt, nf, j, wt, stage, wf))
                stage += 1
    return ops, frames


N_BINS_DRAW = 257
DRAW_CASES = [(0, 0.0, 145, 52, 0), (1, 0.25, 50, 60, 70), (7, 0.5, 200, 10, 120), (12345, 1.0, 300, 5, 0),
              (3, 0.6, 145, 52, 145), (9, 0.1, 3, 1, 0), (21, 0.7, 300, 120, 0), (22, 0.7, 300, 120, 0)] + [(100 + k, k / 13.0, 40 + 17 * k, 3 * k, 150 if k % 2 else 0)
                                                          for k in range(14)]


def main():
    out = {}
    augs = [parse_spec(s) for s in DRAW_SPECS]
    counts, all_ops, frames_after = [], [], []
    for utt, clock, frames, transcript, room in DRAW_CASES:
        ops, after = draw(augs, utt, clock, frames, transcript, room)
        counts.append(len(ops))
        all_ops.extend(ops)
        frames_after.append(after)
    out["draws.cases"] = np.array([[c[0], c[2], c[3], c[4]] for c in DRAW_CASES], np.int32)
    out["draws.clock"] = np.array([c[1] for c in DRAW_CASES], np.float64)
    out["draws.counts"] = np.array(counts, np.int32)
    out["draws.ops"] = np.array(all_ops, np.int32).reshape(-1, 8)
    out["draws.frames"] = np.array(frames_after, np.int32)
    pitch_up, pitch_down = 1.2, 0.8
    case("pitch", [7, 5],
         [[op(PITCH, int(np.float32(N_BINS) * np.float32(pitch_up)), N_BINS, 0, pitch_up)],
          [op(PITCH, int(np.float32(N_BINS) * np.float32(pitch_down)), N_BINS, 0, pitch_down)]], [11, 12], False, out)
    case("tempo", [7, 9], [[op(TEMPO, 7, 10, 0, 0.7)], [op(TEMPO, 9, 4, 0, 2.25)]], [11, 12], False, out)
    case("warp", [12, 6, 1], [[op(WARP, 2, 3, 1, 1.5, 0, 2.0)], [op(WARP, 1, 1, 1, 0.8, 0, 3.0)],
                              [op(WARP, 1, 1, 1, 0.8, 0, 3.0)]], [21, 22, 23], True, out)
    # stages: masks before and after resizes keep their places; an utterance without resizes is copied
    case("stages", [8, 6],
         [[op(FREQ, 2, 5, 0), op(PITCH, int(np.float32(N_BINS) * np.float32(0.9)), N_BINS, 1, 0.9, 0),
           op(TIME, 1, 3, 2, 0, 1), op(ADD, 0, 0, 3, 0.5, 1), op(TEMPO, 8, 11, 4, 0.75, 1), op(DROPOUT, 0, 0, 5, 0.2, 2),
           op(WARP, 1, 2, 6, 1.0, 2, 1.5), op(MULTIPLY, 0, 0, 7, 2.0, 3), op(TIME, 9, 10, 8, 0, 3)],
          [op(TIME, 0, 2, 2, 0, 0), op(MULTIPLY, 0, 0, 7, 0.3, 0)]], [31, 32], True, out)
    save("augment_resize.safetensors", out,
         {"seed": SEED, "epoch": EPOCH, "n_bins": N_BINS, "cases": "pitch,tempo,warp,stages",
          "draw_specs": ";".join(DRAW_SPECS), "draw_seed": DRAW_SEED, "draw_epoch": DRAW_EPOCH,
          "draw_n_bins": N_BINS_DRAW, "draw_win_step_ms": WIN_STEP,
          "generator": "tests/ref/augment_resize_ref.py (TensorFlow " + tf.__version__ + ")"})


if __name__ == "__main__":
    main()
