#!/usr/bin/env python3
"""Runs `clspeech train` and checks its training losses: one "Epoch N | Training | ... Loss: X" line per
epoch (--noshow_progressbar), for EPOCHS epochs, every loss finite; with --decreasing, the last epoch's
loss below the first's; with --reference, a second run of the same command with other flags (e.g. one
tower taking the whole global batch) whose loss in each epoch the run's must equal within RTOL (relative).

    train_losses.py --work DIR --epochs N [--decreasing] --run=FLAGS [--reference=FLAGS --rtol RTOL]
                    -- CLSPEECH train COMMON_FLAGS...

FLAGS is one string of flags added to the command (split as a shell would). Each run gets --epochs N and
--checkpoint_dir DIR/run or DIR/reference (DIR is emptied first). The run's output is printed as it
came, the reference's with "reference: " before each line; then "train_losses: ok: ..." or the failures.
Exits with the run's exit status when it failed, else 1 on a failed check, else 0.
"""
import argparse
import math
import os
import re
import shlex
import shutil
import subprocess
import sys

LINE = re.compile(r"^Epoch (\d+) \|\s+Training \|.*\| Loss: (\S+) \|")


def losses(text):
    """{epoch: loss} from the Training lines of a log (the last line of each epoch)."""
    found = {}
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if m:
            found[int(m.group(1))] = float(m.group(2))
    return found


def train(command, flags, epochs, folder):
    args = command + shlex.split(flags) + ["--epochs", str(epochs), "--checkpoint_dir", folder]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    return p.returncode, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--epochs", type=int, required=True)
    ap.add_argument("--decreasing", action="store_true")
    ap.add_argument("--run", required=True)
    ap.add_argument("--reference")
    ap.add_argument("--rtol", type=float, default=0.0)
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    problems, ref = [], None
    if a.reference is not None:
        status, out = train(a.command, a.reference, a.epochs, os.path.join(a.work, "reference"))
        print("".join("reference: " + line + "\n" for line in out.splitlines()), end="")
        if status != 0:
            problems.append(f"the reference run ({a.reference}) ended with exit status {status}")
        ref = losses(out)
    status, out = train(a.command, a.run, a.epochs, os.path.join(a.work, "run"))
    print(out, end="", flush=True)
    got = losses(out)
    if sorted(got) != list(range(a.epochs)):
        problems.append(f"training losses for epochs {sorted(got)}, expected 0..{a.epochs - 1}")
    for e, loss in sorted(got.items()):
        if not math.isfinite(loss):
            problems.append(f"epoch {e}: loss {loss} is not finite")
    if a.decreasing and not problems and not got[a.epochs - 1] < got[0]:
        problems.append(f"the last epoch's loss {got[a.epochs - 1]} is not below the first's {got[0]}")
    worst = 0.0
    if ref is not None:
        for e in range(a.epochs):
            if e not in ref or e not in got:
                problems.append(f"epoch {e}: no training loss to compare (run {e in got}, reference {e in ref})")
                continue
            rel = abs(got[e] - ref[e]) / abs(ref[e]) if ref[e] else abs(got[e])
            if not rel <= a.rtol:  # NaN fails too
                problems.append(f"epoch {e}: loss {got[e]} against the reference's {ref[e]}: relative difference "
                                f"{rel:.3g} above {a.rtol:.3g}")
            worst = max(worst, rel) if math.isfinite(rel) else math.inf
    for p in problems:
        print("FAIL: train_losses: " + p)
    if status != 0:
        return status
    if problems:
        return 1
    summary = ", ".join(f"{got[e]:.6f}" for e in range(a.epochs))
    same = f", within {worst:.2g} relative of the reference (tolerance {a.rtol:.2g})" if ref is not None else ""
    print(f"train_losses: ok: {a.epochs} epochs, losses {summary}{same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
