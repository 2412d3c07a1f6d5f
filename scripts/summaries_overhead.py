#!/usr/bin/env python3
"""The cost of training summaries: `clspeech train` with summaries at the default cadence against the
same run with --summary_dir "" (none), alternating, repeated; medians reported.

Two figures:
  - A/B: the median wall time of whole runs with and without summaries (startup included, the same
    in both), as a throughput ratio. On a shared machine its noise is a few per cent.
  - From the run's own event files: each variables-statistics event's wall time minus that of the
    step event just before it is what the statistics cost (reduction on the device, read-back,
    histogram encoding, write); divided by --summary_steps x the median step time (between step
    events), it is their share of training time. Per-step scalars are in the A/B figure.

Usage: python3 scripts/summaries_overhead.py [--clspeech build/clspeech] [--corpus DIR] [--n_hidden 512]
           [--batch 1] [--steps 200] [--repeats 3] [--device pthread] [--summary_steps N]
The corpus is made with scripts/make_corpus.sh when DIR has none. Runs under POCL_DEVICES=<device>.
"""
import argparse
import glob
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of a protobuf message's top-level fields."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def events(path):
    """(wall_time, step, tags) of each Event in a TFRecord file (CRCs not checked here)."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos + 12 <= len(data):
        n = struct.unpack_from("<Q", data, pos)[0]
        rec = data[pos + 12:pos + 12 + n]
        pos += 12 + n + 4
        wall, step, tags = 0.0, 0, []
        for num, _, v in fields(rec):
            if num == 1:
                wall = struct.unpack("<d", v)[0]
            elif num == 2:
                step = v
            elif num == 5:
                for vn, _, value in fields(v):
                    if vn == 1:
                        tags += [t.decode() for tn, _, t in fields(value) if tn == 1]
        yield wall, step, tags


def run(args, corpus, summaries, work):
    ckpt = os.path.join(work, "checkpoints")
    shutil.rmtree(ckpt, ignore_errors=True)
    cmd = [args.clspeech, "train", "--train_files", os.path.join(corpus, "train.csv"),
           "--alphabet_config_path", os.path.join(corpus, "alphabet.txt"), "--n_hidden", str(args.n_hidden),
           "--train_batch_size", str(args.batch), "--epochs", "1", "--limit_train", str(args.steps * args.batch),
           "--checkpoint_dir", ckpt, "--checkpoint_secs", "0", "--load_train", "init", "--noshow_progressbar",
           "--summary_dir", summaries or ""]
    if summaries and args.summary_steps is not None:
        cmd += ["--summary_steps", str(args.summary_steps)]
    env = dict(os.environ, POCL_DEVICES=args.device)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("summaries_overhead: clspeech train failed:\n" + p.stderr[-2000:])
    return wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clspeech", default="build/clspeech")
    ap.add_argument("--corpus", default="build/overhead-corpus")
    ap.add_argument("--n_hidden", type=int, default=512)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="pthread")
    ap.add_argument("--summary_steps", type=int, default=None, help="default: the command's")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.corpus, "train.csv")):
        subprocess.run(["bash", os.path.join(os.path.dirname(__file__), "make_corpus.sh"), args.corpus, "--train",
                        str(max(200, args.steps * args.batch)), "--dev", "0", "--test", "0"], check=True,
                       stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="clspeech-summaries-overhead-")
    walls = {"off": [], "on": []}
    step_ms, stats_ms, n_stats, cadence = [], [], 0, None
    try:
        for r in range(args.repeats):
            for mode in (("off", "on") if r % 2 == 0 else ("on", "off")):
                summaries = os.path.join(work, "summaries-%d" % r) if mode == "on" else None
                walls[mode].append(run(args, args.corpus, summaries, work))
                print("summaries_overhead: repeat %d, summaries %-3s: %.1f s" % (r, mode, walls[mode][-1]), flush=True)
                if summaries:
                    evs = list(events(glob.glob(os.path.join(summaries, "train", "events.out.tfevents.*"))[0]))
                    last_step = None
                    for wall, step, tags in evs:
                        if "step_loss" in tags:
                            if last_step is not None:
                                step_ms.append((wall - last_step[0]) * 1e3)
                            last_step = (wall, step)
                        elif any(t.endswith("/gradients") for t in tags) and last_step and last_step[1] == step:
                            stats_ms.append((wall - last_step[0]) * 1e3)
                            n_stats += 1
                            cadence = step if cadence is None else cadence
    finally:
        shutil.rmtree(work, ignore_errors=True)
    off, on = statistics.median(walls["off"]), statistics.median(walls["on"])
    print("summaries_overhead: H=%d, batch %d, %d steps on POCL_DEVICES=%s, %d repeats" %
          (args.n_hidden, args.batch, args.steps, args.device, args.repeats))
    print("  A/B: median run %.1f s without summaries, %.1f s with: throughput with/without = %.4f (%+.2f %%)" %
          (off, on, off / on, (off / on - 1) * 100))
    if stats_ms and cadence:
        # step_ms holds every gap between step events, including the ones with statistics inside: take
        # the median, which those few do not move.
        s, c = statistics.median(step_ms), statistics.median(stats_ms)
        print("  events: median step %.1f ms; variables' statistics %.1f ms (median of %d) every %d steps: "
              "%.3f %% of training time" % (s, c, n_stats, cadence, 100 * c / (cadence * s)))
    else:
        print("  events: no variables' statistics in %d steps (--summary_steps above --steps?)" % args.steps)


if __name__ == "__main__":
    main()
