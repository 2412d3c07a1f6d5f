#!/usr/bin/env bash
# --augment with --feature_cache (DeepSpeech's command lines use both, with --cache_for_epochs): the
# augmented training set bypasses the cache and is featurised on the device every epoch, the dev set
# still goes through the cache. Checks: exit 0 and both notices; the cache holds the dev file's entry and
# none for the training file (a `clspeech features` probe of each: the dev file's adds no entry, the
# training file's adds one); the run's training losses equal those of the same run without the cache (the
# device path, bit for bit in the printed digits); a negative --cache_for_epochs is a usage error.
#   augment_feature_cache.sh CLSPEECH DATA_DIR WORK
. "$(dirname "$0")/script_common.sh"
run() { # NAME [FLAGS...]: the run's output in $work/NAME.log, its exit status returned
  local name=$1
  shift
  "$cls" train --train_files "$smoke/ldc93s1.csv" --dev_files "$smoke/new-home-in-the-stars-16k.csv" \
    --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 16 --epochs 2 --devices 0:0 --load_train init \
    --noshow_progressbar --summary_dir '' --checkpoint_dir "$work/$name" \
    --augment 'add[stddev=0.5]' --augment 'frequency_mask[n=1,size=3]' "$@" >"$work/$name.log" 2>&1
}
losses() { sed -n 's/^Epoch \([0-9]*\) | *Training .*Loss: \([0-9.]*\) .*/\1 \2/p' "$work/$1.log" | tr '\n' ' '; }
entries() { find "$work/cache" -name '*.feat' | wc -l; }

run cached --feature_cache "$work/cache" --cache_for_epochs 10 || fail "exit $? with --feature_cache: $(cat "$work/cached.log")"
grep -q "notice: --augment: the training set's features are made on the device every epoch and never cached" \
  "$work/cached.log" || fail "no notice about the training set and the cache"
grep -q "notice: --cache_for_epochs 10 has no effect" "$work/cached.log" || fail "no notice about --cache_for_epochs"
run device || fail "exit $? without --feature_cache: $(cat "$work/device.log")"
with=$(losses cached)
without=$(losses device)
echo "training losses with the cache: $with; without: $without"
[ -n "$with" ] && [ "$with" = "$without" ] || fail "the augmented training losses depend on --feature_cache"
grep -q "Validation" "$work/cached.log" || fail "no validation in the cached run"

n=$(entries)
[ "$n" -eq 1 ] || fail "the cache holds $n entries after training, expected 1 (the dev file's)"
"$cls" features --feature_cache "$work/cache" --audio "$smoke/new-home-in-the-stars-16k.wav" >/dev/null ||
  fail "features probe of the dev file failed"
[ "$(entries)" -eq 1 ] || fail "the dev file's features were not in the cache"
"$cls" features --feature_cache "$work/cache" --audio "$smoke/LDC93S1.wav" >/dev/null || fail "features probe of the training file failed"
[ "$(entries)" -eq 2 ] || fail "the training file's features were in the cache (or the probe stored nothing)"

out=$("$cls" train --train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" \
  --cache_for_epochs -1 2>&1)
status=$?
[ $status -eq 2 ] && grep -q -- "--cache_for_epochs" <<<"$out" || fail "--cache_for_epochs -1: exit $status: $out"
echo "augment_feature_cache: ok"
