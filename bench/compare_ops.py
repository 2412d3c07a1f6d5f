#!/usr/bin/env python3
"""Per-op speed of clspeech on each OpenCL device beside the same op in PyTorch on the CPU,
measured in the same run, with the ratio (PyTorch ms / clspeech ms: above 1 means clspeech is faster).

    apt-get install -y python3-torch        # Debian's PyTorch (CPU)
    /usr/bin/python3 bench/compare_ops.py [--n_hidden 512,2048] [--batch 16] [--time 150] [--reps 5]

Shapes are DeepSpeech's: T frames x B utterances, H hidden units, 29 classes, 40-label transcripts.
The PyTorch side times: addmm + clamp + dropout (dense), nn.LSTM (LSTM, cuDNN-style gates, same
FLOPs), F.ctc_loss + backward (CTC), optim.Adam.step over the whole model's parameter count (Adam)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("compare_ops.py: PyTorch is missing: apt-get install -y python3-torch (then run with /usr/bin/python3)")


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


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
    out["dense_fwd"] = median_ms(dense_fwd, reps)
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

    lstm = torch.nn.LSTM(H, H)
    xs = torch.randn(T, B, H, requires_grad=True)
    dh = torch.randn(T, B, H)

    def lstm_fwd():
        with torch.no_grad():
            lstm(xs)
    out["lstm_fwd"] = median_ms(lstm_fwd, reps)
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
    out["ctc_loss_grad"] = median_ms(ctc, reps)

    p = torch.nn.Parameter(torch.full((n_params(H),), 0.1))
    p.grad = torch.full_like(p, 0.01)
    opt = torch.optim.Adam([p], lr=0.001)
    out["adam"] = median_ms(opt.step, reps)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--n_hidden", default="512,2048")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--time", type=int, default=150)
    ap.add_argument("--labels", type=int, default=40)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--devices", default=None)
    args = ap.parse_args()
    cmd = [os.path.join(args.build, "bench_ops"), "--json", "--n_hidden", args.n_hidden, "--batch", str(args.batch),
           "--time", str(args.time), "--labels", str(args.labels), "--reps", str(args.reps)]
    if args.devices:
        cmd += ["--devices", args.devices]
    print(f"clspeech: {' '.join(cmd)}", file=sys.stderr)
    ours = [json.loads(line) for line in subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout.splitlines()
            if line.startswith("{")]
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads", file=sys.stderr)
    theirs = {int(H): torch_ops(int(H), args.batch, args.time, args.labels, args.reps) for H in args.n_hidden.split(",")}
    print(f"B={args.batch} T={args.time} labels={args.labels}, median of {args.reps}; ratio = PyTorch ms / clspeech ms")
    print(f"{'op':<14} {'H':>5}  {'device':<40} {'clspeech ms':>12} {'GFLOP/s':>8} {'GB/s':>7} {'PyTorch ms':>11} {'ratio':>6}")
    for r in ours:
        pt = theirs[r["n_hidden"]][r["op"]]
        print(f"{r['op']:<14} {r['n_hidden']:>5}  {r['device'][:40]:<40} {r['ms']:>12.2f} {r['gflops']:>8.1f} "
              f"{r['gbs']:>7.2f} {pt:>11.2f} {pt / r['ms']:>6.2f}")


if __name__ == "__main__":
    main()
