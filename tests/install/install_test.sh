#!/usr/bin/env bash
# The `install` test: installs the build into a fresh prefix under the build folder, checks what is
# there (the library, exactly the public headers of include/clspeech/ and none of internal/, the CMake
# package, clspeech.pc, the command), then builds every program of examples/ outside the tree twice —
# with `cc ... $(pkg-config --cflags --libs clspeech)` and with a small CMake project calling
# find_package(clspeech REQUIRED) — and runs each build. examples/train_evaluate.c, when present, runs as
# `train_evaluate CSV ALPHABET CHECKPOINT_DIR` on LDC93S1, then examples/stt_stream.c as `stt_stream
# CHECKPOINT_DIR LDC93S1.wav` on its checkpoint; every other example runs without arguments.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR C_COMPILER SMOKE_DATA_DIR [EXTRA_C_FLAGS]
set -euo pipefail
build=$1 src=$2 work=$3 cc=$4 smoke=$5 extra=${6:-}
prefix=$work/prefix
fail() { echo "install: FAILED: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"

cmake --install "$build" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }

# What was installed.
libdir=$(dirname "$(find "$prefix" -name libclspeech.a | head -1)")
[ -f "$libdir/libclspeech.a" ] || fail "no libclspeech.a under $prefix"
[ -f "$libdir/pkgconfig/clspeech.pc" ] || fail "no clspeech.pc in $libdir/pkgconfig"
[ -f "$libdir/cmake/clspeech/clspeechConfig.cmake" ] || fail "no clspeechConfig.cmake in $libdir/cmake/clspeech"
[ -x "$prefix/bin/clspeech" ] || fail "no bin/clspeech"
want=$(cd "$src/include/clspeech" && ls *.h | sort | tr '\n' ' ')
got=$(cd "$prefix/include/clspeech" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')
[ "$want" = "$got" ] || fail "installed headers are [$got], expected the public ones [$want] (internal/ not installed)"
"$prefix/bin/clspeech" --version > /dev/null 2>&1 || "$prefix/bin/clspeech" --help > /dev/null 2>&1 ||
  fail "the installed clspeech command does not run"

examples=("$src"/examples/*.c)
[ -f "${examples[0]}" ] || fail "no examples in $src/examples"
export PKG_CONFIG_PATH=$libdir/pkgconfig

# 1. pkg-config: every example as strict C11, nothing defined first.
mkdir -p "$work/pc"
pc_flags=$(pkg-config --cflags --libs clspeech) || fail "pkg-config --cflags --libs clspeech"
pkg-config --static --libs clspeech > /dev/null || fail "pkg-config --static --libs clspeech"
for ex in "${examples[@]}"; do
  name=$(basename "$ex" .c)
  # shellcheck disable=SC2086  # the flags are words
  "$cc" -std=c11 -pedantic -Wall -Wextra -Werror $extra "$ex" -o "$work/pc/$name" $pc_flags ||
    fail "$name: cc with pkg-config ($pc_flags)"
done

# 2. find_package(clspeech): a project of its own, the examples copied in.
mkdir -p "$work/cmake-src"
cp "${examples[@]}" "$work/cmake-src/"
{
  echo "cmake_minimum_required(VERSION 3.20)"
  echo "project(clspeech_examples C)"
  echo "set(CMAKE_C_STANDARD 11)"
  echo "find_package(clspeech REQUIRED)"
  echo "message(STATUS \"clspeech \${clspeech_VERSION} from \${clspeech_DIR}\")"
  for ex in "${examples[@]}"; do
    name=$(basename "$ex" .c)
    echo "add_executable($name $name.c)"
    echo "target_link_libraries($name PRIVATE clspeech::clspeech)"
  done
} > "$work/cmake-src/CMakeLists.txt"
cmake -S "$work/cmake-src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$extra" > "$work/cmake-configure.log" 2>&1 || { cat "$work/cmake-configure.log"; fail "find_package(clspeech)"; }
cmake --build "$work/cmake-build" -j 2 > "$work/cmake-build.log" 2>&1 || { cat "$work/cmake-build.log"; fail "the find_package build"; }

# 3. Run both builds of every example.
for how in pc cmake-build; do
  for ex in "${examples[@]}"; do
    name=$(basename "$ex" .c)
    args=()
    if [ "$name" = train_evaluate ]; then
      args=("$smoke/ldc93s1.csv" "$smoke/alphabet.txt" "$work/checkpoints-$how")
    fi
    [ "$name" = stt_stream ] && continue # below, on train_evaluate's checkpoint
    echo "--- $how/$name ${args[*]}"
    "$work/$how/$name" "${args[@]}" || fail "$how/$name exited with status $?"
  done
  # examples/stt_stream.c, when present, streams LDC93S1 through train_evaluate's checkpoint, the folder
  # described as `clspeech train` describes it (alphabet.txt, features.txt); its last line is the transcript.
  if [ -x "$work/$how/stt_stream" ]; then
    ckpt=$work/checkpoints-$how
    cp "$smoke/alphabet.txt" "$ckpt/alphabet.txt"
    printf 'audio_sample_rate=16000\nfeature_win_len=32\nfeature_win_step=20\n' > "$ckpt/features.txt"
    echo "--- $how/stt_stream $ckpt $smoke/LDC93S1.wav"
    "$work/$how/stt_stream" "$ckpt" "$smoke/LDC93S1.wav" > "$work/stt-$how.out" ||
      fail "$how/stt_stream exited with status $?"
    cat "$work/stt-$how.out"
    tail -n 1 "$work/stt-$how.out" | grep -Eq "^[a-z' ]*$" || fail "$how/stt_stream: the last line is no transcript"
  fi
done
echo "install: ok: ${#examples[@]} examples built with pkg-config and with find_package(clspeech), and run"
