#!/usr/bin/env bash
# Runs a command and checks what a user would see: its exit status and patterns in its output
# (stdout and stderr together). Used by CTest for the clspeech command's tests.
#   expect.sh STATUS [--has REGEX]... [--count N REGEX]... [--lacks REGEX]... -- COMMAND [ARGS...]
set -u
want_status=$1; shift
checks=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --has|--lacks) checks+=("$1" "$2" ""); shift 2 ;;
    --count) checks+=("--count" "$3" "$2"); shift 3 ;;
    *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "${1:-}" = "--" ] && shift
out=$("$@" 2>&1)
status=$?
failed=0
echo "$out"
echo "--- exit status $status"
if [ "$status" != "$want_status" ]; then
  echo "FAIL: exit status $status, expected $want_status"; failed=1
fi
for ((i = 0; i < ${#checks[@]}; i += 3)); do
  kind=${checks[i]} re=${checks[i+1]} n=${checks[i+2]}
  got=$(printf '%s\n' "$out" | grep -cE -- "$re")
  case $kind in
    --has) [ "$got" -ge 1 ] || { echo "FAIL: output lacks /$re/"; failed=1; } ;;
    --lacks) [ "$got" -eq 0 ] || { echo "FAIL: output has /$re/"; failed=1; } ;;
    --count) [ "$got" -eq "$n" ] || { echo "FAIL: /$re/ on $got lines, expected $n"; failed=1; } ;;
  esac
done
exit $failed
