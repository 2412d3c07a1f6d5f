#!/usr/bin/env bash
# Separate load and save folders and transfer learning, as DeepSpeech 0.9's command lines use them:
#  1. one epoch into A (n_hidden 16, with a dev set: train and best_dev series);
#  2. one more epoch with --load_checkpoint_dir A --save_checkpoint_dir B: B gets the new checkpoints
#     (train-2, best_dev-2, both indexes, flags.txt, alphabet.txt), A stays byte for byte;
#  3. another alphabet (30 labels) without dropping the output layer, or one of the same size with a
#     different label: exit 2 before any work, naming both alphabets; --drop_source_layers 6: exit 2;
#  4. DeepSpeech's transfer command line (--drop_source_layers 1, the new alphabet, train, dev and test
#     sets): exit 0, C's checkpoint a 31-class model (tests/ref/read_checkpoint.py) continuing A's step,
#     C's alphabet.txt the new one, the test pass on C's checkpoints; A still byte for byte;
#  5. --drop_source_layers with no checkpoint in the load folder: a warning, a fresh start.
#   transfer.sh CLSPEECH DATA_DIR WORK_DIR
set -u
cls=$1 smoke=$2/deepspeech-smoke work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
common=(--train_files "$smoke/ldc93s1.csv" --dev_files "$smoke/ldc93s1.csv" --n_hidden 16 --epochs 1
        --noshow_progressbar --summary_dir "" --devices 0:0)
sums() { (cd "$1" && sha256sum -- * | sort); }

"$cls" train "${common[@]}" --alphabet_config_path "$smoke/alphabet.txt" --checkpoint_dir "$work/A" \
  --load_train init >"$work/a.log" 2>&1 || bad "training A: $(tail -3 "$work/a.log")"
before=$(sums "$work/A")

# 2. A -> B, the same alphabet.
out=$("$cls" train "${common[@]}" --alphabet_config_path "$smoke/alphabet.txt" --load_checkpoint_dir "$work/A" \
  --save_checkpoint_dir "$work/B" 2>&1) || bad "A -> B: $out"
grep -q "FINISHED optimization (global step 2)" <<<"$out" || bad "A -> B did not continue A's step: $out"
for f in train-2.safetensors best_dev-2.safetensors checkpoint best_dev_checkpoint flags.txt alphabet.txt features.txt; do
  [ -e "$work/B/$f" ] || bad "B lacks $f"
done
[ "$(head -1 "$work/B/checkpoint")" = train-2.safetensors ] || bad "B's index: $(cat "$work/B/checkpoint")"
[ "$(head -1 "$work/B/best_dev_checkpoint")" = best_dev-2.safetensors ] || bad "B's best_dev index"
[ "$(sums "$work/A")" = "$before" ] || bad "A changed after A -> B"
echo "A -> B: $(ls "$work/B" | tr '\n' ' ')"

# 3. Alphabets that differ without a drop; drop 6.
cp "$smoke/alphabet.txt" "$work/other.txt" && printf '0\n1\n' >>"$work/other.txt"
sed 's/^a$/0/' "$smoke/alphabet.txt" >"$work/swapped.txt"
expect2() { # PATTERN ARGS...
  local re=$1
  shift
  local o s
  o=$("$cls" train "${common[@]}" --load_checkpoint_dir "$work/A" --save_checkpoint_dir "$work/X" "$@" 2>&1)
  s=$?
  [ $s -eq 2 ] || bad "exit $s, expected 2: $*: $o"
  grep -qE -- "$re" <<<"$o" || bad "no /$re/ in: $o"
  ! grep -q "training on device" <<<"$o" || bad "work started: $*"
  echo "$o" | head -1
}
expect2 "--alphabet_config_path .*other.txt \(30 labels\) is not the alphabet of the checkpoint .*A/best_dev-1.safetensors \(.*A/alphabet.txt, 28 labels\): 30 labels against 28; .*--drop_source_layers 1 or more" \
  --alphabet_config_path "$work/other.txt"
expect2 "swapped.txt \(28 labels\) is not the alphabet .*: label 1 is \"0\" against \"a\"" \
  --alphabet_config_path "$work/swapped.txt"
expect2 "--drop_source_layers must be a whole number in \[0, 5\]" --alphabet_config_path "$work/other.txt" \
  --drop_source_layers 6
[ ! -e "$work/X/train-2.safetensors" ] || bad "a refused run wrote a checkpoint"

# 4. DeepSpeech's transfer command line.
out=$("$cls" train --train_files "$smoke/ldc93s1.csv" --dev_files "$smoke/ldc93s1.csv" --test_files "$smoke/ldc93s1.csv" \
  --load_checkpoint_dir "$work/A" --save_checkpoint_dir "$work/C" --drop_source_layers 1 \
  --alphabet_config_path "$work/other.txt" --n_hidden 16 --epochs 1 --beam_width 4 --noshow_progressbar \
  --summary_dir "" --devices 0:0 2>&1) || bad "transfer: $out"
echo "$out" | grep -E "transfer|Transfer|FINISHED|testing|^Test on"
grep -q "the output layer is made anew for --alphabet_config_path .*other.txt (30 labels; the checkpoint's alphabet .*A/alphabet.txt has 28" <<<"$out" ||
  bad "no notice of the new output layer"
grep -q "Transfer learning from .*A/best_dev-1.safetensors: layer_6 initialised afresh" <<<"$out" || bad "no transfer line"
grep -q "testing the checkpoints this run saved in .*C (--save_checkpoint_dir)" <<<"$out" || bad "test not on C"
grep -qE "^Test on .*ldc93s1.csv - WER: [0-9.]+, CER: [0-9.]+, loss: [0-9.]+$" <<<"$out" || bad "no test report"
python3 "$here/../ref/read_checkpoint.py" "$work/C/train-2.safetensors" 16 31 2 | tail -1 | grep -q "read_checkpoint: 0 problems" ||
  bad "C/train-2.safetensors is not a 31-class checkpoint at step 2"
cmp -s "$work/other.txt" "$work/C/alphabet.txt" || bad "C/alphabet.txt is not the new alphabet"
grep -q -- "--drop_source_layers=1" "$work/C/flags.txt" || bad "C/flags.txt lacks --drop_source_layers=1"
[ "$(sums "$work/A")" = "$before" ] || bad "A changed after the transfer"
# 5. A source folder with no checkpoint: a warning, and a fresh start (as DeepSpeech's auto).
out=$("$cls" train "${common[@]}" --alphabet_config_path "$smoke/alphabet.txt" --load_checkpoint_dir "$work/none" \
  --save_checkpoint_dir "$work/D" --drop_source_layers 1 2>&1) || bad "no source: $out"
grep -q "warning: --drop_source_layers 1: no checkpoint to load in .*none; training starts fresh" <<<"$out" ||
  bad "no warning of the missing source: $out"
grep -q "FINISHED optimization (global step 1)" <<<"$out" || bad "no fresh start: $out"
[ $fail -eq 0 ] && echo "transfer: ok"
exit $fail
