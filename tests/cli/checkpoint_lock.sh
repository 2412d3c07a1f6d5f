#!/usr/bin/env bash
# One trainer per checkpoint folder (issue 45): a trainer (seed 1) runs in the background; a second
# one (seed 2) on the same folder is refused at its start with exit status 2, naming the folder and the
# first's PID and host, and leaves no file of its own; after the first is killed with SIGKILL (its lock
# file left behind), a third starts and finishes on the folder, which holds at most --max_to_keep
# train checkpoints.
#   checkpoint_lock.sh CLSPEECH DATA_DIR WORK_DIR
. "$(dirname "$0")/script_common.sh"
ck=$work/ck
train=(train --train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 8
       --checkpoint_dir "$ck" --max_to_keep 2 --noshow_progressbar --summary_dir= --devices 0:0)
"$cls" "${train[@]}" --random_seed 1 --epochs 100000 --checkpoint_secs 1 --load_train init >"$work/first.log" 2>&1 &
first=$!
trap 'kill -9 $first 2>/dev/null' EXIT
for _ in $(seq 1 600); do
  grep -q "^pid=$first " "$ck/clspeech.lock" 2>/dev/null && [ -e "$ck/checkpoint" ] && break
  kill -0 $first 2>/dev/null || fail "the first trainer ended: $(tail -3 "$work/first.log")"
  sleep 0.1
done
grep -q "^pid=$first " "$ck/clspeech.lock" 2>/dev/null || fail "no lock naming the first trainer: $(cat "$ck/clspeech.lock" 2>&1)"
out=$("$cls" "${train[@]}" --random_seed 2 --epochs 3 --load_train init 2>&1)
status=$?
echo "second trainer, exit status $status: $out"
[ $status -eq 2 ] || fail "the second trainer's exit status is $status, not 2"
grep -qE "^clspeech train: --checkpoint_dir: $ck is in use: process $first on host $(hostname) trains into it" <<<"$out" ||
  fail "the refusal does not name the folder, PID $first and host $(hostname)"
grep -q "training on device" <<<"$out" && fail "the second trainer started work"
kill -0 $first 2>/dev/null || fail "the first trainer did not outlive the second"
kill -9 $first
wait $first 2>/dev/null
echo "killed the first trainer; the lock file is left: $(cat "$ck/clspeech.lock")"
out=$("$cls" "${train[@]}" --random_seed 3 --epochs 1 2>&1) || fail "the third trainer failed: $out"
grep -q "FINISHED optimization" <<<"$out" || fail "the third trainer did not finish: $out"
grep -q "^pid=[0-9]* " "$ck/clspeech.lock" && ! grep -q "^pid=$first " "$ck/clspeech.lock" ||
  fail "the lock file does not name the third trainer: $(cat "$ck/clspeech.lock")"
n=$(ls "$ck"/train-*.safetensors | wc -l)
[ "$n" -le 2 ] || fail "$n train checkpoints with --max_to_keep 2: $(ls "$ck")"
echo "$prog: ok"
