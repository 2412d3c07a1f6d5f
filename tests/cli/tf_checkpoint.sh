#!/usr/bin/env bash
# DeepSpeech's TensorFlow checkpoints through the clspeech command (the fixtures of
# tests/ref/make_tf_checkpoint_fixture.py): `transcribe --checkpoint_dir` of a TF folder with the
# alphabet from --alphabet_config_path (one of another size refused), `train --load_checkpoint_dir`
# of it for an epoch (saving clspeech's own checkpoints, the global step carried on; saving into the TF
# folder itself refused, its index kept), the CudnnLSTM
# folder refused without --load_cudnn and loaded with it, and `export --format tf` of the run read
# back by transcribe with the same transcript.
#   tf_checkpoint.sh CLSPEECH DATA_DIR FIXTURES_DIR WORK_DIR
set -euo pipefail
cls=$1 smoke=$2/deepspeech-smoke fx=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "tf checkpoint: $*"; exit 1; }
abc=(--alphabet_config_path "$smoke/alphabet.txt")
train=(train --train_files "$smoke/ldc93s1.csv" "${abc[@]}" --n_hidden 8 --epochs 1 --noshow_progressbar --devices 0:0)

"$cls" transcribe --checkpoint_dir "$fx/canonical" "${abc[@]}" --audio "$smoke/LDC93S1.wav" --devices 0:0 \
  > "$work/tf.out" || fail "transcribe from the TF folder failed"
grep -q "^.*LDC93S1.wav: " "$work/tf.out" || fail "no transcript: $(cat "$work/tf.out")"
if "$cls" transcribe --checkpoint_dir "$fx/canonical" --alphabet_config_path "$(dirname "$0")/alphabet-no-e.txt" \
     --audio "$smoke/LDC93S1.wav" --devices 0:0 > "$work/bad.out" 2>&1; then
  fail "an alphabet of another size was taken"
fi
grep -q "classes" "$work/bad.out" || fail "the alphabet's size is not named: $(cat "$work/bad.out")"

"$cls" "${train[@]}" --load_checkpoint_dir "$fx/canonical" --checkpoint_dir "$work/run" > "$work/train.out" 2>&1 ||
  { cat "$work/train.out"; fail "train --load_checkpoint_dir of the TF folder failed"; }
grep -q "global step 6" "$work/train.out" && [ -f "$work/run/train-6.safetensors" ] ||
  fail "not trained on from the global step 5 of the TF checkpoint: $(ls "$work/run")"

cp -r "$fx/canonical" "$work/copy"
if "$cls" "${train[@]}" --checkpoint_dir "$work/copy" > "$work/into.out" 2>&1; then
  fail "training saved into a TF folder"
fi
grep -q "another --save_checkpoint_dir" "$work/into.out" && cmp -s "$fx/canonical/checkpoint" "$work/copy/checkpoint" ||
  fail "saving into the TF folder not refused before any work: $(cat "$work/into.out")"

if "$cls" "${train[@]}" --load_checkpoint_dir "$fx/cudnn" --checkpoint_dir "$work/cudnn-no" > "$work/no.out" 2>&1; then
  fail "the CudnnLSTM checkpoint loaded without --load_cudnn"
fi
grep -q -- "--load_cudnn" "$work/no.out" || fail "the refusal does not name --load_cudnn: $(cat "$work/no.out")"
"$cls" "${train[@]}" --load_checkpoint_dir "$fx/cudnn" --load_cudnn --checkpoint_dir "$work/cudnn" > "$work/cudnn.out" 2>&1 ||
  { cat "$work/cudnn.out"; fail "--load_cudnn failed"; }
grep -q "missing Adam slots initialised to zero" "$work/cudnn.out" || fail "no --load_cudnn notice: $(cat "$work/cudnn.out")"

"$cls" export --checkpoint_dir "$work/run" --format tf --out "$work/tf" || fail "export --format tf failed"
[ -f "$work/tf/model.ckpt-6.index" ] && grep -q 'model_checkpoint_path: "model.ckpt-6"' "$work/tf/checkpoint" ||
  fail "export wrote $(ls "$work/tf")"
"$cls" transcribe --checkpoint_dir "$work/run" "${abc[@]}" --audio "$smoke/LDC93S1.wav" --devices 0:0 > "$work/run.out"
"$cls" transcribe --checkpoint_dir "$work/tf" "${abc[@]}" --audio "$smoke/LDC93S1.wav" --devices 0:0 > "$work/back.out"
cmp "$work/run.out" "$work/back.out" || fail "the exported folder transcribes otherwise"
echo "tf checkpoint: ok"
