#!/usr/bin/env python3
"""Every GEMM shape of a training step on one OpenCL device (bench_gemm, the own backend) beside the same
product in PyTorch from PyPI on the CPU (torch.matmul on all physical cores, MKL/oneDNN), measured in the
same run: each side's milliseconds, GFLOP/s and % of the device's FMA peak (bench_gemm measures it in the
same process), and the ratio PyTorch ms / clspeech ms (above 1: clspeech faster).

    python3 bench/compare_gemm.py [--n_hidden 512,2048] [--batch 16] [--time 150] [--reps 9] [--rounds 1]
        [--shapes NAME,NAME] [--torch_threads N] [--build DIR] [--devices SEL]

With --rounds N the two sides take turns per H, N times: each figure is the median over the rounds and
the ratio the median of the rounds' ratios, every round's ratio printed. The shapes are bench_gemm's
(docs/bench.md): m x n x k with A or B transposed as the step uses them; the PyTorch side multiplies
views (a.t() @ b, a @ b.t()), so neither side pays for a transpose the other skips. The recurrent
products (P) run on a B the LSTM packs once per step on the clspeech side; PyTorch multiplies the same
weight each call. The first run makes the peer's venv (build/bench-venv, or $CLSPEECH_BENCH_VENV; see
bench/peer.py)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402

if __name__ == "__main__":
    peer.enter(["torch", "numpy"], ["torch", "numpy"])

import torch  # noqa: E402


def torch_ms(shape, reps):
    """PyTorch's median time for one of bench_gemm's shapes (op(A)[m,k] op(B)[k,n], row-major)."""
    m, n, k = shape["m"], shape["n"], shape["k"]
    a = torch.randn(k, m) if shape["trans_a"] else torch.randn(m, k)
    b = torch.randn(n, k) if shape["trans_b"] else torch.randn(k, n)
    a_op = a.t() if shape["trans_a"] else a
    b_op = b.t() if shape["trans_b"] else b
    out = torch.empty(m, n)
    return peer.median_ms(lambda: torch.matmul(a_op, b_op, out=out), reps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    peer.step_arguments(ap)
    ap.add_argument("--reps", type=int, default=9, help="timed runs per shape and side (median)")
    ap.add_argument("--rounds", type=int, default=1, help="times the two sides take turns (median over them)")
    ap.add_argument("--shapes", default=None, help="only these of bench_gemm's shapes (comma-separated)")
    ap.add_argument("--devices", default=None, help="OpenCL devices (bench_gemm --devices, e.g. 0:0; default: the engine's)")
    ap.add_argument("--torch_threads", type=int, default=None, help="PyTorch's threads (default: every physical core)")
    args = ap.parse_args()
    _, desc = peer.torch_peer("cpu", args.torch_threads)
    tag = peer.torch_tag(torch)
    peaks = {}  # device -> the highest FMA peak bench_gemm measured over the rounds (a low one is a slow moment)

    # rounds[r][(shape, H, device)] = (clspeech ms, PyTorch ms, clspeech row); each H: clspeech, then PyTorch
    def measure_round():
        got = {}
        for H in [int(h) for h in args.n_hidden.split(",")]:
            cmd = [os.path.join(args.build, "bench_gemm"), "--json", "--backends", "own", "--n_hidden", str(H),
                   "--batch", str(args.batch), "--time", str(args.time), "--runs", str(args.reps)]
            if args.devices:
                cmd += ["--devices", args.devices]
            if args.shapes:
                cmd += ["--shapes", args.shapes]
            for r in peer.json_lines(cmd):
                peaks[r["device"]] = max(peaks.get(r["device"], 0), r["fma_peak_gflops"])
                got[(r["shape"], H, r["device"])] = (r["ms"], torch_ms(r, args.reps), r)
        return got

    rounds = peer.take_turns(args.rounds, measure_round)
    peer.headline(args, args.reps, "PyTorch ms / clspeech ms", desc, args.rounds)
    for dev, pk in peaks.items():
        print(f"limit: {dev}: FMA peak {pk:.1f} GFLOP/s (bench_gemm, the highest of the rounds); % peak of it on both "
              "sides")
    print(f"{'shape':<13} {'H':>5} {'m x n x k':<22} {'clspeech ms':>11} {'GFLOP/s':>8} {'% peak':>7} "
          f"{'PyTorch ms':>10} {'GFLOP/s':>8} {'% peak':>7} {'ratio':>6}  peer" +
          ("  ratio per round" if args.rounds > 1 else ""))
    for key in rounds[0]:
        r = rounds[0][key][2]
        ms, pt, ratio, each = peer.over_rounds(rounds, key)
        flops = 2.0 * r["m"] * r["n"] * r["k"]
        ours, theirs = flops / ms / 1e6, flops / pt / 1e6
        pk = peaks.get(r["device"], 0)
        mnk = f"{r['m']} x {r['n']} x {r['k']}" + (" At" if r["trans_a"] else " Bt" if r["trans_b"] else "") + \
              (" P" if r["packed_b"] else "")
        print(f"{r['shape']:<13} {r['n_hidden']:>5} {mnk:<22} {ms:>11.3f} {ours:>8.1f} {peer.percent(ours, pk):>7} "
              f"{pt:>10.3f} {theirs:>8.1f} {peer.percent(theirs, pk):>7} {ratio:>6.2f}  {tag}{each}")


if __name__ == "__main__":
    main()
