#!/usr/bin/env bash
# `clspeech train --layer_norm` end to end (test cli_train_layer_norm): one epoch on LDC93S1 at n_hidden 8,
# the checkpoint's LayerNorm tensors (each with its shape) and its layer_norm metadata printed, transcribe
# on that checkpoint, the package and ONNX exports (which refuse it), then a second epoch without
# --layer_norm, which must fail; "layer_norm: PASS" when
# every step did what it should (the expectations on the printed lines are the test's).
#   layer_norm_run.sh CLSPEECH SMOKE_DIR WORK_DIR
set -u
cls=$1 smoke=$2 work=$3
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
"$cls" transcribe --checkpoint_dir "$work" --audio "$smoke/LDC93S1.wav" --devices 0:0 ||
  { echo "layer_norm: FAIL: transcribe"; exit 1; }
for format in clsm onnx; do # neither holds the norms yet: refused, nothing written
  if "$cls" export --format "$format" --checkpoint_dir "$work" --out "$work/model.$format"; then
    echo "layer_norm: FAIL: export --format $format"; exit 1
  fi
  [ ! -e "$work/model.$format" ] || { echo "layer_norm: FAIL: export --format $format wrote a file"; exit 1; }
done
if run --epochs 2; then echo "layer_norm: FAIL: resumed without --layer_norm"; exit 1; fi
rm -rf "$work"
echo "layer_norm: PASS"
