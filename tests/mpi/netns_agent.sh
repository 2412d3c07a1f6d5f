#!/usr/bin/env bash
# Open MPI's launch agent (--mca plm_rsh_agent) for the two-hosts test: where mpirun would ssh to a
# host, this runs the command in that host's network namespace, under a UTS namespace of its own
# named after the host, as ssh runs it (the words joined, through a shell).
#   netns_agent.sh [ssh options] HOST COMMAND...   (CLS_NETNS_MAP="ADDRESS=NETNS:HOSTNAME ...")
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
host=$1
shift
for entry in $CLS_NETNS_MAP; do
  if [ "${entry%%=*}" = "$host" ]; then
    target=${entry#*=}
    exec ip netns exec "${target%%:*}" unshare --uts sh -c "hostname ${target#*:} && $*"
  fi
done
echo "netns_agent.sh: no namespace for host $host (CLS_NETNS_MAP=$CLS_NETNS_MAP)" >&2
exit 1
