#!/usr/bin/env python3
"""Loads an ARPA file written by `clspeech lm` with KenLM's own reader (the `kenlm` Python module) and
checks that KenLM's log10 score of every word of every sentence of the text equals the interpolated
Kneser-Ney probability tests/ref/make_kn_fixture.py computes for it (to 1e-4; ARPA keeps 7 digits).

  python3 tests/ref/check_lm_with_kenlm.py TEXT ORDER MODEL.arpa   (needs `pip install kenlm`)"""
import math
import os
import sys

import kenlm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_kn_fixture  # noqa: E402

text, order, arpa = sys.argv[1], int(sys.argv[2]), sys.argv[3]
all_lines = open(text, encoding="utf-8").read().splitlines()
prob, _, _, _ = make_kn_fixture.build(all_lines, order)
lines = [l for l in all_lines if l.split()]
model = kenlm.Model(arpa)
worst, words = 0.0, 0
for line in lines:
    s = ["<s>"] + line.split() + ["</s>"]
    for i, (score, _, _) in enumerate(model.full_scores(line, bos=True, eos=True)):
        ctx = s[max(0, i + 2 - order):i + 2]  # the word s[i+1] with up to order-1 words before it
        want = math.log10(prob[len(ctx)][tuple(ctx)])
        worst = max(worst, abs(score - want))
        words += 1
print("kenlm read %s (order %d): %d words scored, largest difference from the reference %.2g" %
      (arpa, model.order, words, worst))
sys.exit(0 if worst < 1e-4 else 1)
