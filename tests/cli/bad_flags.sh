#!/usr/bin/env bash
# Numeric flags outside their rule (frontends/flag_rules.c) are usage errors before any work: exit
# status 2 within seconds, the message naming the flag. Each case once ran (NaN weights, exit 0), hung,
# or failed only after a whole test pass (issue 15).
#   bad_flags.sh CLSPEECH DATA_DIR
set -u
cls=$1
smoke=$2/deepspeech-smoke
train=(train --train_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --noshow_progressbar)
passed=0
failed=0
check() { # FLAG VALUE COMMAND...
  local flag=$1 value=$2
  shift 2
  local out status
  out=$(timeout 60 "$@" "--$flag" "$value" 2>&1)
  status=$?
  if [ $status -eq 2 ] && grep -q -- "--$flag must " <<<"$out"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $* --$flag $value: exit $status: $out"
  fi
}
for v in inf 1e300 nan 0 -1; do check learning_rate "$v" "$cls" "${train[@]}"; done
for f in beta1 beta2; do for v in nan 1 -0.5 inf; do check "$f" "$v" "$cls" "${train[@]}"; done; done
for v in nan 1 -0.1; do check dropout_rate "$v" "$cls" "${train[@]}"; done
check dropout_rate2 nan "$cls" "${train[@]}"
check epsilon -1 "$cls" "${train[@]}"
check epsilon nan "$cls" "${train[@]}"
check relu_clip -5 "$cls" "${train[@]}"
check relu_clip inf "$cls" "${train[@]}"
check cutoff_top_n 0 "$cls" "${train[@]}"
check cutoff_prob nan "$cls" "${train[@]}"
check cutoff_prob 0 "$cls" "${train[@]}"
check plateau_reduction nan "$cls" "${train[@]}"
check es_min_delta nan "$cls" "${train[@]}"
check n_hidden -1 "$cls" "${train[@]}"
check drop_source_layers 6 "$cls" "${train[@]}"
check drop_source_layers -1 "$cls" "${train[@]}"
check train_batch_size 0 "$cls" "${train[@]}"
check audio_sample_rate 2000000000 "$cls" "${train[@]}" --feature_win_len 1000
check feature_win_len 100000000 "$cls" "${train[@]}"
check feature_win_len 100000000 "$cls" features --features_device host --audio "$smoke/LDC93S1.wav"
check feature_win_step 0 "$cls" features --features_device host --audio "$smoke/LDC93S1.wav"
check audio_sample_rate 2000000000 "$cls" features --features_device host --audio "$smoke/LDC93S1.wav"
check beam_width 0 "$cls" transcribe --checkpoint_dir /nonexistent --audio "$smoke/LDC93S1.wav"
check cutoff_prob nan "$cls" transcribe --checkpoint_dir /nonexistent --audio "$smoke/LDC93S1.wav"
lmopt=(lm_optimizer --checkpoint_dir /nonexistent --test_files "$smoke/ldc93s1.csv" --scorer_path /nonexistent.arpa)
check lm_alpha_max inf "$cls" "${lmopt[@]}"
check lm_beta_max nan "$cls" "${lmopt[@]}"
check lm_beta_max -0.5 "$cls" "${lmopt[@]}"
check n_trials 0 "$cls" "${lmopt[@]}"
check threads -1 "$cls" "${lmopt[@]}"
echo "bad_flags: $passed passed, $failed failed"
[ $failed -eq 0 ]
