#!/usr/bin/env bash
# No-hang probe on the GPU: in a 2-rank CUDA-IPC pipeline, rank 1 stalls (host thread asleep)
# or exits just before its first P2P statement (HIR_FAULT, runner/guard/fault.c). Rank 0's streams
# then wait on a semaphore nobody releases; the job must still end, with messages, soon after
# --timeout. Prints the exit status, the time taken and the messages of each case.
bin=$(cd "$1" && pwd); out=$2
export PATH="$bin:$PATH" NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
w=$(mktemp -d)
hir-gen ag-linear --m 1024 --k 1024 --n 1024 --d 2 -o $w/a.hir
hir-opt --stream-parallel --backend=cuda $w/a.hir -o $w/get.hir
line=$(grep -n "^ *P2PCommunication" $w/get.hir | head -1 | cut -d: -f1)
for kind in stall exit; do
  t0=$SECONDS
  HIR_FAULT="1:$line:$kind" timeout 90 hir-run -np 2 --device=cuda --timeout=5 $w/get.hir > $w/$kind.log 2>&1
  rc=$?
  echo "== rank 1 $kind before line $line: exit $rc after $((SECONDS - t0)) s (124 = still running after 90 s)"
  grep -E "error|warning|abort|ABORT|fault" $w/$kind.log | cut -c1-300 | head -6
  ps -eo pid,stat,etime,cmd | grep "hir-run" | grep -v grep | head -4
  pkill -9 -f "hir-run" 2>/dev/null; sleep 1
done
