#!/usr/bin/env python3
"""Reference for the language-model builder (engine/decode/lm_build.c): interpolated modified
Kneser-Ney as KenLM's lmplz computes it, written independently from the textbook formulas with
Python dictionaries, and stored as an ARPA file the C test compares with entry by entry.

  python3 tests/ref/make_kn_fixture.py tests/fixtures/kn_corpus.txt 3 tests/fixtures/kn_corpus.3.arpa
  python3 tests/ref/make_kn_fixture.py tests/fixtures/kn_corpus.txt 3 tests/fixtures/kn_corpus.3.prune011.arpa 0 1 1

The C test checks against this and against lmplz's own output (make_kn_fixture.sh); lmplz and this
script agree to 5e-7 on the fixture and on a 1M-word 5-gram text. The rules it follows:
- every line is a sentence <s> w1 .. wk </s> (a blank one <s> </s>); n-grams never cross sentences;
- the highest order keeps raw counts; a lower-order n-gram that starts with <s> keeps its raw count,
  any other gets its continuation count (the number of distinct words seen before it);
- per order, n1..n4 = number of n-grams whose (adjusted) count is 1..4; Y = n1/(n1+2 n2),
  D1 = 1-2Y n2/n1, D2 = 2-3Y n3/n2, D3+ = 3-4Y n4/n3;
- p(w|h) = (a(hw) - D(a(hw)))/sum_w a(hw) + gamma(h) p(w|h'), gamma(h) = sum_w D(a(hw)) / sum_w a(hw),
  unigrams interpolate with 1/|V|, V = every word but <s> (with <unk> and </s>); <unk> gets count 0;
- <s> is written with log10 probability 0 (as lmplz does); each context's backoff is log10 gamma(h);
- pruning (thresholds T1 T2 ..., the last repeating; T1 = 0): an n-gram of order >= 2 seen (raw
  count) at most Tn times is left out unless a kept (n+1)-gram starts or ends with it; discounts
  still come from all n-grams, a left-out n-gram's count stays in its context's total and all of it
  goes to gamma(h) (lmplz's AddRight in lm/builder/initial_probabilities.cc).
"""
import math
import sys
from collections import defaultdict


def build(lines, order, prune=()):
    sents = [["<s>"] + l.split() + ["</s>"] for l in lines]  # a blank line is <s> </s>, as in lmplz
    raw = [defaultdict(int) for _ in range(order + 1)]
    for s in sents:
        for n in range(1, order + 1):
            for i in range(len(s) - n + 1):
                raw[n][tuple(s[i:i + n])] += 1
    adj = [dict() for _ in range(order + 1)]
    adj[order] = dict(raw[order])
    for n in range(order - 1, 0, -1):
        left = defaultdict(set)
        for g in raw[n + 1]:
            left[g[1:]].add(g[0])
        for g in raw[n]:
            adj[n][g] = raw[n][g] if g[0] == "<s>" else len(left[g])
    adj[1].pop(("<s>",))
    adj[1].setdefault(("<unk>",), 0)
    disc = {}
    for n in range(1, order + 1):
        nk = [sum(1 for c in adj[n].values() if c == k) for k in (1, 2, 3, 4)]
        y = nk[0] / (nk[0] + 2 * nk[1])
        disc[n] = [k - (k + 1) * y * nk[k] / nk[k - 1] for k in (1, 2, 3)]
    D = lambda n, c: 0.0 if c == 0 else disc[n][min(c, 3) - 1]
    thr = lambda n: (list(prune) or [0])[min(n, len(prune) or 1) - 1]
    kept = [set() for _ in range(order + 2)]
    kept[1] = set(adj[1])
    for n in range(order, 1, -1):
        for g in adj[n]:
            if raw[n][g] > thr(n) or g in kept[n]:
                kept[n].add(g)
                kept[n - 1].update([g[:-1], g[1:]])
    kept[1] = set(adj[1])
    prob = [dict() for _ in range(order + 1)]
    bow = [dict() for _ in range(order + 1)]
    for n in range(1, order + 1):
        by_ctx = defaultdict(list)
        for g in adj[n]:
            by_ctx[g[:-1]].append(g)
        for h, gs in by_ctx.items():
            total = sum(adj[n][g] for g in gs)
            gamma = sum(D(n, adj[n][g]) if g in kept[n] else adj[n][g] for g in gs) / total
            for g in gs:
                if g not in kept[n]:
                    continue
                lower = 1.0 / len(adj[1]) if n == 1 else prob[n - 1][g[1:]]
                prob[n][g] = (adj[n][g] - D(n, adj[n][g])) / total + gamma * lower
            if n > 1:
                bow[n - 1][h] = gamma
    return prob, bow, disc, adj


def main():
    text, order, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    prune = [int(t) for t in sys.argv[4:]]
    prob, bow, disc, adj = build(open(text, encoding="utf-8").read().splitlines(), order, prune)
    with open(out, "w") as f:
        f.write("\\data\\\n")
        for n in range(1, order + 1):
            f.write("ngram %d=%d\n" % (n, len(prob[n]) + (n == 1)))
        for n in range(1, order + 1):
            f.write("\n\\%d-grams:\n" % n)
            rows = sorted(prob[n].items())
            if n == 1:
                rows.append((("<s>",), None))
            for g, p in rows:
                lp = 0.0 if p is None else math.log10(p)
                line = "%.9f\t%s" % (lp, " ".join(g))
                if n < order:
                    b = bow[n].get(g, 1.0)
                    line += "\t%.9f" % math.log10(b)
                f.write(line + "\n")
        f.write("\n\\end\\\n")
    for n in range(1, order + 1):
        nk = [sum(1 for c in adj[n].values() if c == k) for k in (1, 2, 3, 4)]
        print("order %d: n1..n4 = %s, D = %s" % (n, nk, ["%.6f" % d for d in disc[n]]))


if __name__ == "__main__":
    main()
