"""Philox-4x32-10 and clspeech's dropout draw in numpy: an implementation independent of the C one
(kernels/philox.h), used to build dropout masks for the TensorFlow references."""
import numpy as np

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def philox4x32_10(ctr, key):
    """ctr: uint64 array [..., 4] holding 32-bit words; key: two ints. Returns uint64 [..., 4]."""
    c = [ctr[..., i].astype(np.uint64) for i in range(4)]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for _ in range(10):
        p0 = np.uint64(M0) * c[0]
        p1 = np.uint64(M1) * c[2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & np.uint64(MASK)
        hi1, lo1 = p1 >> np.uint64(32), p1 & np.uint64(MASK)
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
        k0 = (k0 + np.uint64(W0)) & np.uint64(MASK)
        k1 = (k1 + np.uint64(W1)) & np.uint64(MASK)
    return np.stack(c, axis=-1)


def dropout_uniform(seed, step, layer, utterance, t, unit):
    """Arrays broadcast together; returns float32 draws in [0, 1) as the kernels compute them."""
    utterance, t, unit = np.broadcast_arrays(np.asarray(utterance), np.asarray(t), np.asarray(unit))
    ctr = np.stack([unit >> 2, t, utterance, np.full_like(unit, layer)], axis=-1).astype(np.uint64)
    words = philox4x32_10(ctr, (seed, step))
    word = np.take_along_axis(words, (unit & 3)[..., None].astype(np.int64), axis=-1)[..., 0]
    return ((word >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)).astype(np.float32)


if __name__ == "__main__":
    # Random123's known-answer vectors.
    assert list(philox4x32_10(np.zeros((4,), np.uint64), (0, 0))) == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    ctr = np.array([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], np.uint64)
    assert list(philox4x32_10(ctr, (0xa4093822, 0x299f31d0))) == [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
    print("philox.py: known answers match")
