#!/usr/bin/env python3
"""The `layering` test: reads every #include line of engine/, include/clspeech/, frontends/, bench/
and examples/ and the CMake targets, and fails on any dependency the layers forbid (engine/README.md).

A file's layer is its folder (engine/<layer>/..., subfolders included: engine/features/augment/ is
part of features, its host or device part by FEATURES_HOST as for the layer's other files); a public
header include/clspeech/<x>.h belongs to the layer it declares (base.h -> base, clspeech.h -> device, ...). The rules are checked on the
transitive closure of the includes, so a header that pulls in another layer counts for every file
that includes it. Run with --selftest to check that the checker catches each kind of violation.

Usage: check_layering.py [SOURCE_DIR]      (default: the checkout this file is in)
       check_layering.py --selftest
"""
import os
import re
import shutil
import sys
import tempfile

LAYERS = ["base", "device", "ops", "features", "data", "model", "train", "decode", "eval", "stt", "bench"]

# What each engine layer may include (besides itself). "features-host" is the part of the
# features layer that runs on the host (audio, MFCC on the host, the feature cache); "opencl" is
# any OpenCL, CLBlast or clFFT header; "kernels" the host-and-device headers in kernels/.
ALLOWED = {
    "base": {"kernels"},
    "device": {"base", "kernels", "opencl"},
    "ops": {"base", "device", "kernels", "opencl"},
    "features-host": {"base", "kernels"},
    "features": {"base", "device", "ops", "features-host", "kernels", "opencl"},
    "data": {"base", "features-host"},
    "model": {"base", "device", "ops", "features", "features-host", "data", "kernels", "opencl"},
    "train": {"base", "device", "ops", "features", "features-host", "data", "model", "kernels", "opencl"},
    "decode": {"base"},
    # eval: evaluation on test sets, the trainer's passes decoded and scored (decode) into DeepSpeech's report.
    "eval": {"base", "device", "ops", "features", "features-host", "data", "model", "train", "decode", "kernels",
             "opencl"},
    # stt: the embeddable speech-to-text API over features, the forward-only model and the decoder.
    "stt": {"base", "device", "ops", "features", "features-host", "data", "model", "decode", "kernels", "opencl"},
    "bench": {"base", "device", "ops", "features", "features-host", "data", "model", "train", "decode", "eval", "stt",
              "kernels", "opencl"},
    # Programs outside the engine see the public API only (and their own folder's headers).
    "frontends": {"public", "frontends", "opencl"},
    "bench-programs": {"public", "opencl"},
    # examples/ are built against the installed library: the public headers only, not even OpenCL's.
    "examples": {"public"},
}

# include/clspeech/<header> -> the layer it belongs to. The headers of include/clspeech/internal/ are
# not installed (the clspeech command, the bench programs and the tests use them); no public header may
# reach one.
PUBLIC = {"base.h": "base", "clspeech.h": "device", "ops.h": "ops", "features.h": "features-host",
          "model.h": "model", "data.h": "data", "train.h": "train", "decode.h": "decode", "lm_build.h": "decode",
          "internal/device.h": "device", "internal/ops.h": "ops", "internal/train.h": "train",
          "internal/bench.h": "bench", "internal/train_options.h": "train", "internal/train_options.def": "train",
          "internal/import.h": "data",
          "evaluate.h": "eval", "lm.h": "decode", "scorer.h": "decode",
          "onnx.h": "model", "package.h": "model", "stt.h": "stt"}

# The features layer's host part, by path inside engine/features/ (its augment/ folder included); every
# other file of the layer, in any of its folders, is its device part.
FEATURES_HOST = {"audio.c", "mfcc_host.c", "feature_cache.c",
                 "augment/spec.c", "augment/draws.c", "augment/draws.h", "augment/levels.c", "augment/levels.h",
                 "augment/resample.c", "augment/resample.h", "augment/reverb.c", "augment/reverb.h",
                 "augment/overlay.c", "augment/overlay.h", "augment/codec.c", "augment/codec.h",
                 "augment/signal_domain.c", "augment/signal_domain.h", "augment/tempo.c", "augment/tempo.h",
                 "augment/host_pass.c", "augment/host_pass.h"}

