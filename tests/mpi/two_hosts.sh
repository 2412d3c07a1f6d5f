#!/usr/bin/env bash
# Two hosts for real: two network namespaces (each with a host name of its own) joined by a veth pair
# on a private /30 made here; mpirun starts in the first and reaches the second through a launch agent
# (netns_agent.sh, in ssh's place), Open MPI talking over that link alone (btl tcp,self; the oob and
# btl_tcp on the /30); 2 epochs of LDC93S1 (twice, one utterance per rank per step) with a dev set
# and the test set. The namespaces are removed on exit. Skipped (status 77) where they cannot be made.
#   two_hosts.sh CLSPEECH MPIEXEC DATA_DIR WORK_DIR
set -u
cls=$(realpath "$1") mpiexec=$(command -v "$2") data=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
tag=cls$$
ns_a=${tag}a ns_b=${tag}b
cleanup() {
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
}
trap cleanup EXIT
skip() {
  echo "two_hosts: SKIPPED: cannot make network namespaces here ($1); needs root and ip netns"
  exit 77
}
[ "$(id -u)" -eq 0 ] || skip "not root"
ip netns add "$ns_a" 2>"$work/netns.err" || skip "$(cat "$work/netns.err")"
ip netns add "$ns_b" 2>"$work/netns.err" || skip "$(cat "$work/netns.err")"
{
  ip link add "${tag}x" type veth peer name "${tag}y" &&
    ip link set "${tag}x" netns "$ns_a" && ip link set "${tag}y" netns "$ns_b" &&
    ip -n "$ns_a" addr add 10.213.7.1/30 dev "${tag}x" && ip -n "$ns_b" addr add 10.213.7.2/30 dev "${tag}y" &&
    ip -n "$ns_a" link set lo up && ip -n "$ns_b" link set lo up &&
    ip -n "$ns_a" link set "${tag}x" up && ip -n "$ns_b" link set "${tag}y" up
} 2>"$work/netns.err" || skip "the veth pair: $(cat "$work/netns.err")"
echo "two_hosts: namespaces $ns_a (10.213.7.1, host clsnet-a) and $ns_b (10.213.7.2, host clsnet-b) joined by a veth pair"
# LDC93S1 twice: a global batch of 2, one utterance per rank.
smoke=$data/deepspeech-smoke
{ echo "wav_filename,wav_filesize,transcript"; tail -n 1 "$smoke/ldc93s1.csv" | sed "s|^[^,]*,|$smoke/LDC93S1.wav,|";
  tail -n 1 "$smoke/ldc93s1.csv" | sed "s|^[^,]*,|$smoke/LDC93S1.wav,|"; } >"$work/ldc93s1-twice.csv"
export CLS_NETNS_MAP="10.213.7.2=$ns_b:clsnet-b"
net="--mca btl tcp,self --mca btl_tcp_if_include 10.213.7.0/30 --mca oob_tcp_if_include 10.213.7.0/30"
ip netns exec "$ns_a" unshare --uts sh -c "hostname clsnet-a && exec \"\$@\"" sh \
  "$mpiexec" --allow-run-as-root -np 2 -H 10.213.7.1:1,10.213.7.2:1 --mca plm_rsh_agent "$here/netns_agent.sh" $net \
  -x POCL_DEVICES=pthread -x CLSPEECH_KERNEL_CACHE_DIR -x XDG_DATA_HOME -x LSAN_OPTIONS -x ASAN_OPTIONS -x UBSAN_OPTIONS \
  -x CLS_NETNS_MAP \
  "$cls" train --horovod --train_files "$work/ldc93s1-twice.csv" --dev_files "$smoke/ldc93s1.csv" \
  --test_files "$smoke/ldc93s1.csv" --alphabet_config_path "$smoke/alphabet.txt" --n_hidden 32 --epochs 2 \
  --train_batch_size 1 --load_train init --noshow_progressbar --summary_dir "" --beam_width 1 --log_placement \
  --checkpoint_dir "$work/ckpt" >"$work/run.log" 2>&1
status=$?
cat "$work/run.log"
echo "--- mpirun across the two namespaces: exit status $status"
fail=0
[ $status -eq 0 ] || fail=1
grep -q "placement: rank 0 of 2 on host clsnet-a" "$work/run.log" || { echo "FAIL: rank 0 not on clsnet-a"; fail=1; }
grep -q "rank 1 (clsnet-b): placement: rank 1 of 2 on host clsnet-b" "$work/run.log" || { echo "FAIL: rank 1 not on clsnet-b"; fail=1; }
# The training went over the veth: rank 1's side received the broadcast state (parameters and Adam's m
# and v: 3 x 28,290 floats of n_hidden 32, 340 kB) and its parts of two steps' reductions (226 kB when
# each rank sends its whole buffer; half of that at least).
rx=$(ip netns exec "$ns_b" cat "/sys/class/net/${tag}y/statistics/rx_bytes")
echo "two_hosts: ${rx} bytes received over the veth by clsnet-b"
[ "${rx:-0}" -ge 450000 ] || { echo "FAIL: too little traffic over the veth"; fail=1; }
grep -q "FINISHED optimization (global step 2)" "$work/run.log" || { echo "FAIL: not 2 global steps"; fail=1; }
grep -q "Test on .*ldc93s1.csv - WER" "$work/run.log" || { echo "FAIL: no test report"; fail=1; }
[ $fail -eq 0 ] && echo "two_hosts: ok"
exit $fail
