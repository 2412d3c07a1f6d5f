#!/usr/bin/env python3
"""The summaries of real training runs, read by TensorBoard's own code (the `tensorboard` package).

Trains tiny models (n_hidden 16, two epochs of formats.csv, LDC93S1 as dev and metrics set, the
variables' statistics every step) under each strategy on every device as towers, and once more with
--layer_norm (its 8 LayerNorm variables beside the 12), then reads the
event files with TensorBoard's EventAccumulator (which checks both CRCs of every record) and checks:
  - the tags: step_loss, learning_rate, audio_seconds_per_second, epoch_loss, the towers' step time
    and share (and async's staleness), and for each of the 12 (or 20) variables mean, stddev, max, min and
    the histograms of its values and of its gradient; step_loss and epoch_loss in dev and metrics;
  - the steps: train's step_loss at 1 .. N, dev's and metrics' at each epoch's last global step;
  - step_loss against the losses `clspeech train` printed: each epoch's printed training loss is the
    mean of that epoch's step_loss values and equals epoch_loss, each validation and metrics loss
    the dev or metrics step_loss (tolerance: 1e-7 x the loss for the float32 that simple_value holds,
    plus 1e-6 for the 6 printed decimals);
  - each variable's mean, stddev, min and max at the step of every train checkpoint against the
    checkpoint's own tensor (read here from the safetensors file): min and max exactly; mean and
    stddev within 1e-5 x the tensor's largest distance from its mean (the device adds floats)
    plus 1e-7 relative (float32 storage);
  - every histogram's counts sum to its num and to the tensor's size;
  - an event file cut inside its last record still loads, less that record;
  - `tensorboard --logdir` serves the run on 127.0.0.1 (a port the system picks): its scalars API
    lists the tags and returns train's step_loss as the files hold it; then it is stopped.
The work folder is removed at the end (--keep keeps it).

Usage: check_tensorboard.py --clspeech PATH --data DATA_DIR --work DIR [--keep]
Prints "check_tensorboard: N passed, N failed".
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import numpy as np
from tensorboard.backend.event_processing import event_accumulator as ea

VARIABLES = [
    "layer_1/weights", "layer_1/bias", "layer_2/weights", "layer_2/bias", "layer_3/weights", "layer_3/bias",
    "cudnn_lstm/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell/kernel",
    "cudnn_lstm/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell/bias",
    "layer_5/weights", "layer_5/bias", "layer_6/weights", "layer_6/bias",
]
LAYER_NORM = ["layer_%d/LayerNorm/%s" % (n, p) for n in (1, 2, 3, 5) for p in ("beta", "gamma")]

passed = 0
failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what, flush=True)


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        dtype = {"F32": np.float32, "I64": np.int64, "F64": np.float64}[info["dtype"]]
        out[name] = np.frombuffer(data[a:b], dtype=dtype).reshape(info["shape"])
    return out


def load(folder):
    acc = ea.EventAccumulator(folder, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0})
    acc.Reload()
    return acc


def scalars(acc, tag):
    return [(e.step, e.value) for e in acc.Scalars(tag)]


PRINTED = re.compile(r"^Epoch (\d+) \| +(Training|Validation|Metrics) \| .*\| Steps: (\d+) \| Loss: ([0-9.]+)")


def train(args, name, strategy, batch, extra):
    work = os.path.join(args.work, name)
    summaries, checkpoints = os.path.join(work, "summaries"), os.path.join(work, "checkpoints")
    smoke = os.path.join(args.data, "deepspeech-smoke")
    cmd = [args.clspeech, "train", "--train_files", os.path.join(args.data, "formats", "formats.csv"),
           "--dev_files", os.path.join(smoke, "ldc93s1.csv"), "--metrics_files", os.path.join(smoke, "ldc93s1.csv"),
           "--alphabet_config_path", os.path.join(smoke, "alphabet.txt"), "--n_hidden", "16", "--epochs", "2",
           "--train_batch_size", str(batch), "--strategy", strategy, "--devices", "all",
           "--summary_dir", summaries, "--summary_steps", "1", "--checkpoint_dir", checkpoints, "--max_to_keep", "10",
           "--load_train", "init", "--noshow_progressbar"] + list(extra)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    check(run.returncode == 0, "%s: clspeech train exited %d:\n%s" % (name, run.returncode, run.stderr[-3000:]))
    printed = []
    for line in run.stderr.splitlines():
        m = PRINTED.match(line)
        if m:
            printed.append((int(m.group(1)), m.group(2), int(m.group(3)), float(m.group(4))))
    check(re.search(r"summaries for TensorBoard in .*: tensorboard --logdir", run.stderr) is not None,
          "%s: the command does not say where the summaries go" % name)
    return summaries, checkpoints, printed


def close(a, b, rel, abs_):
    return abs(a - b) <= abs_ + rel * max(abs(a), abs(b))


def check_run(args, name, strategy, batch, extra=()):
    summaries, checkpoints, printed = train(args, name, strategy, batch, extra)
    variables = VARIABLES + (LAYER_NORM if "--layer_norm" in extra else [])
    epochs = [p for p in printed if p[1] == "Training"]
    check(len(epochs) == 2, "%s: %d training lines printed, expected 2" % (name, len(epochs)))
    if len(epochs) != 2:
        return None
    tr, dev, met = (load(os.path.join(summaries, s)) for s in ("train", "dev", "metrics"))
    tags = tr.Tags()
    towers = 3  # POCL_DEVICES="pthread pthread basic", --devices all
    want = ["step_loss", "learning_rate", "audio_seconds_per_second", "epoch_loss"]
    if strategy != "async":  # hybrid: every tower in every step; sync: each in turn
        want += ["towers/%s/%d" % (k, i) for k in ("step_ms", "batch_share") for i in range(towers)]
    else:  # async: whichever towers pushed a gradient, at least one
        for k in ("step_ms", "batch_share", "staleness"):
            check(any(t.startswith("towers/%s/" % k) for t in tags["scalars"]), "%s: no towers/%s tag" % (name, k))
    for v in variables:
        want += [v + "/mean", v + "/stddev", v + "/max", v + "/min"]
    missing = [t for t in want if t not in tags["scalars"]]
    check(not missing, "%s: train lacks the scalars %s" % (name, missing))
    hist_missing = [h for v in variables for h in (v, v + "/gradients") if h not in tags["histograms"]]
    check(not hist_missing, "%s: train lacks the histograms %s" % (name, hist_missing))
    check("sttdev" not in " ".join(tags["scalars"]), "%s: a tag is spelled sttdev" % name)
    for acc, s in ((dev, "dev"), (met, "metrics")):
        check(sorted(acc.Tags()["scalars"]) == ["epoch_loss", "step_loss"],
              "%s: %s's scalars are %s" % (name, s, acc.Tags()["scalars"]))

    # Steps and losses against the printed lines.
    steps = scalars(tr, "step_loss")
    per_epoch = [p[2] for p in epochs]
    total = sum(per_epoch)
    check([s for s, _ in steps] == list(range(1, total + 1)),
          "%s: train step_loss steps %s, expected 1..%d" % (name, [s for s, _ in steps], total))
    ends = [sum(per_epoch[:e + 1]) for e in range(len(per_epoch))]
    first = 0
    for e, count in enumerate(per_epoch):
        mine = [v for s, v in steps if first < s <= first + count]
        loss = epochs[e][3]
        mean = sum(mine) / len(mine) if mine else float("nan")
        check(close(mean, loss, 1e-7, 1e-6), "%s: epoch %d: mean step_loss %.7f, printed %.6f" % (name, e, mean, loss))
        first += count
    epoch_loss = scalars(tr, "epoch_loss")
    check([s for s, _ in epoch_loss] == ends, "%s: train epoch_loss at %s, expected %s" % (name, epoch_loss, ends))
    for (s, v), p in zip(epoch_loss, epochs):
        check(close(v, p[3], 1e-7, 1e-6), "%s: epoch_loss %.7f at %d, printed %.6f" % (name, v, s, p[3]))
    for acc, phase in ((dev, "Validation"), (met, "Metrics")):
        lines = [p[3] for p in printed if p[1] == phase]
        got = scalars(acc, "step_loss")
        check([s for s, _ in got] == ends, "%s: %s step_loss at %s, expected %s" % (name, phase, got, ends))
        for (s, v), loss in zip(got, lines):
            check(close(v, loss, 1e-7, 1e-6), "%s: %s step_loss %.7f at %d, printed %.6f" % (name, phase, v, s, loss))
        check([s for s, _ in scalars(acc, "epoch_loss")] == ends, "%s: %s epoch_loss steps" % (name, phase))
    lr = scalars(tr, "learning_rate")
    check(all(close(v, 0.001, 1e-7, 0) for _, v in lr), "%s: learning_rate %s" % (name, lr[:3]))
    shares = [v for t in tags["scalars"] if t.startswith("towers/batch_share/") for _, v in scalars(tr, t)]
    check(all(0 < v <= 1 for v in shares), "%s: batch shares %s" % (name, shares[:6]))

    # Variables against the checkpoints written at the same steps.
    compared = 0
    for f in sorted(os.listdir(checkpoints)):
        m = re.match(r"train-(\d+)\.safetensors$", f)
        if not m:
            continue
        step = int(m.group(1))
        ckpt = read_safetensors(os.path.join(checkpoints, f))
        for v in variables:
            t = ckpt[v].astype(np.float64)
            at = {k: dict(scalars(tr, v + "/" + k)).get(step) for k in ("mean", "stddev", "min", "max")}
            if any(x is None for x in at.values()):
                check(False, "%s: no statistics of %s at step %d" % (name, v, step))
                continue
            mean, sd = t.mean(), t.std()
            spread = float(np.abs(t - mean).max())
            tol = 1e-5 * spread + 1e-30
            check(at["min"] == np.float32(t.min()) and at["max"] == np.float32(t.max()),
                  "%s: %s at %d: min %r max %r, checkpoint %r %r" % (name, v, step, at["min"], at["max"], t.min(),
                                                                     t.max()))
            check(close(at["mean"], mean, 1e-7, tol), "%s: %s at %d: mean %.9g, checkpoint %.9g (tolerance %.2g)" %
                  (name, v, step, at["mean"], mean, tol))
            check(close(at["stddev"], sd, 1e-7, tol), "%s: %s at %d: stddev %.9g, checkpoint %.9g (tolerance %.2g)" %
                  (name, v, step, at["stddev"], sd, tol))
            for h in (v, v + "/gradients"):
                hv = [e.histogram_value for e in tr.Histograms(h) if e.step == step]
                check(len(hv) == 1 and hv[0].num == t.size and sum(hv[0].bucket) == t.size,
                      "%s: histogram %s at %d: %s values, tensor %d" %
                      (name, h, step, [(x.num, sum(x.bucket)) for x in hv], t.size))
            compared += 1
    check(compared == 2 * len(variables), "%s: %d variables compared with checkpoints, expected %d" %
          (name, compared, 2 * len(variables)))
    counts = [sum(e.histogram_value.bucket) == e.histogram_value.num for h in tags["histograms"]
              for e in tr.Histograms(h)]
    check(len(counts) == 2 * len(variables) * total and all(counts),
          "%s: %d histograms, %d with counts not summing to num" % (name, len(counts), counts.count(False)))
    print("check_tensorboard: %s: %d steps, %d histograms, %d variables compared with checkpoints" %
          (name, total, len(counts), compared), flush=True)
    return summaries


def check_truncated(args, summaries):
    """A copy of train's event file cut inside its last record loads, less that record."""
    folder = os.path.join(summaries, "train")
    name = [f for f in os.listdir(folder) if "tfevents" in f][0]
    cut_dir = os.path.join(args.work, "truncated")
    os.makedirs(cut_dir)
    with open(os.path.join(folder, name), "rb") as f:
        data = f.read()
    # The records' ends, from their length fields.
    ends, pos = [], 0
    while pos < len(data):
        pos += 12 + int.from_bytes(data[pos:pos + 8], "little") + 4
        ends.append(pos)
    check(ends[-1] == len(data), "the event file's records do not add up to its size")
    with open(os.path.join(cut_dir, name), "wb") as f:
        f.write(data[:ends[-2] + 7])
    whole, cut = load(folder), load(cut_dir)
    last = scalars(whole, "epoch_loss")
    check(scalars(cut, "epoch_loss") == last[:-1] and scalars(cut, "step_loss") == scalars(whole, "step_loss"),
          "the truncated file lost more than its last record (epoch_loss %s)" % scalars(cut, "epoch_loss"))


