#!/usr/bin/env bash
# Dev sets are never augmented: with a learning rate too small to move a weight and no model dropout, an
# epoch's validation loss is the training loss of the same utterance without --augment, while the
# training loss with dropout[rate=1] (every spectrogram value dropped) differs from it; the same with the
# signal augmentations on the decoded audio (volume, reverb, resample).
#   augment_not_in_eval.sh CLSPEECH DATA_DIR WORK
set -u
cls=$1
smoke=$2/deepspeech-smoke
work=$3
rm -rf "$work"
run() { # NAME [FLAGS...]: prints "TRAINING VALIDATION" losses
  local name=$1
  shift
  "$cls" train --train_files "$smoke/ldc93s1.csv" --dev_files "$smoke/ldc93s1.csv" \
    --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 16 --epochs 1 --devices 0:0 --load_train init \
    --noshow_progressbar --summary_dir '' --learning_rate 1e-30 --dropout_rate 0 --checkpoint_dir "$work/$name" "$@" 2>&1 |
    sed -n 's/^Epoch 0 | *\(Training\|Validation\) .*Loss: \([0-9.]*\) .*/\2/p' | tr '\n' ' '
}
read -r plain_train plain_dev <<<"$(run plain)"
read -r aug_train aug_dev <<<"$(run augmented --augment 'dropout[rate=1]')"
read -r sig_train sig_dev <<<"$(run signal --augment 'volume[dbfs=-30]' --augment 'reverb[decay=2]' --augment 'resample[rate=4000]')"
echo "without --augment: training $plain_train, validation $plain_dev"
echo "with dropout[rate=1]: training $aug_train, validation $aug_dev"
echo "with volume, reverb, resample: training $sig_train, validation $sig_dev"
if [ -n "$plain_train" ] && [ "$aug_dev" = "$plain_train" ] && [ "$plain_dev" = "$plain_train" ] &&
   [ -n "$aug_train" ] && [ "$aug_train" != "$plain_train" ] &&
   [ "$sig_dev" = "$plain_train" ] && [ -n "$sig_train" ] && [ "$sig_train" != "$plain_train" ]; then
  echo "augment_not_in_eval: ok"
else
  echo "augment_not_in_eval: FAIL"
  exit 1
fi
