#!/usr/bin/env python3
"""Reference fixtures for the CTC op: TensorFlow's tf.compat.v1.nn.ctc_loss as DeepSpeech 0.9 called it
(time-major logits, blank = last class, preprocess_collapse_repeated=False, ctc_merge_repeated=True),
the per-utterance losses and, through tf.GradientTape, the gradient of their sum with respect to the
logits. Written as safetensors: logits [T, B, C] f32, labels [B, max_label] i32 (padded with 0),
label_lengths [B] i32, input_lengths [B] i32, loss [B] f32, grad [T, B, C] f32.

    pip install tensorflow-cpu && cd tests/ref && python3 make_ctc_fixtures.py

Each case is also checked against a float64 numpy CTC here, and TF's own error is printed (TF computes
alpha and beta in float32 in absolute log space, so its gradient carries rounding that grows with T).
"""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import save  # noqa: E402


def tf_ctc(logits, labels, label_lengths, input_lengths):
    T, B, C = logits.shape
    idx, vals = [], []
    for b in range(B):
        for j in range(label_lengths[b]):
            idx.append([b, j])
            vals.append(labels[b, j])
    sparse = tf.SparseTensor(indices=np.array(idx, np.int64).reshape(-1, 2), values=np.array(vals, np.int32),
                             dense_shape=np.array([B, labels.shape[1]], np.int64))
    x = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.compat.v1.nn.ctc_loss(labels=sparse, inputs=x, sequence_length=tf.constant(input_lengths),
                                        preprocess_collapse_repeated=False, ctc_merge_repeated=True,
                                        time_major=True)
        total = tf.reduce_sum(loss)
    grad = tape.gradient(total, x)
    return loss.numpy().astype(np.float32), grad.numpy().astype(np.float32)


def lse(a, axis=None):
    with np.errstate(divide="ignore"):
        return _lse(a, axis)


