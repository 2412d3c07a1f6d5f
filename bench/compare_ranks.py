#!/usr/bin/env python3
"""Several processes on this machine: the training throughput of `clspeech train --horovod` under
mpirun with 1, 2 (and 4) ranks, its MPI_Allreduce time per step and the scaling efficiency (the
throughput of P ranks over P times one rank's), beside PyTorch DDP (gloo backend, CPU) training the
same DeepSpeech model (same H, per-rank batch, frames, labels, dropout 0.05, CTC, Adam) with the same
ranks, in one run. Every rank gets the same threads (--threads_per_rank: PoCL's pthread device with
POCL_MAX_PTHREAD_COUNT, torch.set_num_threads), so that P ranks use P times one rank's cores.

    CLSPEECH_BENCH_VENV=/path/to/venv python3 bench/compare_ranks.py [--ranks 1,2,4] [--n_hidden 128]
        [--batch 4] [--steps 8] [--epochs 3] [--threads_per_rank 1] [--build DIR]

clspeech trains LDC93S1 (data/deepspeech-smoke) repeated ranks x batch x steps times per
epoch; its throughput is the median over the epochs after the first of the progress line's
audio-s/s (every rank's audio: global) over the utterance's length, and its allreduce time is the
epochs' "MPI_Allreduce ... ms per step" (the in-place sum of the host gradient buffer, waiting for the
slowest rank included). PyTorch's throughput is timed over `steps` steps after 2 warm-up steps; its
allreduce time is that of a dist.all_reduce of the model's parameter count right after each of
`steps` further steps (waiting for the slowest rank included, as clspeech's; DDP overlaps its own
bucketed allreduce with the backward pass, so it cannot be told apart inside the step).
The peer's venv: bench/peer.py."""
import argparse
import csv
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402

if __name__ == "__main__":
    peer.enter(["torch", "numpy"], ["torch", "numpy"])

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from compare_train import DeepSpeech  # noqa: E402

SMOKE = os.path.join(peer.ROOT, "data", "deepspeech-smoke")


def clspeech_run(args, ranks, work):
    """clspeech train --horovod with `ranks` ranks: (utterances/s, allreduce ms/step, step ms by rank)."""
    with open(os.path.join(SMOKE, "ldc93s1.csv")) as f:
        row = list(csv.reader(f))[1]
    wav = os.path.abspath(os.path.join(SMOKE, row[0]))
    data = os.path.join(work, f"train-{ranks}.csv")
    with open(data, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wav_filename", "wav_filesize", "transcript"])
        for _ in range(ranks * args.batch * args.steps):
            w.writerow([wav, row[1], row[2]])
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [shutil.which("mpirun") or "mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks),
           "-x", "POCL_DEVICES=pthread", "-x", f"POCL_MAX_PTHREAD_COUNT={args.threads_per_rank}",
           os.path.join(args.build, "clspeech"), "train", "--horovod", "--train_files", data,
           "--alphabet_config_path", os.path.join(SMOKE, "alphabet.txt"), "--n_hidden", str(args.n_hidden),
           "--train_batch_size", str(args.batch), "--epochs", str(args.epochs), "--load_train", "init",
           "--noshow_progressbar", "--summary_dir=", "--checkpoint_dir", os.path.join(work, f"ckpt-{ranks}")]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"compare_ranks: clspeech with {ranks} ranks failed ({out.returncode}):\n{out.stderr[-3000:]}")
    text = out.stderr + out.stdout
    m = re.search(r"training set .*: (\d+) samples \(([0-9.]+) s of audio\)", text)
    utt_s = float(m.group(2)) / int(m.group(1))
    speed = {}
    for e, v in re.findall(r"^Epoch (\d+) \|\s+Training \|.*\| ([0-9.]+) audio-s/s", text, re.M):
        speed[int(e)] = float(v)  # the last line of an epoch is its total
    rates = [speed[e] / utt_s for e in sorted(speed) if e > 0] or [speed[0] / utt_s]
    allreduce = [float(v) for v in re.findall(r"MPI_Allreduce ([0-9.]+) ms per step", text)[1:]]
    steps = re.findall(r"step time by rank: (.*?); MPI_Allreduce", text)
    return statistics.median(rates), (statistics.median(allreduce) if allreduce else 0.0), (steps[-1] if steps else "")


