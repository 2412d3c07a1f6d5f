#!/usr/bin/env python3
"""Checks what `clspeech lm_optimizer` printed (its stdout, in the file given):
   lm_optimizer_check.py OUTPUT N_TRIALS ALPHA_MAX BETA_MAX
a baseline line, N_TRIALS trial lines numbered 1..N in order, every pair within [0, max], each line's
"best" the best of the trials so far (lowest WER, then CER, first on a tie), and the Best params line
naming that trial's pair and figures, whose WER is at most the baseline's (trial 1 is DeepSpeech's
default pair, whose WER the LDC93S1 model improves on). Prints "lm_optimizer check: ok" or the problems."""
import re
import sys

out, n, amax, bmax = open(sys.argv[1]).read(), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
problems = []
base = re.search(r"^Without scorer: WER ([0-9.]+), CER ([0-9.]+) ", out, re.M)
trials = re.findall(r"^Trial (\d+)/(\d+): lm_alpha ([0-9.]+), lm_beta ([0-9.]+): WER ([0-9.]+), CER ([0-9.]+) "
                    r"\(best: trial (\d+), WER ([0-9.]+), CER ([0-9.]+)\)$", out, re.M)
best = re.search(r"^Best params: lm_alpha=([0-9.]+) and lm_beta=([0-9.]+) with WER = ([0-9.]+), CER = ([0-9.]+) "
                 r"\(trial (\d+) of (\d+);", out, re.M)
if not base or not best:
    problems.append("no baseline or no Best params line")
if [int(t[0]) for t in trials] != list(range(1, n + 1)) or any(int(t[1]) != n for t in trials):
    problems.append("trial lines are not 1..%d of %d" % (n, n))
lead = None
for t in trials:
    k, a, b, wer, cer = int(t[0]), float(t[2]), float(t[3]), float(t[4]), float(t[5])
    if not (0 <= a <= amax and 0 <= b <= bmax):
        problems.append("trial %d: (%g, %g) outside [0, %g] x [0, %g]" % (k, a, b, amax, bmax))
    if lead is None or (wer, cer) < (lead[3], lead[4]):
        lead = (k, a, b, wer, cer)
    if int(t[6]) != lead[0] or float(t[7]) != lead[3] or float(t[8]) != lead[4]:
        problems.append("trial %d: best so far shown as trial %s, expected %d" % (k, t[6], lead[0]))
if best and lead:
    got = (int(best.group(5)), float(best.group(1)), float(best.group(2)), float(best.group(3)), float(best.group(4)))
    if abs(got[1] - lead[1]) > 5e-7 or abs(got[2] - lead[2]) > 5e-7 or got[0] != lead[0] or got[3:] != lead[3:]:
        problems.append("Best params %s, but the trials' best is %s" % (got, lead))
    if base and got[3] > float(base.group(1)):
        problems.append("best WER %g above the baseline's %s" % (got[3], base.group(1)))
print("lm_optimizer check: " + ("ok" if not problems else "; ".join(problems)))
sys.exit(1 if problems else 0)