def _lse(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def np_ctc(logits, labels, label_lengths, input_lengths):
    """float64 CTC (log space): losses and gradient with respect to the logits."""
    T, B, C = logits.shape
    blank = C - 1
    losses = np.zeros(B)
    grad = np.zeros((T, B, C))
    for b in range(B):
        n, L = input_lengths[b], label_lengths[b]
        x = logits[:n, b, :].astype(np.float64)
        lp = x - lse(x, axis=1)[:, None]
        ext = [blank]
        for j in range(L):
            ext += [labels[b, j], blank]
        S = len(ext)
        skip = [s >= 3 and s % 2 == 1 and ext[s] != ext[s - 2] for s in range(S)]
        a = np.full((n, S), -np.inf)
        a[0, 0] = lp[0, ext[0]]
        if S > 1:
            a[0, 1] = lp[0, ext[1]]
        for t in range(1, n):
            for s in range(S):
                terms = [a[t - 1, s]] + ([a[t - 1, s - 1]] if s >= 1 else []) + ([a[t - 1, s - 2]] if skip[s] else [])
                a[t, s] = lp[t, ext[s]] + lse(np.array(terms))
        bt = np.full((n, S), -np.inf)
        bt[n - 1, S - 1] = 0.0
        if S > 1:
            bt[n - 1, S - 2] = 0.0
        for t in range(n - 2, -1, -1):
            for s in range(S):
                terms = [bt[t + 1, s] + lp[t + 1, ext[s]]]
                if s + 1 < S:
                    terms.append(bt[t + 1, s + 1] + lp[t + 1, ext[s + 1]])
                if s + 2 < S and skip[s + 2]:
                    terms.append(bt[t + 1, s + 2] + lp[t + 1, ext[s + 2]])
                bt[t, s] = lse(np.array(terms))
        logp = lse(a[n - 1, S - 2:] if S > 1 else a[n - 1, :])
        losses[b] = -logp
        for t in range(n):
            occ = np.zeros(C)
            for s in range(S):
                occ[ext[s]] += np.exp(a[t, s] + bt[t, s] - logp)
            grad[t, b, :] = np.exp(lp[t]) - occ
    return losses, grad


def case(name, logits, labels, label_lengths, input_lengths, note):
    logits = np.ascontiguousarray(logits, np.float32)
    labels = np.ascontiguousarray(labels, np.int32)
    label_lengths = np.asarray(label_lengths, np.int32)
    input_lengths = np.asarray(input_lengths, np.int32)
    T, B, C = logits.shape
    loss, grad = tf_ctc(logits, labels, label_lengths, input_lengths)
    ref_loss, ref_grad = np_ctc(logits, labels, label_lengths, input_lengths)
    assert np.all(np.isfinite(loss)) and np.all(np.isfinite(grad)), name
    print(f"{name}: T={T} B={B} C={C} label lengths {label_lengths.tolist()} input lengths {input_lengths.tolist()}")
    print(f"    TF vs float64: loss max rel {np.max(np.abs(loss - ref_loss) / np.abs(ref_loss)):.3g}, "
          f"grad max abs {np.max(np.abs(grad - ref_grad)):.3g}")
    save(f"ctc_{name}.safetensors",
         {"logits": logits, "labels": labels, "label_lengths": label_lengths, "input_lengths": input_lengths,
          "loss": loss, "grad": grad},
         {"T": T, "B": B, "C": C, "max_label": labels.shape[1], "note": note,
          "generator": f"tensorflow {tf.__version__} tf.compat.v1.nn.ctc_loss (time_major, "
                       "preprocess_collapse_repeated=False, ctc_merge_repeated=True) + GradientTape"})


def random_labels(rng, B, max_label, lengths, C, repeats=True):
    labels = np.zeros((B, max_label), np.int32)
    for b in range(B):
        seq = rng.integers(0, C - 1, lengths[b])
        if repeats and lengths[b] >= 4:
            seq[2] = seq[1]  # a doubled letter, as in "hello"
        labels[b, :lengths[b]] = seq
    return labels


def aligned_logits(rng, T, B, C, labels, label_lengths, input_lengths, boost, noise):
    """Logits that favour an even alignment of each label (peaked posteriors, as a trained model's)."""
    x = rng.standard_normal((T, B, C)) * noise
    for b in range(B):
        n, L = input_lengths[b], label_lengths[b]
        x[:n, b, C - 1] += boost * 0.5
        for j in range(L):
            t = int((j + 0.5) * n / L)
            x[t, b, labels[b, j]] += boost
    return x


if __name__ == "__main__":
    # One frame, one label.
    rng = np.random.default_rng(1)
    case("t1", rng.standard_normal((1, 1, 5)), [[2]], [1], [1], "T=1 B=1")

    # Small, with repeated labels: [1,1,2] needs four frames (a blank between the two 1s).
    rng = np.random.default_rng(2)
    case("small", rng.standard_normal((12, 3, 5)) * 2, [[1, 1, 2, 0], [3, 0, 3, 3], [2, 0, 0, 0]],
         [3, 4, 1], [12, 9, 7], "small, repeated labels, padded frames")

    # DeepSpeech-like: 29 classes (space, a-z, apostrophe, blank), label lengths 5..20, padding.
    rng = np.random.default_rng(3)
    T, B, C = 50, 4, 29
    ll, il = [5, 12, 20, 9], [50, 41, 47, 30]
    labels = random_labels(rng, B, 20, ll, C)
    case("deepspeech", rng.standard_normal((T, B, C)) * 3, labels, ll, il, "DeepSpeech-like shapes")

    # Long: T=500, labels up to 100, logits that favour an alignment (peaked, as late in training).
    rng = np.random.default_rng(4)
    T, B, C = 500, 2, 29
    ll, il = [100, 61], [500, 437]
    labels = random_labels(rng, B, 100, ll, C)
    case("long", aligned_logits(rng, T, B, C, labels, ll, il, 6.0, 1.5), labels, ll, il,
         "T=500, labels up to 100, alignment-favouring logits")

    # Large logits, uniform in [-80, 80]: softmax needs max subtraction. TF takes the log of a float32
    # softmax, so a class more than ~103 below a frame's maximum has probability 0 there and a path
    # through it "does not exist" (TF: loss inf); the classes an alignment can use (blank and the
    # utterance's labels) are therefore kept within 70 of each frame's maximum.
    rng = np.random.default_rng(5)
    T, B, C = 40, 3, 29
    ll, il = [6, 10, 3], [40, 33, 20]
    labels = random_labels(rng, B, 10, ll, C)
    x = rng.uniform(-80, 80, (T, B, C))
    for b in range(B):
        for k in set(labels[b, :ll[b]].tolist()) | {C - 1}:
            top = x[:, b, :].max(axis=1)
            low = x[:, b, k] < top - 70
            x[low, b, k] = top[low] - rng.uniform(0, 70, low.sum())
    case("large", x, labels, ll, il, "logits uniform in [-80, 80]")
