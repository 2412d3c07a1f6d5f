#!/usr/bin/env python3
"""Reference fixtures for the Adam op: TensorFlow 1's AdamOptimizer (tf.compat.v1.train.AdamOptimizer,
what DeepSpeech trained with), ten steps over fixed gradient sequences, written as safetensors.

    pip install tensorflow-cpu && python3 tests/ref/make_adam_fixtures.py
"""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import save  # noqa: E402


def case(name, n, steps, lr, beta1, beta2, eps, seed):
    rng = np.random.default_rng(seed)
    theta0 = rng.uniform(-1, 1, n).astype(np.float32)
    grads = (rng.standard_normal((steps, n)) * rng.choice([1e-4, 1e-2, 1.0, 30.0], n)).astype(np.float32)
    var = tf.Variable(theta0)
    opt = tf.compat.v1.train.AdamOptimizer(learning_rate=lr, beta1=beta1, beta2=beta2, epsilon=eps)
    params, m, v, powers = [], [], [], []
    for s in range(steps):
        opt.apply_gradients([(tf.constant(grads[s]), var)])
        params.append(var.numpy().copy())
        m.append(opt.get_slot(var, "m").numpy().copy())
        v.append(opt.get_slot(var, "v").numpy().copy())
        b1p, b2p = opt._get_beta_accumulators()
        powers.append([b1p.numpy(), b2p.numpy()])
    save(f"adam_{name}.safetensors",
         {"theta0": theta0, "grads": grads, "params": np.stack(params), "m": np.stack(m), "v": np.stack(v),
          "beta_powers": np.array(powers, np.float32)},
         {"n": n, "steps": steps, "lr": repr(lr), "beta1": repr(beta1), "beta2": repr(beta2), "epsilon": repr(eps),
          "generator": f"tensorflow {tf.__version__} tf.compat.v1.train.AdamOptimizer"})


if __name__ == "__main__":
    case("deepspeech", 1000, 10, 0.001, 0.9, 0.999, 1e-8, 1)   # DeepSpeech's defaults
    case("odd", 37, 10, 0.05, 0.8, 0.99, 1e-6, 2)              # other hyper-parameters, odd size
