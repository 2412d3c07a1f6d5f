#!/usr/bin/env bash
# A checkpoint file its index does not list (a run killed between writing it and updating the index,
# or before removing an old one) is swept at the next start with the same age guard as a dead
# process's temporary file (issue 37): one epoch into O; then O gets train-7 and best_dev-9 unchanged
# for a minute (orphans), train-8 just written (maybe about to be listed) and notes.safetensors (not of
# a series); the next run removes train-7 and best_dev-9 alone, naming them, and resumes from the index.
#   orphan_checkpoints.sh CLSPEECH DATA_DIR WORK_DIR
set -u
cls=$1 smoke=$2/deepspeech-smoke work=$3
rm -rf "$work" && mkdir -p "$work"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
run=(train --train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 16 --epochs 1
     --noshow_progressbar --summary_dir "" --devices 0:0 --checkpoint_dir "$work/O")
"$cls" "${run[@]}" >"$work/first.log" 2>&1 || bad "first run: $(tail -3 "$work/first.log")"
for f in train-7 best_dev-9 train-8 notes; do cp "$work/O/train-1.safetensors" "$work/O/$f.safetensors"; done
touch -d '1 minute ago' "$work/O/train-7.safetensors" "$work/O/best_dev-9.safetensors" "$work/O/notes.safetensors"
out=$("$cls" "${run[@]}" 2>&1) || bad "second run: $out"
echo "$out" | grep "removed"
grep -qE "^clspeech: removed 2 checkpoint files that no index lists \(left by a killed run\) from .*O: (train-7.safetensors best_dev-9.safetensors|best_dev-9.safetensors train-7.safetensors)$" <<<"$out" ||
  bad "no notice naming the two orphans: $out"
for f in train-7 best_dev-9; do [ ! -e "$work/O/$f.safetensors" ] && echo "$f removed" || bad "$f.safetensors kept"; done
for f in train-8 notes train-1; do [ -e "$work/O/$f.safetensors" ] && echo "$f kept" || bad "$f.safetensors removed"; done
grep -q "FINISHED optimization (global step 2)" <<<"$out" || bad "the run did not resume from the index: $out"
[ $fail -eq 0 ] && echo "orphan_checkpoints: ok"
exit $fail
