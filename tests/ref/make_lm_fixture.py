"""Scores sentences with KenLM (the `kenlm` module from PyPI, compiled from its sdist) on an ARPA
model and writes KenLM's per-word log10 probabilities as a plain-text fixture that tests/test_lm.c
reads:

    S BOS EOS SENTENCE      (BOS, EOS: 1 or 0, as passed to kenlm.Model.full_scores)
    P LOG10PROB ...         (one per word, then one for </s> when EOS)
    O OOV ...               (1 where KenLM scored the word as <unk>)

Usage: python3 tests/ref/make_lm_fixture.py [ARPA] [OUT]
(defaults: tests/fixtures/lm_small.arpa -> tests/fixtures/lm_small_kenlm.txt)."""
import importlib.metadata
import os
import sys

import kenlm

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")

# Full trigram hits; backoff through two levels ("<s> a dog": neither "<s> a dog" nor "a dog" is in
# the model); out-of-vocabulary words (<unk>, and <unk> in a trigram); repeated and empty sentences;
# sentences without <s> or </s>.
SENTENCES = [
    (1, 1, "the cat sat on the mat"),
    (1, 1, "a dog sat on a mat"),
    (1, 1, "the cat ran on the mat"),
    (1, 1, "zebra sat on the mat"),
    (1, 1, "mat mat cat dog"),
    (1, 1, ""),
    (1, 1, "the dog ran"),
    (1, 1, "on the the mat zebra"),
    (1, 1, "a cat sat on a cat sat on the dog"),
    (0, 1, "cat sat on the mat"),
    (1, 0, "the dog ran away"),
    (0, 0, "sat on a mat"),
]


def main():
    arpa = sys.argv[1] if len(sys.argv) > 1 else os.path.join(FIXTURES, "lm_small.arpa")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(FIXTURES, "lm_small_kenlm.txt")
    model = kenlm.Model(arpa)
    lines = ["# KenLM %s full_scores of %s (tests/ref/make_lm_fixture.py)" % (
        importlib.metadata.version("kenlm"), os.path.basename(arpa))]
    for bos, eos, sentence in SENTENCES:
        scores = list(model.full_scores(sentence, bos=bool(bos), eos=bool(eos)))
        lines.append("S %d %d %s" % (bos, eos, sentence))
        lines.append("P " + " ".join("%.9g" % s[0] for s in scores))
        lines.append("O " + " ".join("1" if s[2] else "0" for s in scores))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s: %d sentences" % (out, len(SENTENCES)))


if __name__ == "__main__":
    main()
