#!/bin/bash
# --bytes_output_mode end to end on Mandarin: ten short Chinese sentences spoken here by espeak-ng's
# cmn voice (22.05 kHz WAVs, resampled by clspeech), their transcripts in Chinese characters. A small
# model trains on them with --bytes_output_mode and is tested on them: the training loss falls (the
# last epoch's below half the first's); the checkpoint folder's alphabet.txt is the bytes alphabet's
# line; every transcript the report prints is valid UTF-8 and its CER is the Levenshtein distance over
# code points (checked against a count made here, at least one sample with an error; where one is a
# substitution, the count over bytes differs: the report is not counting bytes); a character-level scorer that `clspeech lm
# --characters` builds from the transcripts lowers the set's CER (the assertion is strict: lower, not
# equal); a word-level scorer is refused for the bytes labels, naming --characters; `clspeech
# transcribe` of the folder and the stt API (examples/stt_stream, when built), without the flag,
# decode as bytes (valid UTF-8 out); a model package of it transcribes the same with its scorer; the
# ONNX export writes it with the metadata alphabet_mode=bytes and no alphabet (TEST_ONNX --check
# parses it).
# Usage: bytes_mandarin.sh CLSPEECH DATA_DIR WORK TEST_ONNX
. "$(dirname "$0")/script_common.sh"
test_onnx=$4
passed=0
ok() { passed=$((passed + 1)); }
command -v espeak-ng >/dev/null || fail "espeak-ng is needed to speak the corpus"
command -v python3 >/dev/null || fail "python3 is needed to check the report"

# ---- the corpus ----
sentences=(你好 谢谢你 我爱你 你好吗 我很好 再见 早上好 晚安 对不起 没关系)
csv=$work/zh.csv
echo "wav_filename,wav_filesize,transcript" >"$csv"
: >"$work/text.txt"
i=0
for s in "${sentences[@]}"; do
  i=$((i + 1))
  espeak-ng -v cmn -s 160 -w "$work/s$i.wav" "$s" || fail "espeak-ng -v cmn failed on $s"
  echo "$work/s$i.wav,$(stat -c %s "$work/s$i.wav"),$s" >>"$csv"
  echo "$s" >>"$work/text.txt"
done
ok

# ---- training ----
ck=$work/ck
common=(--bytes_output_mode --n_hidden 128 --devices 0:0 --noshow_progressbar --beam_width 32 --test_batch_size 10)
$cls train "${common[@]}" --train_files "$csv" --epochs 90 --learning_rate 0.001 --train_batch_size 1 \
  --dropout_rate 0 --load_train init --checkpoint_dir "$ck" >"$work/train.log" 2>&1 ||
  fail "training failed: $(tail -5 "$work/train.log")"
first=$(sed -n 's/^Epoch 0 .*Training.* Loss: \([0-9.]*\).*/\1/p' "$work/train.log")
last=$(sed -n 's/^Epoch 89 .*Training.* Loss: \([0-9.]*\).*/\1/p' "$work/train.log")
[ -n "$first" ] && [ -n "$last" ] || fail "no epoch losses in the log: $(tail -5 "$work/train.log")"
python3 -c "import sys; sys.exit(0 if $last < $first / 2 else 1)" || fail "the loss did not fall: $first -> $last"; ok
grep -qx '# clspeech --bytes_output_mode: .*' "$ck/alphabet.txt" || fail "alphabet.txt: $(head -c 200 "$ck/alphabet.txt")"; ok

# ---- the test report, without and with a scorer ----
report() { # NAME FLAGS...: the test set's report in $work/NAME.log, its CER on stdout
  local name=$1
  shift
  $cls train "${common[@]}" --test_files "$csv" --checkpoint_dir "$ck" --report_count 10 "$@" >"$work/$name.log" 2>&1 ||
    fail "testing ($name) failed: $(tail -5 "$work/$name.log")"
  sed -n 's/^Test on .* CER: \([0-9.]*\),.*/\1/p' "$work/$name.log"
}
# Each printed sample: valid UTF-8, and its CER = code-point Levenshtein distance / reference length.
check_report() { # LOG
  python3 - "$1" <<'EOF'
import re, sys
raw = open(sys.argv[1], 'rb').read()
try:
    text = raw.decode('utf-8')
except UnicodeDecodeError as e:
    sys.exit(f'the report is not valid UTF-8: {e}')
def lev(a, b):
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[len(b)]
samples = re.findall(r'WER: [0-9.]+, CER: ([0-9.]+), loss: .*\n - wav: .*\n - src: "(.*)"\n - res: "(.*)"', text)
if not samples:
    sys.exit('no samples in the report')
differs = 0
for cer, src, res in samples:
    want = lev(src, res) / len(src)
    if abs(float(cer) - want) > 1e-5:
        sys.exit(f'CER {cer} of "{src}" -> "{res}": expected {want} (code points)')
    sb, rb = src.encode(), res.encode()
    differs += abs(lev(sb, rb) / len(sb) - want) > 1e-5
if not any(float(cer) > 0 for cer, _, _ in samples):
    sys.exit('every sample is transcribed exactly: the CER check checks nothing')
# Whole characters deleted or inserted (all of these are 3 bytes) give the same rate over bytes; a
# substitution tells the two counts apart. The training's outcome decides which errors there are, so
# that part is asserted when one occurs (the count itself: test_wer's 3-byte cases).
print(f'{len(samples)} samples, {differs} telling code points from bytes')
EOF
}
plain=$(report plain)
[ -n "$plain" ] || fail "no CER in the report: $(tail -5 "$work/plain.log")"
check_report "$work/plain.log" >"$work/plain.check" || fail "report without a scorer: $(cat "$work/plain.check")"; ok
grep -q '^Best WER:' "$work/plain.log" || fail "no report sections"; ok

