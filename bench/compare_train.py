#!/usr/bin/env python3
"""One-device training throughput of the DeepSpeech model in clspeech (each OpenCL device) beside
the same model trained by PyTorch from PyPI on the CPU (all physical cores, MKL/oneDNN), in one run,
with the ratio (clspeech frames/s over PyTorch's: above 1 means clspeech is faster) and each side's
GEMM GFLOP/s as a fraction of the device's measured FMA peak. Same H, B, T, 29 classes, 40-label
transcripts, dropout 0.05, CTC loss averaged over the batch, Adam.

    python3 bench/compare_train.py [--n_hidden 512,2048] [--batch 16] [--time 150] [--steps 5]
        [--torch_device cpu|cuda] [--torch_threads N] [--build DIR] [--devices SEL]

The first run makes the peer's venv (build/bench-venv, or $CLSPEECH_BENCH_VENV; see bench/peer.py)
and installs torch from PyPI into it. With --torch_device cuda the peer is PyTorch on an NVIDIA GPU
(beside clspeech on that GPU's OpenCL driver); its steps are timed with torch.cuda.synchronize()."""
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


class DeepSpeech(torch.nn.Module):
    def __init__(self, H, C=29, n_in=494):
        super().__init__()
        self.l1, self.l2, self.l3 = torch.nn.Linear(n_in, H), torch.nn.Linear(H, H), torch.nn.Linear(H, H)
        self.lstm = torch.nn.LSTM(H, H)
        self.l5, self.l6 = torch.nn.Linear(H, H), torch.nn.Linear(H, C)

    def forward(self, x):  # x [T, B, 494]
        for layer in (self.l1, self.l2, self.l3):
            x = F.dropout(torch.clamp(layer(x), 0, 20), 0.05, self.training)
        x, _ = self.lstm(x)
        x = F.dropout(torch.clamp(self.l5(x), 0, 20), 0.05, self.training)
        return self.l6(x)


def torch_step_ms(H, B, T, L, steps, device="cpu"):
    dev = torch.device(device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    model = DeepSpeech(H).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(T, B, 494, device=dev)
    lengths = torch.tensor([T - (b % 4) * (T // 10) for b in range(B)], device=dev)
    targets = torch.tensor([[(b * 7 + k * 3) % 28 for k in range(L)] for b in range(B)], device=dev)
    target_lengths = torch.full((B,), L, device=dev)
    times = []
    for s in range(steps + 2):
        sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        logits = model(x)
        loss = F.ctc_loss(F.log_softmax(logits, -1), targets, lengths, target_lengths, blank=28, reduction="mean",
                          zero_infinity=False)
        loss.backward()
        opt.step()
        sync()
        if s >= 2:
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), float(lengths.sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    peer.step_arguments(ap)
    ap.add_argument("--labels", type=int, default=40)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--devices", default=None)
    ap.add_argument("--torch_device", default="cpu", help="cpu, or cuda for PyTorch on an NVIDIA GPU")
    ap.add_argument("--torch_threads", type=int, default=None, help="PyTorch's threads (default: every physical core)")
    a = ap.parse_args()
    _, desc = peer.torch_peer(a.torch_device, a.torch_threads)
    tag = peer.torch_tag(torch, a.torch_device)
    limits = peer.clspeech_limits(a.build, a.devices)
    cpu_peak = max((v["fma_gflops"] for v in limits.values()), default=0)
    cmd = [os.path.join(a.build, "bench_train"), "--json", "--n_hidden", a.n_hidden, "--batch", str(a.batch),
           "--time", str(a.time), "--labels", str(a.labels), "--steps", str(a.steps)]
    if a.devices:
        cmd += ["--devices", a.devices]
    ours = peer.json_lines(cmd)
    peer.headline(a, f"{a.steps} steps", "clspeech frames/s / PyTorch frames/s", desc)
    for dev, lim in limits.items():
        print(f"limit: {dev}: FMA peak {lim['fma_gflops']:.1f} GFLOP/s, device copy {lim['copy_gbs']:.1f} GB/s "
              "(clspeech bench)")
    print("GFLOP/s = GEMM flops of a step / step time; % peak = of the FMA peak of the device (PyTorch: the largest, "
          "the CPU's)")
    print(f"{'H':>5} {'who':<44} {'ms/step':>10} {'frames/s':>10} {'audio-s/s':>10} {'GFLOP/s':>8} {'% peak':>7} "
          f"{'ratio':>6}  peer")
    for H in [int(h) for h in a.n_hidden.split(",")]:
        ms, frames = torch_step_ms(H, a.batch, a.time, a.labels, a.steps, a.torch_device)
        flops = peer.step_gemm_flops(H, a.batch, a.time)
        who = "PyTorch (CPU)" if a.torch_device == "cpu" else f"PyTorch ({torch.cuda.get_device_name()})"
        g = flops / ms / 1e6
        print(f"{H:>5} {who[:44]:<44} {ms:>10.1f} {frames / ms * 1e3:>10.1f} {frames * 0.02 / ms * 1e3:>10.2f} "
              f"{g:>8.1f} {peer.percent(g, cpu_peak if a.torch_device == 'cpu' else 0):>7} {1.0:>6.2f}  {tag}")
        for r in ours:
            if r["n_hidden"] == H:
                g = flops / r["ms"] / 1e6
                peak = limits.get(r["device"], {}).get("fma_gflops", 0)
                print(f"{H:>5} {'clspeech ' + r['device'][:35]:<44} {r['ms']:>10.1f} {r['frames_per_second']:>10.1f} "
                      f"{r['audio_seconds_per_second']:>10.2f} {g:>8.1f} {peer.percent(g, peak):>7} "
                      f"{ms / r['ms']:>6.2f}  {tag}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
