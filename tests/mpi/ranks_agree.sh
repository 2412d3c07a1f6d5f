#!/usr/bin/env bash
# Ranks that are given different settings or data never wait for each other for ever (issue 37):
#  1. the settings' agreement before any work: ranks with different --epochs, --dev_files on one rank
#     only, training CSVs of the same row count but other rows, a reordered alphabet of the same size,
#     another --feature_win_len, another --train_batch_size, an overlay source whose path holds other rows
#     on each rank: every rank ends with exit status 2 and
#     names the setting and both ranks' values;
#  2. the guard of every collective (the agreement skipped, CLSPEECH_SKIP_AGREEMENT=1): a rank that
#     finishes early (--epochs 1 against 3) tells the other, which names it; a rank that evaluates a dev
#     set the other lacks meets it at different collectives, and both name them.
# Each case must end within 30 s (timeout 60 marks a hang with status 124); the time to the error and
# the wait of a rank for a departed rank are printed as figures.
#   ranks_agree.sh CLSPEECH MPIEXEC DATA_DIR WORK_DIR
set -u
export POCL_DEVICES=pthread # each rank one light PoCL device (2 ranks on a 2-core machine)
cls=$1 mpiexec=$2 data=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
csv=$data/formats/formats.csv alphabet=$data/deepspeech-smoke/alphabet.txt
common=(train --train_files "$csv" --horovod --n_hidden 16 --load_train init --noshow_progressbar --summary_dir "")
fail=0
# The same number of rows, one transcript different; the alphabet with two labels swapped.
sed -e "s|^digits|$data/formats/digits|" -e 's/four eight five seven$/four eight five eight/' "$csv" >"$work/other.csv"
python3 - "$alphabet" "$work/swapped.txt" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
i, j = lines.index("a"), lines.index("b")
lines[i], lines[j] = lines[j], lines[i]
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(lines))
PY
# run NAME EXTRA0 -- EXTRA1: 2 ranks, rank 0 with EXTRA0 and rank 1 with EXTRA1 added; sets $status,
# $secs and $work/NAME.log. Each rank runs in $wdir0 and $wdir1 when they are set.
run() {
  local name=$1 a=() b=() w0=() w1=()
  [ -n "${wdir0:-}" ] && w0=(-wdir "$wdir0")
  [ -n "${wdir1:-}" ] && w1=(-wdir "$wdir1")
  shift
  while [ "$1" != "--" ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  local t0=$(date +%s.%N)
  timeout 60 "$mpiexec" --oversubscribe \
    -np 1 "${w0[@]}" "$cls" "${common[@]}" --checkpoint_dir "$work/$name" "${a[@]}" : \
    -np 1 "${w1[@]}" "$cls" "${common[@]}" --checkpoint_dir "$work/$name" "${b[@]}" >"$work/$name.log" 2>&1
  status=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  cat "$work/$name.log"
  echo "--- $name: exit status $status after $secs s"
  [ "$status" -ne 124 ] || { echo "FAIL: $name: the ranks waited for each other (timeout)"; fail=1; }
  awk -v s="$secs" 'BEGIN { exit !(s < 30) }' || { echo "FAIL: $name: no error within 30 s"; fail=1; }
}
# both_say NAME REGEX: each rank's line "rank R of 2 on host H: ..." matches REGEX.
both_say() {
  for r in 0 1; do
    grep -Eq "clspeech train: rank $r of 2 on host [^:]*: $2" "$work/$1.log" ||
      { echo "FAIL: $1: rank $r does not say /$2/"; fail=1; }
  done
}
disagree() { # NAME SETTING-REGEX VALUE0-REGEX VALUE1-REGEX
  [ "$status" -eq 2 ] || { echo "FAIL: $1: exit status $status, expected 2"; fail=1; }
  both_say "$1" "the ranks disagree on $2: rank 0 \(host [^)]*\) \"$3\"; rank 1 \(host [^)]*\) \"$4\""
  grep -q "FINISHED optimization\|Training |" "$work/$1.log" && { echo "FAIL: $1: work was done before the error"; fail=1; }
}

# 1. The agreement.
a=(--alphabet_config_path "$alphabet")
run epochs "${a[@]}" --epochs 1 -- "${a[@]}" --epochs 3
disagree epochs "--epochs" 1 3
run dev_one_rank "${a[@]}" --epochs 2 -- "${a[@]}" --epochs 2 --dev_files "$csv"
disagree dev_one_rank "the validation sets [^:]*" none ".*formats.csv: 6 samples, digest [0-9a-f]{16}"
run other_csv "${a[@]}" --epochs 1 -- "${a[@]}" --epochs 1 --train_files "$work/other.csv"
disagree other_csv "the training set [^:]*" ".*formats.csv: 6 samples, digest [0-9a-f]{16}" \
  ".*other.csv: 6 samples, digest [0-9a-f]{16}"
run alphabet --epochs 1 --alphabet_config_path "$alphabet" -- --epochs 1 --alphabet_config_path "$work/swapped.txt"
disagree alphabet "the alphabet [^:]*" "28 labels:  abcd.*" "28 labels:  bacd.*"
run win_len "${a[@]}" --epochs 1 -- "${a[@]}" --epochs 1 --feature_win_len 25
disagree win_len "--feature_win_len" 32 25
run batch "${a[@]}" --epochs 1 --train_batch_size 1 -- "${a[@]}" --epochs 1 --train_batch_size 2
disagree batch "--train_batch_size" 1 2
# An overlay source named alike (a relative path) that holds other rows for each rank: each rank runs in
# its own folder, as ranks on two hosts would read their own copies.
smoke=$data/deepspeech-smoke
mkdir -p "$work/host0" "$work/host1"
printf 'wav_filename,wav_filesize,transcript\n%s/LDC93S1.wav,93638,x\n' "$smoke" >"$work/host0/noise.csv"
printf 'wav_filename,wav_filesize,transcript\n%s/new-home-in-the-stars-16k.wav,114794,x\n' "$smoke" >"$work/host1/noise.csv"
wdir0=$work/host0 wdir1=$work/host1 run overlay "${a[@]}" --epochs 1 --augment "overlay[source=noise.csv]" -- \
  "${a[@]}" --epochs 1 --augment "overlay[source=noise.csv]"
disagree overlay "the contents of --augment overlay's sources" "noise.csv: [0-9]+ bytes, digest [0-9a-f]{16}" \
  "noise.csv: [0-9]+ bytes, digest [0-9a-f]{16}"

# 2. The guard, without the agreement.
export CLSPEECH_SKIP_AGREEMENT=1
run left_early "${a[@]}" --epochs 1 -- "${a[@]}" --epochs 3
[ "$status" -ne 0 ] || { echo "FAIL: left_early: exit status 0"; fail=1; }
grep -Eq "clspeech train: rank 1 of 2 on host [^:]*: rank 0 \(host [^)]*\) left the run \(exit status 0\) after [0-9]+ collective calls, and rank 1 \(host [^)]*\) waited for it in call [0-9]+, .*; noticed [0-9.]+ ms after it left" \
  "$work/left_early.log" || { echo "FAIL: left_early: rank 1 does not name rank 0's departure"; fail=1; }
wait_ms=$(grep -o "noticed [0-9.]* ms" "$work/left_early.log" | head -1)
echo "figure: rank 1 $wait_ms after rank 0 left (error after $secs s in all)"
run dev_paths "${a[@]}" --epochs 2 -- "${a[@]}" --epochs 2 --dev_files "$csv"
[ "$status" -ne 0 ] || { echo "FAIL: dev_paths: exit status 0"; fail=1; }
both_say dev_paths "the ranks are at different points of the run: rank [01] \(host [^)]*\) is in collective call [0-9]+, .*, and rank [01] \(host [^)]*\) in call [0-9]+, "
[ $fail -eq 0 ] && echo "ranks_agree: ok"
exit $fail
