#!/bin/sh
# launcher-killed.sh PROG MODE: start `hir-run -np 2` on PROG with rank 1 stalled, then kill
# the hir-run parent (MODE KILL or TERM) or its mpirun child (MODE MPIRUN, SIGKILL), and print
# how many hir-run/mpirun processes running PROG there were before and are left after.
prog=$1 mode=$2
count() {
  for q in $(pgrep -f "$prog"); do cat /proc/$q/comm; done 2>/dev/null |
    grep -c -E '^(hir-run|mpirun|orterun)$'
}
HIR_FAULT=1:19:stall hir-run -np 2 --device=cpu --timeout=100 "$prog" > /dev/null 2>&1 &
p=$!
sleep 5
echo "$mode before: $(count)"
case $mode in
  MPIRUN) kill -KILL $(pgrep -P $p) ;;
  *) kill -$mode $p ;;
esac
sleep 5
echo "$mode after: $(count)"
