#!/usr/bin/env python3
"""Compares the model's parameters (not the Adam slots, not the scalars) of two clspeech checkpoints
with Python's standard library: the largest difference relative to the tensor's largest magnitude,
against a tolerance. Prints each file's learning_rate and 'compare: max difference D (tolerance T):
same|DIFFERENT'; exit status 0 when within (with --expect-different: when not).

    python3 tests/mpi/compare_checkpoints.py A.safetensors B.safetensors TOLERANCE [--expect-different]
    python3 tests/mpi/compare_checkpoints.py --learning-rate A.safetensors EXPECTED   (exit 0 when equal)
"""
import array
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ref"))
import read_checkpoint  # noqa: E402  (the checkpoint reader the other tests use)


def read(path):
    header, data = read_checkpoint.read(path)
    tensors = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        if name != "learning_rate" and (name.endswith("/Adam") or name.endswith("/Adam_1") or
                                        not (name.startswith("layer_") or name.startswith("cudnn_lstm"))):
            continue
        tensors[name] = read_checkpoint.floats(data, t)
    return tensors


def learning_rate(path, expected):
    """Whether the checkpoint's learning_rate is `expected` (as a float32 holds it)."""
    lr = read(path).get("learning_rate", [float("nan")])[0]
    want = array.array("f", [expected])[0]
    print(f"compare: {path}: learning_rate {lr:.9g}, expected {want:.9g}: {'same' if lr == want else 'DIFFERENT'}")
    return 0 if lr == want else 1


def main():
    if sys.argv[1] == "--learning-rate":
        return learning_rate(sys.argv[2], float(sys.argv[3]))
    a, b, tol = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
    for path, t in ((sys.argv[1], a), (sys.argv[2], b)):
        print(f"compare: {path}: learning_rate {t.pop('learning_rate', [float('nan')])[0]:.9g}")
    expect_different = "--expect-different" in sys.argv[4:]
    if sorted(a) != sorted(b) or not a:
        print(f"compare: the checkpoints hold different tensors: {sorted(a)} / {sorted(b)}")
        return 1
    worst, where = 0.0, ""
    for name in a:
        scale = max(max(abs(x) for x in a[name]), 1e-30)
        d = max(abs(x - y) for x, y in zip(a[name], b[name])) / scale
        if d > worst:
            worst, where = d, name
    same = worst <= tol
    print(f"compare: max difference {worst:.3g} of the tensor's largest value ({where or 'none'}) "
          f"(tolerance {tol:g}): {'same' if same else 'DIFFERENT'}")
    return 0 if same != expect_different else 1


if __name__ == "__main__":
    sys.exit(main())