# The training strategies sit above the crew of towers and below the loop: they may not include
# the loop's own files.
STRATEGIES = {"hybrid.c", "sync.c", "async.c", "horovod.c"}
LOOP_FILES = {"engine/train/trainer.c", "engine/train/trainer.h", "engine/train/loop.h"}

OPENCL = re.compile(r"^(CL/|clblast|clFFT)")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def layer_of(rel):
    parts = rel.split("/")
    if parts[0] == "engine" and len(parts) > 2 and parts[1] in LAYERS:
        if parts[1] == "features" and "/".join(parts[2:]) in FEATURES_HOST:
            return "features-host"
        return parts[1]
    if parts[0] == "include" and len(parts) >= 3 and parts[1] == "clspeech":
        return PUBLIC.get("/".join(parts[2:]), "public-unknown")
    if parts[0] == "frontends":
        return "frontends"
    if parts[0] == "bench":
        return "bench-programs"
    if parts[0] == "examples":
        return "examples"
    if parts[0] == "kernels":
        return "kernels"
    return None


def sources(root):
    out = []
    for top in ["engine", "include", "frontends", "bench", "examples", "kernels"]:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".c", ".h", ".def")):
                    out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(out)


def resolve(root, rel, kind, name):
    """The repository path an include names, "opencl:<name>" for OpenCL headers, or None (system)."""
    if kind == "<":
        if OPENCL.match(name):
            return "opencl:" + name
        if name.startswith("clspeech/"):
            return "include/" + name
        return None
    here = os.path.dirname(rel)
    for base in [here, "engine", "include", "kernels"]:
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return "missing:" + name


def check(root):
    files = sources(root)
    edges = {}
    problems = []
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        edges[rel] = []
        for m in INCLUDE.finditer(text):
            target = resolve(root, rel, m.group(1), m.group(2))
            if target is None:
                continue
            if target.startswith("missing:"):
                problems.append("%s: includes \"%s\", which is no file of the project" % (rel, m.group(2)))
                continue
            edges[rel].append(target)

    def category(target):
        if target.startswith("opencl:"):
            return "opencl"
        lay = layer_of(target)
        return lay if lay else "other"

    for rel in files:
        src = layer_of(rel)
        if src is None or src == "kernels":
            continue
        if src == "public-unknown":
            problems.append("%s: a public header the layering test does not know; add it to PUBLIC" % rel)
            continue
        allowed = set(ALLOWED[src]) | {src}
        # Walk the closure, remembering the chain that reached each file.
        seen = {rel: [rel]}
        stack = [rel]
        while stack:
            cur = stack.pop()
            for t in edges.get(cur, []):
                if t in seen:
                    continue
                seen[t] = seen[cur] + [t]
                if not t.startswith("opencl:"):
                    stack.append(t)
        for t, chain in sorted(seen.items()):
            if t == rel:
                continue
            cat = category(t)
            if src in ("frontends", "bench-programs", "examples"):
                # Outside the engine: the public headers (and what they include) only.
                direct = chain[1]
                ok = direct.startswith("include/clspeech/") or (direct.startswith("opencl:") and src != "examples") or (
                    src == "frontends" and direct.startswith("frontends/"))
                if len(chain) == 2 and not ok:
                    problems.append("%s includes %s: outside include/clspeech/" % (rel, t))
                continue
            if cat == "other":
                problems.append("%s reaches %s, which belongs to no engine layer (%s)" % (rel, t, " -> ".join(chain)))
            elif cat not in allowed:
                problems.append("%s (layer %s) depends on %s (layer %s): %s" % (rel, src, t, cat, " -> ".join(chain)))
        if rel.startswith("include/clspeech/") and not rel.startswith("include/clspeech/internal/"):
            for t, chain in sorted(seen.items()):
                if t.startswith("include/clspeech/internal/"):
                    problems.append("%s (public) reaches the internal %s: %s" % (rel, t, " -> ".join(chain)))
        base = os.path.basename(rel)
        if rel.startswith("engine/train/") and base in STRATEGIES:
            for t, chain in seen.items():
                if t in LOOP_FILES:
                    problems.append("%s (a strategy) depends on the loop's %s: %s" % (rel, t, " -> ".join(chain)))

    problems += check_cmake(root)
    return problems


