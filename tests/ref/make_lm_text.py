#!/usr/bin/env python3
"""A synthetic text for timing `clspeech lm`: WORDS words (default 1,000,000) over a VOCAB-word
vocabulary (default 2,000) drawn from a Zipf distribution (exponent 1.3), with a first-order
dependence (each word is, 40 % of the time, one of 3 Zipf-drawn successors of the previous word),
sentences of 4..20 words.
Deterministic (seed 34).  python3 tests/ref/make_lm_text.py OUT [WORDS] [VOCAB]"""
import random
import sys

out = sys.argv[1]
words = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
vocab = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
r = random.Random(34)
names = ["w%04d" % i for i in range(vocab)]
weights = [1.0 / (i + 1) ** 1.3 for i in range(vocab)]
pool = r.choices(range(vocab), weights, k=words)
succ = [r.choices(range(vocab), weights, k=3) for _ in range(vocab)]
with open(out, "w") as f:
    i = 0
    prev = 0
    while i < words:
        n = min(r.randint(4, 20), words - i)
        s = []
        for _ in range(n):
            w = pool[i] if r.random() < 0.6 else succ[prev][pool[i] % 3]
            s.append(names[w])
            prev = w
            i += 1
        f.write(" ".join(s) + "\n")
