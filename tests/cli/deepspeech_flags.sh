#!/usr/bin/env bash
# DeepSpeech 0.9.3's training flags that clspeech had refused as unknown (issue 48), as a user of
# DeepSpeech types them: every one is either taken (with a notice where it has no effect here) or
# refused naming why, never "unknown flag"; --export_dir writes the package, its metadata file, with
# --export_onnx the ONNX file `export --format onnx` writes, and with --export_zip an archive Python's
# zipfile reads back byte for byte; the package transcribes as
# the checkpoint does; --one_shot_infer prints what `clspeech transcribe` prints for that file, after
# training and alone; --remove_export empties an old export; --normalize_sample_rate false refuses an
# 8 kHz file, naming it, where the default resamples it.
#   deepspeech_flags.sh CLSPEECH DATA_DIR WORK_DIR
. "$(dirname "$0")/script_common.sh"
export POCL_DEVICES=${POCL_DEVICES:-pthread}
cd "$work" || fail "no work folder"
base=(--train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 8
      --noshow_progressbar --summary_dir= --epochs 0 --checkpoint_dir "$work/none")

# Each flag of the issue's list: accepted (exit 0 on a run that does nothing else) or refused (exit 2)
# with its reason; the words each message must hold.
check() { # FLAG-ARGS... -- STATUS WORDS
  local args=() status words
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  status=$2 words=$3
  out=$("$cls" train "${base[@]}" "${args[@]}" 2>&1)
  got=$?
  grep -q "unknown flag" <<<"$out" && fail "${args[*]}: unknown flag: $out"
  [ "$got" -eq "$status" ] || fail "${args[*]}: exit status $got, not $status: $out"
  grep -q -- "$words" <<<"$out" || fail "${args[*]}: no \"$words\" in: $out"
  echo "${args[*]}: exit $got, says \"$words\""
}
check --automatic_mixed_precision -- 2 "no fp16 kernels yet"
check --export_tflite -- 2 "export --format tf"
check --export_zip -- 2 "give --export_dir too"
check --train_cudnn -- 0 "notice: --train_cudnn: clspeech's LSTM is one kernel"
check --normalize_sample_rate=false -- 0 "FINISHED\|training set"
check --read_buffer 4MB -- 0 "notice: --read_buffer 4MB has no effect"
check --read_buffer 4XB -- 2 "must be a size"
check --use_allow_growth -- 0 "notice: --use_allow_growth has no effect"
check --inter_op_parallelism_threads 4 -- 0 "notice: --inter_op_parallelism_threads"
check --log_level 2 -- 0 "notice: --log_level 2 has no effect"
check --one_shot_infer "$work/missing.wav" -- 2 "one_shot_infer $work/missing.wav"
check --scorer a.scorer --scorer_path b.scorer -- 2 "one flag under two names"
check --layer_norm -- 0 "training set"
check --bytes_output_mode -- 0 "training set"
check --load_cudnn -- 0 "training set"
out=$("$cls" export --export_dir x 2>&1)
[ $? -eq 2 ] && grep -q "acts at the end of clspeech train; here use --out" <<<"$out" || fail "export --export_dir: $out"

# Training with the export and the one-shot transcription at its end.
ck=$work/ck
train=(train --train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 16
       --epochs 2 --checkpoint_dir "$ck" --noshow_progressbar --summary_dir= --beam_width 1)
out=$("$cls" "${train[@]}" --export_dir "$work/exp" --export_zip --export_onnx --export_file_name ldc --export_author_id me \
      --export_model_name ldc93s1 --export_model_version 1.2 --export_language en-Latn-US \
      --one_shot_infer "$smoke/LDC93S1.wav" 2>"$work/train.err") || fail "training with the export: $(tail -5 "$work/train.err")"
[ -s "$work/exp/ldc.clsm" ] || fail "no package exp/ldc.clsm: $(ls "$work/exp")"
md=$work/exp/me_ldc93s1_1.2.md
grep -q "^language: en-Latn-US$" "$md" && grep -q "^acoustic_model: ldc.clsm$" "$md" && grep -q "^n_hidden: 16$" "$md" ||
  fail "the metadata file: $(cat "$md" 2>&1)"
python3 - "$work/exp.zip" "$work/exp" <<'EOF' || fail "the archive does not hold the export's files"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
names = sorted(z.namelist())
assert names == ["ldc.clsm", "ldc.onnx", "me_ldc93s1_1.2.md"], names
for n in names:
    assert z.read(n) == open(sys.argv[2] + "/" + n, "rb").read(), n
print("exp.zip: " + ", ".join(names) + " read back byte for byte")
EOF
"$cls" export --format onnx --checkpoint_dir "$ck" --out "$work/direct.onnx" >/dev/null 2>&1 &&
  cmp "$work/direct.onnx" "$work/exp/ldc.onnx" || fail "--export_onnx differs from export --format onnx"
