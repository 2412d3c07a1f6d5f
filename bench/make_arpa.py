"""Writes a synthetic word n-gram ARPA file for timing the model's loading (bench/bench_lm.c): a
random corpus of Zipf-distributed words (Python's random, fixed seed), its n-grams up to ORDER counted with
<s> and </s> at each sentence's ends, probabilities from the relative counts and a backoff of
log10 0.5 on every context. Not a smoothed model (the scores are not normalised), but laid out as
lmplz writes one: every n-gram's prefix and suffix is in the model.

With --letters the words are spelled in a..z (consonant-vowel syllables numbering the words, so that a
language-model scorer over an English alphabet can spell them: bench_decode --scorer); else w1, w2, ...

Usage: python3 bench/make_arpa.py OUT [--order 3] [--tokens 1500000] [--vocab 20000] [--seed 1] [--letters]"""
import argparse
import collections
import itertools
import math
import random


def syllables(i):
    """Word i (1, 2, ...) as consonant-vowel syllables: bijective base-105 numeration, unique per i."""
    consonants, vowels = "bcdfghjklmnpqrstvwxyz", "aeiou"
    out = []
    while i > 0:
        i -= 1
        d = i % 105
        out.append(consonants[d // 5] + vowels[d % 5])
        i //= 105
    return "".join(reversed(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--order", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=1500000)
    ap.add_argument("--vocab", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--letters", action="store_true", help="words of letters (syllables) instead of w1, w2, ...")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    cum = list(itertools.accumulate(1.0 / r ** 1.05 for r in range(1, a.vocab + 1)))
    words = rng.choices(range(1, a.vocab + 1), cum_weights=cum, k=a.tokens)
    lengths = [rng.randint(5, 24) for _ in range(a.tokens // 5)]
    counts = [collections.Counter() for _ in range(a.order + 1)]
    pos = 0
    names = ["<s>", "</s>"] + [syllables(i) if a.letters else "w%d" % i for i in range(1, a.vocab + 1)]
    for length in lengths:
        if pos + length > a.tokens:
            break
        sent = [0] + [w + 1 for w in words[pos:pos + length]] + [1]
        pos += length
        for n in range(1, a.order + 1):
            c = counts[n]
            for i in range(len(sent) - n + 1):
                c[tuple(sent[i:i + n])] += 1
    total = sum(counts[1].values())
    contexts = set()
    for n in range(2, a.order + 1):
        contexts.update(k[:-1] for k in counts[n])
    with open(a.out, "w") as f:
        f.write("\\data\\\n")
        f.write("ngram 1=%d\n" % (len(counts[1]) + 1))
        for n in range(2, a.order + 1):
            f.write("ngram %d=%d\n" % (n, len(counts[n])))
        f.write("\n\\1-grams:\n-7.5\t<unk>\t0\n")
        bo = math.log10(0.5)
        for n in range(1, a.order + 1):
            if n > 1:
                f.write("\n\\%d-grams:\n" % n)
            c = counts[n]
            lower = counts[n - 1] if n > 1 else None
            lines = []
            for k, v in c.items():
                denom = lower[k[:-1]] if n > 1 else total
                p = -99.0 if k == (0,) else math.log10(min(v / denom, 0.999))
                text = " ".join(names[i] for i in k)
                if n < a.order:
                    lines.append("%.6f\t%s\t%.6f\n" % (p, text, bo if k in contexts else 0.0))
                else:
                    lines.append("%.6f\t%s\n" % (p, text))
            f.writelines(lines)
        f.write("\n\\end\\\n")
    print("%s: order %d, %s n-grams" % (a.out, a.order, ", ".join(
        "%d-grams %d" % (n, len(counts[n]) + (n == 1)) for n in range(1, a.order + 1))))


if __name__ == "__main__":
    main()
