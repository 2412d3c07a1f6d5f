#!/usr/bin/env bash
# Runs the same set of clspeech scenarios with two binaries and diffs what each printed, for
# refactorings that must not change behaviour: every command's --help, bad flags and bad values,
# bad input files, `devices`, `features`, `lm`, a short training run with a test set, `transcribe`
# and `export` of its checkpoint. Before the diff, each run's output has its timings, rates, dates,
# process ids, temporary names and the scenario's own folder replaced by fixed words; everything
# else (losses, WER, messages, exit statuses, the files' names and flags.txt) must match.
#
#   scripts/cli_scenarios.sh OLD_CLSPEECH NEW_CLSPEECH [WORK_DIR]
#
# Prints one line per scenario ("same" or "DIFFERS") and the diffs; exits 0 when all are the same.
# Runs on PoCL's first CPU device (POCL_DEVICES=pthread). Takes about a minute per binary.
set -u
old=$(realpath "$1") new=$(realpath "$2")
here=$(cd "$(dirname "$0")/.." && pwd)
work=${3:-$(mktemp -d /tmp/cli-scenarios.XXXXXX)}
smoke=$here/data/deepspeech-smoke
formats=$here/data/formats
export POCL_DEVICES=${POCL_DEVICES:-pthread}

# Inputs both sides read: a CSV with a malformed row, one with a character outside the alphabet,
# audio that is not audio.
inputs=$work/inputs
mkdir -p "$inputs"
printf 'wav_filename,wav_filesize,transcript\n%s,93638,she had\nonly-two-fields,1\n' "$smoke/LDC93S1.wav" >"$inputs/bad-row.csv"
printf 'wav_filename,wav_filesize,transcript\n%s,93638,she had \xc3\xa9t\xc3\xa9\n' "$smoke/LDC93S1.wav" >"$inputs/outside.csv"
head -c 5000 /dev/urandom >"$inputs/noise.wav"
printf 'wav_filename,wav_filesize,transcript\n%s,5000,noise\n' "$inputs/noise.wav" >"$inputs/corrupt.csv"
printf 'wav_filename,wav_filesize,transcript\n' >"$inputs/four.csv"
for i in 1 2 3 4; do printf '%s,93638,she had your dark suit in greasy wash water all year\n' "$smoke/LDC93S1.wav"; done >>"$inputs/four.csv"
short=(--alphabet_config_path "$smoke/alphabet.txt" --n_hidden 16 --epochs 1 --noshow_progressbar --summary_dir "")

# s NAME [VAR=VALUE...] ARGS...: runs the command with ARGS (W/ replaced by the scenario's folder,
# VAR=VALUE set in its environment) in its own folder; output and exit status in $work/<side>/NAME.out.
scenarios() {
  s help --help
  for c in devices bench features train transcribe export lm lm_optimizer import; do s "help-$c" "$c" --help; done
  s no-command
  s unknown-command nosuch
  s train-unknown-flag train --no_such_flag 1
  s train-bad-number train --learning_rate abc --train_files "$smoke/ldc93s1.csv"
  s train-bad-range train --dropout_rate 1.5 --train_files "$smoke/ldc93s1.csv"
  s train-bad-range2 train --n_hidden 0 --train_files "$smoke/ldc93s1.csv"
  s train-bad-bool train --show_progressbar maybe --train_files "$smoke/ldc93s1.csv"
  s train-missing-csv train --train_files W/nosuch.csv --n_hidden 8 --epochs 1
  s train-no-files train --n_hidden 8
  s features-summary features --audio "$smoke/LDC93S1.wav"
  s features-8k features --audio "$smoke/LDC93S1_pcms16le_1_8000.wav"
  s features-flac features --audio "$formats/digits-1.flac" --features_device host
  s features-missing features --audio W/nosuch.wav
  s features-npy features --audio "$smoke/LDC93S1.wav" --out W/f.npy
  s features-npy-sum sha256sum W/../features-npy/f.npy
  s devices devices
  s import-missing import commonvoice W/nosuch --out W/o
  s import-bad-format import nosuch "$smoke" --out W/o
  s lm-build lm --text "$smoke/vocab.txt" --order 2 --out W/lm.arpa
  s lm-binary lm --arpa_in W/../lm-build/lm.arpa --out W/lm.clm
  s lm-bad-order lm --text "$smoke/vocab.txt" --order 9 --out W/lm.arpa
  s train-short train --train_files "$smoke/ldc93s1.csv" --dev_files "$smoke/ldc93s1.csv" \
    --test_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 16 \
    --epochs 2 --noshow_progressbar --summary_dir "" --checkpoint_dir W/ckpt --random_seed 4 \
    --dropout_rate 0.1 --dropout_rate3 0.2 --test_output_file W/test.json
  s train-flags cat W/../train-short/ckpt/flags.txt
  s transcribe transcribe --checkpoint_dir W/../train-short/ckpt --alphabet_config_path "$smoke/alphabet.txt" \
    --n_hidden 16 "$smoke/LDC93S1.wav"
  s transcribe-missing transcribe --checkpoint_dir W/../train-short/ckpt --n_hidden 16 W/nosuch.wav
  s export export --checkpoint_dir W/../train-short/ckpt --alphabet_config_path "$smoke/alphabet.txt" \
    --n_hidden 16 --out W/model.clsm
  s export-onnx export --checkpoint_dir W/../train-short/ckpt --alphabet_config_path "$smoke/alphabet.txt" \
    --n_hidden 16 --format onnx --out W/model.onnx
  s transcribe-package transcribe --model W/../export/model.clsm "$smoke/LDC93S1.wav"
  s train-bad-row train --train_files "$inputs/bad-row.csv" "${short[@]}" --checkpoint_dir W/c
  s train-outside-alphabet train --train_files "$inputs/outside.csv" "${short[@]}" --checkpoint_dir W/c
  s train-corrupt-audio train --train_files "$inputs/corrupt.csv" "${short[@]}" --checkpoint_dir W/c
  s test-corrupt-audio train --test_files "$inputs/corrupt.csv" "${short[@]}" --checkpoint_dir W/../train-short/ckpt
  for strategy in hybrid sync; do # async's order of updates depends on timing: not comparable
    s "towers-$strategy" POCL_DEVICES="pthread pthread basic" train --train_files "$inputs/four.csv" \
      --test_files "$smoke/ldc93s1.csv" "${short[@]}" --epochs 2 --train_batch_size 2 --devices all \
      --strategy "$strategy" --balance equal --checkpoint_dir W/c --random_seed 7
  done
  s augment train --train_files "$smoke/ldc93s1.csv" --test_files "$smoke/ldc93s1.csv" "${short[@]}" \
    --checkpoint_dir W/c --augment "overlay[source=$smoke/ldc93s1.csv,snr=10~5,layers=2]" \
    --augment "reverb[delay=30~10,decay=6~2]" --augment "resample[rate=8000~2000]" \
    --augment "codec[bitrate=16000~8000]" --augment "volume[dbfs=-20~5]" \
    --augment "time_mask[domain=signal,n=2,size=40]" --augment "add[domain=signal,stddev=0.01]" \
    --augment "pitch[pitch=1~0.2]" --augment "tempo[factor=1~0.3]" --augment "warp[nt=4,nf=1,wt=0.5,wf=0.1]" \
    --augment "frequency_mask[n=1:3,size=1:5]" --augment "dropout[rate=0.05]" \
    --augment "multiply[domain=features,stddev=0.2]"
  s augment-bad train --train_files "$smoke/ldc93s1.csv" "${short[@]}" --augment "tempo[factor=0]"
  s lm-optimizer lm_optimizer --test_files "$smoke/ldc93s1.csv" --checkpoint_dir W/../train-short/ckpt \
    --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 16 --scorer_path W/../lm-binary/lm.clm --n_trials 3
  s train-resume train --train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" \
    --n_hidden 16 --epochs 1 --noshow_progressbar --summary_dir "" --checkpoint_dir W/../train-short/ckpt
}

