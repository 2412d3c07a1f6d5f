#!/usr/bin/env python3
"""Evaluation streams utterances too long for the device: from one checkpoint, the test report without
a device-memory cap (every utterance in batches on the tower) and with CLSPEECH_DEVICE_MEMORY_MB set so
that some test utterances exceed what a tower holds. With the cap, the training set skips them but the
test report lists and scores every one: the same samples, the same transcripts, and losses (device
float32 CTC against the host's double one, both within 2e-6 relative of float64 in test_ctc and
test_ctc_stream) within 2e-6 relative, as printed (6 decimals). Then validation inside a capped training
run streams its long dev sample and reports its loss.

    stream_eval.py CLSPEECH SMOKE_DIR FORMATS_CSV WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

clspeech, smoke, formats, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
alphabet = os.path.join(smoke, "alphabet.txt")
ldc = os.path.join(smoke, "ldc93s1.csv")
common = ["--alphabet_config_path", alphabet, "--n_hidden", "32", "--devices", "0:0", "--checkpoint_dir", work,
          "--noshow_progressbar"]


def run(args, env_extra=None):
    env = dict(os.environ)
    env.pop("CLSPEECH_DEVICE_MEMORY_MB", None)
    env.update(env_extra or {})
    p = subprocess.run([clspeech, "train"] + args + common, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    print(p.stdout)
    if p.returncode != 0:
        sys.exit(f"FAIL: clspeech train {' '.join(args)}: exit status {p.returncode}")
    return p.stdout


def samples(out):
    """{wav: (loss, res)} from the report's sample blocks, and {set: (wer, cer, loss)} from its totals."""
    found, totals = {}, {}
    for m in re.finditer(r"WER: [0-9.]+, CER: [0-9.]+, loss: ([0-9.inf]+)\n - wav: file://(\S+)\n - src: .*\n"
                         r" - res: \"(.*)\"", out):
        found[m.group(2)] = (float(m.group(1)), m.group(3))
    for m in re.finditer(r"Test on (\S+) - WER: ([0-9.]+), CER: ([0-9.]+), loss: ([0-9.inf]+)", out):
        totals[m.group(1)] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
    return found, totals


run(["--train_files", ldc, "--epochs", "2", "--load_train", "init"])
test = ["--test_files", f"{formats},{ldc}", "--epochs", "0", "--report_count", "10"]
plain = run(test)
capped = run(["--train_files", ldc] + test, {"CLSPEECH_DEVICE_MEMORY_MB": "1"})
failed = 0
if not re.search(r"warning: training set .*LDC93S1.wav: 2.9 s \(145 frames\) skipped: too long", capped):
    print("FAIL: the capped run does not skip LDC93S1.wav from the training set"); failed = 1
for name, n in ((formats, "3 samples"), (ldc, "1 sample")):
    if not re.search(rf"Test {re.escape(name)}: {n} longer than the [0-9]+ frames a tower holds, streamed", capped):
        print(f"FAIL: the capped run does not say that {name} has {n} streamed"); failed = 1
if re.search(r"(test|validation|metrics) set .* skipped", capped):
    print("FAIL: the capped run skips an evaluation utterance"); failed = 1
limit = re.search(r"the limit is ([0-9]+) frames", capped)
a, ta = samples(plain)
b, tb = samples(capped)
if len(a) != 7 or set(a) != set(b):
    print(f"FAIL: samples listed: {len(a)} without the cap, {len(b)} with it, expected the same 7"); failed = 1
worst = 0.0
for wav in sorted(set(a) & set(b)):
    rel = abs(a[wav][0] - b[wav][0]) / abs(a[wav][0])
    worst = max(worst, rel)
    if rel > 2e-6 or a[wav][1] != b[wav][1]:
        print(f"FAIL: {wav}: loss {a[wav][0]} / {b[wav][0]}, transcript {a[wav][1]!r} / {b[wav][1]!r}"); failed = 1
for name in ta:
    if name not in tb or ta[name][:2] != tb[name][:2] or abs(ta[name][2] - tb[name][2]) > 2e-6 * abs(ta[name][2]):
        print(f"FAIL: set {name}: {ta[name]} without the cap, {tb.get(name)} with it"); failed = 1
# Validation inside training streams too: the short samples train, the long dev one is evaluated.
dev_dir = work + "-dev"
shutil.rmtree(dev_dir, ignore_errors=True)
common[common.index("--checkpoint_dir") + 1] = dev_dir
dev = run(["--train_files", formats, "--dev_files", ldc, "--epochs", "1", "--load_train", "init"],
          {"CLSPEECH_DEVICE_MEMORY_MB": "1"})
if not re.search(rf"Validation {re.escape(ldc)}: 1 sample longer than the [0-9]+ frames a tower holds, streamed", dev):
    print("FAIL: validation does not stream LDC93S1.wav"); failed = 1
if not re.search(r"Validation \| .*Steps: 1 \| Loss: [0-9]+\.[0-9]+", dev):
    print("FAIL: validation reports no finite loss for the streamed sample"); failed = 1
shutil.rmtree(dev_dir, ignore_errors=True)
print(f"stream_eval: limit {limit.group(1) if limit else '?'} frames; {len(b)} samples scored with the cap; "
      f"largest relative loss difference {worst:.3g}; {'FAILED' if failed else 'ok'}")
sys.exit(failed)
