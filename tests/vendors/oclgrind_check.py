#!/usr/bin/env python3
"""Runs a command on Oclgrind with its kernel checks on and fails on any diagnostic about clspeech's own
kernels (label oclgrind). OCL_ICD_VENDORS is expected to name Oclgrind alone (CTest sets it).

Checks: memory access (out of bounds, invalid addresses; on by default), OCLGRIND_DATA_RACES=1 (races
between work-items and work-groups), OCLGRIND_CHECK_API=1 (OpenCL API misuse). OCLGRIND_UNINITIALIZED stays
0: Oclgrind 21.10 loses track of a buffer's initialised bytes after a partial write or copy into it
(clEnqueueWriteBuffer or clEnqueueCopyBuffer of part of it, any clEnqueueCopyBufferRect) and counts
clEnqueueFillBuffer as no write, so its uninitialised-value reports on clspeech's buffers are false alarms
(docs/devices.md); its checker also crashes on dense.cl's vector shuffles. That nothing is read before it
is written was checked instead by filling every new buffer with NaN (docs/lab-notes).

    oclgrind_check.py [--expect REGEX] -- COMMAND [ARGS...]

The command must exit 0 (and print a line matching --expect, when given). Diagnostics inside kernels that
CLBlast or clFFT generate are filtered by THIRD_PARTY below, each with its reason; any other diagnostic,
and any API error, fails. Prints each distinct diagnostic with its count, then "oclgrind_check: PASS ..."
or "oclgrind_check: FAIL: ...".
"""
import argparse
import collections
import os
import re
import subprocess
import sys

# (kernel name pattern, message pattern, reason). Empty while no such diagnostic appears with the checks
# above; one that appears is listed here with what it is, and reported upstream (docs/devices.md).
THIRD_PARTY = []

# Oclgrind's fatal errors that are expected: the engine's first attempt at a kernel holding an optional
# builtin it cannot run, before the plain form is built (engine/device/program.c).
EXPECTED_FATAL = [(re.compile(r"Undefined external function: llvm\.prefetch"),
                   "gemm.cl's prefetch hints: the fast form's attempt, built again without them")]

MESSAGE = re.compile(r"^(Invalid|Uninitiali[sz]ed|Controlflow|Read-write|Write-write|Work-group|Work-item|"
                     r"Atomic|Unaligned|Barrier|Data race|Possible|Only|Divergence|Argument|Unhandled|Kernel|"
                     r"Memory|Function|Undefined|Oclgrind)")


def diagnostics(text):
    """[(message, kernel or None, where)] from Oclgrind's report blocks, plus fatal errors as kernel 'FATAL'."""
    found, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("OCLGRIND FATAL ERROR"):
            what = lines[i + 1] if i + 1 < len(lines) else ""
            found.append((what, "FATAL", line))
        elif line.startswith("Oclgrind - OpenCL runtime error detected"):
            block = [x.strip() for x in lines[i + 1:i + 4] if x.startswith("\t")]
            what = "API: " + " ".join(" ".join(block).split())
            # the failed clCreateKernel of a fatal error just before it is that error's, not another
            if found and found[-1][1] == "FATAL" and "clCreateKernel" in what and not found[-1][2].endswith("+API"):
                found[-1] = (found[-1][0], "FATAL", found[-1][2] + "+API")
            else:
                found.append((what, None, ""))
        elif MESSAGE.match(line) and i + 1 < len(lines) and lines[i + 1].startswith("\tKernel:"):
            kernel = lines[i + 1].split(":", 1)[1].strip()
            where = ""
            for x in lines[i + 2:i + 8]:
                if x.startswith("\tAt line"):
                    where = x.strip()
                    break
            found.append((re.sub(r"0x[0-9a-f]+", "ADDR", line.strip()), kernel, where))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--expect")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    env = dict(os.environ, OCLGRIND_CHECK_API="1", OCLGRIND_DATA_RACES="1", OCLGRIND_UNINITIALIZED="0",
               OCLGRIND_MAX_ERRORS="100000")
    p = subprocess.run(a.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       timeout=a.timeout, errors="replace")
    out = p.stdout
    counts = collections.Counter(diagnostics(out))
    ours, filtered = 0, 0
    for (msg, kernel, where), n in sorted(counts.items(), key=lambda kv: -kv[1]):
        reason = None
        if kernel == "FATAL":
            reason = next((r for pat, r in EXPECTED_FATAL if pat.search(msg)), None)
        elif kernel is not None:
            reason = next((r for kp, mp, r in THIRD_PARTY if re.search(kp, kernel) and re.search(mp, msg)), None)
        tag = f"filtered ({reason})" if reason else "OURS"
        print(f"oclgrind_check: {n} x [{tag}] {kernel or 'API'}: {msg} {where}")
        if reason:
            filtered += n
        else:
            ours += n
    problems = []
    if p.returncode != 0:
        problems.append(f"the command exited {p.returncode}")
    if a.expect and not re.search(a.expect, out, re.M):
        problems.append(f"no line matching {a.expect!r}")
    if ours:
        problems.append(f"{ours} diagnostic(s) about clspeech's kernels or API calls")
    if problems:
        print(out[-6000:])
        print("oclgrind_check: FAIL: " + "; ".join(problems))
        return 1
    print(f"oclgrind_check: PASS: {' '.join(a.command[:2])}: no diagnostic about our kernels ({filtered} filtered)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
