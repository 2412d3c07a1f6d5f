#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz) longer than CTest does: SECONDS each (default 60), one
# after the other, from the checked-in seed corpora plus what earlier runs found (kept under
# build/fuzz-runs/NAME/corpus), and prints the executions per target and in all. A crash stops it,
# naming the input (build/fuzz-runs/NAME/artifacts). Needs a configured build (scripts/setup.sh);
# the fuzz sub-build is brought up to date first.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
build=${CLSPEECH_BUILD_DIR:-build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "fuzz.sh: no configured build in $build; run: bash scripts/setup.sh" >&2
  exit 2
fi
cmake --build "$build" --target clspeech_fuzz >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for bin in "$build"/fuzz/tests/fuzz/fuzz_*; do
    [ -f "$bin" ] && [ -x "$bin" ] && targets+=("${bin##*/fuzz_}")
  done
fi
total=0
for name in "${targets[@]}"; do
  line=$(tests/fuzz/run_fuzz.sh "$build/fuzz/tests/fuzz/fuzz_$name" "tests/fuzz/corpus/$name" \
           "$build/fuzz-runs/$name" "$seconds") || { echo "$line"; exit 1; }
  echo "$line"
  runs=$(sed -n 's/^fuzz_[a-z_]*: \([0-9]*\) executions.*/\1/p' <<<"$line")
  total=$((total + ${runs:-0}))
done
echo "fuzz.sh: ${#targets[@]} targets, $total executions in all ($seconds s each)"
