#!/usr/bin/env python3
"""Reference for DeepSpeech's TensorFlow checkpoints (engine/model/checkpoint_tf.c): a small
(n_hidden 8, 29 classes) DeepSpeech 0.9 layout of variables with Glorot-uniform values from a seed,
their Adam slots and the scalars, saved by TF 2.x's tf.compat.v1.train.Saver into
tests/fixtures/tf_checkpoint/canonical/ (the LSTM's canonical kernel and bias, with Adam slots), and
into tests/fixtures/tf_checkpoint/cudnn/ the CudnnLSTM naming: `cudnn_lstm/opaque_kernel` and its
Adam slots instead of the canonical LSTM. The opaque buffer is built here from the canonical kernel
and bias in cuDNN's canonical layout for a one-layer unidirectional linear-input LSTM, as TensorFlow's
CudnnLSTMSaveable (tensorflow/contrib/cudnn_rnn/python/ops/cudnn_rnn_ops.py, _cudnn_to_tf_weights and
_cudnn_to_tf_biases) reads it: weights of gates i, f, c, o for the input then for the recurrence,
each [H, in] row-major, then the eight bias vectors; the canonical bias is input + recurrent bias.
Also tests/fixtures/tf_checkpoint.safetensors: every value saved, the logits of make_model_fixtures.py's
TF forward pass with the canonical parameters on random features (two utterances, one shorter), and
`ldc93s1_logits`: the same on LDC93S1, its MFCCs those of tests/fixtures/mfcc_ldc93s1.safetensors
(TensorFlow's own AudioSpectrogram + Mfcc, make_mfcc_fixtures.py) in DeepSpeech's context windows
(9 frames each side, zeros past the ends, [19, 26] frame-major: its input_node's [n_steps, 19, 26]).

    python3 tests/ref/make_tf_checkpoint_fixture.py            # writes the fixtures
    python3 tests/ref/make_tf_checkpoint_fixture.py --restore DIR [FILE.safetensors]
        # restores a folder in TF (e.g. the output of clspeech export --format tf), and compares every
        # variable with the clspeech checkpoint it was exported from
"""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import FIXTURES, save  # noqa: E402
from make_model_fixtures import LSTM, forward, make_params  # noqa: E402

H, C, N_IN, STEP = 8, 29, 494, 5


def opaque_from_canonical(kernel, bias, rng, in_width, h):
    """cuDNN's canonical buffer whose conversion gives kernel [in+H, 4H] and bias [4H] (TF order i, c, f, o)."""
    tf_block = {"i": 0, "c": 1, "f": 2, "o": 3}
    rec_bias = rng.uniform(-0.05, 0.05, 4 * h).astype(np.float32)
    ws, rs, bws, brs = [], [], [], []
    for gi, g in enumerate("ifco"):
        cols = slice(tf_block[g] * h, (tf_block[g] + 1) * h)
        ws.append(kernel[:in_width, cols].T.reshape(-1))  # [H, in]
        rs.append(kernel[in_width:, cols].T.reshape(-1))  # [H, H]
        br = rec_bias[gi * h:(gi + 1) * h]
        bws.append(bias[cols] - br)
        brs.append(br)
    return np.concatenate(ws + rs + bws + brs).astype(np.float32)


def save_bundle(folder, values):
    os.makedirs(folder, exist_ok=True)
    for f in os.listdir(folder):
        os.remove(os.path.join(folder, f))
    var = {k: tf.Variable(a, name=k.replace("/", "_")) for k, a in values.items()}
    saver = tf.compat.v1.train.Saver(var_list=var)
    prefix = saver.save(None, os.path.join(folder, "model.ckpt"), global_step=STEP)
    name = os.path.basename(prefix)  # the index names the bundle relative to its folder, as DeepSpeech's do
    with open(os.path.join(folder, "checkpoint"), "w") as f:  # TF's text format, as Saver writes it
        f.write(f'model_checkpoint_path: "{name}"\nall_model_checkpoint_paths: "{name}"\n')
    print(f"wrote {os.path.relpath(folder)}: {sorted(os.listdir(folder))}")


def read_safetensors(path):
    import json
    import struct
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    kinds = {"F32": np.float32, "I64": np.int64}
    out = {}
    for k, t in header.items():
        if k != "__metadata__":
            b, e = t["data_offsets"]
            out[k] = np.frombuffer(raw[8 + n + b:8 + n + e], kinds[t["dtype"]]).reshape(t["shape"])
    return out


