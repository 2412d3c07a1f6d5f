#!/usr/bin/env bash
# The training step-time overhead of --augment specifications (issue 35's target: at most 10 % of the
# step): for each specification, runs without and with it alternate ROUNDS times (the machine's other
# load moves step times, so each pair runs back to back), EPOCHS epochs each, on one device; the step
# time of an epoch is the training set's audio seconds / the epoch's audio-s/s / its steps, and each
# side's figure is the median over all its epochs. Not part of CI; figures: docs/augment.md.
#   bash scripts/augment_overhead.sh [--build DIR] [--train CSV] [--rounds R] [--epochs E] SPEC...
# SPEC is one --augment value, or several joined by " + " to be measured together. The defaults train
# the demo's model (H = 128, batches of 8) on the demo corpus (bash scripts/demo.sh makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
train=build/demo/corpus/train.csv
rounds=4
epochs=4
specs=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --train) train=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) specs+=("$1"); shift ;;
  esac
done
[ ${#specs[@]} -gt 0 ] || { echo "augment_overhead: name at least one --augment specification" >&2; exit 2; }
[ -f "$train" ] || { echo "augment_overhead: no $train (bash scripts/demo.sh makes the demo corpus)" >&2; exit 2; }
cls=$build/clspeech
alphabet=$(dirname "$train")/alphabet.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run: prints each epoch's step time in ms, a line each.
steps_ms() {
  local log=$work/run.log
  "$cls" train --train_files "$train" --alphabet_config_path "$alphabet" --n_hidden 128 --train_batch_size 8 \
    --learning_rate 0.002 --dropout_rate 0.1 --epochs "$epochs" --devices 0:0 --load_train init --checkpoint_secs 0 \
    --noshow_progressbar --summary_dir '' --checkpoint_dir "$work/ck" "$@" >"$log" 2>&1 ||
    { echo "augment_overhead: training failed: $(tail -3 "$log")" >&2; exit 1; }
  rm -rf "$work/ck"
  local seconds
  seconds=$(sed -n 's/^clspeech: training set .*(\([0-9.]*\) s of audio)$/\1/p' "$log" | head -1)
  sed -n 's/^Epoch [0-9]* | *Training .*Steps: \([0-9]*\) .* \([0-9.]*\) audio-s\/s$/\1 \2/p' "$log" |
    awk -v s="$seconds" '{ printf "%.4f\n", s / $2 / $1 * 1000 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf 'augment_overhead: %s, %d rounds of %d epochs, device 0:0\n' "$train" "$rounds" "$epochs"
printf '%-70s %10s %10s %9s\n' "--augment" "without ms" "with ms" "overhead"
for spec in "${specs[@]}"; do
  flags=()
  rest=$spec
  while [ -n "$rest" ]; do
    piece=${rest%% + *}
    flags+=(--augment "$piece")
    [ "$piece" = "$rest" ] && rest="" || rest=${rest#* + }
  done
  : >"$work/without"
  : >"$work/with"
  for _ in $(seq "$rounds"); do
    steps_ms >>"$work/without"
    steps_ms "${flags[@]}" >>"$work/with"
  done
  a=$(median <"$work/without")
  b=$(median <"$work/with")
  printf '%-70s %10.2f %10.2f %+8.1f%%\n' "$spec" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print (b / a - 1) * 100 }')"
done
