#!/usr/bin/env bash
# --augment across ranks: 2 ranks x 1 tower x batch 2 at learning rate L with --augment reach the same
# parameters after 3 steps as 1 rank x 2 towers x batch 2 at 2L with it (every utterance's draws keyed by
# its index in the epoch, whatever rank or tower takes it), and not those of the 2 towers without it.
#   two_ranks_augment.sh CLSPEECH MPIEXEC DATA_DIR WORK_DIR
# Tolerance: 0, the same bits (as two_ranks.sh).
set -u
export POCL_DEVICES=pthread
cls=$1 mpiexec=$2 data=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
common=(train --train_files "$data/formats/formats.csv" --alphabet_config_path "$data/deepspeech-smoke/alphabet.txt"
        --n_hidden 32 --epochs 3 --train_batch_size 2 --load_train init --noshow_progressbar --summary_dir "")
augment=(--augment 'frequency_mask[n=2,size=3]' --augment 'time_mask[size=40]' --augment 'dropout[p=0.7,rate=0.1]'
         --augment 'add[stddev=0.5]' --augment 'multiply[stddev=0.1]' --augment 'pitch[pitch=1~0.2]'
         --augment 'tempo[factor=1~0.3]' --augment 'warp[nt=2,nf=2,wf=0.05]' --augment 'add[domain=spectrogram,stddev=0.01]'
         --augment 'time_mask[domain=features,size=60]')
fail=0
"$mpiexec" --oversubscribe -np 2 "$cls" "${common[@]}" "${augment[@]}" --horovod --learning_rate 0.001 \
  --checkpoint_dir "$work/ranks" >"$work/ranks.log" 2>&1 || { echo "FAIL: two ranks"; cat "$work/ranks.log"; fail=1; }
grep -q "FINISHED optimization (global step 3)" "$work/ranks.log" || { echo "FAIL: not 3 global steps"; fail=1; }
"$cls" "${common[@]}" "${augment[@]}" --towers_per_device 2 --balance equal --learning_rate 0.002 \
  --checkpoint_dir "$work/towers" >"$work/towers.log" 2>&1 || { echo "FAIL: 2 towers"; cat "$work/towers.log"; fail=1; }
"$cls" "${common[@]}" --towers_per_device 2 --balance equal --learning_rate 0.002 \
  --checkpoint_dir "$work/plain" >"$work/plain.log" 2>&1 || { echo "FAIL: 2 towers without --augment"; fail=1; }
python3 "$here/compare_checkpoints.py" "$work/ranks/train-3.safetensors" "$work/towers/train-3.safetensors" 0 || fail=1
python3 "$here/compare_checkpoints.py" "$work/ranks/train-3.safetensors" "$work/plain/train-3.safetensors" 3e-6 \
  --expect-different || { echo "FAIL: --augment changed nothing"; fail=1; }
[ $fail -eq 0 ] && echo "two_ranks_augment: ok"
exit $fail
