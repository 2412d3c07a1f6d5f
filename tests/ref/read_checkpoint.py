#!/usr/bin/env python3
"""Reads a clspeech checkpoint with nothing but Python's standard library (the safetensors layout:
an 8-byte little-endian header length, a JSON header, raw little-endian tensors), and with the
`safetensors` package as well when it is installed, and checks what a DeepSpeech user relies on:
DeepSpeech's variable names and shapes, the Adam slots, the scalars, finite values.

    python3 tests/ref/read_checkpoint.py CHECKPOINT N_HIDDEN N_CLASSES GLOBAL_STEP
"""
import array
import json
import math
import struct
import sys

LSTM = "cudnn_lstm/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell"


def read(path):
    """The checkpoint's JSON header (a dict by tensor name) and its raw tensor bytes."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    return header, data


def floats(data, t):
    """The values of F32 tensor t (its header entry) as an array of floats in the machine's byte order."""
    begin, end = t["data_offsets"]
    values = array.array("f")
    values.frombytes(data[begin:end])
    if sys.byteorder != "little":
        values.byteswap()
    return values


def main():
    path, H, C, step = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    header, data = read(path)
    shapes = {"layer_1/weights": [494, H], "layer_1/bias": [H], "layer_2/weights": [H, H], "layer_2/bias": [H],
              "layer_3/weights": [H, H], "layer_3/bias": [H], f"{LSTM}/kernel": [2 * H, 4 * H], f"{LSTM}/bias": [4 * H],
              "layer_5/weights": [H, H], "layer_5/bias": [H], "layer_6/weights": [H, C], "layer_6/bias": [C]}
    problems = []
    for name, shape in shapes.items():
        for suffix in ("", "/Adam", "/Adam_1"):
            t = header.get(name + suffix)
            if t is None:
                problems.append(f"missing {name + suffix}")
                continue
            if t["dtype"] != "F32" or t["shape"] != shape:
                problems.append(f"{name + suffix}: {t['dtype']} {t['shape']}, expected F32 {shape}")
                continue
            if not all(math.isfinite(v) for v in floats(data, t)):
                problems.append(f"{name + suffix}: non-finite values")
    scalars = {}
    for name, fmt in (("global_step", "<q"), ("learning_rate", "<f"), ("beta1_power", "<f"), ("beta2_power", "<f")):
        t = header.get(name)
        if t is None:
            problems.append(f"missing {name}")
            continue
        begin, end = t["data_offsets"]
        scalars[name] = struct.unpack(fmt, data[begin:end])[0]
    if scalars.get("global_step") != step:
        problems.append(f"global_step {scalars.get('global_step')}, expected {step}")
    if "beta1_power" in scalars and abs(scalars["beta1_power"] - 0.9 ** (step + 1)) > 1e-6:
        problems.append(f"beta1_power {scalars['beta1_power']}, expected 0.9^{step + 1}")
    try:
        from safetensors.numpy import load_file
    except ImportError:
        print("read_checkpoint: the safetensors package is not installed; checked with the standard library only")
    else:
        tensors = load_file(path)
        if set(tensors) != set(k for k in header if k != "__metadata__"):
            problems.append("the safetensors package reads another set of tensors")
        print(f"read_checkpoint: the safetensors package reads {len(tensors)} tensors")
    for p in problems:
        print("FAIL:", p)
    print(f"read_checkpoint: {path}: {len(header) - 1} tensors, scalars {scalars}, metadata {header.get('__metadata__')}")
    print(f"read_checkpoint: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
