#!/usr/bin/env bash
# augment_heldout.sh: does --augment help on voices held out from training? Makes an espeak-ng
# corpus (scripts/make_corpus.sh) whose test set is spoken by voices none of the training or dev
# utterances use, trains the demo's model (n_hidden 128) on it without and with --augment (same
# seed, same epochs, same everything else), and prints each run's test WER and CER on the held-out
# voices and its training step time. Not part of CI. Figures and the command: docs/augment.md.
#
#   bash scripts/augment_heldout.sh [OUT_DIR] [--epochs N] [--seeds "S ..."] [--augment SPEC ...]
#
# OUT_DIR (default build/augment-heldout) receives the corpus, each run's checkpoints and log, and
# results.tsv. --augment may be given several times (the set used by the run with augmentation);
# without it the set below is used. --train N / --test N size the corpus (default 600 / 100).
# The machine's other load changes the step times, so the runs alternate (without, with) per seed
# and the step time is each run's median over its epochs.
set -euo pipefail
cd "$(dirname "$0")/.."
prog=augment_heldout
die() { echo "$prog: error: $*" >&2; exit 2; }

out=build/augment-heldout
epochs=15
seeds="4568 1 2"
n_train=600 n_test=100
augs=()
# The set chosen on voices held out from both splits (docs/augment.md, "Choosing the set"), not on the test voices.
default_augs=("reverb[p=0.3,delay=20~10,decay=10~4]" "add[stddev=0.5]")
# The training voices are make_corpus.sh's default eight; the test voices are five other variants.
train_voices=en-us,en-us+m3,en-us+f2,en-us+f4,en-us+m7,en+m1,en+f3,en-gb-x-rp+m2
test_voices=en-us+m5,en-us+f1,en+m4,en+f5,en-gb-x-rp+m6
while [ $# -gt 0 ]; do
  case $1 in
    --epochs) [ $# -ge 2 ] || die "--epochs needs a value"; epochs=$2; shift 2 ;;
    --seeds) [ $# -ge 2 ] || die "--seeds needs a value"; seeds=$2; shift 2 ;;
    --augment) [ $# -ge 2 ] || die "--augment needs a value"; augs+=("$2"); shift 2 ;;
    --train) [ $# -ge 2 ] || die "--train needs a value"; n_train=$2; shift 2 ;;
    --test) [ $# -ge 2 ] || die "--test needs a value"; n_test=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1'" ;;
    *) out=$1; shift ;;
  esac
done
[[ $epochs =~ ^[1-9][0-9]*$ ]] || die "--epochs needs a positive whole number, got '$epochs'"
[ ${#augs[@]} -gt 0 ] || augs=("${default_augs[@]}")
aug_flags=()
for a in "${augs[@]}"; do aug_flags+=(--augment "$a"); done

[ -x build/clspeech ] || die "build/clspeech is missing: build first (cmake -B build && cmake --build build)"
corpus=$out/corpus
mkdir -p "$out"
bash scripts/make_corpus.sh "$corpus" --train "$n_train" --dev 40 --test "$n_test" \
  --voices "$train_voices" --test_voices "$test_voices" | tail -n 2

# One training run: train, validate on dev (training voices), test on the held-out voices.
# run NAME SEED [FLAGS...] -> a row in results.tsv
run() {
  local name=$1 seed=$2; shift 2
  local log=$out/$name-seed$seed.log
  ./build/clspeech train \
    --train_files "$corpus/train.csv" --dev_files "$corpus/dev.csv" --test_files "$corpus/test.csv" \
    --alphabet_config_path "$corpus/alphabet.txt" \
    --n_hidden 128 --train_batch_size 8 --dev_batch_size 8 --test_batch_size 8 \
    --epochs "$epochs" --learning_rate 0.002 --dropout_rate 0.1 --random_seed "$seed" \
    --checkpoint_dir "$out/ck-$name-seed$seed" --load_train init --checkpoint_secs 0 --summary_dir "" \
    --beam_width 64 --report_count 0 "$@" >"$log" 2>&1 || { tail -n 20 "$log" >&2; die "the $name run failed (see $log)"; }
  # Step time: the training set's audio seconds / the epoch's audio-s/s / its steps; the median over
  # epochs (plain POSIX awk and sort).
  local audio wer cer med
  audio=$(sed -n 's/.*training set .*(\([0-9.]*\) s of audio).*/\1/p' "$log")
  med=$(sed -n 's/.*|   Training |.*Steps: \([0-9]*\) |.* \([0-9.]*\) audio-s\/s.*/\1 \2/p' "$log" |
    awk -v a="$audio" '$2 > 0 { printf "%.4f\n", a / $2 / $1 * 1000 }' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  wer=$(sed -n 's/^Test on .* - WER: \([0-9.]*\), CER: .*/\1/p' "$log")
  cer=$(sed -n 's/^Test on .* - WER: [0-9.]*, CER: \([0-9.]*\),.*/\1/p' "$log")
  printf '%s\t%s\t%s\t%s\t%.2f\n' "$name" "$seed" "$wer" "$cer" "$med" | tee -a "$out/results.tsv"
}

printf 'run\tseed\twer\tcer\tstep_ms\n' >"$out/results.tsv"
echo "$prog: $epochs epochs, seeds $seeds; augmentation: ${augs[*]}"
printf 'run\tseed\twer\tcer\tstep_ms\n'
for s in $seeds; do
  run without "$s"
  run with "$s" "${aug_flags[@]}"
done
awk -F'\t' 'NR > 1 { w[$1] += $3; c[$1] += $4; t[$1] += $5; n[$1]++ }
  END {
    printf "augment_heldout: mean over %d seed(s): without  WER %.4f CER %.4f step %.2f ms\n", n["without"], w["without"] / n["without"], c["without"] / n["without"], t["without"] / n["without"]
    printf "augment_heldout: mean over %d seed(s): with     WER %.4f CER %.4f step %.2f ms\n", n["with"], w["with"] / n["with"], c["with"] / n["with"], t["with"] / n["with"]
    printf "augment_heldout: step-time overhead of augmentation: %+.1f %%\n", (t["with"] / t["without"] - 1) * 100
  }' "$out/results.tsv"
