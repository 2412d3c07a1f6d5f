#!/usr/bin/env bash
# Model packages through the clspeech command: `clspeech export` of a checkpoint folder, then
# `clspeech transcribe --model` gives byte for byte the transcripts of `transcribe --checkpoint_dir`
# on LDC93S1 (two files), greedy and with the beam search; with a packaged scorer (from ARPA and from
# the binary form, which give the same package) as with --scorer_path and the same lm_alpha/lm_beta;
# --scorer_path '' turns the packaged scorer off and --lm_alpha overrides its weight.
#   package_round_trip.sh CLSPEECH SMOKE_DIR CHECKPOINT_DIR WORK_DIR
set -euo pipefail
cls=$1 smoke=$2 run=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
audio=(--audio "$smoke/LDC93S1.wav" "$smoke/LDC93S1_pcms16le_2_44100.wav" --devices 0:0)
same() { cmp "$1" "$2" || { echo "package round trip: $1 and $2 differ"; diff "$1" "$2" || true; exit 1; }; }

"$cls" export --checkpoint_dir "$run" --out "$work/plain.clsm"
for bw in 1 64; do
  "$cls" transcribe --checkpoint_dir "$run" "${audio[@]}" --beam_width "$bw" > "$work/dir-$bw.out"
  "$cls" transcribe --model "$work/plain.clsm" "${audio[@]}" --beam_width "$bw" > "$work/pkg-$bw.out"
  same "$work/dir-$bw.out" "$work/pkg-$bw.out"
done

cut -d, -f3 "$smoke/ldc93s1.csv" | tail -n +2 > "$work/text.txt"
"$cls" lm --text "$work/text.txt" --order 3 --discount_fallback --out "$work/ldc.arpa" > /dev/null 2>&1
"$cls" lm --arpa_in "$work/ldc.arpa" --out "$work/ldc.clm" > /dev/null 2>&1
"$cls" export --checkpoint_dir "$run" --out "$work/scored.clsm" --scorer_path "$work/ldc.arpa" --lm_alpha 0.75 --lm_beta 1.5
"$cls" export --checkpoint_dir "$run" --out "$work/scored-clm.clsm" --scorer_path "$work/ldc.clm" --lm_alpha 0.75 --lm_beta 1.5
same "$work/scored.clsm" "$work/scored-clm.clsm"
"$cls" transcribe --checkpoint_dir "$run" "${audio[@]}" --beam_width 64 --scorer_path "$work/ldc.arpa" \
  --lm_alpha 0.75 --lm_beta 1.5 > "$work/dir-scorer.out"
"$cls" transcribe --model "$work/scored.clsm" "${audio[@]}" --beam_width 64 > "$work/pkg-scorer.out"
same "$work/dir-scorer.out" "$work/pkg-scorer.out"
"$cls" transcribe --model "$work/scored.clsm" "${audio[@]}" --beam_width 64 --scorer_path '' > "$work/pkg-off.out"
same "$work/dir-64.out" "$work/pkg-off.out"
"$cls" transcribe --checkpoint_dir "$run" "${audio[@]}" --beam_width 64 --scorer_path "$work/ldc.arpa" \
  --lm_alpha 3 --lm_beta 1.5 > "$work/dir-alpha.out"
"$cls" transcribe --model "$work/scored.clsm" "${audio[@]}" --beam_width 64 --lm_alpha 3 > "$work/pkg-alpha.out"
same "$work/dir-alpha.out" "$work/pkg-alpha.out"
cat "$work/pkg-1.out" "$work/pkg-scorer.out"
echo "package sizes: $(stat -c %s "$work/plain.clsm") bytes plain, $(stat -c %s "$work/scored.clsm") with the scorer;" \
     "checkpoint $(stat -c %s "$(ls "$run"/best_dev-*.safetensors | head -1)") bytes"
echo "package round trip: ok"