def _torch_worker(rank, ranks, port, args, result):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.set_num_threads(args.threads_per_rank)
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    torch.manual_seed(4568)
    H, B, T, L = args.n_hidden, args.batch, args.frames, args.labels
    model = torch.nn.parallel.DistributedDataParallel(DeepSpeech(H))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 * ranks, eps=1e-8)
    x = torch.randn(T, B, 494)
    y = torch.randint(0, 28, (B, L))
    in_len, tgt_len = torch.full((B,), T, dtype=torch.long), torch.full((B,), L, dtype=torch.long)

    def step():
        opt.zero_grad()
        logp = model(x).log_softmax(2)
        torch.nn.functional.ctc_loss(logp, y, in_len, tgt_len, blank=28, reduction="mean", zero_infinity=True).backward()
        opt.step()

    for _ in range(2):
        step()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    dist.barrier()
    seconds = time.perf_counter() - t0
    # As clspeech's figure: an allreduce of the parameter count right after each step, waiting included.
    flat = torch.zeros(sum(p.numel() for p in model.parameters()))
    allreduce_ms = 0.0
    for _ in range(args.steps):
        step()
        t1 = time.perf_counter()
        dist.all_reduce(flat)
        allreduce_ms += (time.perf_counter() - t1) * 1e3 / args.steps
    if rank == 0:
        result.put((ranks * B * args.steps / seconds, allreduce_ms if ranks > 1 else 0.0))
    dist.destroy_process_group()


def torch_run(args, ranks):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    result = ctx.SimpleQueue()
    mp.start_processes(_torch_worker, args=(ranks, port, args, result), nprocs=ranks, start_method="spawn")
    return result.get()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--n_hidden", type=int, default=128)
    ap.add_argument("--batch", type=int, default=4, help="utterances per rank per step")
    ap.add_argument("--steps", type=int, default=8, help="steps per epoch (clspeech) and timed steps (PyTorch)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads_per_rank", type=int, default=1)
    ap.add_argument("--frames", type=int, default=146, help="PyTorch's T: LDC93S1's frames")
    ap.add_argument("--labels", type=int, default=52, help="PyTorch's label length: LDC93S1's transcript")
    ap.add_argument("--build", default=os.path.join(peer.ROOT, "build"))
    args = ap.parse_args()
    ranks = [int(r) for r in args.ranks.split(",")]
    print(f"compare_ranks: H={args.n_hidden}, batch {args.batch} per rank, T={args.frames}, {args.threads_per_rank} "
          f"thread(s) per rank, {os.cpu_count()} CPUs; clspeech: mpirun (Open MPI), PoCL pthread per rank; "
          f"peer: {peer.torch_tag(torch)} DDP gloo", flush=True)
    rows = []
    work = tempfile.mkdtemp(prefix="compare-ranks-")
    try:
        for p in ranks:
            c_rate, c_ar, c_steps = clspeech_run(args, p, work)
            t_rate, t_ar = torch_run(args, p)
            rows.append((p, c_rate, c_ar, c_steps, t_rate, t_ar))
            print(f"  {p} rank(s) done: clspeech {c_rate:.2f} utt/s, PyTorch DDP {t_rate:.2f} utt/s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c1 = next((r[1] for r in rows if r[0] == 1), None)
    t1 = next((r[4] for r in rows if r[0] == 1), None)
    print(f"{'ranks':>5} | {'clspeech utt/s':>14} {'efficiency':>10} {'allreduce ms':>12} | "
          f"{'DDP utt/s':>9} {'efficiency':>10} {'allreduce ms':>12} | clspeech/DDP")
    for p, c_rate, c_ar, _, t_rate, t_ar in rows:
        ce = f"{c_rate / (p * c1):.0%}" if c1 else "-"
        te = f"{t_rate / (p * t1):.0%}" if t1 else "-"
        print(f"{p:>5} | {c_rate:>14.2f} {ce:>10} {c_ar:>12.2f} | {t_rate:>9.2f} {te:>10} {t_ar:>12.2f} | "
              f"{c_rate / t_rate:.2f}")
    for p, _, _, steps, _, _ in rows:
        if steps:
            print(f"  clspeech {p} rank(s), step time by rank (last epoch): {steps}")


if __name__ == "__main__":
    main()
