#!/usr/bin/env bash
# `clspeech train --layer_norm` end to end (test cli_train_layer_norm): one epoch on LDC93S1 at n_hidden 8,
# the checkpoint's LayerNorm tensors (each with its shape) and its layer_norm metadata printed, transcribe
# on that checkpoint, the package export (which holds the norms and transcribes the same) and the ONNX
# export (which holds them too: TEST_ONNX --check parses it and prints its geometry), then a second
# epoch without --layer_norm, which must fail; "layer_norm: PASS" when every step did what it should
# (the expectations on the printed lines are the test's).
#   layer_norm_run.sh CLSPEECH SMOKE_DIR WORK_DIR TEST_ONNX
set -u
cls=$1 smoke=$2 work=$3 test_onnx=$4
rm -rf "$work"
run() {
  "$cls" train --train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 8 \
    --devices 0:0 --noshow_progressbar --summary_dir= --checkpoint_dir "$work" "$@"
}
run --epochs 1 --load_train init --layer_norm || { echo "layer_norm: FAIL: training"; exit 1; }
python3 - "$work/train-1.safetensors" <<'PY' || { echo "layer_norm: FAIL: reading the checkpoint"; exit 1; }
import json, struct, sys
data = open(sys.argv[1], "rb").read()
header = json.loads(data[8:8 + struct.unpack("<Q", data[:8])[0]])
for name, info in header.items():
    if "LayerNorm" in name:
        print(name, info["shape"])
print("layer_norm=" + header["__metadata__"].get("layer_norm", "0"))
PY
from_checkpoint=$("$cls" transcribe --checkpoint_dir "$work" --audio "$smoke/LDC93S1.wav" --devices 0:0) ||
  { echo "layer_norm: FAIL: transcribe"; exit 1; }
echo "$from_checkpoint"
# the package holds the norms (meta layer_norm=1) and transcribes as the checkpoint does
"$cls" export --checkpoint_dir "$work" --out "$work/model.clsm" || { echo "layer_norm: FAIL: export"; exit 1; }
from_package=$("$cls" transcribe --model "$work/model.clsm" --audio "$smoke/LDC93S1.wav" --devices 0:0) ||
  { echo "layer_norm: FAIL: transcribe --model"; exit 1; }
[ "$from_package" = "$from_checkpoint" ] ||
  { echo "layer_norm: FAIL: the package transcribes \"$from_package\", the checkpoint \"$from_checkpoint\""; exit 1; }
echo "package: 20 tensors, the same transcript"
# the ONNX file holds the norms (metadata layer_norm=1, the nine operators after each hidden Clip)
"$cls" export --format onnx --checkpoint_dir "$work" --out "$work/model.onnx" ||
  { echo "layer_norm: FAIL: export --format onnx"; exit 1; }
"$test_onnx" --check "$work/model.onnx" || { echo "layer_norm: FAIL: test_onnx --check model.onnx"; exit 1; }
if run --epochs 2; then echo "layer_norm: FAIL: resumed without --layer_norm"; exit 1; fi
rm -rf "$work"
echo "layer_norm: PASS"
