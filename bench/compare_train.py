#!/usr/bin/env python3
"""One-device training throughput of the DeepSpeech model in clspeech (each OpenCL device) beside
the same model trained by PyTorch on the CPU, in one run, with the ratio (PyTorch ms/step over
clspeech's: above 1 means clspeech is faster). Same H, B, T, 29 classes, 40-label transcripts,
dropout 0.05, CTC loss averaged over the batch, Adam.

    apt-get install -y python3-torch
    /usr/bin/python3 bench/compare_train.py [--n_hidden 512,2048] [--batch 16] [--time 150] [--steps 5]
        [--torch_device cpu|cuda]

With --torch_device cuda the peer is PyTorch on an NVIDIA GPU (beside clspeech on that GPU's OpenCL
driver); its steps are timed with torch.cuda.synchronize()."""
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
    sys.exit("compare_train.py: PyTorch is missing: apt-get install -y python3-torch (then run with /usr/bin/python3)")


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
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--n_hidden", default="512,2048")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--time", type=int, default=150)
    ap.add_argument("--labels", type=int, default=40)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--devices", default=None)
    ap.add_argument("--torch_device", default="cpu", help="cpu, or cuda for PyTorch on an NVIDIA GPU")
    a = ap.parse_args()
    cmd = [os.path.join(a.build, "bench_train"), "--json", "--n_hidden", a.n_hidden, "--batch", str(a.batch),
           "--time", str(a.time), "--labels", str(a.labels), "--steps", str(a.steps)]
    if a.devices:
        cmd += ["--devices", a.devices]
    ours = [json.loads(l) for l in subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout.splitlines()
            if l.startswith("{")]
    print(f"B={a.batch} T={a.time}, median of {a.steps} steps; PyTorch {torch.__version__} with "
          f"{torch.get_num_threads()} threads; ratio = PyTorch ms / clspeech ms")
    print(f"{'H':>5} {'who':<44} {'ms/step':>10} {'frames/s':>10} {'audio-s/s':>10} {'ratio':>6}")
    for H in [int(h) for h in a.n_hidden.split(",")]:
        ms, frames = torch_step_ms(H, a.batch, a.time, a.labels, a.steps, a.torch_device)
        who = "PyTorch (CPU)" if a.torch_device == "cpu" else f"PyTorch ({torch.cuda.get_device_name()})"
        print(f"{H:>5} {who[:44]:<44} {ms:>10.1f} {frames / ms * 1e3:>10.1f} {frames * 0.02 / ms * 1e3:>10.2f} {1.0:>6.2f}")
        for r in ours:
            if r["n_hidden"] == H:
                print(f"{H:>5} {'clspeech ' + r['device'][:35]:<44} {r['ms']:>10.1f} {r['frames_per_second']:>10.1f} "
                      f"{r['audio_seconds_per_second']:>10.2f} {ms / r['ms']:>6.2f}")


if __name__ == "__main__":
    main()
