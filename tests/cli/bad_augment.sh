#!/usr/bin/env bash
# --augment specifications that are wrong (or that this build cannot run) are usage errors before
# any work: exit status 2, the message naming --augment, the specification and the piece at fault, and
# no device opened ("training on device" never printed).
#   bad_augment.sh CLSPEECH DATA_DIR
set -u
cls=$1
smoke=$2/deepspeech-smoke
train=(train --train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --noshow_progressbar
       --summary_dir "" --checkpoint_dir "${TMPDIR:-/tmp}/bad-augment-$$")
passed=0
failed=0
check() { # EXPECTED-TEXT ARGS...
  local want=$1
  shift
  local out status
  out=$(timeout 60 "$cls" "${train[@]}" "$@" 2>&1)
  status=$?
  if [ $status -eq 2 ] && grep -qF -- "$want" <<<"$out" && ! grep -q "training on device" <<<"$out"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $*: exit $status, expected 2 and \"$want\": $out"
  fi
}
check '--augment "nosuch": unknown augmentation "nosuch"' --augment nosuch
check '--augment "add[sigma=2]": add: unknown parameter "sigma"' --augment 'add[sigma=2]'
check 'frequency_mask: parameter "n" given twice' --augment 'frequency_mask[n=1,n=2]'
check 'time_mask: p must be in [0, 1], not 1.5' --augment 'time_mask[p=1.5]'
check 'time_mask: p must be in [0, 1], not -0.5' --augment 'time_mask[p=-0.5]'
check 'frequency_mask: size="-2": size must not be negative' --augment 'frequency_mask[size=-2]'
check 'time_mask: n="-1:3": n must not be negative' --augment 'time_mask[n=-1:3]'
check 'add: stddev="-1": stddev must not be negative' --augment 'add[stddev=-1]'
check 'dropout: rate="1:2": rate must be in [0, 1]' --augment 'dropout[rate=1:2]'
check 'frequency_mask: n="2.5" is not an integer range' --augment 'frequency_mask[n=2.5]'
check 'time_mask: size="1:2:3" is not a range' --augment 'time_mask[size=1:2:3]'
check 'time_mask: size="10~1~2" is not a range' --augment 'time_mask[size=10~1~2]'
check 'time_mask: size="10~-1": the radius after ~ must not be negative' --augment 'time_mask[size=10~-1]'
check 'add: "stddev" is not key=value' --augment 'add[stddev]'
check '"add[stddev=1" is not an augmentation specification' --augment 'add[stddev=1'
check 'overlay needs source=FILE' --augment overlay
# overlay's source: checked before any work (a missing file, no rows, no readable audio)
work=${TMPDIR:-/tmp}/bad-augment-src-$$
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
printf 'wav_filename,wav_filesize,transcript\n' >"$work/header_only.csv"
: >"$work/empty.csv"
printf 'not audio\n' >"$work/junk.wav"
printf 'wav_filename,wav_filesize,transcript\njunk.wav,10,x\nmissing.wav,10,x\n' >"$work/unreadable.csv"
check "--augment \"overlay[source=$work/none.csv,snr=1:10]\": overlay: source $work/none.csv: cannot open" \
      --augment "overlay[source=$work/none.csv,snr=1:10]"
check "overlay: source $work/header_only.csv: the CSV lists no audio" --augment "overlay[source=$work/header_only.csv]"
check "overlay: source $work/empty.csv: empty file" --augment "overlay[source=$work/empty.csv]"
check "overlay: source $work/unreadable.csv: none of its 2 audio files is readable (the first: $work/junk.wav" \
      --augment "overlay[source=$work/unreadable.csv]"
# codec, a good overlay source, the signal domain, pitch and warp pass: the bad specification after them is the
# one named
check '--augment "tempo[factor=1~1]": tempo: factor=1:1~1 can pick values at or below 0' \
      --augment "overlay[source=$smoke/ldc93s1.csv,layers=2]" --augment 'codec[bitrate=6000]' \
      --augment 'dropout[domain=signal]' --augment 'multiply[domain=signal]' --augment pitch --augment warp \
      --augment 'tempo[factor=1~1]'
check 'reverb: decay="-3": decay must not be negative' --augment 'reverb[decay=-3]'
check 'resample: rate="0": rate must be positive' --augment 'resample[rate=0]'
check 'resample: rate="8000.5" is not an integer range' --augment 'resample[rate=8000.5]'
check 'volume: unknown parameter "gain"' --augment 'volume[gain=3]'
check 'reverb: parameter "delay" given twice' --augment 'reverb[delay=1,delay=2]'
check 'volume: p must be in [0, 1], not 1.01' --augment 'volume[p=1.01]'
check 'volume: dbfs="-1e308~1e308": the range with its radius overflows' --augment 'volume[dbfs=-1e308~1e308]'
check 'pitch: pitch="0": pitch must be positive' --augment 'pitch[pitch=0]'
check 'tempo: factor="-1": factor must be positive' --augment 'tempo[factor=-1]'
check 'pitch: pitch=1:1~1 can pick values at or below 0' --augment 'pitch[pitch=1~1]'
check 'tempo: factor=0.5:2~0.75 can pick values at or below 0' --augment 'tempo[factor=0.5:2~0.75]'
check 'tempo: max_time="1~2" is not a number' --augment 'tempo[max_time=1~2]'
check 'warp: nt="-1": nt must not be negative' --augment 'warp[nt=-1]'
check 'warp: wf="-0.1": wf must not be negative' --augment 'warp[wf=-0.1]'
check 'warp: nf="1001": at most 1000 per utterance' --augment 'warp[nf=1001]'
# a good one before a bad one: the bad one is still found, by its place
check '--augment "tempo[factor=0]": tempo: factor="0": factor must be positive' --augment frequency_mask --augment 'tempo[factor=0]'
check '--augment runs in the device feature path: not with --features_device host' --augment add --features_device host
echo "bad_augment: $passed passed, $failed failed"
[ $failed -eq 0 ]
