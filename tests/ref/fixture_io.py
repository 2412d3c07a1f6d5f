"""Writes test fixtures as safetensors files (plain numpy + json, so that no safetensors package is
needed) into tests/fixtures/. Every generator script in tests/ref/ uses it."""
import json
import os
import struct

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64", np.dtype(np.int32): "I32",
          np.dtype(np.int64): "I64", np.dtype(np.uint8): "U8"}


def save(name, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for key, value in tensors.items():
        arr = np.ascontiguousarray(value)
        if arr.dtype not in DTYPES:
            raise TypeError(f"{key}: unsupported dtype {arr.dtype}")
        data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        header[key] = {"dtype": DTYPES[arr.dtype], "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    os.makedirs(FIXTURES, exist_ok=True)
    path = os.path.join(FIXTURES, name)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    print(f"wrote {os.path.relpath(path)} ({os.path.getsize(path)} bytes)")
