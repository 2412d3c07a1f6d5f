#!/usr/bin/env python3
"""Reference for the whole-model test (llm.c's test_gpt2 idea): a small DeepSpeech 0.9 network built
in TensorFlow from the same ops DeepSpeech used (three clipped-ReLU dense layers, BlockLSTM with
forget_bias 0 and masked outputs, a clipped-ReLU dense layer, a linear output layer,
tf.compat.v1.nn.ctc_loss averaged over the batch), with Glorot-uniform parameters under DeepSpeech's
variable names. Writes the inputs, the parameters, the logits, the loss, every parameter gradient,
and the losses of ten TF1 Adam steps (dropout off, so that the run is deterministic).
With --layer_norm, DeepSpeech's --layer_norm network (tf.contrib.layers.layer_norm after the clipped ReLU of
layers 1, 2, 3 and 5, with layer_N/LayerNorm/beta and /gamma), written to model_small_layer_norm.safetensors.

    pip install tensorflow-cpu && python3 tests/ref/make_model_fixtures.py [--layer_norm]
"""
import argparse
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import save  # noqa: E402

LSTM = "cudnn_lstm/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell"


def glorot(rng, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32)


def make_params(rng, n_in, H, C):
    shapes = [("layer_1", n_in, H), ("layer_2", H, H), ("layer_3", H, H)]
    p = {}
    for name, i, o in shapes:
        p[f"{name}/weights"] = glorot(rng, i, o)
        p[f"{name}/bias"] = np.zeros(o, np.float32)
    p[f"{LSTM}/kernel"] = glorot(rng, 2 * H, 4 * H)
    p[f"{LSTM}/bias"] = np.zeros(4 * H, np.float32)
    p["layer_5/weights"] = glorot(rng, H, H)
    p["layer_5/bias"] = np.zeros(H, np.float32)
    p["layer_6/weights"] = glorot(rng, H, C)
    p["layer_6/bias"] = np.zeros(C, np.float32)
    # Non-zero biases, so that their gradients and use are exercised.
    for k in p:
        if k.endswith("bias"):
            p[k] = rng.uniform(-0.1, 0.1, p[k].shape).astype(np.float32)
    return p


def layer_norm(h, beta, gamma):
    """tf.contrib.layers.layer_norm's computation with its defaults (tf_slim.layers.layer_norm, its TF2 home):
    moments over the features, tf.nn.batch_normalization with variance_epsilon 1e-12."""
    mean, variance = tf.nn.moments(h, [1], keepdims=True)
    return tf.nn.batch_normalization(h, mean, variance, offset=beta, scale=gamma, variance_epsilon=1e-12)


def check_layer_norm_is_tf_slims():
    """layer_norm above gives tf_slim.layers.layer_norm's bits (in a TF1 graph, its variables set)."""
    import tf_slim
    rng = np.random.default_rng(7)
    x = rng.standard_normal((9, 32)).astype(np.float32)
    beta, gamma = rng.uniform(-0.1, 0.1, 32).astype(np.float32), rng.uniform(0.5, 1.5, 32).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        with tf.compat.v1.variable_scope("layer_1"):
            y = tf_slim.layers.layer_norm(tf.constant(x))
        var = {v.name: v for v in tf.compat.v1.global_variables()}
        with tf.compat.v1.Session(graph=graph) as s:
            s.run([var["layer_1/LayerNorm/beta:0"].assign(beta), var["layer_1/LayerNorm/gamma:0"].assign(gamma)])
            want = s.run(y)
    assert np.array_equal(layer_norm(tf.constant(x), beta, gamma).numpy(), want), "layer_norm differs from tf_slim's"


