#!/usr/bin/env bash
# make_corpus.sh: makes a small synthetic English speech corpus in DeepSpeech's CSV format, spoken by
# espeak-ng, for clspeech's demo and tests. See docs/corpus.md.
#
#   bash scripts/make_corpus.sh OUT_DIR [--train N] [--dev N] [--test N] [--seed S] [--rate HZ] [--jobs J]
#                                       [--voices V,V,...] [--test_voices V,V,...]
#
# Writes OUT_DIR/{train,dev,test}/*.wav (mono 16-bit PCM at --rate Hz), OUT_DIR/{train,dev,test}.csv
# (header wav_filename,wav_filesize,transcript; paths relative to OUT_DIR) and OUT_DIR/alphabet.txt.
# The same flags give byte-identical files on every run. Installs espeak-ng and sox if they are missing.
set -euo pipefail
export LC_ALL=C

prog=make_corpus
usage() {
  cat <<'EOF'
usage: bash scripts/make_corpus.sh OUT_DIR [options]

Makes a synthetic speech corpus with espeak-ng in DeepSpeech's format:
  OUT_DIR/{train,dev,test}/*.wav   mono 16-bit PCM WAV at --rate Hz
  OUT_DIR/{train,dev,test}.csv     wav_filename,wav_filesize,transcript (paths relative to OUT_DIR)
  OUT_DIR/alphabet.txt             DeepSpeech alphabet: space, a..z, apostrophe

options:
  --train N    training utterances (default 200, 1..999999)
  --dev N      development utterances (default 40, 0..999999)
  --test N     test utterances (default 40, 0..999999)
  --seed S     seed of the sentences, voices, speeds and pitches (default 1, 0..2147483647)
  --rate HZ    sample rate of the WAV files (default 16000, 8000..48000)
  --jobs J     parallel synthesis jobs (default: the number of CPUs, 1..64)
  --voices L   comma-separated espeak-ng voices (VOICE or VOICE+VARIANT) for all splits
               (default en-us,en-us+m3,en-us+f2,en-us+f4,en-us+m7,en+m1,en+f3,en-gb-x-rp+m2)
  --test_voices L  voices for the test split alone (default: --voices); a test set of
               voices held out from training when the two lists share none
  -h, --help   this text

The same options give byte-identical files. An existing corpus in OUT_DIR is replaced only once the
new one is complete; other files in OUT_DIR are left alone.
EOF
}
die() { echo "$prog: error: $*" >&2; exit 2; }
fail() { echo "$prog: error: $*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------- arguments
out=""
n_train=200 n_dev=40 n_test=40 seed=1 rate=16000
voices_opt="" test_voices_opt=""
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -le 64 ] || jobs=64

uint_arg() {  # uint_arg FLAG VALUE MIN MAX -> REPLY
  local flag=$1 v=$2 min=$3 max=$4
  [[ $v =~ ^[0-9]{1,10}$ ]] || die "$flag needs a whole number, got '$v'"
  v=$((10#$v))
  if [ "$v" -lt "$min" ] || [ "$v" -gt "$max" ]; then die "$flag must be in $min..$max, got $v"; fi
  REPLY=$v
}

while [ $# -gt 0 ]; do
  arg=$1
  case $arg in
    -h|--help) usage; exit 0 ;;
    --train|--dev|--test|--seed|--rate|--jobs|--voices|--test_voices)
      [ $# -ge 2 ] || die "$arg needs a value (see --help)"
      val=$2; shift 2 ;;
    --train=*|--dev=*|--test=*|--seed=*|--rate=*|--jobs=*|--voices=*|--test_voices=*)
      val=${arg#*=}; arg=${arg%%=*}; shift ;;
    -*) die "unknown option '$arg' (see --help)" ;;
    *)
      [ -z "$out" ] || die "only one OUT_DIR may be given (got '$out' and '$arg')"
      [ -n "$arg" ] || die "OUT_DIR must not be empty"
      out=$arg; shift; continue ;;
  esac
  case $arg in
    --train) uint_arg "$arg" "$val" 1 999999; n_train=$REPLY ;;
    --dev)   uint_arg "$arg" "$val" 0 999999; n_dev=$REPLY ;;
    --test)  uint_arg "$arg" "$val" 0 999999; n_test=$REPLY ;;
    --seed)  uint_arg "$arg" "$val" 0 2147483647; seed=$REPLY ;;
    --rate)  uint_arg "$arg" "$val" 8000 48000; rate=$REPLY ;;
    --jobs)  uint_arg "$arg" "$val" 1 64; jobs=$REPLY ;;
    --voices|--test_voices)
      [[ $val =~ ^[A-Za-z0-9_+-]+(,[A-Za-z0-9_+-]+)*$ ]] || die "$arg needs voices separated by commas, got '$val'"
      if [ "$arg" = --voices ]; then voices_opt=$val; else test_voices_opt=$val; fi ;;
  esac
done
[ -n "$out" ] || { usage >&2; die "OUT_DIR is missing"; }
[ ! -e "$out" ] || [ -d "$out" ] || die "OUT_DIR '$out' exists and is not a folder"

t_start=$(date +%s.%N)
splits=(train dev test)
declare -A count=([train]=$n_train [dev]=$n_dev [test]=$n_test)

# An existing corpus is replaced, but never a folder holding anything this script did not make.
for s in "${splits[@]}"; do
  if [ -e "$out/$s" ]; then
    [ -d "$out/$s" ] || die "'$out/$s' exists and is not a folder; not replacing it"
    stray=$(find "$out/$s" -mindepth 1 \( -type d -o ! -name "$s-*.wav" \) -print -quit)
    [ -z "$stray" ] || die "'$out/$s' holds '$stray', which make_corpus did not make; not replacing it"
  fi
done

# ------------------------------------------------------------------------------------- dependencies
need=()
for p in espeak-ng sox; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "$prog: installing ${need[*]}"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
command -v espeak-ng >/dev/null || fail "espeak-ng is not on PATH after installing it"
command -v sox >/dev/null || fail "sox is not on PATH after installing it"

# ------------------------------------------------------------------------------------------- voices
# An espeak-ng language voice plus a variant from espeak-ng-data/voices/!v. espeak-ng silently falls
# back to its default for a variant it lacks, so variants are checked as files. --test_voices gives
# the test split a list of its own (held-out voices); otherwise every split draws from --voices.
voices_wanted=(en-us en-us+m3 en-us+f2 en-us+f4 en-us+m7 en+m1 en+f3 en-gb-x-rp+m2)
[ -z "$voices_opt" ] || IFS=, read -r -a voices_wanted <<<"$voices_opt"
data_dir=$(espeak-ng --version 2>&1) || fail "espeak-ng does not run: $data_dir"
data_dir=$(sed -n 's/.*Data at: *//p' <<<"$data_dir")
check_voices() {  # check_voices NAME VOICE... -> REPLY_VOICES: the usable ones (a note for each not)
  local what=$1 v lang; shift
  REPLY_VOICES=()
  for v in "$@"; do
    lang=${v%%+*}
    if [ "$lang" != "$v" ] && [ ! -f "$data_dir/voices/!v/${v#*+}" ]; then
      echo "$prog: note: espeak-ng variant '${v#*+}' is missing; not using voice $v" >&2; continue
    fi
    espeak-ng -v "$lang" -q x 2>/dev/null || { echo "$prog: note: no espeak-ng voice '$lang'; not using $v" >&2; continue; }
    REPLY_VOICES+=("$v")
  done
  [ ${#REPLY_VOICES[@]} -gt 0 ] || fail "none of the ${what:+$what }espeak-ng voices ($*) is available"
  [ ${#REPLY_VOICES[@]} -eq $# ] ||
    echo "$prog: note: the corpus differs from one made where all $# ${what:+$what }voices exist" >&2
}
check_voices "" "${voices_wanted[@]}"
voices=("${REPLY_VOICES[@]}")
test_voices=("${voices[@]}")
if [ -n "$test_voices_opt" ]; then
  IFS=, read -r -a test_wanted <<<"$test_voices_opt"
  check_voices test "${test_wanted[@]}"
  test_voices=("${REPLY_VOICES[@]}")
fi

# --------------------------------------------------------------------------------------- vocabulary
DIGITS=(zero one two three four five six seven eight nine)
COLOURS=(red green blue yellow black white brown pink orange purple grey)
NOUNS=(cat dog bird fish horse house car boat tree book ball box cup door window chair table bag queen)
VERBS=(take give find open close move push pull bring show)
MOTION=(go turn look move jump)
DIRS=(up down left right back)
PLACES=(here there)
# Templates and their weights (a template's id repeated weight times).
TEMPLATES=(1 1 1 1 1 1 2 2 3 3 3 4 4 5 5 6 7 7 8 9 9 10 11 11 12 13)

# Deterministic random numbers: a counter hashed by a 32-bit integer mixer (pure 64-bit shell
# arithmetic, the same on every bash).
hash32() {  # hash32 X -> H
  local x=$(( $1 & 0xffffffff ))
  x=$(( (((x >> 16) ^ x) * 0x45d9f3b) & 0xffffffff ))
  x=$(( (((x >> 16) ^ x) * 0x45d9f3b) & 0xffffffff ))
  H=$(( (x >> 16) ^ x ))
}
rng_base=0 rng_ctr=0
rng_seed() {  # rng_seed KEY... : a fresh stream for these keys
  local k h=0
  for k in "$seed" "$@"; do hash32 $(( h ^ k )); h=$(( (H + 0x7f4a7c15) & 0xffffffff )); done
  hash32 "$h"; rng_base=$H rng_ctr=0
}
rnd() {  # rnd N -> R in 0..N-1
  rng_ctr=$(( rng_ctr + 1 ))
  hash32 $(( rng_base + rng_ctr * 0x9e3779b9 )); hash32 $(( H ^ rng_base ))
  R=$(( H % $1 ))
}
pick() {  # pick ARRAYNAME -> W
  local -n arr=$1
  rnd ${#arr[@]}; W=${arr[R]}
}

sentence() {  # -> S
  local t n i
  rnd ${#TEMPLATES[@]}; t=${TEMPLATES[R]}
  case $t in
    1) rnd 5; n=$((R + 2)); S=""
       for ((i = 0; i < n; i++)); do pick DIGITS; S+="${S:+ }$W"; done ;;
    2) pick VERBS; S="$W the"; pick NOUNS; S+=" $W" ;;
    3) pick VERBS; S="$W the"; pick COLOURS; S+=" $W"; pick NOUNS; S+=" $W" ;;
    4) pick VERBS; S="please $W the"; pick COLOURS; S+=" $W"; pick NOUNS; S+=" $W" ;;
    5) pick NOUNS; S="the $W is"; pick COLOURS; S+=" $W" ;;
    6) pick COLOURS; S="the $W"; pick NOUNS; S+=" $W is"; pick PLACES; S+=" $W" ;;
    7) pick VERBS; S="don't $W the"; rnd 2
       if [ "$R" -eq 1 ]; then pick COLOURS; S+=" $W"; fi
       pick NOUNS; S+=" $W" ;;
    8) pick COLOURS
       case $W in [aeiou]*) S="it's an $W" ;; *) S="it's a $W" ;; esac
       pick NOUNS; S+=" $W" ;;
    9) pick MOTION; S=$W; pick DIRS; S+=" $W"; rnd 3
       if [ "$R" -eq 0 ]; then S+=" now"; fi ;;
    10) pick DIGITS; S="number $W is"; pick COLOURS; S+=" $W" ;;
    11) rnd 2
       if [ "$R" -eq 0 ]; then pick NOUNS; S=$W; pick DIGITS; S+=" $W"; pick DIGITS; S+=" $W"
       else pick COLOURS; S=$W; pick NOUNS; S+=" $W"; pick DIGITS; S+=" $W"; fi ;;
    12) rnd 2; if [ "$R" -eq 0 ]; then S=yes; else S=no; fi
       pick VERBS; S+=" $W the"; pick NOUNS; S+=" $W" ;;
    13) pick VERBS; S="$W the"; pick NOUNS; S+=" $W and the"; pick NOUNS; S+=" $W" ;;
  esac
}

