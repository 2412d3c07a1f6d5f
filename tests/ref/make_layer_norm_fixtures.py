#!/usr/bin/env python3
"""Reference fixtures for the layer norm op: TensorFlow's own tf_slim.layers.layer_norm (the function
tf.contrib.layers.layer_norm became; DeepSpeech 0.9's `dense(..., layer_norm=True)` calls it with its
defaults inside the layer's variable scope, so its variables are layer_N/LayerNorm/beta and /gamma) in a
TF1 graph, gamma and beta set to the case's values, and by tf.GradientTape the gradients of sum(y * dy)
with respect to x, gamma and beta; one case follows it by inverted dropout (DeepSpeech's order: clipped
ReLU, layer norm, dropout) with the dense layer's mask, clspeech's Philox draw computed by tests/ref/philox.py
(numpy, independent of the C code). Beside TensorFlow's float32 results each case holds the same math in
float64 (numpy; the *_exact tensors, rounded to float32), where TensorFlow's float32 formula
x * inv + (beta - mean * inv) loses the digits a row of nearly equal values leaves.

    pip install tensorflow-cpu tf_slim && python3 tests/ref/make_layer_norm_fixtures.py
"""
import os
import sys

import numpy as np
import tensorflow as tf
import tf_slim

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import save  # noqa: E402
from philox import dropout_uniform  # noqa: E402

tf1 = tf.compat.v1
EPS = np.float64(np.float32(1e-12))  # tf_slim's variance_epsilon for float32, added in float32


def tensorflow_layer_norm(x, gamma, beta, dy, keep, rate):
    rows, h = x.shape
    graph = tf.Graph()
    with graph.as_default():
        xp = tf1.placeholder(tf.float32, [rows, h])
        dyp = tf1.placeholder(tf.float32, [rows, h])
        with tf.GradientTape() as tape:
            tape.watch(xp)
            with tf1.variable_scope("layer_1"):
                y = tf_slim.layers.layer_norm(xp)
            if rate > 0:
                y = y * keep / (1.0 - rate)
            loss = tf.reduce_sum(y * dyp)
        by_name = {v.name: v for v in tf1.global_variables()}
        beta_v, gamma_v = by_name["layer_1/LayerNorm/beta:0"], by_name["layer_1/LayerNorm/gamma:0"]
        dx, dgamma, dbeta = tape.gradient(loss, [xp, gamma_v, beta_v])
        with tf1.Session(graph=graph) as s:
            s.run(tf1.global_variables_initializer())
            init_gamma, init_beta = s.run([gamma_v, beta_v])
            assert np.all(init_gamma == 1) and np.all(init_beta == 0), "LayerNorm's initial gamma 1, beta 0"
            s.run([gamma_v.assign(gamma), beta_v.assign(beta)])
            return s.run([y, dx, dgamma, dbeta], {xp: x, dyp: dy})


def exact_layer_norm(x, gamma, beta, dy, keep, rate):
    x, gamma, beta = (a.astype(np.float64) for a in (x, gamma, beta))
    drop = keep.astype(np.float64) / (1.0 - np.float64(rate))
    dy = dy.astype(np.float64) * drop
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + EPS)
    xhat = (x - mean) * rstd
    g = dy * gamma
    dx = rstd * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))
    return (xhat * gamma + beta) * drop, dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def case(name, x, gamma, beta, dy, exact=True, batch=1, rate=0.0, seed=4568, step=0, layer=1, uoff=0):
    x, gamma, beta, dy = (np.asarray(a, np.float32) for a in (x, gamma, beta, dy))
    rows, h = x.shape
    meta = {"rows": rows, "hidden": h, "epsilon": "1e-12"}
    keep = np.ones((rows, h), np.float32)
    if rate > 0:
        r = np.arange(rows)
        t, b = r // batch, r % batch
        u = dropout_uniform(seed, step, layer, (uoff + b)[:, None], t[:, None], np.arange(h)[None, :])
        keep = (u >= np.float32(rate)).astype(np.float32)
        meta.update({"rate": repr(rate), "batch": batch, "seed": seed, "step": step, "layer": layer,
                     "utterance_offset": uoff})
    y, dx, dgamma, dbeta = tensorflow_layer_norm(x, gamma, beta, dy, keep, rate)
    tensors = {"x": x, "gamma": gamma, "beta": beta, "dy": dy, "y": y, "dx": dx, "dgamma": dgamma, "dbeta": dbeta}
    if rate > 0:
        tensors["keep"] = keep
    if exact:
        for key, value in zip(("y", "dx", "dgamma", "dbeta"), exact_layer_norm(x, gamma, beta, dy, keep, rate)):
            tensors[key + "_exact"] = value.astype(np.float32)
    meta["generator"] = f"tensorflow {tf.__version__}, tf_slim.layers.layer_norm (defaults), GradientTape"
    save(f"layer_norm_{name}.safetensors", tensors, meta)