def restore(folder, safetensors=None):
    prefix = tf.train.latest_checkpoint(folder)
    reader = tf.train.load_checkpoint(prefix)
    shapes = reader.get_variable_to_shape_map()
    dtypes = reader.get_variable_to_dtype_map()
    var = {k: tf.Variable(tf.zeros(shapes[k], dtypes[k])) for k in shapes}
    tf.compat.v1.train.Saver(var_list=var).restore(None, prefix)
    print(f"restored {prefix} with tf.compat.v1.train.Saver: {len(var)} variables")
    for k in sorted(var):
        a = var[k].numpy()
        same = np.array_equal(a, reader.get_tensor(k))
        print(f"  {k} {list(a.shape)} {a.dtype} sum={float(np.sum(a.astype(np.float64))):.6g} equal_to_reader={same}")
    if safetensors:
        ref = read_safetensors(safetensors)
        differ = [k for k in ref if k not in var or not np.array_equal(var[k].numpy(), ref[k])]
        print(f"against {safetensors}: {len(ref)} tensors, {len(differ)} differ {differ}")


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--restore":
        restore(*sys.argv[2:])
        return
    rng = np.random.default_rng(48)
    params = make_params(rng, N_IN, H, C)
    values = dict(params)
    for k, a in params.items():
        values[f"{k}/Adam"] = rng.uniform(-0.01, 0.01, a.shape).astype(np.float32)
        values[f"{k}/Adam_1"] = rng.uniform(0.0, 1e-4, a.shape).astype(np.float32)
    values["beta1_power"] = np.float32(0.9 ** (STEP + 1))
    values["beta2_power"] = np.float32(0.999 ** (STEP + 1))
    values["global_step"] = np.int64(STEP)
    values["learning_rate"] = np.float32(0.0005)
    base = os.path.join(FIXTURES, "tf_checkpoint")
    save_bundle(os.path.join(base, "canonical"), values)

    cudnn = {k: a for k, a in values.items() if not k.startswith(LSTM)}
    opaque = opaque_from_canonical(params[f"{LSTM}/kernel"], params[f"{LSTM}/bias"], rng, H, H)
    cudnn["cudnn_lstm/opaque_kernel"] = opaque
    cudnn["cudnn_lstm/opaque_kernel/Adam"] = rng.uniform(-0.01, 0.01, opaque.shape).astype(np.float32)
    cudnn["cudnn_lstm/opaque_kernel/Adam_1"] = rng.uniform(0.0, 1e-4, opaque.shape).astype(np.float32)
    save_bundle(os.path.join(base, "cudnn"), cudnn)

    T, B = 12, 2
    seq_len = np.array([12, 9], np.int32)
    x = rng.standard_normal((T, B, N_IN)).astype(np.float32)
    x[seq_len[1]:, 1, :] = 0.0
    labels = tf.SparseTensor(np.array([[0, 0], [1, 0]], np.int64), np.array([1, 2], np.int32), [B, 1])
    v = {k: tf.constant(a) for k, a in params.items()}
    logits, _, _ = forward(v, x, seq_len, labels, T, B, H, C)
    tensors = {"features": x, "seq_len": seq_len, "logits": logits.numpy(), "opaque": opaque}

    mfcc = read_safetensors(os.path.join(FIXTURES, "mfcc_ldc93s1.safetensors"))["features"]
    frames = mfcc.shape[0]
    padded = np.concatenate([np.zeros((9, 26), np.float32), mfcc, np.zeros((9, 26), np.float32)])
    windows = np.stack([padded[t:t + 19].reshape(-1) for t in range(frames)])[:, None, :]
    ldc_len = np.array([frames], np.int32)
    ldc_labels = tf.SparseTensor(np.array([[0, 0]], np.int64), np.array([1], np.int32), [1, 1])
    ldc_logits, _, _ = forward(v, windows, ldc_len, ldc_labels, frames, 1, H, C)
    tensors["ldc93s1_logits"] = ldc_logits.numpy()
    for k, a in values.items():
        tensors[f"value/{k}"] = np.atleast_1d(a)
    save("tf_checkpoint.safetensors", tensors,
         {"T": T, "B": B, "ldc93s1_frames": frames, "n_hidden": H, "n_classes": C, "global_step": STEP,
          "generator": f"tensorflow {tf.__version__}: tf.compat.v1.train.Saver"})


if __name__ == "__main__":
    main()
