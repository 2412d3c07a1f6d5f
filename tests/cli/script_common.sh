# Sourced by the tests/cli scripts run as `SCRIPT CLSPEECH DATA_DIR WORK`: sets cls, smoke (the
# DeepSpeech smoke data), work (made afresh) and prog (the script's name), and defines
# `fail MESSAGE`, which prints "PROG: FAIL: MESSAGE" and exits 1.
set -u
cls=$1
smoke=$2/deepspeech-smoke
work=$3
prog=$(basename "$0" .sh)
rm -rf "$work"
mkdir -p "$work"
fail() {
  echo "$prog: FAIL: $*"
  exit 1
}
