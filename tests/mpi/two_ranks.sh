#!/usr/bin/env bash
# Two ranks under mpirun train as one rank with two towers: 2 ranks x 1 tower x batch 2 at learning
# rate L reach the same parameters after 5 steps as 1 rank x 2 towers x batch 2 at 2L (DeepSpeech's
# Horovod rule: lr x ranks), and not those of 1 rank x 2 towers at L; the checkpoint keeps the base
# rate L; rank 0 alone writes files (each rank is given its own folders through mpirun's MPMD form).
# The same with --strategy sync on 2 ranks (a whole batch of 2 on each rank's one tower). Then a resume
# with another world size: 2 ranks continue the 1-rank run's checkpoint (base rate 2L kept, step 5 -> 6).
#   two_ranks.sh CLSPEECH MPIEXEC DATA_DIR WORK_DIR
# Tolerance: 0, the same bits (dropout masks are keyed by an utterance's place in the global batch, a
# 2-rank sum is exact in either order and the weights are powers of two); lr x 1 must differ.
set -u
export POCL_DEVICES=pthread # each rank one light PoCL device (2 ranks on a 2-core machine)
cls=$1 mpiexec=$2 data=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
common=(train --train_files "$data/formats/formats.csv" --alphabet_config_path "$data/deepspeech-smoke/alphabet.txt"
        --n_hidden 32 --epochs 5 --train_batch_size 2 --load_train init --noshow_progressbar --replica_check_steps 1)
fail=0
# Each rank is one light PoCL device (2 ranks on a 2-core machine).
"$mpiexec" --oversubscribe \
  -np 1 "$cls" "${common[@]}" --horovod --learning_rate 0.001 --checkpoint_dir "$work/rank0" --summary_dir "$work/rank0/summaries" : \
  -np 1 "$cls" "${common[@]}" --horovod --learning_rate 0.001 --checkpoint_dir "$work/rank1" --summary_dir "$work/rank1/summaries" \
  >"$work/two-ranks.log" 2>&1
status=$?
cat "$work/two-ranks.log"
echo "--- two ranks: exit status $status"
[ $status -eq 0 ] || fail=1
grep -q "FINISHED optimization (global step 5)" "$work/two-ranks.log" || { echo "FAIL: not 5 global steps"; fail=1; }
for r in 2 1; do
  POCL_DEVICES=pthread "$cls" "${common[@]}" --towers_per_device 2 --balance equal --learning_rate 0.00$r \
    --checkpoint_dir "$work/towers-lr$r" --summary_dir "" >"$work/towers-lr$r.log" 2>&1 || { echo "FAIL: 2 towers at lr 0.00$r"; cat "$work/towers-lr$r.log"; fail=1; }
done
python3 "$here/compare_checkpoints.py" "$work/rank0/train-5.safetensors" "$work/towers-lr2/train-5.safetensors" 0 || fail=1
python3 "$here/compare_checkpoints.py" "$work/rank0/train-5.safetensors" "$work/towers-lr1/train-5.safetensors" 3e-6 \
  --expect-different || { echo "FAIL: lr x 2 was not applied"; fail=1; }
python3 "$here/compare_checkpoints.py" --learning-rate "$work/rank0/train-5.safetensors" 0.001 ||
  { echo "FAIL: the checkpoint does not keep the base rate"; fail=1; }
# Rank 0 wrote its checkpoints, flags.txt and summaries; rank 1 wrote nothing at all.
for f in flags.txt checkpoint train-5.safetensors summaries/train; do
  [ -e "$work/rank0/$f" ] || { echo "FAIL: rank 0 did not write $f"; fail=1; }
done
grep -aq "ranks/step_ms/1" "$work"/rank0/summaries/train/events.out.tfevents.* &&
  echo "rank 0's summaries hold every rank's step times" || { echo "FAIL: no ranks/step_ms/1 in the summaries"; fail=1; }
if [ -e "$work/rank1" ]; then
  echo "FAIL: rank 1 wrote files:"; find "$work/rank1"; fail=1
else
  echo "rank 1 wrote no files"
fi
# --strategy sync across ranks: each rank's turn tower takes a whole batch of 2, which is the same step.
"$mpiexec" --oversubscribe -np 2 "$cls" "${common[@]}" --horovod --strategy sync --learning_rate 0.001 \
  --checkpoint_dir "$work/sync" --summary_dir "" >"$work/sync.log" 2>&1 || { echo "FAIL: sync"; cat "$work/sync.log"; fail=1; }
python3 "$here/compare_checkpoints.py" "$work/sync/train-5.safetensors" "$work/towers-lr2/train-5.safetensors" 0 || fail=1
# Resume with another world size: rank 0 loads the one-rank checkpoint and broadcasts it.
"$mpiexec" --oversubscribe -np 2 "$cls" "${common[@]/init/last}" --horovod --epochs 1 --load_checkpoint_dir "$work/towers-lr2" \
  --save_checkpoint_dir "$work/resumed" --summary_dir "" >"$work/resumed.log" 2>&1 || { echo "FAIL: the resume"; fail=1; }
cat "$work/resumed.log"
grep -q "FINISHED optimization (global step 6)" "$work/resumed.log" || { echo "FAIL: the resume did not reach step 6"; fail=1; }
python3 "$here/compare_checkpoints.py" --learning-rate "$work/resumed/train-6.safetensors" 0.002 ||
  { echo "FAIL: the resumed checkpoint lost the base rate 0.002"; fail=1; }
[ $fail -eq 0 ] && echo "two_ranks: ok"
exit $fail