def forward(v, x, seq_len, labels, T, B, H, C, clip=20.0):
    def dense_relu(h, name):
        h = tf.minimum(tf.nn.relu(tf.matmul(h, v[f"{name}/weights"]) + v[f"{name}/bias"]), clip)
        if f"{name}/LayerNorm/beta" in v:
            h = layer_norm(h, v[f"{name}/LayerNorm/beta"], v[f"{name}/LayerNorm/gamma"])
        return h

    h = tf.reshape(x, [T * B, -1])
    for name in ("layer_1", "layer_2", "layer_3"):
        h = dense_relu(h, name)
    h = tf.reshape(h, [T, B, H])
    zeros = tf.zeros([B, H])
    peep = tf.zeros([H])
    _, _, _, _, _, _, hs = tf.raw_ops.BlockLSTM(
        seq_len_max=tf.constant(T, tf.int64), x=h, cs_prev=zeros, h_prev=zeros, w=v[f"{LSTM}/kernel"], wci=peep,
        wcf=peep, wco=peep, b=v[f"{LSTM}/bias"], forget_bias=0.0, cell_clip=-1.0, use_peephole=False)
    mask = tf.transpose(tf.sequence_mask(seq_len, T, dtype=tf.float32))[:, :, None]
    h = tf.reshape(hs * mask, [T * B, H])
    h = dense_relu(h, "layer_5")
    logits = tf.reshape(tf.matmul(h, v["layer_6/weights"]) + v["layer_6/bias"], [T, B, C])
    per_utt = tf.compat.v1.nn.ctc_loss(labels=labels, inputs=logits, sequence_length=seq_len,
                                      preprocess_collapse_repeated=False, ctc_merge_repeated=True, time_major=True)
    return logits, per_utt, tf.reduce_mean(per_utt)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layer_norm", action="store_true", help="DeepSpeech's --layer_norm network")
    args = parser.parse_args()
    rng = np.random.default_rng(2024)
    T, B, H, C, n_in = 40, 3, 32, 29, 494
    seq_len = np.array([40, 29, 35], np.int32)
    label_lengths = np.array([12, 7, 10], np.int32)
    L = int(label_lengths.max())
    labels = np.zeros((B, L), np.int32)
    for b in range(B):
        labels[b, :label_lengths[b]] = rng.integers(0, C - 1, label_lengths[b])
    labels[0, 3] = labels[0, 2]  # a repeated label
    x = rng.standard_normal((T, B, n_in)).astype(np.float32)
    for b in range(B):
        x[seq_len[b]:, b, :] = 0.0  # padding frames, as the batcher leaves them
    params = make_params(rng, n_in, H, C)
    if args.layer_norm:
        check_layer_norm_is_tf_slims()
        # gamma and beta away from their initial ones and zeros, so that their use and gradients are exercised
        for name in ("layer_1", "layer_2", "layer_3", "layer_5"):
            params[f"{name}/LayerNorm/beta"] = rng.uniform(-0.1, 0.1, H).astype(np.float32)
            params[f"{name}/LayerNorm/gamma"] = rng.uniform(0.5, 1.5, H).astype(np.float32)
    idx = [[b, i] for b in range(B) for i in range(label_lengths[b])]
    vals = [labels[b, i] for b in range(B) for i in range(label_lengths[b])]
    sparse = tf.SparseTensor(np.array(idx, np.int64), np.array(vals, np.int32), [B, L])

    v = {k: tf.Variable(a) for k, a in params.items()}
    names = list(params.keys())
    with tf.GradientTape() as tape:
        logits, per_utt, loss = forward(v, x, seq_len, sparse, T, B, H, C)
    grads = tape.gradient(loss, [v[k] for k in names])

    lr = 0.003
    opt = tf.compat.v1.train.AdamOptimizer(learning_rate=lr, beta1=0.9, beta2=0.999, epsilon=1e-8)
    losses = []
    for _ in range(10):
        with tf.GradientTape() as tape:
            _, _, step_loss = forward(v, x, seq_len, sparse, T, B, H, C)
        g = tape.gradient(step_loss, [v[k] for k in names])
        opt.apply_gradients(zip(g, [v[k] for k in names]))
        losses.append(step_loss.numpy())

    tensors = {"features": x, "seq_len": seq_len, "labels": labels, "label_lengths": label_lengths,
               "logits": logits.numpy(), "per_utterance_loss": per_utt.numpy(), "loss": np.array([loss.numpy()], np.float32),
               "adam_losses": np.array(losses, np.float32)}
    for k in names:
        tensors[f"param/{k}"] = params[k]
    for k, g in zip(names, grads):
        tensors[f"grad/{k}"] = g.numpy()
    save("model_small_layer_norm.safetensors" if args.layer_norm else "model_small.safetensors", tensors,
         {"T": T, "B": B, "n_hidden": H, "n_classes": C, "n_input": 26, "n_context": 9, "relu_clip": "20.0",
          "layer_norm": int(args.layer_norm),
          "adam_lr": repr(lr), "adam_beta1": "0.9", "adam_beta2": "0.999", "adam_epsilon": "1e-08",
          "generator": f"tensorflow {tf.__version__}: DeepSpeech 0.9 graph from raw ops"})


if __name__ == "__main__":
    main()