# Fixed words for what differs from run to run.
normalise() {
  sed -E -e "s#$work/(old|new)#WORK#g" -e "s#$old|$new#CLSPEECH#g" -e "s#$here#REPO#g" -e "s#$work#SCENARIOS#g" \
    -e 's/[0-9]+(\.[0-9]+)? ?(ms|s|min|h|µs|us)\b/<T>/g' \
    -e 's/[0-9]+(\.[0-9]+)? ?(audio-s|utt|frames|steps|samples|MB|GB|GiB|MiB|x)\/s\b/<RATE>/g' \
    -e 's/Elapsed Time: [0-9:]+/Elapsed Time: <T>/g' -e 's/(estimate <T>), [+-][0-9]+%/\1, <ERR>%/g' \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+Z?/<DATE>/g' \
    -e 's/\.tmp\.[0-9]+\.[0-9]+/.tmp.<PID>/g' -e 's/pid [0-9]+/pid <PID>/g' \
    -e 's/\b(elapsed|eta|ETA|took|time)[ :=]+[0-9:.]+/\1 <T>/g' -e 's/\([0-9.]+x\)/(<RATIO>x)/g' \
    -e 's/"(seconds|wall_s|elapsed_s|time_s|duration_s)": *[0-9.e+-]+/"\1": <T>/g'
}

run_side() {
  local side=$1 bin=$2
  rm -rf "$work/$side"
  mkdir -p "$work/$side"
  export XDG_DATA_HOME=$work/$side/.data-home # kernel caches of its own: each side builds its kernels
  s() {
    local name=$1
    shift
    local dir=$work/$side/$name args=() envs=() a
    mkdir -p "$dir"
    while [[ ${1:-} =~ ^[A-Z_]+= ]]; do
      envs+=("$1")
      shift
    done
    for a in "$@"; do
      a=${a//W\//$dir/}
      args+=("$a")
    done
    if [[ ${args[0]:-} == cat || ${args[0]:-} == sha256sum ]]; then
      (cd "$dir" && "${args[@]}") >"$dir.raw" 2>&1
    else
      (cd "$dir" && env "${envs[@]}" "$bin" "${args[@]}") >"$dir.raw" 2>&1
    fi
    echo "exit status $?" >>"$dir.raw"
    normalise <"$dir.raw" >"$work/$side/$name.out"
    # the files it wrote, by name (timestamped names normalised)
    (cd "$dir" && find . -mindepth 1 | LC_ALL=C sort | normalise) >"$work/$side/$name.files"
  }
  scenarios
}

run_side old "$old"
run_side new "$new"
differs=0
for f in "$work"/old/*.out; do
  name=$(basename "$f" .out)
  if diff -q "$f" "$work/new/$name.out" >/dev/null && diff -q "$work/old/$name.files" "$work/new/$name.files" >/dev/null; then
    echo "same     $name"
  else
    echo "DIFFERS  $name"
    diff -u "$f" "$work/new/$name.out" | head -40
    diff -u "$work/old/$name.files" "$work/new/$name.files" | head -20
    differs=$((differs + 1))
  fi
done
echo "cli_scenarios: $differs of $(ls "$work"/old/*.out | wc -l) scenarios differ (outputs in $work)"
[[ $differs == 0 ]]
