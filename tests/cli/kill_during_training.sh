#!/usr/bin/env bash
# A training process killed with SIGKILL mid-run leaves its last checkpoint intact: the test starts
# `clspeech train` with a checkpoint every second, kills it once checkpoints exist, then loads the
# latest one for a test pass and checks that it reads and evaluates: the index's checkpoint is whole
# (read_checkpoint.py) and the test pass ends with status 0 and reports WER, CER and a finite loss.
#   kill_during_training.sh CLSPEECH DATA_DIR WORK_DIR
set -u
cls=$1 data=$2/deepspeech-smoke work=$3
rm -rf "$work" && mkdir -p "$work"
"$cls" train --train_files "$data/ldc93s1.csv" --alphabet_config_path "$data/alphabet.txt" --n_hidden 64 \
  --epochs 100000 --checkpoint_secs 1 --checkpoint_dir "$work/ckpt" --load_train init --noshow_progressbar \
  >"$work/train.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [ "$(ls "$work"/ckpt/train-*.safetensors 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.1
done
sleep 1.3
kill -9 "$pid"
wait "$pid" 2>/dev/null
kept=$(head -1 "$work/ckpt/checkpoint")
echo "killed training after $(ls "$work"/ckpt/train-*.safetensors | wc -l) kept checkpoints; index: $kept"
fail=0
# The checkpoint the index names is whole: its tensors, Adam slots and scalars read back, global_step
# the one in its name (tests/ref/read_checkpoint.py).
step=${kept#train-}
step=${step%.safetensors}
if [[ "$step" =~ ^[0-9]+$ ]]; then
  python3 "$(dirname "$0")/../ref/read_checkpoint.py" "$work/ckpt/$kept" 64 29 "$step" || fail=1
else
  echo "FAIL: the checkpoint index names \"$kept\", not train-STEP.safetensors"
  fail=1
fi
out=$("$cls" train --test_files "$data/ldc93s1.csv" --alphabet_config_path "$data/alphabet.txt" --n_hidden 64 \
  --checkpoint_dir "$work/ckpt" --load_evaluate last --beam_width 8 --noshow_progressbar 2>&1)
status=$?
echo "$out"
echo "--- test pass from the last checkpoint: exit status $status"
[ $status -eq 0 ] || fail=1
grep -qE "^Test on .*/ldc93s1.csv - WER: [0-9]+[.][0-9]+, CER: [0-9]+[.][0-9]+, loss: [0-9]+[.][0-9]+$" <<<"$out" ||
  { echo "FAIL: the test pass reports no WER, CER and finite loss"; fail=1; }
[ $fail -eq 0 ] && echo "kill_during_training: ok"
exit $fail
