#!/usr/bin/env bash
# The training flags' behaviour, every flag, against what the flag table's build before its one-table
# form printed and wrote (tests/fixtures/train_flags/, made by this script with --update from that build):
#  1. `--help` of train, export (both formats), lm_optimizer and transcribe (the commands built on the
#     table), byte for byte;
#  2. every flag of `train --help` given each of a few odd values (nan, -1, 0, 1, the ends of an int,
#     1e300, a word, none at all): the exit status, stdout and stderr of each, byte for byte;
#  3. flags.txt of two short trainings (one near the defaults, one with an unusual value for nearly
#     every flag), byte for byte, and listing every flag of `train --help` with its value.
# Paths are written as @DATA@ and @WORK@ so that the fixtures hold for any checkout.
#   train_flags_identical.sh CLSPEECH DATA_DIR FIXTURE_DIR WORK_DIR [--update]
set -u
cls=$1 data=$2 fixtures=$3 work=$4 update=${5:-}
smoke=$data/deepspeech-smoke
rm -rf "$work" && mkdir -p "$work/cwd" "$work/home"
export XDG_DATA_HOME=$work/xdg HOME=$work/home
cd "$work/cwd" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
paths() { sed -e "s|$work|@WORK@|g" -e "s|$data|@DATA@|g"; }
# compare NAME FILE: FILE against the fixture NAME (or stored as it with --update).
compare() {
  if [ "$update" = --update ]; then
    mkdir -p "$fixtures" && cp "$2" "$fixtures/$1"
  elif ! cmp -s "$2" "$fixtures/$1"; then
    bad "$1 differs from the fixture:"
    diff "$fixtures/$1" "$2" | head -20
  fi
}

# 1. --help.
for cmd in train export export_onnx lm_optimizer transcribe; do
  args=("$cmd")
  [ "$cmd" = export_onnx ] && args=(export --format onnx)
  "$cls" "${args[@]}" --help >"$work/help_$cmd.txt" 2>&1
  echo "exit $?" >>"$work/help_$cmd.txt"
  paths <"$work/help_$cmd.txt" >"$work/help_$cmd.out"
  compare "help_$cmd.txt" "$work/help_$cmd.out"
done
flags=$(sed -n 's/^  --\([a-z0-9_]*\) (.*/\1/p' "$work/help_train.txt")
[ "$(wc -w <<<"$flags")" -ge 60 ] || bad "train --help lists $(wc -w <<<"$flags") flags"

# 2. Every flag with odd values (no training set: each run ends before any device is opened).
: >"$work/values.txt"
for flag in $flags; do
  for value in nan -2147483648 -1 0 1 2147483647 1e300 bogus; do
    out=$(timeout 60 "$cls" train "--$flag" "$value" 2>&1)
    printf '### --%s %s: exit %d\n%s\n' "$flag" "$value" $? "$out" >>"$work/values.txt"
  done
  out=$(timeout 60 "$cls" train "--$flag" 2>&1)
  printf '### --%s: exit %d\n%s\n' "$flag" $? "$out" >>"$work/values.txt"
done
paths <"$work/values.txt" >"$work/values.out"
compare values.txt "$work/values.out"
grep -q -- "--learning_rate must be a finite number in (0, 10]" "$work/values.out" || bad "no range message"

# 3. flags.txt of two trainings.
common=(--train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 8 --epochs 1
        --noshow_progressbar --devices 0:0)
train() { # NAME FLAGS...
  local name=$1
  shift
  timeout 300 "$cls" train "${common[@]}" --checkpoint_dir "$work/$name" "$@" >"$work/$name.log" 2>&1 ||
    bad "training $name: $(tail -3 "$work/$name.log")"
  paths <"$work/$name/flags.txt" >"$work/flags_$name.out"
  compare "flags_$name.txt" "$work/flags_$name.out"
  for flag in $flags; do
    [ "$flag" = augment ] && continue # repeatable: one line per value, none without
    grep -q -- "^--$flag=" "$work/$name/flags.txt" || bad "$name's flags.txt lacks --$flag"
  done
}
train near_defaults --dev_files "$smoke/ldc93s1.csv" --metrics_files "$smoke/ldc93s1.csv" \
  --augment 'add[stddev=0.5]' --augment 'frequency_mask[n=1,size=3]' --drop_source_layers 1
train unusual --learning_rate 0.0001 --beta1 0.8 --beta2 0.99 --epsilon 1e-7 --dropout_rate 0.3 --dropout_rate3 0.1 \
  --dropout_rate4 0.2 --dropout_rate5 -1 --relu_clip 10.5 --random_seed 7 --checkpoint_secs 60 --max_to_keep 2 \
  --load_train init --load_evaluate best --force_initialize_learning_rate --reduce_lr_on_plateau --plateau_epochs 2 \
  --plateau_reduction 0.5 --early_stop --es_epochs 3 --es_min_delta 0.01 --feature_win_len 25 --feature_win_step 10 \
  --features_device host --feature_cache "$work/cache" --cache_for_epochs 2 --strategy sync --balance equal \
  --replica_check_steps 5 --overlap_reduction=false --log_placement --limit_train 1 --limit_dev 1 --limit_test 2 \
  --reverse_train --reverse_dev --reverse_test --strict --report_count 2 --beam_width 7 --cutoff_prob 0.5 \
  --cutoff_top_n 9 --lm_alpha 0.5 --lm_beta 0.25 --test_output_file "$work/out.json" --summary_dir "" \
  --summary_steps 3 --dev_batch_size 3 --test_batch_size 2
echo "train_flags_identical: $(wc -w <<<"$flags") flags, $([ $fail -eq 0 ] && echo ok || echo FAILED)"
[ $fail -eq 0 ]
