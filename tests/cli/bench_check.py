#!/usr/bin/env python3
"""Checks and edits for the `clspeech bench` CLI tests (tests/CMakeLists.txt, label bench).

  bench_check.py json FILE [--tuned]   the JSON parses and has docs/bench.md's fields, positive figures, and
                                       a step profile whose rows sum to its wall time
  bench_check.py svg FILE              the SVG is well-formed XML with a bar per device and figure
  bench_check.py tuning DIR MODE       rewrites the one GEMM tuning file under DIR/gemm-tuning/:
      params    valid, with known Xgemm and XgemmDirect parameters and a correct checksum
      refused   a correct checksum but a parameter CLBlast does not know
      zero      a correct checksum but Xgemm's MDIMC=0 (CLBlast would divide by zero) and an
                XgemmDirect WGD=24 that is no multiple of MDIMCD*VWMD (it would compute garbage)
      corrupt   one byte changed (the checksum no longer matches)
Prints "bench_check: ok ..." on success; exits 1 with the reasons otherwise."""
import glob
import hashlib
import json
import sys
import xml.etree.ElementTree as ET

problems = []


def need(cond, what):
    if not cond:
        problems.append(what)
    return cond


def positive(obj, key, where):
    v = obj.get(key) if isinstance(obj, dict) else None
    need(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0, f"{where}.{key} = {v!r}, expected a positive number")


GROUPS = ("gemm", "lstm", "dense", "ctc", "adam", "mfcc", "copy", "other", "wait")


def check_profile_row(p, r, rw):
    need(isinstance(r.get("name"), str) and r["name"], f"{rw}.name")
    need(r.get("group") in GROUPS, f"{rw}.group = {r.get('group')!r}")
    need(isinstance(r.get("calls"), int) and r["calls"] >= 0, f"{rw}.calls = {r.get('calls')!r}")
    need(isinstance(r.get("ms"), (int, float)) and (r["ms"] >= 0 or r.get("group") == "wait"), f"{rw}.ms = {r.get('ms')!r}")
    need(isinstance(r.get("percent_of_step"), (int, float)), f"{rw}.percent_of_step")
    need(isinstance(r.get("estimated"), bool), f"{rw}.estimated")
    if r.get("group") == "gemm":
        positive(r, "calls", rw)
        positive(r, "gflops", rw)
        positive(r, "percent_of_peak", rw)
    else:
        need(r.get("gflops") is None and r.get("percent_of_peak") is None, f"{rw}: GFLOP/s on a row that is no GEMM")


def check_profile(p, where):
    """One training step by op: rows in docs/bench.md's groups, the wait row last, the rows summing to wall_ms;
    GEMM rows from events, or GEMM estimates beside the rows."""
    if not need(isinstance(p, dict), f"{where} is not an object"):
        return
    for k in ("wall_ms", "device_ms", "commands"):
        positive(p, k, where)
    events = p.get("gemm_events")
    need(isinstance(events, bool), f"{where}.gemm_events is not a bool")
    rows, estimates = p.get("rows"), p.get("gemm_estimates")
    if not need(isinstance(rows, list) and len(rows) >= 2 and isinstance(estimates, list),
                f"{where}.rows or .gemm_estimates is not a list"):
        return
    for r in rows:
        check_profile_row(p, r, f"{where}.rows[{r.get('name')}]")
        need(r.get("estimated") is False, f"{where}.rows[{r.get('name')}]: estimated")
    for r in estimates:
        check_profile_row(p, r, f"{where}.gemm_estimates[{r.get('name')}]")
        need(r.get("group") == "gemm" and r.get("estimated") is True, f"{where}.gemm_estimates[{r.get('name')}]")
    groups = [r.get("group") for r in rows]
    for g in ("lstm", "dense", "ctc", "adam", "mfcc"):
        need(g in groups, f"{where}: no {g} row")
    need(("gemm" in groups) == events, f"{where}: GEMM rows {'missing' if events else 'present'} with gemm_events {events}")
    need(len(estimates) == (0 if events else 14), f"{where}: {len(estimates)} GEMM estimates with gemm_events {events}")
    need(groups[-1] == "wait" and groups.count("wait") == 1, f"{where}: the wait row is not the one last row")
    order = [GROUPS.index(g) for g in groups if g in GROUPS]
    need(order == sorted(order), f"{where}: rows not in group order")
    total = sum(r.get("ms", 0) for r in rows if isinstance(r.get("ms"), (int, float)))
    wall = p.get("wall_ms", 0)
    need(isinstance(wall, (int, float)) and abs(total - wall) <= 1e-3 * max(wall, 1e-3),
         f"{where}: rows sum to {total} ms, wall_ms {wall}")