def check_cmake(root):
    """The engine library holds the eight engine layers and not the benchmarks; the benchmarks are
    a library of their own; only the engine's public include folder is exported."""
    path = os.path.join(root, "CMakeLists.txt")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    problems = []
    m = re.search(r"set\(CLSPEECH_LAYERS([^)]*)\)", text)
    layers = m.group(1).split() if m else None
    if layers != LAYERS[:-1]:
        problems.append("CMakeLists.txt: CLSPEECH_LAYERS is %s, expected %s (engine/bench is not part of the "
                        "engine library)" % (layers, " ".join(LAYERS[:-1])))
    if not re.search(r"add_library\(clspeech_bench\b", text):
        problems.append("CMakeLists.txt: no clspeech_bench library target")
    for m in re.finditer(r"target_include_directories\((\w+)([^)]*)\)", text):
        target, args = m.group(1), m.group(2)
        public_part = args.split("PRIVATE")[0]
        if "PUBLIC" in public_part and "/engine" in public_part:
            problems.append("CMakeLists.txt: %s exports engine/ as a public include folder" % target)
        if target not in ("clspeech_engine", "clspeech_bench") and "/engine" in args:
            problems.append("CMakeLists.txt: %s (a program) sees engine/'s internal headers" % target)
    return problems


# ---- self-test: a small tree that obeys the rules, then one violation at a time ----

GOOD = {
    "CMakeLists.txt": "set(CLSPEECH_LAYERS base device ops features data model train decode eval stt)\n"
                      "add_library(clspeech_bench STATIC x.c)\n"
                      "target_include_directories(clspeech_engine PUBLIC ${S}/include PRIVATE ${S}/engine)\n",
    "include/clspeech/base.h": "#include <stddef.h>\n",
    "include/clspeech/clspeech.h": '#include "base.h"\n',
    "include/clspeech/data.h": '#include "base.h"\n',
    "include/clspeech/train.h": '#include "data.h"\n',
    "include/clspeech/internal/train.h": '#include "clspeech/train.h"\n',
    "engine/base/file_util.c": '#include "clspeech/base.h"\n',
    "engine/device/device.c": '#include <CL/cl.h>\n#include "clspeech/clspeech.h"\n',
    "engine/device/engine.h": '#include <CL/cl.h>\n',
    "engine/features/audio.c": '#include "clspeech/base.h"\n',
    "engine/data/dataset.c": '#include "clspeech/data.h"\n#include "features/augment/tempo.h"\n',
    "engine/features/augment/tempo.c": '#include "features/augment/tempo.h"\n#include "augment_draw.h"\n',
    "engine/features/augment/tempo.h": '#include "clspeech/base.h"\n',
    "engine/features/augment/power.h": '#include "device/engine.h"\n#include "features/augment/tempo.h"\n',
    "kernels/augment_draw.h": "",
    "engine/train/crew.h": '#include "device/engine.h"\n',
    "engine/train/trainer.c": '#include "train/crew.h"\n#include "clspeech/train.h"\n',
    "engine/train/hybrid.c": '#include "train/crew.h"\n',
    "engine/bench/x.h": '#include "train/crew.h"\n',
    "frontends/main.c": '#include "clspeech/train.h"\n#include "cli.h"\n',
    "frontends/cli.h": '#include "clspeech/clspeech.h"\n',
    "bench/bench_x.c": '#include "clspeech/train.h"\n',
    "engine/decode/wer.c": '#include "clspeech/base.h"\n',
    "engine/eval/evaluate.c": '#include "clspeech/train.h"\n#include "train/crew.h"\n#include "decode/wer.h"\n',
    "engine/decode/wer.h": '#include "clspeech/base.h"\n',
    "examples/x.c": '#include <clspeech/train.h>\n#include <stdio.h>\n',
}

