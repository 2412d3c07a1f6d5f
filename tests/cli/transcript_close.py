#!/usr/bin/env python3
"""Runs a `clspeech transcribe` command and checks that the transcript of AUDIO (the line
"AUDIO: TEXT") is within MAX character edits (Levenshtein) of EXPECTED; prints the distance.

Usage: transcript_close.py AUDIO EXPECTED MAX -- COMMAND [ARGS...]
"""
import subprocess
import sys


def distance(a, b):
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[len(b)]


def main():
    audio, expected, most = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cmd = sys.argv[sys.argv.index("--") + 1:]
    out = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(out.stdout + out.stderr)
    if out.returncode != 0:
        print(f"transcript_close: FAIL: exit status {out.returncode}")
        return 1
    lines = [l for l in out.stdout.splitlines() if l.startswith(audio + ": ")]
    if len(lines) != 1:
        print(f"transcript_close: FAIL: {len(lines)} transcript lines for {audio}")
        return 1
    got = lines[0][len(audio) + 2:]
    d = distance(got, expected)
    print(f"transcript_close: {d} character edits from \"{expected}\" (at most {most})")
    return 0 if d <= most else 1


if __name__ == "__main__":
    sys.exit(main())
