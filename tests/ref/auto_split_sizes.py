#!/usr/bin/env python3
"""Reference for cls_auto_split_size (engine/data/auto_split.c): the validation and test set size that
Coqui STT's --auto_input_dataset gives a CSV of N rows (coqui_stt_training/util/auto_input.py,
_get_sample_size, and its "at least 1 from 2 rows" rule), computed here from the formula as Coqui
states it. Prints the pairs tests/test_auto_split.c holds.

    python3 tests/ref/auto_split_sizes.py
"""


def sample_size(population):
    z, p, e = 2.58, 0.5, 0.01  # 99 % confidence, 1 % margin of error
    n0 = z * z * p * (1 - p) / (e * e)
    size = 0
    for train in range(population, 0, -1):
        size = int(n0 / (1 + n0 / train))
        if 2 * size + train <= population:
            break
    return size if size > 0 or population < 2 else 1


if __name__ == "__main__":
    print(", ".join("{%d, %d}" % (n, sample_size(n)) for n in (0, 1, 2, 3, 10, 100, 1000, 4000, 10000, 100000)))
