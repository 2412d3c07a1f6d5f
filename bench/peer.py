"""The peer of the comparison scripts (compare-pytorch, compare_train.py, compare_ops.py,
compare_gemm.py, compare_features.py): what a user would install, PyTorch (or TensorFlow) from PyPI, in a virtual
environment the scripts make once and reuse, never Debian's python3-torch (1.13, single-threaded).

    venv: $CLSPEECH_BENCH_VENV, else build/bench-venv in this checkout
    CLSPEECH_BENCH_VENV=none   use the interpreter that runs the script as it is (a machine without
                               network whose Python already has the peer, e.g. scripts/gpu_check.sh)

enter() makes the venv when it is missing (python3 -m venv; Debian: apt-get install -y python3-venv),
pip-installs the packages it lacks (PyTorch's wheel pulls several GB of CUDA libraries: minutes, once),
then runs the script again with the venv's Python. CI never runs the comparisons and never needs it.

Also here: the peer's description printed beside every ratio (version, threads, MKL/oneDNN), the
physical core count the peer is pinned to, clspeech's measured limits (FMA peak, copy bandwidth) from
`clspeech bench`, the GEMM flops of one training step, for GFLOP/s and the fraction of the peak, and
--rounds (take_turns, rounds_note, over_rounds): the two sides measured in turns, medians over the rounds;
and what the scripts share around that: the model-shape arguments (step_arguments), the table's headline,
running a bench program for its JSON lines (json_lines), a median timer for the peer's side (median_ms)."""
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
_REEXEC = "CLSPEECH_BENCH_IN_VENV"


def venv_path():
    v = os.environ.get("CLSPEECH_BENCH_VENV", "")
    return v if v else os.path.join(ROOT, "build", "bench-venv")


def _say(msg):
    print(f"peer: {msg}", file=sys.stderr, flush=True)


def _has_modules(python, modules):
    code = "import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)"
    return subprocess.run([python, "-c", code] + list(modules)).returncode == 0


def enter(packages, modules):
    """Runs the calling script inside the peer's venv (made and filled on first use): returns when this
    interpreter already is the venv's (or CLSPEECH_BENCH_VENV=none), else replaces the process. -h or
    --help prints the script's usage (its docstring) without making or entering the venv."""
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print((sys.modules["__main__"].__doc__ or "").strip())
        sys.exit(0)
    venv = venv_path()
    if venv == "none":
        return
    venv = os.path.abspath(venv)
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if os.environ.get(_REEXEC):
        sys.exit(f"peer: {sys.executable} is not the venv's Python ({venv}); giving up")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        try:
            import ensurepip  # noqa: F401  (Debian splits it out of python3 into python3-venv)
            import venv as _venv  # noqa: F401
        except ImportError:
            sys.exit("peer: Python's venv module is missing: apt-get install -y python3-venv")
        _say(f"making the peer's virtual environment {venv} (once; reused after)")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    if not _has_modules(python, modules):
        cuda = "; the torch wheel pulls several GB of CUDA libraries: minutes" if "torch" in packages else ""
        _say(f"installing {' '.join(packages)} from PyPI into {venv} (once{cuda})")
        subprocess.run([python, "-m", "pip", "install", "--progress-bar", "off"] + list(packages), check=True)
        if not _has_modules(python, modules):
            sys.exit(f"peer: {' '.join(modules)} still missing from {venv} after pip install")
    env = dict(os.environ, **{_REEXEC: "1"})
    os.execve(python, [python, os.path.abspath(sys.argv[0])] + sys.argv[1:], env)


def physical_cores():
    """Physical cores of this machine (hyper-threads counted once), from sysfs; os.cpu_count() otherwise."""
    cores = set()
    for topo in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology"):
        try:
            with open(os.path.join(topo, "physical_package_id")) as f:
                pkg = f.read().strip()
            with open(os.path.join(topo, "core_id")) as f:
                core = f.read().strip()
            cores.add((pkg, core))
        except OSError:
            pass
    return len(cores) or os.cpu_count() or 1


def torch_peer(device="cpu", threads=None):
    """Imports PyTorch, pins it to all physical cores (or `threads`), and returns (torch, description):
    the description names the version, where it comes from, threads, MKL and oneDNN (or the GPU)."""
    import torch
    n = threads or physical_cores()
    torch.set_num_threads(n)
    origin = "PyPI venv" if os.path.realpath(sys.prefix) == os.path.realpath(os.path.abspath(venv_path())) else sys.prefix
    if device == "cuda":
        desc = f"PyTorch {torch.__version__} ({origin}) on {torch.cuda.get_device_name()}"
    else:
        desc = (f"PyTorch {torch.__version__} ({origin}), CPU, {torch.get_num_threads()} threads of {physical_cores()} "
                f"physical cores, MKL {'yes' if torch.backends.mkl.is_available() else 'no'}, "
                f"oneDNN {'yes' if torch.backends.mkldnn.is_available() else 'no'}")
    if int(torch.__version__.split(".")[0]) < 2:
        _say(f"WARNING: PyTorch {torch.__version__} is not what a user installs today (Debian's 1.13 runs "
             "single-threaded): ratios against it flatter clspeech")
    return torch, desc


