#!/usr/bin/env python3
"""Per-op speed of clspeech on each OpenCL device beside the same op in PyTorch from PyPI on the CPU
(all physical cores, MKL/oneDNN), measured in the same run, with the ratio (PyTorch ms / clspeech ms:
above 1 means clspeech is faster) and each side's rate as a fraction of the device's measured limit
(GFLOP/s of the FMA peak; Adam's GB/s of the device copy bandwidth).

    python3 bench/compare_ops.py [--n_hidden 512,2048] [--batch 16] [--time 150] [--reps 5] [--rounds 1]
        [--torch_threads N] [--build DIR] [--devices SEL]

With --rounds N the two sides take turns per H, N times (as in bench/compare-pytorch): each figure is
the median over the rounds and the ratio the median of the rounds' ratios, every round's ratio printed.

The first run makes the peer's venv (build/bench-venv, or $CLSPEECH_BENCH_VENV; see bench/peer.py).
Shapes are DeepSpeech's: T frames x B utterances, H hidden units, 29 classes, 40-label transcripts.
The PyTorch side times: addmm + clamp + dropout (dense), F.layer_norm + dropout (layer norm, --layer_norm's
eps 1e-12), nn.LSTM (LSTM, cuDNN-style gates, same FLOPs), F.ctc_loss + backward (CTC), optim.Adam.step over
the whole model's parameter count (Adam)."""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402

if __name__ == "__main__":
    peer.enter(["torch", "numpy"], ["torch", "numpy"])

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def n_params(H, C=29, n_in=494):
    return n_in * H + H + 2 * (H * H + H) + 2 * H * 4 * H + 4 * H + H * H + H + H * C + C


