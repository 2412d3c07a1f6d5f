#!/usr/bin/env bash
# Installs the Debian 12 packages clspeech needs (only those missing; apt-get runs only then) and
# builds it into build/ (or $1). Safe to run again. Needs root, or sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config          # toolchain
  ocl-icd-opencl-dev opencl-c-headers       # OpenCL ICD loader and headers
  pocl-opencl-icd                           # OpenCL on the CPU (PoCL): the default device without a GPU
  oclgrind                                  # a second OpenCL implementation, a simulated GPU that checks kernels (tests: vendors, oclgrind)
  libclblast-dev                            # GEMM
  libclfft-dev                              # FFT
  libsndfile1-dev                           # audio input
  libsamplerate0-dev                        # resampling
  libutf8proc-dev                           # Unicode NFKC, case and categories of imported transcripts (clspeech import)
  nettle-dev                                # SHA-256 (kernel cache keys, checksums of cache and tuning files)
  libjansson-dev                            # JSON output (devices --json, bench --json, --test_output_file)
  libprotobuf-c-dev protobuf-c-compiler     # TensorBoard event files: Event messages (protoc-c at build time)
  libisal-dev                               # CRC-32C of the event files' records (ISA-L's crc32_iscsi)
  python3                                   # a test reads checkpoints with Python's standard library
  python3-venv                              # the tests' venv with TensorBoard (PyPI), which reads our summaries
  clang libclang-rt-14-dev                  # the libFuzzer targets (tests/fuzz, label fuzz)
  openmpi-bin libopenmpi-dev                # --horovod: several processes under mpirun (optional at build time)
  iproute2                                  # the mpi tests' two network namespaces (ip netns, veth)
  espeak-ng                                 # speaks the Mandarin corpus of the bytes-mode test (tests/cli/bytes_mandarin.sh)
)
missing=()
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi

build_dir=${1:-build}
shift || true
cmake -S . -B "$build_dir" "$@"
cmake --build "$build_dir" -j "$(nproc)"
