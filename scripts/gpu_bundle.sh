#!/usr/bin/env bash
# gpu_bundle.sh: packs what scripts/gpu_check.sh needs to run clspeech on a GPU machine that has a
# GPU driver but none of our Debian packages: the built programs (from build/), the shared
# libraries they load (the OpenCL ICD loader, CLBlast, clFFT, libsndfile and its codecs,
# libsamplerate) and a demo corpus; the test data is the repository's own (data/). Everything
# goes to .gpu/ (git-ignored).
#   bash scripts/gpu_bundle.sh [CORPUS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=.gpu
rm -rf "$out" && mkdir -p "$out/lib" "$out/bin"
for lib in $(ldd build/clspeech | awk '/=>/ {print $3}'); do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|libstdc++.so*|libgcc_s.so*|ld-linux*) ;;  # the target's own
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
for p in clspeech bench_ops bench_train bench_features bench_strategies; do cp build/$p "$out/bin/"; done
for t in build/tests/test_*; do cp "$t" "$out/bin/"; done
[ -n "${1:-}" ] && cp -r "$1" "$out/corpus"
du -sh "$out"
