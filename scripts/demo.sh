#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine: installs what is missing, builds, and shows the
# OpenCL devices clspeech finds, with each one's kernel build and self-test. (The training issue
# turns this into a demo training run on a corpus made with espeak-ng.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build
./build/clspeech devices
