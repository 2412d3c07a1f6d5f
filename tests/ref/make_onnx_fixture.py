#!/usr/bin/env python3
"""Reference for the ONNX export test (tests/test_onnx.c): runs the models that clspeech exports from
model_small.safetensors's parameters (as they are, and times 4, where the dense layers reach
relu_clip and the LSTM's gates saturate) through ONNX Runtime on that fixture's features (3
utterances of 40 frames, as DeepSpeech's input_node windows [batch, n_steps, 19, 26]) from a fixed
non-zero LSTM state, and stores ONNX Runtime's probs, logits and final states with the sha256 of
each model file it ran, and the same network evaluated in float64 (logits, final states). It also checks that streaming works (the same frames in two chunks of 20,
the state carried, give the one-pass outputs) and, from a zero state, that the unscaled model
gives TensorFlow's logits (the fixture's own reference, BlockLSTM).

With --layer_norm FILE, the same for the --layer_norm network of model_small_layer_norm.safetensors
(its norms in opset-13 operators after the Clip of layers 1, 2, 3 and 5), as it is, into
onnx_layer_norm.safetensors; ONNX Runtime runs it as it optimises it by default (which may fuse the
norms into its own LayerNormalization kernel) and with every graph optimisation off (the operators
as written), and the two must agree.

    python3 -m venv /tmp/ortvenv && /tmp/ortvenv/bin/pip install onnxruntime onnx numpy
    build/tests/test_onnx --write /tmp/onnx_small.onnx
    build/tests/test_onnx --write /tmp/onnx_small_x4.onnx 4
    /tmp/ortvenv/bin/python tests/ref/make_onnx_fixture.py /tmp/onnx_small.onnx /tmp/onnx_small_x4.onnx
    build/tests/test_onnx --write-layer-norm /tmp/onnx_layer_norm.onnx
    /tmp/ortvenv/bin/python tests/ref/make_onnx_fixture.py --layer_norm /tmp/onnx_layer_norm.onnx
"""
import hashlib
import json
import os
import struct
import sys

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import FIXTURES, save  # noqa: E402

NAMES = ["probs", "logits", "new_state_c", "new_state_h"]
EPS = np.float64(np.float32(1e-12))  # the engine's CLS_LAYER_NORM_EPSILON (tf.contrib.layers.layer_norm's)


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = {"F32": np.float32, "I32": np.int32}[info["dtype"]]
        out[key] = np.frombuffer(data[begin:end], dtype=dtype).reshape(info["shape"])
    return header.get("__metadata__", {}), out


def float64_forward(fx, scale, h0, c0, clip=20.0):
    """The network in float64 from the parameters x scale (the unrounded result both float32 runs
    approximate): logits [T, B, C] and the final h, c. With LayerNorm parameters, the norm after the
    clipped ReLU of layers 1, 2, 3 and 5: over the features, the population variance, EPS added."""
    lstm = "param/cudnn_lstm/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell/"
    p = {k: fx[k].astype(np.float64) * scale for k in fx if k.startswith("param/")}

    def dense_relu(x, name):
        y = np.clip(x @ p[f"param/{name}/weights"] + p[f"param/{name}/bias"], 0.0, clip)
        if f"param/{name}/LayerNorm/gamma" in p:
            mean = y.mean(axis=-1, keepdims=True)
            var = ((y - mean) ** 2).mean(axis=-1, keepdims=True)
            y = (y - mean) / np.sqrt(var + EPS) * p[f"param/{name}/LayerNorm/gamma"] + p[f"param/{name}/LayerNorm/beta"]
        return y

    act = fx["features"].astype(np.float64)
    for name in ("layer_1", "layer_2", "layer_3"):
        act = dense_relu(act, name)
    H = h0.shape[1]
    h, c, ys = h0.astype(np.float64), c0.astype(np.float64), []
    sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))  # noqa: E731
    for t in range(act.shape[0]):
        z = np.concatenate([act[t], h], axis=1) @ p[lstm + "kernel"] + p[lstm + "bias"]
        i, j, f, o = z[:, :H], z[:, H:2 * H], z[:, 2 * H:3 * H], z[:, 3 * H:]  # TF's order, forget_bias 0
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(j)
        h = sigmoid(o) * np.tanh(c)
        ys.append(h)
    y = dense_relu(np.stack(ys), "layer_5")
    return y @ p["param/layer_6/weights"] + p["param/layer_6/bias"], h, c


def session(model_path, optimize=True):
    raw = open(model_path, "rb").read()
    onnx.checker.check_model(onnx.load_from_string(raw), full_check=True)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])

    def run(x, c, h):
        return dict(zip(NAMES, sess.run(NAMES, {"input_node": x, "previous_state_c": c, "previous_state_h": h})))

    return hashlib.sha256(raw).hexdigest(), run