def torch_tag(torch, device="cpu"):
    """The peer in a few words, for a column beside each ratio: "torch 2.15.0 2thr MKL+DNN"."""
    v = torch.__version__.split("+")[0]
    if device == "cuda":
        return f"torch {v} cuda"
    libs = "+".join(n for n, ok in (("MKL", torch.backends.mkl.is_available()),
                                    ("DNN", torch.backends.mkldnn.is_available())) if ok) or "no MKL"
    return f"torch {v} {torch.get_num_threads()}thr {libs}"


def clspeech_limits(build, devices=None):
    """{"P:D name": {"fma_gflops", "copy_gbs"}} measured by `clspeech bench` at a tiny model (the peaks do not
    depend on it; a few seconds). {} when it fails: the fractions of the peak are then left out."""
    cmd = [os.path.join(build, "clspeech"), "bench", "--n_hidden", "16", "--batch", "2", "--time", "8", "--runs", "1",
           "--json", "-"]
    if devices:
        cmd += ["--devices", devices]
    _say("measuring the devices' FMA peak and copy bandwidth: " + " ".join(cmd))
    try:
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        d = json.loads(out)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        _say(f"no peak figures ({e})")
        return {}
    return {f"{x['id']} {x['name']}": x["peak"] for x in d.get("devices", []) if x.get("peak")}


def step_gemm_flops(H, B, T, C=29, n_in=494):
    """GEMM flops of one training step of the DeepSpeech model (clspeech bench's SGEMM shapes: forward,
    weight and input gradients, the recurrent products over T-1 steps), 2mnk each."""
    R = T * B
    shapes = [(R, H, n_in, 1), (R, H, H, 3), (R, 4 * H, H, 1), (B, 4 * H, H, T - 1), (R, C, H, 1),  # forward
              (H, C, R, 1), (R, H, C, 1), (H, H, R, 3), (R, H, H, 3), (n_in, H, R, 1),          # dense backward
              (B, H, 4 * H, T - 1), (2 * H, 4 * H, R, 1), (R, H, 4 * H, 1)]  # LSTM backward (W_x, W_h: one)
    return sum(2.0 * m * n * k * calls for m, n, k, calls in shapes)


def step_arguments(ap, n_hidden="512,2048"):
    """The arguments of every comparison at the model's shapes: --build (clspeech's build folder), --n_hidden,
    --batch, --time (utterances and frames: DeepSpeech's B = 16, T = 150)."""
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n_hidden", default=n_hidden)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--time", type=int, default=150)


def headline(a, median_of, ratio, desc, rounds=1, extra=""):
    """The first lines of a comparison's table: the shapes, what each figure is a median of, the ratio's
    direction, and the peer."""
    print(f"B={a.batch} T={a.time}{extra}, median of {median_of}" + rounds_note(rounds) + f"; ratio = {ratio}")
    print(f"peer: {desc}")


def json_lines(cmd):
    """Runs one of clspeech's bench programs (named on stderr first) and returns the JSON objects it printed,
    one per line beginning with '{'."""
    print("clspeech: " + " ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def median_ms(fn, reps):
    """The median of `reps` timed calls of fn() in milliseconds, after one untimed call."""
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def percent(value, limit):
    """"12.3%" of a limit, or "-" without one."""
    return f"{100.0 * value / limit:.1f}%" if value and limit else "-"


def take_turns(rounds, measure_round):
    """Runs measure_round() `rounds` times (each a dict: key -> (clspeech ms, PyTorch ms, anything else));
    the list of their results."""
    out = []
    for r in range(rounds):
        if rounds > 1:
            print(f"round {r + 1} of {rounds}", file=sys.stderr)
        out.append(measure_round())
    return out


def rounds_note(rounds):
    """The headline's words for --rounds (empty for one round)."""
    return (f" per side, {rounds} rounds taking turns (figures: the median over the rounds; ratio: the median of "
            "the rounds' ratios)" if rounds > 1 else "")


def over_rounds(results, key):
    """Over the rounds' results for key: (median clspeech ms, median PyTorch ms, median PyTorch/clspeech ratio,
    the rounds' ratios as text, empty for one round)."""
    ours = [rd[key][0] for rd in results]
    theirs = [rd[key][1] for rd in results]
    ratios = [t / o for o, t in zip(ours, theirs)]
    text = "  " + " ".join(f"{x:.2f}" for x in ratios) if len(results) > 1 else ""
    return statistics.median(ours), statistics.median(theirs), statistics.median(ratios), text

