#!/usr/bin/env bash
# A training process killed with SIGKILL mid-run leaves its last checkpoint intact: the test starts
# `clspeech train` with a checkpoint every second, kills it once checkpoints exist, then loads the
# latest one for a test pass and checks that it reads and evaluates.
#   kill_during_training.sh CLSPEECH SHARED_DATA WORK_DIR
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
echo "killed training after $(ls "$work"/ckpt/train-*.safetensors | wc -l) kept checkpoints; index: $(head -1 "$work/ckpt/checkpoint")"
"$cls" train --test_files "$data/ldc93s1.csv" --alphabet_config_path "$data/alphabet.txt" --n_hidden 64 \
  --checkpoint_dir "$work/ckpt" --load_evaluate last --beam_width 8 --noshow_progressbar
status=$?
echo "--- test pass from the last checkpoint: exit status $status"
exit $status