def check_full_speed(g, runs, peak, gw):
    """The runs timed beside the FMA peak (every device with a peak): how many were at full speed, their median
    (no faster than the best run) and its % of the peak, or nulls when there was none."""
    n = g.get("full_speed_runs")
    if not need(isinstance(n, int) and not isinstance(n, bool) and isinstance(runs, int) and 0 <= n <= runs,
                f"{gw}.full_speed_runs = {n!r}, expected 0..{runs}"):
        return
    ms, pct = g.get("full_speed_ms"), g.get("full_speed_percent_of_peak")
    if n == 0:
        need(ms is None and pct is None, f"{gw}: no run at full speed but full_speed_ms {ms!r}, percent {pct!r}")
        return
    positive(g, "full_speed_ms", gw)
    positive(g, "full_speed_percent_of_peak", gw)
    if isinstance(ms, (int, float)) and isinstance(pct, (int, float)) and isinstance(g.get("best_ms"), (int, float)):
        need(ms >= g["best_ms"], f"{gw}: full-speed median {ms} ms faster than the best run {g['best_ms']} ms")
        fma = peak.get("fma_gflops") if isinstance(peak, dict) else None
        if isinstance(fma, (int, float)) and fma > 0:
            want = 100 * 2 * g["m"] * g["n"] * g["k"] / (ms * 1e6) / fma
            need(abs(pct - want) <= 1e-4 * want,  # the JSON holds 6 significant digits of each figure
                 f"{gw}: full_speed_percent_of_peak {pct}, 2mnk/ms/peak gives {want}")


def check_json(path, tuned):
    with open(path) as f:
        d = json.load(f)
    for k in ("clspeech_version", "schema", "config", "devices", "towers"):
        need(k in d, f"top level lacks {k}")
    need(d.get("schema") == "clspeech-bench-1", f"schema {d.get('schema')!r}")
    cfg = d.get("config", {})
    for k in ("batch", "time", "runs", "frame_ms"):
        positive(cfg, k, "config")
    need(isinstance(cfg.get("n_hidden"), list) and cfg["n_hidden"], "config.n_hidden is not a non-empty list")
    need(cfg.get("tune") is tuned, f"config.tune = {cfg.get('tune')!r}")
    devices = d.get("devices", [])
    need(len(devices) >= 1, "no devices")
    for i, dev in enumerate(devices):
        w = f"devices[{i}]"
        for k in ("id", "name", "kind", "vendor", "platform_name", "driver_version"):
            need(isinstance(dev.get(k), str) and dev[k], f"{w}.{k} is not a non-empty string")
        need(dev.get("error") is None, f"{w}.error = {dev.get('error')!r}")
        need(dev.get("gemm_tuning", {}).get("state") in ("none", "loaded", "not_loaded", "ignored"), f"{w}.gemm_tuning.state")
        for k in ("fma_gflops", "copy_gbs", "host_to_device_gbs", "device_to_host_gbs", "transfer_bytes"):
            positive(dev.get("peak"), k, f"{w}.peak")
        for k in ("ms", "audio_seconds", "audio_seconds_per_second"):
            positive(dev.get("mfcc"), k, f"{w}.mfcc")
        models = dev.get("models", [])
        need(len(models) == len(cfg.get("n_hidden", [])), f"{w}: {len(models)} models for n_hidden {cfg.get('n_hidden')}")
        for j, m in enumerate(models):
            mw = f"{w}.models[{j}]"
            positive(m, "n_hidden", mw)
            need(len(m.get("gemm", [])) >= 10, f"{mw}: {len(m.get('gemm', []))} GEMM shapes")
            for g in m.get("gemm", []):
                gw = f"{mw}.gemm[{g.get('name')}]"
                for k in ("m", "n", "k", "calls_per_step", "calls_per_run", "ms", "gflops", "percent_of_peak",
                          "best_ms", "best_percent_of_peak"):
                    positive(g, k, gw)
                need(isinstance(g["calls_per_run"], int) and g["calls_per_run"] <= 64, f"{gw}: calls_per_run")
                need(g["best_ms"] <= g["ms"] and g["best_percent_of_peak"] >= g["percent_of_peak"],
                     f"{gw}: best run {g['best_ms']} ms slower than the median {g['ms']} ms")
                need(isinstance(g.get("trans_a"), bool) and isinstance(g.get("trans_b"), bool), f"{gw} transposes")
                check_full_speed(g, cfg.get("runs"), dev.get("peak"), gw)
            for k in ("ms", "gflops", "percent_of_peak"):
                positive(m.get("gemm_step"), k, f"{mw}.gemm_step")
            positive(m, "peak_beside_best_gflops", mw)
            for k in ("forward_ms_per_step", "backward_ms_per_step", "forward_gflops", "backward_gflops"):
                positive(m.get("lstm"), k, f"{mw}.lstm")
            for k in ("ms", "labels", "frames_per_second"):
                positive(m.get("ctc"), k, f"{mw}.ctc")
            for k in ("ms", "parameters", "gbs"):
                positive(m.get("adam"), k, f"{mw}.adam")
            for k in ("ms", "frames", "frames_per_second", "audio_seconds_per_second", "parameters"):
                positive(m.get("train_step"), k, f"{mw}.train_step")
            need("train_step_after_tuning" in m, f"{mw} lacks train_step_after_tuning")
            check_profile(m.get("step_profile"), f"{mw}.step_profile")
        t = dev.get("tuning")
        if not tuned:
            need(t is None, f"{w}.tuning is {t!r} without --tune")
            continue
        if not need(isinstance(t, dict), f"{w}.tuning is not an object"):
            continue
        need(t.get("stored") is True and isinstance(t.get("file"), str), f"{w}.tuning was not stored")
        need(isinstance(t.get("kept_defaults"), bool), f"{w}.tuning.kept_defaults")
        need(isinstance(t.get("winners"), dict), f"{w}.tuning.winners")
        need(t.get("kept_defaults") == (t.get("winners") == {}), f"{w}.tuning: kept_defaults disagrees with winners")
        for k in ("candidate_pairs", "pair_min_indirect_size", "before_step_ms", "after_step_ms"):
            positive(t, k, f"{w}.tuning")
        cands = t.get("candidates", [])
        need(len(cands) == t.get("candidate_pairs"), f"{w}.tuning: {len(cands)} candidates for {t.get('candidate_pairs')} pairs")
        states = ("skipped", "timed", "dropped", "rejected", "misfit")
        for c in cands:
            for kern in ("Xgemm", "XgemmDirect"):
                k = c.get(kern, {})
                need(k.get("state") in states, f"{w}.tuning candidate {kern} state {k.get('state')!r}")
                need(isinstance(k.get("parameters"), dict) and len(k["parameters"]) >= 10, f"{w}.tuning candidate {kern} parameters")
                if k.get("state") in ("timed", "dropped"):
                    positive(k, "step_ms", f"{w}.tuning candidate {kern}")
        need(t.get("kept_defaults") or any(c.get("Xgemm", {}).get("best") or c.get("XgemmDirect", {}).get("best") for c in cands),
             f"{w}.tuning: winners but no candidate marked best")
        need(len(t.get("shapes", [])) >= 10, f"{w}.tuning.shapes")
        for s in t.get("shapes", []):
            for k in ("m", "n", "k", "before_gflops", "after_gflops"):
                positive(s, k, f"{w}.tuning.shapes[{s.get('name')}]")
    if len(devices) > 1:
        need(isinstance(d.get("towers"), dict), "towers is not an object (the multi-tower step failed)")
    else:
        need(d.get("towers", 0) is None, "towers should be null with one device")
    if isinstance(d.get("towers"), dict):
        positive(d["towers"], "ms", "towers")
        positive(d["towers"], "frames", "towers")
    return f"{len(devices)} device(s)"