def main():
    layer_norm = sys.argv[1:2] == ["--layer_norm"]
    fixture = "model_small_layer_norm.safetensors" if layer_norm else "model_small.safetensors"
    meta, fx = load_safetensors(os.path.join(FIXTURES, fixture))
    assert int(meta.get("layer_norm", "0")) == int(layer_norm), fixture
    T, B, H = int(meta["T"]), int(meta["B"]), int(meta["n_hidden"])
    n_input, n_context = int(meta["n_input"]), int(meta["n_context"])
    # time-major [T, B, 494] windows to DeepSpeech's input_node [B, T, 19, 26]
    windows = fx["features"].reshape(T, B, 2 * n_context + 1, n_input).transpose(1, 0, 2, 3).copy()
    rng = np.random.default_rng(36)
    h0 = rng.uniform(-0.5, 0.5, (B, H)).astype(np.float32)
    c0 = rng.uniform(-1.0, 1.0, (B, H)).astype(np.float32)
    tensors = {"initial_h": h0, "initial_c": c0}
    info = {"onnxruntime": ort.__version__,
            "generator": "tests/ref/make_onnx_fixture.py%s: ONNX Runtime on clspeech's export of %s"
                         % (" --layer_norm" if layer_norm else "", fixture.split(".")[0])}
    models = sys.argv[2:3] if layer_norm else sys.argv[1:3]
    for path, prefix, scale in zip(models, ["", "x4/"], [1.0, 4.0]):
        sha, run = session(path)
        full = run(windows, c0, h0)
        if layer_norm:
            # the operators as written, no fusion: the same outputs
            literal = session(path, optimize=False)[1](windows, c0, h0)
            fused = {k: float(np.max(np.abs(literal[k] - full[k]))) for k in NAMES}
            print("optimised against unoptimised graph, max |diff|:", fused)
            assert all(d <= 1e-5 * max(1.0, float(np.max(np.abs(full[k])))) for k, d in fused.items()), fused
            info["unoptimized_max_diff"] = max(fused.values())
        half = T // 2
        a = run(windows[:, :half], c0, h0)
        b = run(windows[:, half:], a["new_state_c"], a["new_state_h"])
        chunked = {k: np.concatenate([a[k], b[k]], axis=0) for k in ("probs", "logits")}
        chunked["new_state_c"], chunked["new_state_h"] = b["new_state_c"], b["new_state_h"]
        diffs = {k: float(np.max(np.abs(chunked[k] - full[k]))) for k in NAMES}
        print(f"{prefix or 'x1/'} streamed (2 x {half} frames) against one pass, max |diff|:", diffs)
        assert all(d <= 1e-6 for d in diffs.values()), diffs
        print(f"{prefix or 'x1/'} largest |logit| {float(np.max(np.abs(full['logits']))):.3g}, "
              f"largest prob {float(np.max(full['probs'])):.3g}")
        # the probabilities are the softmax of the logits
        lg = full["logits"].astype(np.float64)
        sm = np.exp(lg - lg.max(axis=2, keepdims=True))
        sm /= sm.sum(axis=2, keepdims=True)
        print(f"{prefix or 'x1/'} probs against softmax(logits) in float64, max |diff|:",
              float(np.max(np.abs(sm - full["probs"]))))
        if not prefix:
            # from a zero state, ONNX Runtime's logits against TensorFlow's over each utterance's valid
            # frames: the gate order and bias mapping, checked independently of the engine
            zero = np.zeros((B, H), np.float32)
            tf_logits, seq_len = fx["logits"], fx["seq_len"]
            from_zero = run(windows, zero, zero)["logits"]
            tf_diff = max(float(np.max(np.abs(from_zero[:n, u] - tf_logits[:n, u]))) for u, n in enumerate(seq_len))
            print("from a zero state against TensorFlow's logits, max |diff|: %.3g (largest |logit| %.3g)"
                  % (tf_diff, float(np.max(np.abs(tf_logits)))))
            assert tf_diff <= 1e-5 * float(np.max(np.abs(tf_logits))), tf_diff
            info["tensorflow_max_diff"] = tf_diff
        lg64, h64, c64 = float64_forward(fx, scale, h0, c0)
        print(f"{prefix or 'x1/'} ONNX Runtime against float64, max |diff|: logits %.3g, h %.3g, c %.3g"
              % (np.max(np.abs(full["logits"] - lg64)), np.max(np.abs(full["new_state_h"] - h64)),
                 np.max(np.abs(full["new_state_c"] - c64))))
        tensors.update({prefix + "float64/logits": lg64.astype(np.float32),
                        prefix + "float64/new_state_h": h64.astype(np.float32),
                        prefix + "float64/new_state_c": c64.astype(np.float32)})
        tensors.update({prefix + k: v for k, v in full.items()})
        info[prefix + "onnx_sha256"] = sha
        info[prefix + "stream_max_diff"] = max(diffs.values())
    save("onnx_layer_norm.safetensors" if layer_norm else "onnx_small.safetensors", tensors, info)


if __name__ == "__main__":
    main()
