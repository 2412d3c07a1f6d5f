#!/usr/bin/env python3
"""Trains DeepSpeech's network on LDC93S1 in TensorFlow (the graph of make_model_fixtures.py, on
the features TensorFlow's own ops compute, dropout off) from Glorot-uniform parameters that it also
writes as a clspeech checkpoint, so that `clspeech train --load_train last --dropout_rate 0` starts
from the same point and the two loss curves can be compared step by step.

    python3 tests/ref/ldc93s1_curve.py OUT_DIR [STEPS]   # writes OUT_DIR/checkpoint + train-0.safetensors
"""
import os
import struct
import json
import sys
import wave

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from make_model_fixtures import forward, make_params  # noqa: E402

SMOKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "deepspeech-smoke")


def write_checkpoint(path, params, H, C):
    tensors = {}
    for k, v in params.items():
        tensors[k] = v
        tensors[k + "/Adam"] = np.zeros_like(v)
        tensors[k + "/Adam_1"] = np.zeros_like(v)
    tensors["beta1_power"] = np.array(0.9, np.float32)
    tensors["beta2_power"] = np.array(0.999, np.float32)
    tensors["global_step"] = np.array(0, np.int64)
    tensors["learning_rate"] = np.array(0.001, np.float32)
    header, blobs, off = {"__metadata__": {"n_hidden": str(H), "n_classes": str(C), "epoch": "0",
                                           "best_dev_loss": "inf", "random_seed": "4568"}}, [], 0
    for k, v in tensors.items():
        b = np.ascontiguousarray(v).tobytes()
        header[k] = {"dtype": {"float32": "F32", "int64": "I64"}[str(v.dtype)], "shape": list(v.shape),
                     "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    out, steps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200
    H, C = 100, 29
    with wave.open(os.path.join(SMOKE, "LDC93S1.wav")) as w:
        samples = (np.frombuffer(w.readframes(w.getnframes()), "<i2") / 32767.0).astype(np.float32)
    spec = tf.raw_ops.AudioSpectrogram(input=samples[:, None], window_size=512, stride=320, magnitude_squared=True)
    mfcc = tf.raw_ops.Mfcc(spectrogram=spec, sample_rate=16000, upper_frequency_limit=8000.0,
                           lower_frequency_limit=20.0, filterbank_channel_count=40, dct_coefficient_count=26)
    feats = np.reshape(mfcc.numpy(), [-1, 26])
    T = feats.shape[0]
    padded = np.concatenate([np.zeros((9, 26), np.float32), feats, np.zeros((9, 26), np.float32)])
    x = np.stack([padded[t:t + 19].reshape(-1) for t in range(T)])[:, None, :]  # [T, 1, 494]
    alphabet = [" "] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["'"]
    text = "she had your dark suit in greasy wash water all year"
    labels = np.array([[alphabet.index(ch) for ch in text]], np.int32)
    sparse = tf.SparseTensor(np.array([[0, i] for i in range(labels.shape[1])], np.int64), labels[0], labels.shape)
    params = make_params(np.random.default_rng(7), 494, H, C)
    for k in params:  # DeepSpeech starts biases at zero
        if k.endswith("bias"):
            params[k][:] = 0
    os.makedirs(out, exist_ok=True)
    write_checkpoint(os.path.join(out, "train-0.safetensors"), params, H, C)
    with open(os.path.join(out, "checkpoint"), "w") as f:
        f.write("train-0.safetensors\n")
    v = {k: tf.Variable(a) for k, a in params.items()}
    names = list(params)
    opt = tf.compat.v1.train.AdamOptimizer(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8)
    seq = np.array([T], np.int32)
    for s in range(steps):
        with tf.GradientTape() as tape:
            _, _, loss = forward(v, x, seq, sparse, T, 1, H, C)
        g = tape.gradient(loss, [v[k] for k in names])
        opt.apply_gradients(zip(g, [v[k] for k in names]))
        print(f"step {s} loss {loss.numpy():.6f}", flush=True)


if __name__ == "__main__":
    main()
