#!/usr/bin/env bash
# A rank that fails ends the whole job, with a message naming the rank, its host and the cause, and
# the last checkpoint stays loadable:
#  1. rank 1 killed (SIGKILL) mid-training: mpirun ends non-zero naming rank 1, its node and the signal;
#     the latest checkpoint rank 0 wrote then loads for a test pass;
#  2. rank 1's only device fails (an injected device error, CLSPEECH_FAULT on rank 1 alone): rank 1
#     names itself, its host and the error, and ends every rank's process (MPI_Abort) with a failure status;
#  3. rank 1's replica changes (an injected perturbation): the replica check across ranks (checksums)
#     names rank 1 and its host, and the job ends with a failure status.
#   rank_fails.sh CLSPEECH MPIEXEC DATA_DIR WORK_DIR
set -u
export POCL_DEVICES=pthread # each rank one light PoCL device (2 ranks on a 2-core machine)
cls=$1 mpiexec=$2 data=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
host=$(hostname)
common=(train --train_files "$data/formats/formats.csv" --alphabet_config_path "$data/deepspeech-smoke/alphabet.txt"
        --n_hidden 32 --train_batch_size 1 --load_train init --noshow_progressbar --summary_dir "" --horovod)
fail=0
# ended_failing LOG STATUS WHAT: shows a job's log and its mpirun exit status, which must not be 0.
ended_failing() {
  cat "$1"
  echo "--- $3: mpirun exit status $2"
  [ "$2" -ne 0 ] || { echo "FAIL: the job ended with status 0"; fail=1; }
}

# 1. A rank killed. Each rank writes its pid (exec keeps it) so that the test kills rank 1 alone.
"$mpiexec" --oversubscribe -np 2 \
  sh -c 'echo $$ > "$0/rank-$OMPI_COMM_WORLD_RANK.pid" && exec "$@"' "$work" \
  "$cls" "${common[@]}" --epochs 100000 --checkpoint_secs 1 --checkpoint_dir "$work/ckpt" >"$work/killed.log" 2>&1 &
job=$!
for _ in $(seq 1 900); do
  [ "$(ls "$work"/ckpt/train-*.safetensors 2>/dev/null | wc -l)" -ge 2 ] && [ -s "$work/rank-1.pid" ] && break
  sleep 0.1
done
sleep 0.5
victim=$(cat "$work/rank-1.pid" 2>/dev/null)
if [ -z "$victim" ]; then
  echo "FAIL: rank 1 never started"; kill -9 $job; fail=1
else
  kill -9 "$victim"
fi
for _ in $(seq 1 300); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
kill -0 $job 2>/dev/null && { echo "FAIL: the job did not end after rank 1 was killed"; kill -9 $job; fail=1; }
wait $job
ended_failing "$work/killed.log" $? "rank 1 (pid $victim) killed"
grep -Eq "rank 1 .*on node $host.*(signal 9|Killed)" "$work/killed.log" ||
  { echo "FAIL: no message naming rank 1, host $host and the signal"; fail=1; }
"$cls" train --test_files "$data/deepspeech-smoke/ldc93s1.csv" --alphabet_config_path "$data/deepspeech-smoke/alphabet.txt" \
  --n_hidden 32 --checkpoint_dir "$work/ckpt" --load_evaluate last --beam_width 1 --noshow_progressbar \
  >"$work/test.log" 2>&1 || { echo "FAIL: the last checkpoint does not load"; fail=1; }
cat "$work/test.log"
if grep -q "Test on .*ldc93s1.csv - WER" "$work/test.log"; then
  echo "the last checkpoint loads: $(head -1 "$work/ckpt/checkpoint")"
else
  echo "FAIL: testing the last checkpoint printed no WER"; fail=1
fi

# 2. A rank's device fails.
"$mpiexec" --oversubscribe \
  -np 1 "$cls" "${common[@]}" --epochs 20 --checkpoint_dir "$work/fault" : \
  -np 1 env CLSPEECH_FAULT=fail:tower=0,step=4 "$cls" "${common[@]}" --epochs 20 --checkpoint_dir "$work/fault" \
  >"$work/fault.log" 2>&1
ended_failing "$work/fault.log" $? "rank 1's device failed"
grep -Eq "clspeech train: rank 1 of 2 on host $host: .*CL_OUT_OF_RESOURCES \(injected fault\)" "$work/fault.log" ||
  { echo "FAIL: no message naming rank 1, host $host and the device error"; fail=1; }
grep -q "rank 1 of 2 on host $host failed (exit status [0-9]*): ending every rank's process" "$work/fault.log" ||
  { echo "FAIL: rank 1 did not end the job"; fail=1; }

# 3. A rank's replica diverges.
"$mpiexec" --oversubscribe \
  -np 1 "$cls" "${common[@]}" --epochs 3 --replica_check_steps 1 --checkpoint_dir "$work/perturb" : \
  -np 1 env CLSPEECH_FAULT=perturb:tower=0,step=2 "$cls" "${common[@]}" --epochs 3 --replica_check_steps 1 \
  --checkpoint_dir "$work/perturb" >"$work/perturb.log" 2>&1
ended_failing "$work/perturb.log" $? "rank 1's replica perturbed"
grep -Eq "replica check across ranks at step 2: rank 1 \(host $host, checksum [0-9a-f]{16}\) no longer holds rank 0's parameters" \
  "$work/perturb.log" || { echo "FAIL: the replica check did not name rank 1"; fail=1; }
[ $fail -eq 0 ] && echo "rank_fails: ok"
exit $fail
