#!/bin/sh
# `clspeech import` on small corpora made here in each layout from the repository's espeak-ng speech
# (MP3 for Common Voice, FLAC for LibriSpeech, Opus and FLAC for MLS, WAV for a folder) with hostile
# rows: each bad row is in excluded.csv with its reason, the CSVs and the made alphabet train end to
# end, a second run takes its audio headers from the cache, and an MP3's features through the imported
# CSV equal those of a WAV of libsndfile's decoded samples.
# Usage: import_corpus.sh CLSPEECH DATA_DIR WORK MAKE_AUDIO
. "$(dirname "$0")/script_common.sh"
mk=$4
fmt=$2/formats
ldc=$smoke/LDC93S1.wav
passed=0
ok() { passed=$((passed + 1)); }
has_reason() { # CSV PATH_PART REASON
  grep -q "$2[^,]*,[a-z]*,$3," "$1" || fail "$1 lacks $2 as $3: $(cat "$1")"
  ok
}
train() { # DIR
  $cls train --train_files "$1/train.csv" ${2:+--dev_files "$1/$2"} --alphabet_config_path "$1/alphabet.txt" \
    --n_hidden 16 --epochs 1 --devices 0:0 --load_train init --noshow_progressbar \
    --checkpoint_dir "$1/ck" >"$1/train.log" 2>&1 || fail "training on $1 failed: $(tail -5 "$1/train.log")"
  ok
}

# ---- Common Voice: MP3 clips, a BOM and CRLF, extra and missing columns, quotes, tabs, emoji ----
cv=$work/cv
mkdir -p "$cv/clips"
$mk "$ldc" "$cv/clips/a.mp3" && $mk "$fmt/digits-1.wav" "$cv/clips/b.mp3" && $mk "$fmt/digits-2.wav" "$cv/clips/c.mp3" &&
  $mk "$fmt/digits-1.wav" "$cv/clips/short.mp3" && $mk "$fmt/digits-2.wav" "$cv/clips/d.mp3" || fail "cannot write MP3"
: >"$cv/clips/empty.mp3"
long=$(printf 'eight two %.0s' $(seq 1 30))
{
  printf '\357\273\277client_id\tpath\tsentence\tup_votes\r\n'
  printf 'x\ta.mp3\tShe had your dark suit, in greasy wash-water all year!\t2\r\n'
  printf 'x\tb.mp3\t"""Eight""\ttwo \360\237\230\200"\t1\r\n'
  printf 'x\tmissing.mp3\tfour eight\t1\r\n'
  printf 'x\tempty.mp3\tfour eight\t1\r\n'
  printf 'x\tc.mp3\tI have 2 cats\t1\r\n'
  printf 'x\ta.mp3\tshe had your dark suit\t1\r\n'
  printf 'x\tshort.mp3\t%s\t1\r\n' "$long"
  printf 'x\tnosentence.mp3\r\n'
  printf 'x\r\n'
} >"$cv/train.tsv"
printf 'path\tsentence\nd.mp3\tFour eight five seven\n' >"$cv/dev.tsv"
printf 'path\tsentence\nnothing.mp3\tfour\n' >"$cv/validated.tsv"
d=$work/cv-out
$cls import commonvoice "$cv" --out "$d" --make_alphabet --noshow_progressbar >"$work/cv.log" 2>&1 ||
  fail "import commonvoice failed: $(cat "$work/cv.log")"
