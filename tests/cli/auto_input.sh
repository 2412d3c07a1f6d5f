#!/usr/bin/env bash
# `clspeech train --auto_input_dataset` (Coqui STT's flag) on a CSV of the smoke data (LDC93S1 and the
# formats' digits, 9 rows with relative audio paths):
#  1. a run splits it into train.csv, dev.csv and test.csv beside it (Coqui's sizes: 9 rows -> 5, 2, 2),
#     writes alphabet.txt from its transcripts, trains, validates and tests on them (exit 0);
#  2. every row is in exactly one set; a second split with the same --random_seed gives the same bytes;
#  3. a second run reuses the sets and the alphabet (says so, files unchanged);
#  4. refusals, exit 2 before any work: beside --train_files; with a part of the sets present; a CSV of
#     2 rows; a folder of two CSVs; an explicit --alphabet_config_path is used as given.
#   auto_input.sh CLSPEECH DATA_DIR WORK_DIR
set -u
source "$(dirname "$0")/script_common.sh"
d=$work/corpus
mkdir -p "$d"
# 9 rows: the audio copied beside the CSV, named relatively
cp "$smoke/LDC93S1.wav" "$d/ldc.wav"
for i in 1 2; do cp "$2/formats/digits-$i.wav" "$d/d$i.wav"; done
{
  echo "wav_filename,wav_filesize,transcript"
  for i in 1 2 3; do
    echo "ldc.wav,$(stat -c %s "$d/ldc.wav"),she had your dark suit in greasy wash water all year"
    echo "d1.wav,$(stat -c %s "$d/d1.wav"),$(grep '^digits-1.wav,' "$2/formats/formats.csv" | cut -d, -f3)"
    echo "d2.wav,$(stat -c %s "$d/d2.wav"),$(grep '^digits-2.wav,' "$2/formats/formats.csv" | cut -d, -f3)"
  done
} >"$d/all.csv"
common=(--n_hidden 16 --epochs 1 --noshow_progressbar --summary_dir "" --devices 0:0 --checkpoint_dir "$work/ckpt")

"$cls" train --auto_input_dataset "$d/all.csv" "${common[@]}" >"$work/run1.log" 2>&1 ||
  fail "the first run: exit $?: $(tail -5 "$work/run1.log")"
for s in train dev test; do [ -f "$d/$s.csv" ] || fail "no $s.csv beside the CSV"; done
[ -f "$d/alphabet.txt" ] || fail "no alphabet.txt beside the CSV"
grep -q "5 training, 2 validation and 2 test rows" "$work/run1.log" || fail "sizes not 5/2/2: $(cat "$work/run1.log")"
grep -q "^Test on $d/test.csv" "$work/run1.log" || fail "no test pass on test.csv: $(tail -5 "$work/run1.log")"
grep -q -- "--train_files=$d/train.csv" "$work/ckpt/flags.txt" || fail "flags.txt does not name the train set"
rows=$( (tail -n +2 "$d/train.csv"; tail -n +2 "$d/dev.csv"; tail -n +2 "$d/test.csv") | sort)
[ "$rows" = "$(tail -n +2 "$d/all.csv" | sort)" ] || fail "the sets do not hold the CSV's rows exactly once each"
grep -qx "y" "$d/alphabet.txt" || fail "the alphabet lacks 'y': $(cat "$d/alphabet.txt")"
grep -qx " " "$d/alphabet.txt" || fail "the alphabet lacks the space"
sums=$(cd "$d" && sha256sum train.csv dev.csv test.csv alphabet.txt)

# the same seed, the same split (made again in a copy)
mkdir -p "$work/again" && cp "$d/all.csv" "$d/"*.wav "$work/again/"
"$cls" train --auto_input_dataset "$work/again/all.csv" "${common[@]}" --checkpoint_dir "$work/ckpt2" >"$work/again.log" 2>&1 ||
  fail "the copy's run: $(tail -3 "$work/again.log")"
[ "$(cd "$work/again" && sha256sum train.csv dev.csv test.csv alphabet.txt)" = "$sums" ] || fail "the same seed split differently"

# a second run reuses the sets and the alphabet
"$cls" train --auto_input_dataset "$d" "${common[@]}" --checkpoint_dir "$work/ckpt3" >"$work/run2.log" 2>&1 ||
  fail "the second run (a folder): $(tail -3 "$work/run2.log")"
grep -q "using the sets already beside" "$work/run2.log" || fail "the second run did not reuse the sets"
grep -q "using the alphabet beside it" "$work/run2.log" || fail "the second run did not reuse the alphabet"
[ "$(cd "$d" && sha256sum train.csv dev.csv test.csv alphabet.txt)" = "$sums" ] || fail "the second run changed the files"

refused() { # refused NEEDLE ARGS...: exit 2 and NEEDLE in the output
  local needle=$1
  shift
  local out
  out=$("$cls" train "$@" "${common[@]}" 2>&1)
  local rc=$?
  [ $rc = 2 ] || fail "exit $rc for $*: $out"
  [[ $out == *"$needle"* ]] || fail "'$needle' not in: $out"
}
refused "not with --train_files" --auto_input_dataset "$d/all.csv" --train_files "$d/train.csv"
mkdir -p "$work/part" && cp "$d/all.csv" "$d/train.csv" "$work/part/"
refused "some of train.csv, dev.csv and test.csv are there" --auto_input_dataset "$work/part/all.csv"
mkdir -p "$work/tiny" && head -3 "$d/all.csv" >"$work/tiny/all.csv"
refused "too few to split" --auto_input_dataset "$work/tiny/all.csv"
mkdir -p "$work/two" && cp "$d/all.csv" "$work/two/a.csv" && cp "$d/all.csv" "$work/two/b.csv"
refused "the folder holds 2 CSV files" --auto_input_dataset "$work/two"
# an explicit alphabet is used as given: no alphabet.txt written
mkdir -p "$work/given" && cp "$d/all.csv" "$d/"*.wav "$work/given/"
"$cls" train --auto_input_dataset "$work/given/all.csv" --alphabet_config_path "$smoke/alphabet.txt" "${common[@]}" \
  --checkpoint_dir "$work/ckpt4" >"$work/given.log" 2>&1 || fail "with --alphabet_config_path: $(tail -3 "$work/given.log")"
[ ! -e "$work/given/alphabet.txt" ] || fail "an alphabet was written beside the CSV although one was given"
echo "auto_input: ok"