# ----------------------------------------------------------------------------------------- the plan
# Test first, then dev, then train; every transcript is new to the corpus (re-drawn otherwise), so
# the test set is the same for any --train and --dev, and train utterance i depends only on seed,
# --dev, --test and i (a larger --train extends the same list).
mkdir -p "$out"
stage=$(mktemp -d "$out/.make_corpus.XXXXXX")
synth_pid=""
cleanup() {
  # Stop the synthesis (its running workers end within a fraction of a second, failing quietly
  # once the staging folder is gone), then remove the staging folder; the old corpus is untouched.
  if [ -n "$synth_pid" ]; then kill "$synth_pid" 2>/dev/null || true; fi
  rm -rf "$stage" 2>/dev/null || { sleep 0.5; rm -rf "$stage"; }
}
trap cleanup EXIT
trap 'echo "$prog: interrupted; $out is as it was" >&2; exit 130' INT TERM

declare -A seen=()
plan=$stage/plan
declare -A split_code=([test]=1 [dev]=2 [train]=3)
{
  for s in test dev train; do
    mkdir -p "$stage/$s"
    for ((i = 1; i <= count[$s]; i++)); do
      for ((attempt = 0; attempt < 64; attempt++)); do
        rng_seed "${split_code[$s]}" "$i" "$attempt"
        sentence
        [ -n "${seen[$S]+x}" ] || break
      done
      seen[$S]=1
      if [ "$s" = test ]; then rnd ${#test_voices[@]}; voice=${test_voices[R]}
      else rnd ${#voices[@]}; voice=${voices[R]}; fi
      rnd 61; speed=$((130 + R))
      rnd 41; pitch=$((30 + R))
      printf -v name '%s/%s-%06d.wav' "$s" "$s" "$i"
      printf '%s|%s|%s|%s|%s\n' "$name" "$voice" "$speed" "$pitch" "$S"
    done
  done
} >"$plan"
total=$(wc -l <"$plan")

# ------------------------------------------------------------------------------------------- speech
# espeak-ng speaks at 22050 Hz (-z: without the final pause); sox resamples it (rate -h), normalises
# the peak to -3 dBFS, adds 0.1 s of silence at each end and writes 16-bit mono PCM. -D: no dither,
# so each file is a pure function of its line in the plan.
synth_one() {
  set -o pipefail
  trap 'exit 255' INT TERM   # interrupted: quietly, and xargs stops (255)
  local rel voice speed pitch text err
  IFS='|' read -r rel voice speed pitch text <<<"$1"
  if ! err=$( { espeak-ng -v "$voice" -s "$speed" -p "$pitch" -z --stdout "$text" |
                sox -D -V1 -t wav - -t wav -e signed-integer -b 16 -c 1 "$MC_STAGE/$rel" \
                    rate -h "$MC_RATE" gain -n -3 pad 0.1 0.1; } 2>&1 )
  then
    [ ! -d "$MC_STAGE" ] || echo "make_corpus: error: synthesis failed for $rel: '$text' (voice $voice): $err" >&2
    exit 255   # xargs stops
  fi
  echo "$rel"
}
export -f synth_one
export MC_STAGE=$stage MC_RATE=$rate

echo "$prog: synthesising $total utterances (train $n_train, dev $n_dev, test $n_test; seed $seed; ${rate} Hz; $jobs jobs) into $out"
done_n=0
# shellcheck disable=SC2016  # $line is for the worker's shell
exec 3< <(xargs -d '\n' -n 8 -P "$jobs" bash -c 'for line; do synth_one "$line"; done' _ <"$plan")
synth_pid=$!
while IFS= read -r _ <&3; do
  done_n=$((done_n + 1))
  if [ $((done_n % 50)) -eq 0 ] || [ "$done_n" -eq "$total" ]; then
    echo "$prog: $done_n/$total"
  fi
done
exec 3<&-
synth_pid=""
[ "$done_n" -eq "$total" ] || fail "synthesis stopped after $done_n of $total files"

# ---------------------------------------------------------------------------------- CSVs and checks
# Per split: names, transcripts, byte sizes and sample counts, all in plan order.
summary=()
all_samples=0
for s in "${splits[@]}"; do
  csv=$stage/$s.csv
  printf 'wav_filename,wav_filesize,transcript\n' >"$csv"
  [ "${count[$s]}" -gt 0 ] || { summary+=("$s 0 0 0 0 0"); continue; }
  grep "^$s/" "$plan" | cut -d'|' -f1,5 >"$stage/$s.list"
  (cd "$stage" && cut -d'|' -f1 "$s.list" | xargs -d '\n' stat -c %s >"$s.sizes")
  (cd "$stage" && cut -d'|' -f1 "$s.list" | xargs -d '\n' soxi -s >"$s.samples")
  paste -d'|' "$stage/$s.list" "$stage/$s.sizes" "$stage/$s.samples" >"$stage/$s.rows"
  # The rows file: name|transcript|bytes|samples. Check and write the CSV, and sum durations.
  stats=$(awk -F'|' -v rate="$rate" -v csv="$csv" -v q="'" '
    BEGIN { word = "[a-z" q "]+"; re = "^" word "( " word ")*$" }
    {
      if ($2 !~ re) { print "bad transcript in " $1 ": \"" $2 "\"" > "/dev/stderr"; bad = 1 }
      if ($3 != 44 + 2 * $4) { print "unexpected WAV layout in " $1 " (" $3 " bytes, " $4 " samples)" > "/dev/stderr"; bad = 1 }
      # DeepSpeech importers drop a file with fewer 20 ms frames than characters (CTC needs the time).
      if (int($4 / rate * 50) < length($2)) { print "too short for its transcript: " $1 > "/dev/stderr"; bad = 1 }
      printf "%s,%s,%s\n", $1, $3, $2 >> csv
      d = $4 / rate; sum += $4; if (NR == 1 || d < mn) mn = d; if (d > mx) mx = d
    }
    END { if (bad) exit 1; printf "%d %d %.3f %.3f %.3f", NR, sum, sum / rate, mn, mx }' "$stage/$s.rows") ||
    fail "the $s set failed its checks"
  summary+=("$s $stats")
  read -r _ samples _ <<<"$stats"
  all_samples=$((all_samples + samples))
done

{
  echo "# alphabet.txt for clspeech / DeepSpeech, written by scripts/make_corpus.sh."
  echo "# One label per line, in label order; lines that start with # are comments."
  echo "# Label 0 is the space (the line holding a single space), then a to z, then the apostrophe."
  echo " "
  for c in {a..z}; do echo "$c"; done
  echo "'"
} >"$stage/alphabet.txt"

# ----------------------------------------------------------------------------------- swap it in
# Old CSVs go first (so none points at missing files), then the folders, then the new CSVs.
for s in "${splits[@]}"; do rm -f "$out/$s.csv"; done
rm -f "$out/alphabet.txt"
for s in "${splits[@]}"; do
  rm -rf "${out:?}/${s:?}"
  mv "$stage/$s" "$out/$s"
done
mv "$stage/alphabet.txt" "$out/alphabet.txt"
for s in "${splits[@]}"; do mv "$stage/$s.csv" "$out/$s.csv"; done

# --------------------------------------------------------------------------------------- summary
used_words=$(cut -d'|' -f5 "$plan" | tr ' ' '\n' | sort -u | wc -l)
vocab_words=$(printf '%s\n' "${DIGITS[@]}" "${COLOURS[@]}" "${NOUNS[@]}" "${VERBS[@]}" "${MOTION[@]}" "${DIRS[@]}" \
  "${PLACES[@]}" the a an is "it's" "don't" please and number yes no now | sort -u | wc -l)
t_end=$(date +%s.%N)
echo "$prog: done in $(awk -v a="$t_start" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }') s: $out"
for row in "${summary[@]}"; do
  read -r s n samples secs mn mx <<<"$row"
  if [ "$n" -gt 0 ]; then
    printf '%s:   %-5s %6d files  %8.1f s audio  (%.2f..%.2f s, mean %.2f s)  %s.csv\n' "$prog" "$s" "$n" "$secs" "$mn" "$mx" \
      "$(awk -v a="$secs" -v n="$n" 'BEGIN { print a / n }')" "$s"
  else
    printf '%s:   %-5s %6d files  %s.csv (header only)\n' "$prog" "$s" 0 "$s"
  fi
done
printf '%s:   total %6d files  %8.1f s audio; %d of %d vocabulary words used; %d voices: %s\n' "$prog" "$total" \
  "$(awk -v s="$all_samples" -v r="$rate" 'BEGIN { print s / r }')" "$used_words" "$vocab_words" "${#voices[@]}" "${voices[*]}"
[ -z "$test_voices_opt" ] || printf '%s:   test voices (%d): %s\n' "$prog" "${#test_voices[@]}" "${test_voices[*]}"
