#!/bin/bash
# Mixed-vendor training (label vendors): one tower on PoCL and one on Oclgrind, two OpenCL
# implementations in one process (OCL_ICD_VENDORS names both, as CTest sets it), train four copies of
# digits-1 (tiny --n_hidden):
#   hybrid (--balance equal, so that the simulator takes its share): both epochs' losses equal one PoCL
#     tower on the whole global batch within 1e-6 relative, the placement log names both platforms, and
#     the 2-step checkpoint loads (transcribe on PoCL);
#   sync: equal one PoCL tower on batches of 1 (the towers take the steps in turn);
#   async: both towers train, finite losses (its order of updates has no one-tower equal).
# Prints "mixed_train: PASS" at the end, or "mixed_train: FAIL: ..." and exits 1.
#   mixed_train.sh CLSPEECH DATA_DIR WORK
source "$(dirname "$0")/../cli/script_common.sh"
losses=$(dirname "$0")/../cli/train_losses.py
printf 'wav_filename,wav_filesize,transcript\n' > "$work/four.csv"
for i in 1 2 3 4; do echo "$2/formats/digits-1.wav,29112,eight two" >> "$work/four.csv"; done
common=("$cls" train --train_files "$work/four.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 8
        --load_train init --noshow_progressbar --summary_dir '' --log_placement)
run() { # NAME ARGS...: train_losses.py's run, its output kept in $work/NAME.log
  local name=$1; shift
  python3 "$losses" --work "$work/$name" --epochs 1 "$@" -- "${common[@]}" > "$work/$name.log" 2>&1
  local rc=$?
  cat "$work/$name.log"
  [ $rc -eq 0 ] || fail "$name: train_losses.py exit $rc"
  grep -q '^train_losses: ok' "$work/$name.log" || fail "$name: no ok line"
  grep -qE '^clspeech: placement: tower [01] on device .*\(Oclgrind Simulator, Oclgrind' "$work/$name.log" ||
    fail "$name: no tower on Oclgrind in the placement log"
  grep -qE '^clspeech: placement: tower [01] on device .*\(pthread-' "$work/$name.log" ||
    fail "$name: no tower on PoCL in the placement log"
}
run hybrid --rtol 1e-6 "--reference=--devices pthread --train_batch_size 2" \
  "--run=--devices oclgrind,pthread --train_batch_size 1 --balance equal --strategy hybrid"
grep -q 'FINISHED optimization (global step 2)' "$work/hybrid.log" || fail "hybrid: not 2 steps"
run sync --rtol 1e-6 "--reference=--devices pthread --train_batch_size 1" \
  "--run=--devices oclgrind,pthread --train_batch_size 1 --strategy sync"
run async "--run=--devices oclgrind,pthread --train_batch_size 1 --strategy async"
"$cls" transcribe --checkpoint_dir "$work/hybrid/run" --audio "$2/formats/digits-1.wav" --devices pthread \
  > "$work/transcribe.log" 2>&1 || { cat "$work/transcribe.log"; fail "the mixed run's checkpoint does not load"; }
echo "mixed_train: PASS (hybrid and sync equal one PoCL tower; async trains; the checkpoint loads)"