def params(rng, h):
    return rng.uniform(0.5, 1.5, h), rng.uniform(-1, 1, h)


if __name__ == "__main__":
    rng = np.random.default_rng(48)
    # one row at the initial gamma 1, beta 0
    case("1x8", rng.standard_normal((1, 8)) * 2, np.ones(8), np.zeros(8), rng.standard_normal((1, 8)))
    # clipped ReLU outputs as the layers give them: zeros, values up to the clip 20
    g, b = params(rng, 64)
    case("37x64", np.minimum(np.maximum(rng.standard_normal((37, 64)) * 8, 0), 20), g, b,
         rng.standard_normal((37, 64)), exact=False)
    # H = 100: 12 runs of 8 and 4 more per row; 6 column groups of 16 and 4 more
    g, b = params(rng, 100)
    case("160x100", rng.standard_normal((160, 100)) * 3 + rng.uniform(-2, 2, (160, 1)), g, b,
         rng.standard_normal((160, 100)), exact=False)
    # rows of one value (a dead layer's 0, the clip 20, 3.7 whose float32 multiples are inexact, -1e4)
    # beside ordinary rows
    g, b = params(rng, 24)
    x = np.concatenate([np.full((1, 24), v) for v in (0.0, 20.0, 3.7, -1e4)] + [rng.standard_normal((3, 24))])
    case("constant", x, g, b, rng.standard_normal((7, 24)))
    # large magnitudes: a wide spread (1e4), a large offset over a small spread (1e3 + 0.1), tiny values
    g, b = params(rng, 72)
    x = np.concatenate([rng.standard_normal((4, 72)) * 1e4, 1e3 + rng.standard_normal((4, 72)) * 0.1,
                        rng.standard_normal((4, 72)) * 1e-4])
    case("large", x, g, b, rng.standard_normal((12, 72)) * 10)
    # then dropout, as layer 2 of a tower's 3 utterances from the 5th of the global batch, over 6 frames
    g, b = params(rng, 40)
    case("dropout", np.minimum(np.maximum(rng.standard_normal((18, 40)) * 8, 0), 20), g, b,
         rng.standard_normal((18, 40)), batch=3, rate=0.25, step=11, layer=2, uoff=5)
    # dropout over a row wider than the kernels' runs of draws (64 units a run in the row kernels, 16 columns a
    # work-item in the parameters' sums): H = 150 is 2 runs of 64 and 22 more, 9 column groups and 6 more
    g, b = params(rng, 150)
    case("dropout_wide", np.minimum(np.maximum(rng.standard_normal((20, 150)) * 8, 0), 20), g, b,
         rng.standard_normal((20, 150)), batch=4, rate=0.3, step=7, layer=5, uoff=2)
    # and H = 70: the row's tail of 6 begins a run of 64 (the runs' draws at the tail, not before it)
    g, b = params(rng, 70)
    case("dropout_70", np.minimum(np.maximum(rng.standard_normal((12, 70)) * 8, 0), 20), g, b,
         rng.standard_normal((12, 70)), batch=2, rate=0.2, step=3, layer=1, uoff=0)
