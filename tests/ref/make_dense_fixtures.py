#!/usr/bin/env python3
"""Reference fixtures for the dense op: TensorFlow computes y = dropout(min(relu(x·w + b), clip))
(or the linear x·w + b of the output layer) and, by tf.GradientTape, the gradients of sum(y·dy)
with respect to x, w and b. The dropout mask is clspeech's Philox draw, computed by tests/ref/philox.py
(numpy, independent of the C code), so that TensorFlow and the device drop the same activations.

    pip install tensorflow-cpu && python3 tests/ref/make_dense_fixtures.py
"""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import save  # noqa: E402
from philox import dropout_uniform  # noqa: E402


def case(name, T, B, n_in, n_out, relu, clip=20.0, rate=0.0, seed=4568, step=0, layer=1, uoff=0, xscale=3.0, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    rows = T * B
    x = (rng.standard_normal((rows, n_in)) * xscale).astype(np.float32)
    limit = np.sqrt(6.0 / (n_in + n_out)) * 4  # Glorot-uniform, widened so some units pass the clip
    w = rng.uniform(-limit, limit, (n_in, n_out)).astype(np.float32)
    b = rng.uniform(-1, 1, n_out).astype(np.float32)
    dy = rng.standard_normal((rows, n_out)).astype(np.float32)
    r = np.arange(rows)
    t, bb = r // B, r % B
    if relu and rate > 0:
        u = dropout_uniform(seed, step, layer, (uoff + bb)[:, None], t[:, None], np.arange(n_out)[None, :])
        keep = (u >= np.float32(rate)).astype(np.float32)
    else:
        keep = np.ones((rows, n_out), np.float32)
    xt, wt, bt = tf.Variable(x), tf.Variable(w), tf.Variable(b)
    with tf.GradientTape() as tape:
        z = tf.matmul(xt, wt) + bt
        if relu:
            a = tf.minimum(tf.nn.relu(z), clip)
            y = a * keep / (1.0 - rate) if rate > 0 else a
        else:
            y = z
        loss = tf.reduce_sum(y * dy)
    dx, dw, db = tape.gradient(loss, [xt, wt, bt])
    z_np = z.numpy()
    save(f"dense_{name}.safetensors",
         {"x": x, "w": w, "b": b, "dy": dy, "y": y.numpy(), "dx": dx.numpy(), "dw": dw.numpy(), "db": db.numpy(),
          "keep": keep},
         {"T": T, "B": B, "in": n_in, "out": n_out, "relu": int(relu), "clip": repr(clip), "rate": repr(rate),
          "seed": seed, "step": step, "layer": layer, "utterance_offset": uoff,
          "clipped_fraction": f"{float(np.mean(z_np > clip)):.3f}",
          "generator": f"tensorflow {tf.__version__}: tf.matmul, tf.nn.relu, tf.minimum, GradientTape"})


if __name__ == "__main__":
    case("relu_dropout", 7, 3, 19, 37, True, rate=0.25, step=11, layer=2, uoff=5, rng_seed=1)
    case("relu_clip", 6, 2, 23, 17, True, rate=0.0, xscale=8.0, rng_seed=2)
    case("linear", 5, 2, 37, 29, False, rng_seed=3)
    case("single", 1, 1, 494, 16, True, rng_seed=4)
    case("deepspeech", 5, 4, 494, 24, True, rate=0.05, step=3, layer=1, uoff=8, xscale=1.0, rng_seed=5)
