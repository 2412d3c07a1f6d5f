#!/bin/bash
# Nothing is read before it is written (label oclgrind): one training step of LDC93S1 on PoCL (our GEMM
# kernels, device MFCC) and one on Oclgrind (the GPU path: CLBlast's GEMMs, host features), each run
# twice, plainly and with every new OpenCL buffer filled with NaN (nan_fill.c, preloaded); the two
# checkpoints must be byte-identical and the losses finite. OCL_ICD_VENDORS names both vendors.
# Prints "nan_fill: PASS" at the end, or "nan_fill: FAIL: ..." and exits 1.
#   nan_fill.sh CLSPEECH NAN_FILL_LIBRARY DATA_DIR WORK
set -u
cls=$1 lib=$2 data=$3 work=$4 prog=nan_fill
rm -rf "$work" && mkdir -p "$work"
fail() { echo "$prog: FAIL: $*"; exit 1; }
step() { # NAME DEVICES FEATURES [PRELOAD]
  env ${4:+LD_PRELOAD=$4} "$cls" train --train_files "$data/deepspeech-smoke/ldc93s1.csv" --alphabet_config_path \
    "$data/deepspeech-smoke/alphabet.txt" --n_hidden 8 --epochs 1 --load_train init --noshow_progressbar \
    --summary_dir= --devices "$2" --features_device "$3" --checkpoint_dir "$work/$1" > "$work/$1.log" 2>&1 ||
    { cat "$work/$1.log"; fail "$1: exit $?"; }
  grep -E 'Training .*Loss: [0-9]+\.[0-9]+ ' "$work/$1.log" || { cat "$work/$1.log"; fail "$1: no finite loss"; }
}
for run in "pocl pthread device" "oclgrind oclgrind host"; do
  set -- $run
  step "$1" "$2" "$3"
  step "$1-nan" "$2" "$3" "$lib"
  cmp "$work/$1/train-1.safetensors" "$work/$1-nan/train-1.safetensors" ||
    fail "$1: the checkpoint differs when new buffers hold NaN: something is read before it is written"
done
echo "$prog: PASS: PoCL and Oclgrind give the same checkpoint when every new buffer holds NaN"
