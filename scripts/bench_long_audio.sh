#!/bin/bash
# Time and peak memory of `clspeech transcribe` on 1, 5, 15, 30 and 60 minutes of speech (issue 15):
# the long files are made with SoX by looping real speech from the repository's data/, each run under
# /usr/bin/time -v. Prints a table and the longest run's time and peak RSS against the 1-minute run's.
# Usage: [MINUTES="1 5 15"] scripts/bench_long_audio.sh CHECKPOINT_DIR [CLSPEECH] [extra transcribe flags...]
#   e.g. scripts/bench_long_audio.sh build/tests/short-run build/clspeech --devices 0:0 --beam_width 1
# MINUTES (default "1 5 15 30 60") must start with 1.
set -euo pipefail
ckpt=${1:?usage: $0 CHECKPOINT_DIR [CLSPEECH] [flags...]}
bin=${2:-build/clspeech}
shift $(( $# >= 2 ? 2 : 1 ))
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d /tmp/clspeech-long-audio-XXXXXX)
trap 'rm -rf "$work"' EXIT
sox "$data/deepspeech-smoke/LDC93S1.wav" "$data/formats/digits-1.wav" "$data/formats/digits-2.wav" "$work/base.wav"
sox "$work/base.wav" "$work/m1.wav" repeat 10 trim 0 60
minutes=(${MINUTES:-1 5 15 30 60})
last=${minutes[-1]}
[ "${minutes[0]}" = 1 ] || { echo "MINUTES must start with 1" >&2; exit 2; }
for m in "${minutes[@]:1}"; do sox "$work/m1.wav" "$work/m$m.wav" repeat $((m - 1)); done
printf '%-8s %10s %14s\n' minutes 'wall s' 'peak RSS MB'
declare -A wall rss
for m in "${minutes[@]}"; do
  /usr/bin/time -v "$bin" transcribe --checkpoint_dir "$ckpt" --audio "$work/m$m.wav" "$@" > "$work/out" 2> "$work/time"
  wall[$m]=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/time")
  rss[$m]=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$work/time")
  printf '%-8s %10s %14s\n' "$m" "${wall[$m]}" "${rss[$m]}"
done
awk -v m="$last" -v t1="${wall[1]}" -v tn="${wall[$last]}" -v r1="${rss[1]}" -v rn="${rss[$last]}" \
  'BEGIN { printf "%d min vs 1 min: time x%.1f (limit %.1f), peak RSS x%.2f (limit 1.2)\n", m, tn / t1, m * 70 / 60, rn / r1 }'
