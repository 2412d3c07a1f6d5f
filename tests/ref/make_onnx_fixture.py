#!/usr/bin/env python3
"""Reference for the ONNX export test (tests/test_onnx.c): runs the model that clspeech exports from
model_small.safetensors's parameters through ONNX Runtime on that fixture's features (3 utterances
of 40 frames, as DeepSpeech's input_node windows [batch, n_steps, 19, 26]) from a fixed non-zero
LSTM state, and stores ONNX Runtime's probs, logits and final states with the sha256 of the model
file it ran. It also checks that streaming works: the same frames in two chunks of 20, the state
carried, give the one-pass outputs.

    python3 -m venv /tmp/ortvenv && /tmp/ortvenv/bin/pip install onnxruntime onnx numpy
    build/tests/test_onnx --write /tmp/onnx_small.onnx
    /tmp/ortvenv/bin/python tests/ref/make_onnx_fixture.py /tmp/onnx_small.onnx
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


def main():
    model_path = sys.argv[1]
    raw = open(model_path, "rb").read()
    onnx.checker.check_model(onnx.load_from_string(raw), full_check=True)
    meta, fx = load_safetensors(os.path.join(FIXTURES, "model_small.safetensors"))
    T, B, H = int(meta["T"]), int(meta["B"]), int(meta["n_hidden"])
    n_input, n_context = int(meta["n_input"]), int(meta["n_context"])
    # time-major [T, B, 494] windows to DeepSpeech's input_node [B, T, 19, 26]
    windows = fx["features"].reshape(T, B, 2 * n_context + 1, n_input).transpose(1, 0, 2, 3).copy()
    rng = np.random.default_rng(36)
    h0 = rng.uniform(-0.5, 0.5, (B, H)).astype(np.float32)
    c0 = rng.uniform(-1.0, 1.0, (B, H)).astype(np.float32)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
    names = ["probs", "logits", "new_state_c", "new_state_h"]

    def run(x, c, h):
        return dict(zip(names, sess.run(names, {"input_node": x, "previous_state_c": c, "previous_state_h": h})))

    full = run(windows, c0, h0)
    half = T // 2
    a = run(windows[:, :half], c0, h0)
    b = run(windows[:, half:], a["new_state_c"], a["new_state_h"])
    chunked = {k: np.concatenate([a[k], b[k]], axis=0) for k in ("probs", "logits")}
    chunked["new_state_c"], chunked["new_state_h"] = b["new_state_c"], b["new_state_h"]
    diffs = {k: float(np.max(np.abs(chunked[k] - full[k]))) for k in names}
    print("streamed (2 x %d frames) against one pass, max |diff|:" % half, diffs)
    assert all(d <= 1e-6 for d in diffs.values()), diffs
    # from a zero state, ONNX Runtime's logits against TensorFlow's (BlockLSTM, the fixture's own
    # reference) over each utterance's valid frames: the gate order and bias mapping, independently
    zero = np.zeros((B, H), np.float32)
    tf_logits, seq_len = fx["logits"], fx["seq_len"]
    from_zero = run(windows, zero, zero)["logits"]
    tf_diff = max(float(np.max(np.abs(from_zero[:n, u] - tf_logits[:n, u]))) for u, n in enumerate(seq_len))
    print("from a zero state against TensorFlow's logits, max |diff|: %.3g (largest |logit| %.3g)"
          % (tf_diff, float(np.max(np.abs(tf_logits)))))
    assert tf_diff <= 1e-5 * float(np.max(np.abs(tf_logits))), tf_diff
    # the probabilities are the softmax of the logits
    lg = full["logits"].astype(np.float64)
    sm = np.exp(lg - lg.max(axis=2, keepdims=True))
    sm /= sm.sum(axis=2, keepdims=True)
    print("probs against softmax(logits) in float64, max |diff|:", float(np.max(np.abs(sm - full["probs"]))))
    save("onnx_small.safetensors",
         {"initial_h": h0, "initial_c": c0, "probs": full["probs"], "logits": full["logits"],
          "new_state_c": full["new_state_c"], "new_state_h": full["new_state_h"]},
         {"onnx_sha256": hashlib.sha256(raw).hexdigest(), "onnxruntime": ort.__version__,
          "stream_max_diff": max(diffs.values()), "tensorflow_max_diff": tf_diff,
          "generator": "tests/ref/make_onnx_fixture.py: ONNX Runtime on clspeech's export of model_small"})


if __name__ == "__main__":
    main()
