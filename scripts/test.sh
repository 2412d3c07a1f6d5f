#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, builds with warnings as errors and
# runs every test on three PoCL CPU devices (POCL_DEVICES="pthread pthread basic"), then builds again
# with AddressSanitizer + UndefinedBehaviorSanitizer and runs every test once more but the slow
# LDC93S1 overfit (250 epochs; label `slow`) and the tests on Oclgrind (labels `vendors`, `oclgrind`).
# Pass a CTest label to run part of the suite: bash scripts/test.sh devices
set -euo pipefail
cd "$(dirname "$0")/.."
label=${1:-}
ctest_args=(--output-on-failure -j 2)
[ -n "$label" ] && ctest_args+=(-L "$label")

echo "=== build (warnings are errors) ==="
bash scripts/setup.sh build -DCLSPEECH_WERROR=ON
echo "=== tests ==="
(cd build && ctest "${ctest_args[@]}")

echo "=== build with AddressSanitizer + UndefinedBehaviorSanitizer ==="
# (the TensorBoard venv the first build's tests made serves these too)
bash scripts/setup.sh build-asan -DCLSPEECH_WERROR=ON -DCLSPEECH_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCLSPEECH_TB_VENV="$PWD/build/tb-venv"
# PoCL's cache of compiled kernels from the first pass seeds this build's (tests/CMakeLists.txt gives each
# build its own): the same kernel sources and options build the same binaries, and under ASan PoCL's
# compiler (its every allocation intercepted) took 2-3x as long, most of this pass. The sanitizers check
# clspeech's code, which runs the same either way: every program is still built through clBuildProgram,
# and PoCL answers from the cache.
if [ -d build/test-pocl-cache ]; then
  mkdir -p build-asan/test-pocl-cache
  cp -r build/test-pocl-cache/. build-asan/test-pocl-cache/
fi
# Less the slow LDC93S1 overfit (label slow) and the tests on Oclgrind (vendors, oclgrind): the simulator's own
# runtime is not ours to check, and it runs them several times slower under ASan.
echo "=== tests under the sanitizers (less the labels slow, vendors and oclgrind) ==="
(cd build-asan && ctest "${ctest_args[@]}" -LE 'slow|vendors|oclgrind')
