#!/usr/bin/env python3
"""Reference for --augment's power-spectrogram path (kernels/augment_resize.cl, engine/features/
augment_power.c): DeepSpeech 0.9.3's Pitch, Tempo and Warp (util/augmentations.py) with TensorFlow's own
legacy image ops (tf.compat.v1.image.resize_bilinear and resize_bicubic, align_corners and half-pixel
centres off, as TF1 ran them), dense_image_warp's bilinear gather in numpy after TensorFlow's formula
(tf.contrib / tensorflow_addons: query = grid - flow, floor clipped to [0, size - 2], alpha to [0, 1]),
and the masks, dropout, add and multiply on the power with clspeech's Philox draws (augment_ref.py).
An utterance's operations are applied one after another in their listed order: the device's stages
must give the same. Writes tests/fixtures/augment_resize.safetensors, for each case:

  CASE.re [sum frames, bins]       the spectrum's real part (imaginary 0), multiples of 1/64 whose
                                   squares float32 holds exactly;
  CASE.frames [B], CASE.op_first [B + 1], CASE.ops [n, 8], CASE.utt [B];
  CASE.power [sum out frames, bins] the expected power; CASE.out_frames [B].

    /work/ref-venv/bin/python tests/ref/augment_resize_ref.py     (needs tensorflow)
"""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from augment_ref import NORMAL, block, element_normal, element_uniform  # noqa: E402
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


def main():
    out = {}
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
          "generator": "tests/ref/augment_resize_ref.py (TensorFlow " + tf.__version__ + ")"})


if __name__ == "__main__":
    main()
