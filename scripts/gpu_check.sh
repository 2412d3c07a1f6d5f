#!/usr/bin/env bash
# gpu_check.sh: runs clspeech on an NVIDIA GPU from the bundle scripts/gpu_bundle.sh made (.gpu/):
# the device list and self-test, the op tests against TensorFlow's fixtures, the resume test, the
# op and training-step benchmarks (beside PyTorch on the same GPU when it is installed), LDC93S1
# trained like DeepSpeech's smoke test, and two towers on the GPU. Logs go to $OUT (or /tmp/gpu).
#   bash scripts/gpu_check.sh
set -u
cd "$(dirname "$0")/.."
root=$PWD g=$PWD/.gpu out=${OUT:-/tmp/gpu}
mkdir -p "$out"
export LD_LIBRARY_PATH=$g/lib CLSPEECH_KERNEL_CACHE_DIR=/tmp/clspeech-kc PYTHONUNBUFFERED=1
# The NVIDIA OpenCL driver, announced to the ICD loader through a private vendors folder.
nv=$(ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 \
  /usr/lib64/libnvidia-opencl.so.1 2>/dev/null | head -1)
[ -z "$nv" ] && nv=$(find /usr /opt -name 'libnvidia-opencl.so*' 2>/dev/null | head -1)
echo "NVIDIA OpenCL driver: ${nv:-not found}"
mkdir -p "$g/vendors" && echo "${nv:-libnvidia-opencl.so.1}" >"$g/vendors/nvidia.icd"
export OCL_ICD_VENDORS=$g/vendors
# The tests were built with /work/main/tests/fixtures and /work/main/data (the repository's) compiled in.
mkdir -p /work && [ "$root" != /work/main ] && ln -sfn "$root" /work/main
step() { echo; echo "=== $* ($(date +%T))"; }
run() { local name=$1; shift; step "$name"; ( time "$@" ) 2>&1 | tee "$out/$name.log"; }
nvidia-smi -L
run devices "$g/bin/clspeech" devices
for t in test_dense test_lstm test_ctc test_adam test_model test_trainer; do run "$t" "$g/bin/$t"; done
run bench_ops "$g/bin/bench_ops" --n_hidden 512,2048 --reps 5
run compare_train env CLSPEECH_BENCH_VENV=none python3 bench/compare_train.py --build "$g/bin" --n_hidden 512,2048 --steps 5 --torch_device cuda
smoke=$root/data/deepspeech-smoke
run ldc93s1 "$g/bin/clspeech" train --train_files "$smoke/ldc93s1.csv" --test_files "$smoke/ldc93s1.csv" \
  --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 100 --epochs 250 --train_batch_size 1 \
  --learning_rate 0.001 --checkpoint_dir /tmp/ldc --load_train init --noshow_progressbar
if [ -d "$g/corpus" ]; then
  c=$g/corpus
  for towers in 1 2; do
    run "demo_towers$towers" "$g/bin/clspeech" train --train_files "$c/train.csv" --dev_files "$c/dev.csv" \
      --test_files "$c/test.csv" --alphabet_config_path "$c/alphabet.txt" --n_hidden 512 --train_batch_size 16 \
      --epochs 10 --learning_rate 0.0005 --towers_per_device $towers --log_placement --beam_width 64 \
      --checkpoint_dir /tmp/demo$towers --load_train init --noshow_progressbar
  done
fi