grep -q '^10 rows read, 3 kept' "$work/cv.log" || fail "summary: $(cat "$work/cv.log")"; ok
grep -q 'train 2 of 9 rows kept' "$work/cv.log" || fail "split summary: $(cat "$work/cv.log")"; ok
grep -q "a.mp3,[0-9]*,she had your dark suit in greasy wash water all year$" "$d/train.csv" || fail "a.mp3: $(cat "$d/train.csv")"; ok
grep -q "$cv/clips/b.mp3,[0-9]*,eight two$" "$d/train.csv" || fail "b.mp3 (absolute, quotes/tab/emoji): $(cat "$d/train.csv")"; ok
grep -q "d.mp3,[0-9]*,four eight five seven$" "$d/dev.csv" || fail "dev.csv: $(cat "$d/dev.csv")"; ok
[ ! -e "$d/test.csv" ] || fail "test.csv written for a corpus without test.tsv"; ok
grep -q nothing.mp3 "$d"/*.csv && fail "validated.tsv was imported"; ok
has_reason "$d/excluded.csv" missing.mp3 audio_missing
has_reason "$d/excluded.csv" empty.mp3 audio_unreadable
has_reason "$d/excluded.csv" c.mp3 digits
has_reason "$d/excluded.csv" a.mp3 duplicate
has_reason "$d/excluded.csv" short.mp3 too_short
has_reason "$d/excluded.csv" nosentence.mp3 no_transcript
has_reason "$d/excluded.csv" train.tsv malformed
grep -q '^# U+0027\|^,$' "$d/alphabet.txt" && fail "punctuation in the alphabet"; ok
grep -q '^ $' "$d/alphabet.txt" || fail "no space label: $(cat "$d/alphabet.txt")"; ok
train "$d" dev.csv
# The second run: every header from the cache, the same CSVs.
cp "$d/train.csv" "$work/train1.csv"
$cls import commonvoice "$cv" --out "$d" --make_alphabet --noshow_progressbar >"$work/cv2.log" 2>&1 || fail "second run"
grep -q '5 audio headers from the cache, 0 opened' "$work/cv2.log" || fail "cache not used: $(cat "$work/cv2.log")"; ok
cmp -s "$d/train.csv" "$work/train1.csv" || fail "the second run's train.csv differs"; ok
# --alphabet: characters it lacks leave the row out.
printf 'a\nb\n' >"$work/ab.txt"
$cls import commonvoice "$cv" --out "$work/cv-ab" --alphabet "$work/ab.txt" --noshow_progressbar >"$work/cv3.log" 2>&1
[ $? -eq 1 ] || fail "no row kept should exit 1: $(cat "$work/cv3.log")"; ok
has_reason "$work/cv-ab/excluded.csv" a.mp3 not_in_alphabet
# The features of the imported MP3 equal those of a WAV of its decoded samples.
mp3=$(sed -n 2p "$d/train.csv" | cut -d, -f1)
$mk "$mp3" "$work/decoded.wav" || fail "cannot decode $mp3"
$cls features --audio "$mp3" --out "$work/mp3.npy" >/dev/null 2>&1 && $cls features --audio "$work/decoded.wav" --out "$work/wav.npy" >/dev/null 2>&1 ||
  fail "features failed"
cmp -s "$work/mp3.npy" "$work/wav.npy" || fail "the MP3's features differ from its decoded WAV's"; ok
# Usage errors.
$cls import commonvoice "$cv" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no --out: not exit 2"; ok
$cls import nosuch "$cv" --out "$work/x" >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad FORMAT: not exit 2"; ok
$cls import commonvoice "$cv" --out "$work/x" --alphabet "$work/ab.txt" --make_alphabet >/dev/null 2>&1; [ $? -eq 2 ] || fail "both alphabets"; ok
$cls import commonvoice "$work/nosuch" --out "$work/x" >/dev/null 2>&1; [ $? -eq 1 ] || fail "missing SRC: not exit 1"; ok

# ---- LibriSpeech: FLAC, one split per subset folder ----
ls_=$work/LibriSpeech
for sub in train-clean-100 dev-clean; do
  mkdir -p "$ls_/$sub/19/198"
  $mk "$ldc" "$ls_/$sub/19/198/19-198-0000.flac" && $mk "$fmt/digits-1.wav" "$ls_/$sub/19/198/19-198-0001.flac" || fail "FLAC"
  printf '19-198-0000 SHE HAD YOUR DARK SUIT IN GREASY WASH WATER ALL YEAR\n19-198-0001 EIGHT TWO\n19-198-0002 MISSING\n' \
    >"$ls_/$sub/19/198/19-198.trans.txt"
done
d=$work/ls-out
$cls import librispeech "$ls_" --out "$d" --make_alphabet --noshow_progressbar >"$work/ls.log" 2>&1 || fail "librispeech: $(cat "$work/ls.log")"
[ "$(wc -l <"$d/train.csv")" -eq 3 ] && [ "$(wc -l <"$d/dev.csv")" -eq 3 ] || fail "librispeech CSVs: $(cat "$d"/*.csv)"; ok
has_reason "$d/excluded.csv" 19-198-0002.flac audio_missing
train "$d" dev.csv

# ---- MLS: transcripts.txt with Opus and FLAC audio ----
mls=$work/mls
mkdir -p "$mls/train/audio/10/20" "$mls/test/audio/10/21"
$mk "$ldc" "$mls/train/audio/10/20/10_20_000000.opus" && $mk "$fmt/digits-1.wav" "$mls/train/audio/10/20/10_20_000001.flac" &&
  $mk "$fmt/digits-2.wav" "$mls/test/audio/10/21/10_21_000000.opus" || fail "Opus"
printf '10_20_000000\tshe had your dark suit in greasy wash water all year\n10_20_000001\teight two\nbadid\tx\n' >"$mls/train/transcripts.txt"
printf '10_21_000000\tfour eight five seven\r\n' >"$mls/test/transcripts.txt"
d=$work/mls-out
$cls import mls "$mls" --out "$d" --make_alphabet --noshow_progressbar >"$work/mls.log" 2>&1 || fail "mls: $(cat "$work/mls.log")"
grep -q '10_20_000000.opus,' "$d/train.csv" && grep -q '10_20_000001.flac,' "$d/train.csv" && grep -q '10_21_000000.opus,' "$d/test.csv" ||
  fail "mls CSVs: $(cat "$d"/*.csv)"; ok
has_reason "$d/excluded.csv" transcripts.txt malformed
train "$d"

# ---- folder: audio beside .txt transcripts, nested ----
fo=$work/folder
mkdir -p "$fo/sub"
cp "$ldc" "$fo/ldc.wav" && cp "$fmt/digits-1.wav" "$fo/sub/one.wav" && cp "$fmt/digits-2.flac" "$fo/sub/two.flac"
printf 'She had your dark suit in greasy wash water all year.\n' >"$fo/ldc.txt"
printf 'Eight\ntwo\n' >"$fo/sub/one.txt"
d=$work/folder-out
$cls import folder "$fo" --out "$d" --make_alphabet --max_seconds 2.5 --noshow_progressbar >"$work/folder.log" 2>&1 ||
  fail "folder: $(cat "$work/folder.log")"
grep -q 'one.wav,[0-9]*,eight two$' "$d/train.csv" || fail "folder train.csv: $(cat "$d/train.csv")"; ok
has_reason "$d/excluded.csv" two.flac no_transcript
has_reason "$d/excluded.csv" ldc.wav too_long
$cls import folder "$fo" --out "$d" --make_alphabet --noshow_progressbar >"$work/folder.log" 2>&1 || fail "folder 2"
train "$d"
echo "$prog: $passed passed, 0 failed"