$cls lm --text "$work/text.txt" --characters --order 2 --discount_fallback --out "$work/chars.clm" >"$work/lm.log" 2>&1 ||
  fail "clspeech lm --characters failed: $(cat "$work/lm.log")"
grep -q 'binary 2-gram character model' "$work/lm.log" || fail "lm summary: $(cat "$work/lm.log")"; ok
scored=$(report scored --scorer_path "$work/chars.clm")
[ -n "$scored" ] || fail "no CER with the scorer: $(tail -5 "$work/scored.log")"
python3 -c "import sys; sys.exit(0 if $scored < $plain else 1)" || fail "the scorer did not lower the CER: $plain -> $scored"; ok
grep -q '^ - res: ".*[^\x00-\x7f]' "$work/scored.log" || fail "no Chinese transcript with the scorer"; ok

# A word model is refused for the bytes labels.
$cls lm --text "$work/text.txt" --order 2 --discount_fallback --out "$work/words.clm" >"$work/lmw.log" 2>&1 ||
  fail "clspeech lm failed: $(cat "$work/lmw.log")"
$cls train "${common[@]}" --test_files "$csv" --checkpoint_dir "$ck" --scorer_path "$work/words.clm" \
  >"$work/words.log" 2>&1 && fail "a word scorer was taken for the bytes labels"
grep -q 'clspeech lm --characters' "$work/words.log" || fail "the refusal: $(tail -3 "$work/words.log")"; ok

# transcribe reads the mode from the folder.
$cls transcribe --checkpoint_dir "$ck" --devices 0:0 --beam_width 32 --scorer_path "$work/chars.clm" "$work/s1.wav" \
  >"$work/transcribe.out" 2>"$work/transcribe.log" || fail "transcribe failed: $(tail -3 "$work/transcribe.log")"
python3 -c "import sys; open(sys.argv[1], 'rb').read().decode('utf-8')" "$work/transcribe.out" ||
  fail "transcribe printed broken UTF-8"
grep -q "s1.wav: ." "$work/transcribe.out" || fail "transcribe: $(cat "$work/transcribe.out")"; ok

# a model package carries the mode, and the ONNX export too (alphabet_mode=bytes in its metadata)
$cls export --checkpoint_dir "$ck" --out "$work/zh.clsm" --scorer_path "$work/chars.clm" >"$work/export.log" 2>&1 ||
  fail "export failed: $(tail -3 "$work/export.log")"
$cls transcribe --model "$work/zh.clsm" --devices 0:0 --beam_width 32 "$work/s1.wav" >"$work/package.out" 2>&1 ||
  fail "transcribe --model failed: $(tail -3 "$work/package.out")"
tail -1 "$work/transcribe.out" | cmp -s - <(tail -1 "$work/package.out") ||
  fail "the package transcribes otherwise: $(tail -1 "$work/package.out") against $(tail -1 "$work/transcribe.out")"; ok
$cls export --format onnx --checkpoint_dir "$ck" --out "$work/zh.onnx" >"$work/onnx.log" 2>&1 ||
  fail "ONNX export of a bytes model: $(cat "$work/onnx.log")"
"$test_onnx" --check "$work/zh.onnx" >"$work/onnx_check.log" 2>&1 || fail "test_onnx --check: $(cat "$work/onnx_check.log")"
grep -q "parsed: [0-9]* bytes, n_hidden 128, n_classes 256, alphabet_mode bytes$" "$work/onnx_check.log" ||
  fail "the ONNX file is not a bytes model: $(cat "$work/onnx_check.log")"; ok

# the stt API (examples/stt_stream, built beside clspeech) reads the mode from the folder too
stt=$(dirname "$cls")/stt_stream
if [ -x "$stt" ]; then
  "$stt" "$ck" "$work/s1.wav" >"$work/stt.out" 2>"$work/stt.log" || fail "stt_stream failed: $(tail -3 "$work/stt.log")"
  python3 -c "import sys; open(sys.argv[1], 'rb').read().decode('utf-8')" "$work/stt.out" ||
    fail "stt_stream printed broken UTF-8"
  [ -s "$work/stt.out" ] || fail "stt_stream printed nothing"; ok
fi

echo "bytes_mandarin: CER $plain without a scorer, $scored with the character scorer"
echo "bytes_mandarin: $passed passed, 0 failed"
