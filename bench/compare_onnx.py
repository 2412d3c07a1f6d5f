#!/usr/bin/env python3
"""Inference speed of the speech-to-text API (clspeech/stt.h, bench_stt: 20 ms pieces, an intermediate
decode after each, greedy decoding) beside ONNX Runtime (PyPI) running the same model exported with
`clspeech export --format onnx`, on one and on two CPU cores, in one run.

    python3 bench/compare_onnx.py [--n_hidden 1024,2048] [--seconds 10] [--reps 3]

For each width: a checkpoint folder of random weights (bench_stt --make; speed only), its ONNX export,
a WAV of --seconds made of LDC93S1 repeated, and its features (`clspeech features`). ONNX Runtime runs
the features' context windows the way a streaming caller does (chunks of 16 frames, the LSTM state fed
back) and in one call over the whole clip; intra-op threads 1 and 2, best of --reps. clspeech runs
bench_stt pinned with taskset to core 0, then cores 0-1 (PoCL's pthread device on those cores), which
also measures the device's FMA peak. Figures: real-time factor (audio seconds per wall second) and
GFLOP/s as a fraction of the measured peak. ONNX Runtime's time excludes the features (precomputed);
clspeech's includes features and decoding. The first run installs onnxruntime and numpy into the
comparisons' venv (build/bench-venv or $CLSPEECH_BENCH_VENV; bench/peer.py)."""
import argparse
import os
import re
import subprocess
import sys
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402

if __name__ == "__main__":
    peer.enter(["onnxruntime", "numpy"], ["onnxruntime", "numpy"])

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.path.join(HERE, "..", "data", "deepspeech-smoke")
CHUNK = 16  # frames per streamed chunk, as the stt API runs them


def run(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return out.stdout


def make_wav(src, dst, seconds):
    with wave.open(src) as w:
        params, pcm = w.getparams(), w.readframes(w.getnframes())
    reps = max(1, int(np.ceil(seconds * params.framerate * 2 / len(pcm))))
    data = (pcm * reps)[: int(seconds * params.framerate) * 2]
    with wave.open(dst, "wb") as w:
        w.setparams(params)
        w.writeframes(data)
    return len(data) / 2 / params.framerate


def windows(feats, n_context):
    padded = np.pad(feats, ((n_context, n_context), (0, 0)))
    return np.stack([padded[t:t + 2 * n_context + 1] for t in range(len(feats))])[None].astype(np.float32)


def ort_times(path, x, n_hidden, threads, reps):
    os.sched_setaffinity(0, set(range(threads)))  # the cores clspeech was pinned to
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    zero = np.zeros((1, n_hidden), np.float32)

    def whole():
        sess.run(["probs"], {"input_node": x, "previous_state_c": zero, "previous_state_h": zero})

    def streamed():
        c, h = zero, zero
        for t in range(0, x.shape[1], CHUNK):
            _, c, h = sess.run(["probs", "new_state_c", "new_state_h"],
                               {"input_node": x[:, t:t + CHUNK], "previous_state_c": c, "previous_state_h": h})

    out = {}
    for name, fn in (("streamed", streamed), ("whole", whole)):
        fn()
        best = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        out[name] = best
    os.sched_setaffinity(0, set(range(os.cpu_count())))
    return out


def ours(build, model, wav, cores, reps):
    env = dict(os.environ, POCL_DEVICES="pthread")
    best = None
    for _ in range(reps):
        text = run(["taskset", "-c", cores, os.path.join(build, "bench_stt"), model, wav, "20", "1"], env)
        rtf = float(re.search(r"real-time factor ([0-9.]+)", text).group(1))
        lat = re.search(r"feed \+ intermediate: median ([0-9.]+) ms, p95 ([0-9.]+) ms", text).groups()
        rss = float(re.search(r"peak RSS ([0-9.]+) MiB", text).group(1))
        m = re.search(r"([0-9.]+) GFLOP/s streamed, ([0-9.]+) % of the device's FMA peak \(([0-9.]+) GFLOP/s", text)
        row = {"rtf": rtf, "lat": lat, "rss": rss, "gflops": float(m.group(1)), "peak": float(m.group(3))}
        if best is None or row["rtf"] > best["rtf"]:
            best = row
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--n_hidden", default="1024,2048")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work", default=None, help="folder for the models and audio (default BUILD/compare-onnx)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    work = os.path.abspath(args.work or os.path.join(build, "compare-onnx"))
    os.makedirs(work, exist_ok=True)
    wav = os.path.join(work, "clip.wav")
    audio = make_wav(os.path.join(SMOKE, "LDC93S1.wav"), wav, args.seconds)
    feats_path = os.path.join(work, "clip.npy")
    run([os.path.join(build, "clspeech"), "features", "--audio", wav, "--out", feats_path])
    feats = np.load(feats_path).astype(np.float32)
    cpu = open("/proc/cpuinfo").read()
    model_name = re.search(r"model name\s*:\s*(.*)", cpu).group(1) if "model name" in cpu else "?"
    print(f"compare_onnx: {audio:.2f} s of audio ({len(feats)} frames); {model_name}; onnxruntime {ort.__version__} "
          f"(CPUExecutionProvider, intra-op threads as listed); clspeech bench_stt on PoCL's pthread device "
          f"pinned with taskset; best of {args.reps}")
    print(f"{'H':>5} {'cores':>5} | {'clspeech RTF':>12} {'GFLOP/s':>8} {'% peak':>6} {'lat med/p95 ms':>15} "
          f"{'RSS MiB':>7} | {'ORT stream RTF':>14} {'ORT whole RTF':>13} {'% peak':>6} | {'clspeech/ORT stream':>19}")
    for h in [int(v) for v in args.n_hidden.split(",")]:
        model = os.path.join(work, f"h{h}")
        if not os.path.exists(os.path.join(model, "features.txt")):
            run([os.path.join(build, "bench_stt"), "--make", str(h), os.path.join(SMOKE, "alphabet.txt"), model])
        onnx = os.path.join(work, f"h{h}.onnx")
        run([os.path.join(build, "clspeech"), "export", "--format", "onnx", "--checkpoint_dir", model, "--out", onnx])
        sess = ort.InferenceSession(onnx, providers=["CPUExecutionProvider"])
        meta = sess.get_modelmeta().custom_metadata_map
        x = windows(feats, int(meta["n_context"]))
        flops = 2.0 * (494 * h + 11.0 * h * h + h * int(meta["n_classes"])) * len(feats)
        for threads, cores in ((1, "0"), (2, "0-1")):
            o = ours(build, model, wav, cores, args.reps)
            t = ort_times(onnx, x, h, threads, args.reps)
            ort_gflops = flops / t["streamed"] / 1e9
            print(f"{h:>5} {threads:>5} | {o['rtf']:>12.2f} {o['gflops']:>8.2f} {100 * o['gflops'] / o['peak']:>5.1f}% "
                  f"{o['lat'][0] + '/' + o['lat'][1]:>15} {o['rss']:>7.0f} | {audio / t['streamed']:>14.2f} "
                  f"{audio / t['whole']:>13.2f} {100 * ort_gflops / o['peak']:>5.1f}% | "
                  f"{o['rtf'] / (audio / t['streamed']):>19.2f}")
            sys.stdout.flush()
    print("RTF: audio seconds per wall second (above 1: faster than real time). % peak: of the FMA peak bench_stt "
          "measured on the same cores.")


if __name__ == "__main__":
    main()
