#!/usr/bin/env bash
# A resumed run whose alphabet or feature settings differ from the checkpoint folder's is refused before
# any work, and the folder's metadata is never silently rewritten (issue 37):
#  1. one epoch into R; resuming with --feature_win_len 25, --audio_sample_rate 8000, or an alphabet of
#     the same size with two labels swapped: exit 2 naming the flag, both values and the files, R byte
#     for byte as before;
#  2. a fresh start (--load_train init) into R with other features or the swapped alphabet: exit 2 naming
#     R's features.txt or alphabet.txt (the checkpoints there would be described wrongly);
#  3. transfer learning (--drop_source_layers 1) from R into T with --feature_win_len 25: exit 0 with a
#     notice, T/features.txt records 25, R unchanged; resuming R with its own settings: exit 0.
#   resume_refuses.sh CLSPEECH DATA_DIR WORK_DIR
set -u
cls=$1 smoke=$2/deepspeech-smoke work=$3
rm -rf "$work" && mkdir -p "$work"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
common=(--train_files "$smoke/ldc93s1.csv" --n_hidden 16 --epochs 1 --noshow_progressbar --summary_dir "" --devices 0:0)
alphabet=(--alphabet_config_path "$smoke/alphabet.txt")
sums() { (cd "$1" && sha256sum -- * | sort); }
sed -e 's/^a$/@/' -e 's/^b$/a/' -e 's/^@$/b/' "$smoke/alphabet.txt" >"$work/swapped.txt"

"$cls" train "${common[@]}" "${alphabet[@]}" --checkpoint_dir "$work/R" >"$work/r.log" 2>&1 ||
  bad "training R: $(tail -3 "$work/r.log")"
before=$(sums "$work/R")
refused() { # PATTERN ARGS...
  local re=$1 o s
  shift
  o=$("$cls" train "${common[@]}" --checkpoint_dir "$work/R" "$@" 2>&1)
  s=$?
  echo "$o" | tail -1
  [ $s -eq 2 ] || bad "exit $s, expected 2: $*: $o"
  grep -qE -- "$re" <<<"$o" || bad "no /$re/ in: $o"
  ! grep -q "training on device" <<<"$o" || bad "work started: $*"
  [ "$(sums "$work/R")" = "$before" ] || bad "R changed after: $*"
}
# 1. Resumes.
refused "^clspeech train: --feature_win_len 25 disagrees with feature_win_len=32 in .*R/features.txt, the features the checkpoint .*R/train-1.safetensors was trained on; .*--drop_source_layers 1 or more" \
  "${alphabet[@]}" --feature_win_len 25
refused "^clspeech train: --audio_sample_rate 8000 disagrees with audio_sample_rate=16000 in .*R/features.txt" \
  "${alphabet[@]}" --audio_sample_rate 8000
refused "^clspeech train: --alphabet_config_path .*swapped.txt \(28 labels\) is not the alphabet of the checkpoint .*R/train-1.safetensors \(.*R/alphabet.txt, 28 labels\): label 1 is \"b\" against \"a\"" \
  --alphabet_config_path "$work/swapped.txt"
# 2. Fresh starts over R's checkpoints.
refused "^clspeech train: --feature_win_len 25 disagrees with feature_win_len=32 in .*R/features.txt, beside the checkpoints already in .*R \(such as .*R/train-1.safetensors\), which this run would rewrite" \
  "${alphabet[@]}" --load_train init --feature_win_len 25
refused "^clspeech train: --alphabet_config_path .*swapped.txt disagrees with .*R/alphabet.txt, beside the checkpoints already in .*R .*: label 1 is \"b\" against \"a\"" \
  --alphabet_config_path "$work/swapped.txt" --load_train init
# 3. Transfer learning to other features; a plain resume.
out=$("$cls" train "${common[@]}" "${alphabet[@]}" --load_checkpoint_dir "$work/R" --save_checkpoint_dir "$work/T" \
  --drop_source_layers 1 --feature_win_len 25 2>&1) || bad "transfer: $out"
grep -q "transfer learning: --feature_win_len 25, the checkpoint .*R/train-1.safetensors was trained on feature_win_len=32" <<<"$out" ||
  bad "no notice of the other features: $out"
grep -qx "feature_win_len=25" "$work/T/features.txt" || bad "T/features.txt: $(cat "$work/T/features.txt")"
[ "$(sums "$work/R")" = "$before" ] || bad "R changed after the transfer"
out=$("$cls" train "${common[@]}" "${alphabet[@]}" --checkpoint_dir "$work/R" 2>&1) || bad "plain resume: $out"
grep -q "FINISHED optimization (global step 2)" <<<"$out" || bad "the plain resume did not continue: $out"
[ $fail -eq 0 ] && echo "resume_refuses: ok"
exit $fail