def check_server(args, summaries):
    """tensorboard --logdir on loopback: the scalars API lists the runs' tags and serves step_loss."""
    exe = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    proc = subprocess.Popen([exe, "--logdir", summaries, "--host", "127.0.0.1", "--port", "0", "--load_fast", "false"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url, lines, deadline = None, [], time.time() + 120
        while url is None and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
            if m:
                url = m.group(1)
        check(url is not None, "tensorboard did not say where it serves:\n" + "".join(lines[-20:]))
        if url is None:
            return
        tags = None
        for _ in range(100):  # the first load of the logdir happens in the background
            with urllib.request.urlopen(url + "/data/plugin/scalars/tags", timeout=30) as r:
                tags = json.load(r)
            if "step_loss" in tags.get("train", {}) and "step_loss" in tags.get("dev", {}):
                break
            time.sleep(0.2)
        check(set(tags) == {"train", "dev", "metrics"} and "layer_1/weights/mean" in tags["train"],
              "tensorboard's scalars tags: %s" % {k: sorted(v)[:5] for k, v in tags.items()})
        query = urllib.parse.urlencode({"run": "train", "tag": "step_loss"})
        with urllib.request.urlopen(url + "/data/plugin/scalars/scalars?" + query, timeout=30) as r:
            served = json.load(r)
        files = scalars(load(os.path.join(summaries, "train")), "step_loss")
        check([(s, v) for _, s, v in served] == files, "tensorboard served %s, the files hold %s" % (served, files))
        print("check_tensorboard: tensorboard served %d runs at %s; train step_loss %d points" %
              (len(tags), url, len(served)), flush=True)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clspeech", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    try:
        first = None
        for name, strategy, batch in (("hybrid", "hybrid", 1), ("sync", "sync", 2), ("async", "async", 2)):
            s = check_run(args, name, strategy, batch)
            first = first or s
        check_run(args, "hybrid-layer-norm", "hybrid", 2, ["--layer_norm"])
        if first:
            check_truncated(args, first)
            check_server(args, first)
    finally:
        if not args.keep:
            shutil.rmtree(args.work, ignore_errors=True)
    print("check_tensorboard: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
