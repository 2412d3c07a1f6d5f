#!/usr/bin/env bash
# DeepSpeech 0.9.3's command lines for augmentation and transfer learning (doc/TRAINING.rst) run
# unchanged but for the program name: all thirteen augmentations with TRAINING.rst's exact
# specifications (overlay's source a CSV where TRAINING.rst has a sample database), with
# --feature_cache and --cache_for_epochs, loading a source checkpoint from one folder with
# --drop_source_layers 1 and saving to another. A 20-row CSV of LDC93S1 gives the p=0.1 pieces
# something to act on; --n_hidden 32 keeps it fast. Checks: exit 0; finite losses; a new checkpoint
# in the save folder and the load folder byte for byte as it was; the notices for the cache; no cache
# entry for the training file. Then every augmentation at p=1 together, twice: the same checkpoint, and
# not the one of the same run without --augment.
#   deepspeech_augment_command.sh CLSPEECH DATA_DIR WORK
. "$(dirname "$0")/script_common.sh"
{
  echo "wav_filename,wav_filesize,transcript"
  for _ in $(seq 20); do echo "$smoke/LDC93S1.wav,93638,she had your dark suit in greasy wash water all year"; done
} >"$work/train.csv"
common=(--alphabet_config_path "$smoke/alphabet.txt" --n_hidden 32 --noshow_progressbar --summary_dir '' --devices 0:0)

# The source model, as a released checkpoint would be.
"$cls" train --train_files "$smoke/ldc93s1.csv" --epochs 1 --checkpoint_dir "$work/source" "${common[@]}" \
  >"$work/source.log" 2>&1 || fail "source training: exit $?: $(cat "$work/source.log")"
(cd "$work/source" && sha256sum -- * >"$work/source.sha256")

"$cls" train \
  --augment "overlay[p=0.5,source=$smoke/ldc93s1.csv,snr=50.0~30.0]" \
  --augment "reverb[p=0.1,delay=50.0~30.0,decay=10.0:2.0~1.0]" \
  --augment "resample[p=0.1,rate=12000:8000~4000]" \
  --augment "codec[p=0.1,bitrate=48000:16000]" \
  --augment "volume[p=0.1,dbfs=-10:-40]" \
  --augment "pitch[p=0.1,pitch=1~0.2]" \
  --augment "tempo[p=0.1,factor=1~0.5]" \
  --augment "warp[p=0.1,nt=4,nf=1,wt=0.5:1.0,wf=0.1:0.2]" \
  --augment "frequency_mask[p=0.1,n=1:3,size=1:5]" \
  --augment "time_mask[p=0.1,domain=signal,n=3:10~2,size=50:100~40]" \
  --augment "dropout[p=0.1,rate=0.05]" \
  --augment "add[p=0.1,domain=signal,stddev=0~0.5]" \
  --augment "multiply[p=0.1,domain=features,stddev=0~0.5]" \
  --feature_cache "$work/cache" --cache_for_epochs 10 \
  --drop_source_layers 1 \
  --save_checkpoint_dir "$work/target" \
  --load_checkpoint_dir "$work/source" \
  --train_files "$work/train.csv" \
  --dev_files "$smoke/new-home-in-the-stars-16k.csv" \
  --epochs 2 --train_batch_size 4 "${common[@]}" >"$work/run.log" 2>&1 || fail "exit $?: $(cat "$work/run.log")"

losses=$(sed -n 's/^Epoch [0-9]* | *\(Training\|Validation\) .*Loss: \([^ ]*\) .*/\2/p' "$work/run.log")
echo "losses: $(tr '\n' ' ' <<<"$losses")"
[ "$(wc -l <<<"$losses")" -eq 4 ] || fail "expected 2 training and 2 validation losses: $(cat "$work/run.log")"
grep -qviE '^[0-9]+\.[0-9]+$' <<<"$losses" && fail "a loss is not a finite number: $losses"
ls "$work/target"/train-*.safetensors >/dev/null 2>&1 || fail "no checkpoint saved in the save folder"
(cd "$work/source" && sha256sum --quiet -c "$work/source.sha256") || fail "the load folder changed"
[ "$(ls "$work/source" | wc -l)" -eq "$(wc -l <"$work/source.sha256")" ] || fail "files were added to the load folder"
grep -q "notice: --augment: the training set's features are made on the device every epoch" "$work/run.log" ||
  fail "no notice about the training set and the cache"
grep -q "notice: --cache_for_epochs 10 has no effect" "$work/run.log" || fail "no notice about --cache_for_epochs"
n=$(find "$work/cache" -name '*.feat' | wc -l)
"$cls" features --feature_cache "$work/cache" --audio "$smoke/LDC93S1.wav" >/dev/null || fail "features probe failed"
[ "$(find "$work/cache" -name '*.feat' | wc -l)" -eq $((n + 1)) ] || fail "the training file's features were cached"

# Every augmentation applied to every utterance, twice: bit-identical checkpoints.
all=(--augment "overlay[source=$smoke/ldc93s1.csv,snr=10~5,layers=2]" --augment "reverb[delay=30~10,decay=6~2]"
     --augment "resample[rate=8000~2000]" --augment "codec[bitrate=16000~8000]" --augment "volume[dbfs=-20~5]"
     --augment "time_mask[domain=signal,n=2,size=40]" --augment "add[domain=signal,stddev=0.01]"
     --augment "pitch[pitch=1~0.2]" --augment "tempo[factor=1~0.3]" --augment "warp[nt=4,nf=1,wt=0.5,wf=0.1]"
     --augment "frequency_mask[n=1:3,size=1:5]" --augment "dropout[rate=0.05]"
     --augment "multiply[domain=features,stddev=0.2]")
for run in a b; do
  "$cls" train --train_files "$work/train.csv" --epochs 1 --train_batch_size 4 --checkpoint_dir "$work/all-$run" \
    "${common[@]}" \
    "${all[@]}" >"$work/all-$run.log" 2>&1 || fail "every augmentation, run $run: exit $?: $(cat "$work/all-$run.log")"
done
cmp "$work/all-a/train-5.safetensors" "$work/all-b/train-5.safetensors" || fail "two runs gave different checkpoints"
"$cls" train --train_files "$work/train.csv" --epochs 1 --train_batch_size 4 --checkpoint_dir "$work/all-plain" \
  "${common[@]}" >"$work/all-plain.log" 2>&1 || fail "the run without --augment: exit $?: $(cat "$work/all-plain.log")"
cmp -s "$work/all-a/train-5.safetensors" "$work/all-plain/train-5.safetensors" &&
  fail "every augmentation at p=1 gave the checkpoint of the run without --augment"
echo "deepspeech_augment_command: ok"
