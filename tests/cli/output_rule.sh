#!/bin/bash
# The output rule (clspeech/base.h, cls_output_open) as a user meets it, for each writer: a character
# device (made here with mknod when root, else skipped with a message) and a FIFO are written in place and
# stay what they are; a symlink stays a link, its target written; a folder is a named error; an output that
# is one of the command's inputs is refused (exit 2, naming both flags) and the input is unchanged.
# Writers: lm (binary and ARPA), features --out (.npy), export (package) and export --format onnx.
# Prints "output_rule: PASS (N checks)" at the end, or "output_rule: FAIL: ..." and exits 1.
#   output_rule.sh CLSPEECH DATA_DIR WORK CHECKPOINT_DIR
source "$(dirname "$0")/script_common.sh"
ck=$(cd "$4" && pwd)
data=$(cd "$2" && pwd)
cls=$(cd "$(dirname "$cls")" && pwd)/$(basename "$cls")
ldc=$data/deepspeech-smoke/LDC93S1.wav
cd "$work" || fail "no work folder"
checks=0
for i in $(seq 1 30); do echo "the cat sat on the mat $i and the dog sat on the log"; done > corpus.txt
cp -r "$ck" ck
# each writer as "NAME ARGS...", its output path appended as the last argument
writers=("lm_binary lm --text corpus.txt --order 3 --discount_fallback --out"
         "lm_arpa lm --text corpus.txt --order 3 --discount_fallback --out"
         "features features --audio $ldc --features_device host --out"
         "export export --checkpoint_dir ck --out"
         "onnx export --format onnx --checkpoint_dir ck --out")
suffix() { case $1 in lm_arpa) echo .arpa ;; *) echo "" ;; esac; }
for w in "${writers[@]}"; do
  set -- $w
  name=$1
  shift
  sfx=$(suffix "$name")
  # a FIFO: written in place, read by cat, still a FIFO
  mkfifo "fifo-$name$sfx"
  cat "fifo-$name$sfx" > "fifo-$name.read" &
  reader=$!
  if ! timeout 120 "$cls" "$@" "fifo-$name$sfx" > "$name.fifo.log" 2>&1; then
    kill $reader 2>/dev/null
    cat "$name.fifo.log"
    fail "$name: to a FIFO: the command failed"
  fi
  wait $reader
  [ "$(stat -c %F "fifo-$name$sfx")" = fifo ] || fail "$name: the FIFO was replaced by a $(stat -c %F "fifo-$name$sfx")"
  [ -s "fifo-$name.read" ] || fail "$name: nothing came through the FIFO"
  # a symlink: still a link, its target written, nothing left beside the link
  ln -s "target-$name$sfx" "link-$name$sfx"
  "$cls" "$@" "link-$name$sfx" > "$name.link.log" 2>&1 || { cat "$name.link.log"; fail "$name: to a symlink: exit $?"; }
  [ -L "link-$name$sfx" ] || fail "$name: the symlink was replaced"
  [ -f "target-$name$sfx" ] && [ -s "target-$name$sfx" ] || fail "$name: the symlink's target was not written"
  ls | grep -q "\.tmp\." && fail "$name: a temporary file was left: $(ls | grep '\.tmp\.')"
  # the same bytes as a plain file gets (the FIFO's and the link's target's), where the output is deterministic
  "$cls" "$@" "plain-$name$sfx" > "$name.plain.log" 2>&1 || fail "$name: to a new file: exit $?"
  case $name in onnx|export) ;; *)
    cmp -s "plain-$name$sfx" "target-$name$sfx" || fail "$name: the symlink's target differs from a plain write"
    cmp -s "plain-$name$sfx" "fifo-$name.read" || fail "$name: what came through the FIFO differs from a plain write" ;;
  esac
  # a folder: a named error, the folder untouched
  mkdir "dir-$name$sfx"
  "$cls" "$@" "dir-$name$sfx" > "$name.dir.log" 2>&1 && fail "$name: a folder as the output: exit 0"
  grep -q "dir-$name$sfx: is a folder: not written" "$name.dir.log" || { cat "$name.dir.log"; fail "$name: no named error for a folder"; }
  # a character device (root only): /dev/null's kind, made here
  if [ "$(id -u)" = 0 ]; then
    mknod -m 666 "null-$name$sfx" c 1 3
    "$cls" "$@" "null-$name$sfx" > "$name.dev.log" 2>&1 || { cat "$name.dev.log"; fail "$name: to a device: exit $?"; }
    [ "$(stat -c %F "null-$name$sfx")" = "character special file" ] ||
      fail "$name: the device node was replaced by a $(stat -c %F "null-$name$sfx")"
  fi
  checks=$((checks + 1))
done
[ "$(id -u)" = 0 ] || echo "output_rule: not root: the device-node cases were skipped"
# an output that is an input: refused by name, the input unchanged
refuse() { # WHAT INPUT ARGS...
  local what=$1 input=$2 before
  shift 2
  before=$(sha256sum "$input")
  "$cls" "$@" > refuse.log 2>&1
  local rc=$?
  [ $rc -eq 2 ] || { cat refuse.log; fail "$what: exit $rc, expected 2"; }
  grep -q "an output never overwrites an input" refuse.log || { cat refuse.log; fail "$what: no message"; }
  [ "$(sha256sum "$input")" = "$before" ] || fail "$what: the input changed"
  checks=$((checks + 1))
}
# lm --arpa to a FIFO beside a binary --out: written once, never read back (it hung reading its own pipe)
mkfifo arpa.fifo
gzip -c < arpa.fifo > arpa.gz &
reader=$!
if ! timeout 60 "$cls" lm --text corpus.txt --order 3 --discount_fallback --out via-fifo.clm --arpa arpa.fifo \
    > arpa-fifo.log 2>&1; then
  kill $reader 2>/dev/null
  cat arpa-fifo.log
  fail "lm --arpa to a FIFO: the command failed"
fi
wait $reader
zcat arpa.gz | grep -q '^\\end\\$' || fail "lm --arpa to a FIFO: the ARPA text did not come through whole"
cmp -s via-fifo.clm plain-lm_binary || fail "lm --arpa to a FIFO: the binary model differs from a plain build's"
checks=$((checks + 1))
cp "$ldc" in.wav
refuse "lm --out = --text" corpus.txt lm --text corpus.txt --order 3 --discount_fallback --out corpus.txt
refuse "lm --arpa = --text" corpus.txt lm --text corpus.txt --order 3 --discount_fallback --out x.clm --arpa corpus.txt
refuse "features --out = --audio" in.wav features --audio in.wav --out in.wav
latest=$(ls ck | grep '^train-.*\.safetensors$' | tail -1)
refuse "export --out = a checkpoint" "ck/$latest" export --checkpoint_dir ck --out "ck/$latest"
ln -s "ck/$latest" via-link
refuse "export --out = a link to a checkpoint" "ck/$latest" export --checkpoint_dir ck --out via-link
refuse "onnx --out = the alphabet" ck/alphabet.txt export --format onnx --checkpoint_dir ck --out ck/alphabet.txt
cp "$data/deepspeech-smoke/ldc93s1.csv" "$data/deepspeech-smoke/LDC93S1.wav" .
refuse "train --test_output_file = --test_files" ldc93s1.csv train --test_files ldc93s1.csv --alphabet_config_path \
  ck/alphabet.txt --checkpoint_dir ck --test_output_file ldc93s1.csv
echo "output_rule: PASS ($checks checks)"
