#!/usr/bin/env bash
# A checkpoint file its index does not list (a run killed between writing it and updating the index,
# or before removing an old one) is swept at the next start (issue 37). The trainer holds the folder's
# lock then, so no other trainer can be about to list it, and a file just written is swept too: a run
# killed after updating the index but before removing the file it dropped leaves one a moment old.
# One epoch into O; then O gets train-7 and best_dev-9 unchanged for a minute, train-8 just written
# and notes.safetensors (not of a series); the next run removes the three of the series alone, naming
# them, and resumes from the index.
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
notice=$(grep -E "^clspeech: removed 3 checkpoint files that no index lists \(left by a killed run\) from .*O: " <<<"$out")
named=$(sed 's/.*O: //' <<<"$notice" | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$named" = "best_dev-9.safetensors train-7.safetensors train-8.safetensors " ] ||
  bad "no notice naming the three orphans: $out"
for f in train-7 best_dev-9 train-8; do [ ! -e "$work/O/$f.safetensors" ] && echo "$f removed" || bad "$f.safetensors kept"; done
for f in notes train-1; do [ -e "$work/O/$f.safetensors" ] && echo "$f kept" || bad "$f.safetensors removed"; done
grep -q "FINISHED optimization (global step 2)" <<<"$out" || bad "the run did not resume from the index: $out"
[ $fail -eq 0 ] && echo "orphan_checkpoints: ok"
exit $fail
