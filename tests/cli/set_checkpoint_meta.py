#!/usr/bin/env python3
"""Rewrites one metadata value of a safetensors checkpoint in place (the tensors untouched), to make
hostile checkpoints for the tests: set_checkpoint_meta.py FILE KEY VALUE"""
import json
import struct
import sys


def main(path, key, value):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.setdefault("__metadata__", {})[key] = value
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data[8 + n:])
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
