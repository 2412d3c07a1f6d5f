#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS from its checked-in seed corpus (read only; new inputs go to
# WORK/corpus, crashes to WORK/artifacts), then prints "fuzz_NAME: N executions in S s" (CTest and
# scripts/fuzz.sh read it). A crash, leak, timeout or sanitizer report fails, printing the report.
#   run_fuzz.sh BINARY SEED_CORPUS WORK SECONDS
set -u
bin=$1 seeds=$2 work=$3 seconds=$4
name=$(basename "$bin")
if [ ! -x "$bin" ]; then
  echo "$name: not built ($bin); the fuzz sub-build needs clang with libFuzzer (apt-get install clang libclang-rt-14-dev)"
  exit 1
fi
mkdir -p "$work/corpus" "$work/artifacts"
# Leaks inside the libraries we call (libsndfile's on a damaged Ogg stream) are theirs, not finds:
# the project's suppressions, which name only those libraries.
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")/../sanitizers" && pwd)/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
log=$work/log.txt
start=$(date +%s)
# -close_fd_mask=3: the code's own messages (the flag parser prints its usage errors) stay quiet;
# libFuzzer and the sanitizers keep reporting on a copy of stderr.
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -close_fd_mask=3 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds" >"$log" 2>&1
status=$?
elapsed=$(($(date +%s) - start))
runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
if [ $status -ne 0 ] || [ -z "$runs" ]; then
  tail -n 60 "$log"
  echo "$name: FAILED (exit status $status); the input is under $work/artifacts"
  exit 1
fi
echo "$name: $runs executions in $elapsed s ($(ls "$work/corpus" | wc -l) new corpus files)"