def torch_ops(H, B, T, L, reps):
    rows, C = T * B, 29
    out = {}
    x = torch.randn(rows, H)
    w = (torch.rand(H, H) - 0.5) * 0.1
    b = torch.full((H,), 0.01)
    wr, br, xr = w.clone().requires_grad_(), b.clone().requires_grad_(), x.clone().requires_grad_()
    dy = torch.randn(rows, H)

    def dense_fwd():
        with torch.no_grad():
            F.dropout(torch.clamp(torch.addmm(b, x, w), 0, 20), 0.05, True)
    out["dense_fwd"] = peer.median_ms(dense_fwd, reps)
    state = {}

    def dense_prep():
        state["y"] = F.dropout(torch.clamp(torch.addmm(br, xr, wr), 0, 20), 0.05, True)

    def dense_bwd():
        state["y"].backward(dy)

    times = []
    for _ in range(reps + 1):
        dense_prep()
        t0 = time.perf_counter()
        dense_bwd()
        times.append((time.perf_counter() - t0) * 1e3)
    out["dense_bwd"] = statistics.median(times[1:])

    gamma, beta = torch.ones(H, requires_grad=True), torch.full((H,), 0.01, requires_grad=True)

    def ln_fwd():
        with torch.no_grad():
            F.dropout(F.layer_norm(x, (H,), gamma, beta, 1e-12), 0.05, True)
    out["layer_norm_fwd"] = peer.median_ms(ln_fwd, reps)
    times = []
    for _ in range(reps + 1):
        y = F.dropout(F.layer_norm(xr, (H,), gamma, beta, 1e-12), 0.05, True)
        t0 = time.perf_counter()
        y.backward(dy)
        times.append((time.perf_counter() - t0) * 1e3)
    out["layer_norm_bwd"] = statistics.median(times[1:])

    lstm = torch.nn.LSTM(H, H)
    xs = torch.randn(T, B, H, requires_grad=True)
    dh = torch.randn(T, B, H)

    def lstm_fwd():
        with torch.no_grad():
            lstm(xs)
    out["lstm_fwd"] = peer.median_ms(lstm_fwd, reps)
    times = []
    for _ in range(reps + 1):
        hs, _ = lstm(xs)
        t0 = time.perf_counter()
        hs.backward(dh)
        times.append((time.perf_counter() - t0) * 1e3)
    out["lstm_bwd"] = statistics.median(times[1:])

    logits = (torch.rand(T, B, C) * 6 - 3).requires_grad_()
    targets = torch.tensor([[(i * 7 + 3) % (C - 1) for i in range(k * L, (k + 1) * L)] for k in range(B)])
    in_len = torch.full((B,), T, dtype=torch.long)
    tgt_len = torch.full((B,), L, dtype=torch.long)

    def ctc():
        loss = F.ctc_loss(F.log_softmax(logits, -1), targets, in_len, tgt_len, blank=C - 1, reduction="sum")
        loss.backward()
    out["ctc_loss_grad"] = peer.median_ms(ctc, reps)

    p = torch.nn.Parameter(torch.full((n_params(H),), 0.1))
    p.grad = torch.full_like(p, 0.01)
    opt = torch.optim.Adam([p], lr=0.001)
    out["adam"] = peer.median_ms(opt.step, reps)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    peer.step_arguments(ap)
    ap.add_argument("--labels", type=int, default=40)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1, help="times the two sides take turns (median over them)")
    ap.add_argument("--devices", default=None)
    ap.add_argument("--torch_threads", type=int, default=None, help="PyTorch's threads (default: every physical core)")
    args = ap.parse_args()
    _, desc = peer.torch_peer("cpu", args.torch_threads)
    tag = peer.torch_tag(torch)
    limits = peer.clspeech_limits(args.build, args.devices)
    cpu = {k: max((v[k] for v in limits.values()), default=0) for k in ("fma_gflops", "copy_gbs")}
    # rounds[r][(op, H, device)] = (clspeech ms, PyTorch ms, clspeech row); each H: clspeech, then PyTorch after it
    def measure_round():
        got = {}
        for H in [int(h) for h in args.n_hidden.split(",")]:
            cmd = [os.path.join(args.build, "bench_ops"), "--json", "--n_hidden", str(H), "--batch", str(args.batch),
                   "--time", str(args.time), "--labels", str(args.labels), "--reps", str(args.reps)]
            if args.devices:
                cmd += ["--devices", args.devices]
            ours = peer.json_lines(cmd)
            theirs = torch_ops(H, args.batch, args.time, args.labels, args.reps)
            for r in ours:
                got[(r["op"], r["n_hidden"], r["device"])] = (r["ms"], theirs[r["op"]], r)
        return got

    rounds = peer.take_turns(args.rounds, measure_round)
    peer.headline(args, args.reps, "PyTorch ms / clspeech ms", desc, args.rounds, f" labels={args.labels}")
    for dev, lim in limits.items():
        print(f"limit: {dev}: FMA peak {lim['fma_gflops']:.1f} GFLOP/s, device copy {lim['copy_gbs']:.1f} GB/s "
              "(clspeech bench)")
    print("% limit: GFLOP/s of the FMA peak, or (Adam) GB/s of the copy bandwidth, of clspeech's device; PyTorch's of "
          "the CPU's largest")
    print(f"{'op':<14} {'H':>5}  {'device':<36} {'clspeech ms':>12} {'rate':>14} {'% limit':>7} {'PyTorch ms':>11} "
          f"{'rate':>14} {'% limit':>7} {'ratio':>6}  peer" + ("  ratio per round" if args.rounds > 1 else ""))
    for key in rounds[0]:
        first = rounds[0][key][2]
        r = dict(first)
        r["ms"], pt, ratio, each = peer.over_rounds(rounds, key)
        for rate in ("gflops", "gbs"):  # the rate of the median time: the same work per run
            if r.get(rate):
                r[rate] = first[rate] * first["ms"] / r["ms"]
        lim = limits.get(r["device"], {})
        if r.get("gflops"):
            unit, ours_rate, key = "GFLOP/s", r["gflops"], "fma_gflops"
        elif r.get("gbs"):
            unit, ours_rate, key = "GB/s", r["gbs"], "copy_gbs"
        else:
            unit, ours_rate, key = "", 0, None
        pt_rate = ours_rate * r["ms"] / pt if ours_rate else 0  # the same work in PyTorch's time
        fmt = (lambda v: f"{v:.1f} {unit}") if unit else (lambda v: "-")
        print(f"{r['op']:<14} {r['n_hidden']:>5}  {r['device'][:36]:<36} {r['ms']:>12.2f} {fmt(ours_rate):>14} "
              f"{peer.percent(ours_rate, lim.get(key, 0) if key else 0):>7} {pt:>11.2f} {fmt(pt_rate):>14} "
              f"{peer.percent(pt_rate, cpu.get(key, 0) if key else 0):>7} {ratio:>6.2f}  {tag}{each}")


if __name__ == "__main__":
    main()