def check_svg(path):
    root = ET.parse(path).getroot()
    need(root.tag == "{http://www.w3.org/2000/svg}svg", f"root element {root.tag}")
    rects = root.findall(".//{http://www.w3.org/2000/svg}rect")
    bars = [r for r in rects if r.find("{http://www.w3.org/2000/svg}title") is not None]
    need(len(bars) >= 3, f"{len(bars)} bars (peak, SGEMM, training step expected)")
    for r in bars:
        need(float(r.get("height", "0")) > 0, "a bar of zero height")
    return f"{len(bars)} bars"


def rewrite_tuning(directory, mode):
    files = glob.glob(f"{directory}/gemm-tuning/*.txt")
    if not need(len(files) == 1, f"{len(files)} tuning files under {directory}/gemm-tuning"):
        return ""
    path = files[0]
    text = open(path, encoding="utf-8").read()
    body = "".join(l for l in text.splitlines(True) if not l.startswith(("sha256 ", "kernel ")))
    if mode == "corrupt":
        i = text.index("driver ") + len("driver ")
        text = text[:i] + ("X" if text[i] != "X" else "Y") + text[i + 1:]
    else:
        if mode == "params":
            body += ("kernel Xgemm GEMMK=0 KREG=1 KWG=32 KWI=2 MDIMA=8 MDIMC=8 MWG=64 NDIMB=8 NDIMC=8 NWG=64 "
                     "SA=0 SB=0 STRM=1 STRN=1 VWM=8 VWN=8\n"
                     "kernel XgemmDirect KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=1 VWMD=4 VWND=4 WGD=32\n")
        elif mode == "zero":
            body += ("kernel Xgemm GEMMK=0 KREG=1 KWG=32 KWI=2 MDIMA=8 MDIMC=0 MWG=64 NDIMB=8 NDIMC=8 NWG=64 "
                     "SA=0 SB=0 STRM=1 STRN=1 VWM=8 VWN=8\n"
                     "kernel XgemmDirect KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=1 VWMD=4 VWND=4 WGD=24\n")
        else:
            body += "kernel Xgemm NOT_A_PARAMETER=3\n"
        text = body + "sha256 " + hashlib.sha256(body.encode("utf-8")).hexdigest() + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return f"{path} rewritten ({mode})"


def main(argv):
    if len(argv) >= 3 and argv[1] == "json":
        what = check_json(argv[2], "--tuned" in argv[3:])
    elif len(argv) == 3 and argv[1] == "svg":
        what = check_svg(argv[2])
    elif len(argv) == 4 and argv[1] == "tuning" and argv[3] in ("params", "refused", "corrupt", "zero"):
        what = rewrite_tuning(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    if problems:
        for p in problems:
            print(f"bench_check: FAIL: {p}")
        return 1
    print(f"bench_check: ok {argv[1]} ({what})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