one_shot=$(grep "^$smoke/LDC93S1.wav: " <<<"$out")
[ -n "$one_shot" ] || fail "--one_shot_infer printed no transcript: $out"
want=$("$cls" transcribe --checkpoint_dir "$ck" --beam_width 1 --audio "$smoke/LDC93S1.wav" 2>/dev/null)
[ "$one_shot" = "$want" ] || fail "--one_shot_infer printed \"$one_shot\", transcribe \"$want\""
from_package=$("$cls" transcribe --model "$work/exp/ldc.clsm" --beam_width 1 --audio "$smoke/LDC93S1.wav" 2>/dev/null)
[ "$from_package" = "$want" ] || fail "the exported package transcribes \"$from_package\", the checkpoint \"$want\""
echo "one-shot = transcribe = package: $want"
# export --format tf: never into the checkpoint folder (TF's index would replace clspeech's), no scorer flags.
out=$("$cls" export --format tf --checkpoint_dir "$ck" --out "$ck" 2>&1)
[ $? -eq 2 ] && grep -q "is the checkpoint folder" <<<"$out" || fail "export --format tf into the checkpoint folder: $out"
[ -e "$ck/model.ckpt-2.index" ] && fail "export --format tf wrote into the checkpoint folder"
# --scorer is --scorer_path given (the parser's alias): the ONNX export refuses it as it refuses --scorer_path.
out=$("$cls" export --format onnx --checkpoint_dir "$ck" --out "$work/s.onnx" --scorer "$work/none.scorer" 2>&1)
[ $? -eq 2 ] && grep -q "scorer_path: an ONNX file carries no scorer" <<<"$out" || fail "export --format onnx --scorer: $out"
out=$("$cls" export --format tf --checkpoint_dir "$ck" --out "$work/tf" --lm_alpha 1 2>&1)
[ $? -eq 2 ] && grep -q "a TensorFlow checkpoint carries no scorer" <<<"$out" || fail "export --format tf --lm_alpha: $out"

# --one_shot_infer alone (no training): the folder's checkpoint.
alone=$("$cls" train --checkpoint_dir "$ck" --beam_width 1 --one_shot_infer "$smoke/LDC93S1.wav" 2>/dev/null)
[ "$alone" = "$want" ] || fail "--one_shot_infer alone printed \"$alone\""
# --export_zip into a folder that is not empty: refused before any work.
out=$("$cls" "${train[@]}" --export_dir "$work/exp" --export_zip 2>&1)
[ $? -eq 2 ] && grep -q "must be empty or new" <<<"$out" || fail "--export_zip into a full folder: $out"
grep -q "training on device" <<<"$out" && fail "--export_zip into a full folder trained first"
# --remove_export: the old files gone, a new package written.
touch "$work/exp/stale.txt"
out=$("$cls" train --checkpoint_dir "$ck" --alphabet_config_path "$smoke/alphabet.txt" --export_dir "$work/exp" \
      --remove_export 2>&1) || fail "--remove_export: $out"
grep -q "removed 4 files from $work/exp" <<<"$out" || fail "--remove_export did not say it removed 4 files: $out"
[ ! -e "$work/exp/stale.txt" ] && [ -s "$work/exp/output_graph.clsm" ] && [ -s "$work/exp/author_model_0.0.1.md" ] ||
  fail "after --remove_export: $(ls "$work/exp")"

# --normalize_sample_rate: the default resamples an 8 kHz file; false refuses it, naming it.
eight=(train --train_files "$smoke/ldc93s1_8k.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 8
       --epochs 1 --checkpoint_dir "$work/ck8" --noshow_progressbar --summary_dir=)
"$cls" "${eight[@]}" >/dev/null 2>&1 || fail "8 kHz audio with resampling did not train"
out=$("$cls" "${eight[@]}" --checkpoint_dir "$work/ck8b" --normalize_sample_rate=false 2>&1)
[ $? -ne 0 ] && grep -q "ldc93s1_8k.csv:2: .*LDC93S1_pcms16le_1_8000.wav: the audio is at 8000 Hz, not 16000 Hz" <<<"$out" ||
  fail "--normalize_sample_rate false on 8 kHz audio: $out"
out=$("$cls" transcribe --checkpoint_dir "$ck" --normalize_sample_rate=false --audio "$smoke/LDC93S1_pcms16le_1_8000.wav" 2>&1)
[ $? -ne 0 ] && grep -q "LDC93S1_pcms16le_1_8000.wav: the audio is at 8000 Hz" <<<"$out" ||
  fail "transcribe --normalize_sample_rate false on 8 kHz audio: $out"
echo "$prog: ok"
