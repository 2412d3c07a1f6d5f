#!/usr/bin/env python3
"""Reference fixtures for the LSTM op: TensorFlow's BlockLSTM kernel (what DeepSpeech 0.9's
tf.contrib.rnn.LSTMBlockFusedCell runs: forget_bias 0, no peepholes, no cell clip, zero initial
state, time-major), outputs masked by the sequence lengths as LSTMBlockFusedCell masks them, and the
gradients of sum(h_masked * dh) with respect to x, w and b, written as safetensors.

    pip install tensorflow-cpu && cd tests/ref && python3 make_lstm_fixtures.py
"""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import save  # noqa: E402


def case(name, T, B, I, H, lengths, seed, w_scale):
    rng = np.random.default_rng(seed)
    lengths = np.array(lengths, np.int32)
    assert lengths.shape == (B,) and lengths.max() <= T
    x = rng.uniform(-1, 1, (T, B, I)).astype(np.float32)                  # [T, B, I] time-major
    w = rng.uniform(-w_scale, w_scale, (I + H, 4 * H)).astype(np.float32)  # [I+H, 4H], gates i, j, f, o
    b = rng.uniform(-0.5, 0.5, 4 * H).astype(np.float32)                   # [4H]
    dh = rng.standard_normal((T, B, H)).astype(np.float32)                 # [T, B, H]

    xt, wt, bt = tf.constant(x), tf.Variable(w), tf.Variable(b)
    zeros_bh, zeros_h = tf.zeros([B, H]), tf.zeros([H])
    # LSTMBlockFusedCell runs the recurrence to the longest sequence, then masks the outputs.
    mask = tf.transpose(tf.sequence_mask(lengths, T, dtype=tf.float32))[:, :, None]  # [T, B, 1]
    with tf.GradientTape() as tape:
        tape.watch(xt)
        out = tf.raw_ops.BlockLSTM(seq_len_max=tf.constant(int(lengths.max()), tf.int64), x=xt, cs_prev=zeros_bh,
                                   h_prev=zeros_bh, w=wt, wci=zeros_h, wcf=zeros_h, wco=zeros_h, b=bt,
                                   forget_bias=0.0, cell_clip=-1.0, use_peephole=False)
        h = out.h * mask
        loss = tf.reduce_sum(h * dh)
    dx, dw, db = tape.gradient(loss, [xt, wt, bt])
    h = h.numpy()
    cs = out.cs.numpy()
    # The state each utterance ends in: h and c at its last valid frame (zero for an empty one).
    last = np.maximum(lengths - 1, 0)
    h_last = np.where(lengths[:, None] > 0, h[last, np.arange(B)], 0).astype(np.float32)
    c_last = np.where(lengths[:, None] > 0, cs[last, np.arange(B)], 0).astype(np.float32)
    save(f"lstm_{name}.safetensors",
         {"x": x.reshape(T * B, I), "w": w, "b": b, "lengths": lengths, "dh": dh.reshape(T * B, H),
          "h": h.reshape(T * B, H), "dx": dx.numpy().reshape(T * B, I), "dw": dw.numpy(), "db": db.numpy(),
          "h_last": h_last, "c_last": c_last},
         {"T": T, "B": B, "I": I, "H": H,
          "generator": f"tensorflow {tf.__version__} tf.raw_ops.BlockLSTM (forget_bias 0, no peephole, no clip)"})


if __name__ == "__main__":
    case("t1", 1, 1, 5, 4, [1], 1, 0.5)                         # a single step of a single utterance
    case("odd", 9, 3, 13, 37, [9, 5, 2], 2, 0.3)                # odd sizes, unequal lengths
    case("ds_small", 50, 3, 32, 32, [50, 41, 23], 3, 0.2)       # DeepSpeech-like, small
    case("long", 500, 2, 8, 16, [500, 377], 4, 0.3)             # 500 steps: long recurrences
    case("short", 20, 4, 6, 8, [13, 0, 7, 1], 5, 0.4)           # every length < T, one empty utterance