# (what, file, text added to it, what the first problem must say)
VIOLATIONS = [
    ("base reaches OpenCL", "engine/base/file_util.c", '#include "device/engine.h"\n', "(layer base) depends on"),
    ("data reaches the device layer", "engine/data/dataset.c", '#include "clspeech/clspeech.h"\n',
     "(layer data) depends on include/clspeech/clspeech.h"),
    ("host features reach OpenCL", "engine/features/audio.c", "#include <CL/cl.h>\n", "(layer features-host) depends"),
    ("a host augment file reaches the device", "engine/features/augment/tempo.c", '#include "features/augment/power.h"\n',
     "engine/features/augment/tempo.c (layer features-host) depends on engine/device/engine.h"),
    ("data reaches the device augment part", "engine/data/dataset.c", '#include "features/augment/power.h"\n',
     "(layer data) depends on engine/features/augment/power.h (layer features)"),
    ("a strategy includes the loop", "engine/train/hybrid.c", '#include "train/trainer.c"\n', "(a strategy) depends"),
    ("device includes train", "engine/device/device.c", '#include "train/crew.h"\n', "(layer device) depends"),
    ("the engine includes a frontend", "engine/train/trainer.c", '#include "../../frontends/cli.h"\n',
     "(layer train) depends on frontends/cli.h"),
    ("the engine includes the benchmarks", "engine/train/trainer.c", '#include "bench/x.h"\n',
     "(layer train) depends on engine/bench/x.h"),
    ("a frontend includes an engine header", "frontends/main.c", '#include "train/crew.h"\n',
     "outside include/clspeech/"),
    ("a bench program includes an engine header", "bench/bench_x.c", '#include "device/engine.h"\n',
     "outside include/clspeech/"),
    ("decode includes train", "engine/decode/wer.c", '#include "train/crew.h"\n',
     "(layer decode) depends on engine/train/crew.h (layer train)"),
    ("train includes decode", "engine/train/trainer.c", '#include "decode/wer.h"\n',
     "(layer train) depends on engine/decode/wer.h (layer decode)"),
    ("train includes eval", "engine/train/crew.h", '#include "eval/evaluate.c"\n',
     "(layer train) depends on engine/eval/evaluate.c (layer eval)"),
    ("an example includes an engine header", "examples/x.c", '#include "train/crew.h"\n',
     "outside include/clspeech/"),
    ("an example includes OpenCL", "examples/x.c", '#include <CL/cl.h>\n', "outside include/clspeech/"),
    ("a public header includes an internal one", "include/clspeech/train.h", '#include "internal/train.h"\n',
     "(public) reaches the internal include/clspeech/internal/train.h"),
    ("an include of no file", "engine/train/trainer.c", '#include "train/nothing.h"\n', "no file of the project"),
    ("bench in the engine library", "CMakeLists.txt",
     "set(CLSPEECH_LAYERS base device ops features data model train decode eval stt bench)\n", "CLSPEECH_LAYERS"),
    ("engine/ exported", "CMakeLists.txt", "target_include_directories(clspeech_engine PUBLIC ${S}/engine)\n",
     "exports engine/"),
]


def write_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)


def selftest():
    failed = 0
    tmp = tempfile.mkdtemp(prefix="layering-")
    try:
        good = os.path.join(tmp, "good")
        write_tree(good, GOOD)
        problems = check(good)
        if problems:
            print("selftest: the clean tree was refused:\n  " + "\n  ".join(problems))
            failed += 1
        for i, (what, rel, extra, expect) in enumerate(VIOLATIONS):
            tree = dict(GOOD)
            tree[rel] = tree.get(rel, "") + extra if rel != "CMakeLists.txt" else extra + tree[rel].split("\n", 1)[1]
            if rel == "CMakeLists.txt" and "PUBLIC ${S}/engine" in extra:
                tree[rel] = GOOD[rel] + extra
            root = os.path.join(tmp, "bad%d" % i)
            write_tree(root, tree)
            problems = check(root)
            hit = [p for p in problems if expect in p]
            print("selftest: %-45s %s" % (what, "caught: " + hit[0] if hit else "NOT CAUGHT (%s)" % problems))
            failed += not hit
    finally:
        shutil.rmtree(tmp)
    print("selftest: %d of %d cases wrong" % (failed, len(VIOLATIONS) + 1))
    return 1 if failed else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--selftest":
        return selftest()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    root = os.path.abspath(root)
    problems = check(root)
    problems += ["FEATURES_HOST names engine/features/%s, which is no file (a renamed host file would count as the "
                 "device part)" % f for f in sorted(FEATURES_HOST)
                 if not os.path.isfile(os.path.join(root, "engine", "features", f))]
    n = len(sources(root))
    for p in problems:
        print("layering: " + p)
    print("layering: %d files, %d forbidden dependencies" % (n, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
