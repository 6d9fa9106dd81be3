#!/usr/bin/env bash
# Probe: where does a rank block when a Get-ordered CUDA-IPC program runs with the Put
# protocol? Runs 2 ranks in the background, then shows each process's state and kernel wait
# channel and the per-rank output written directly to files.
bin=$(cd "$1" && pwd); out=$2
export PATH="$bin:$PATH" NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
w=$(mktemp -d)
hir-gen ag-linear --m 1024 --k 1024 --n 1024 --d 2 -o $w/a.hir
hir-opt --stream-parallel --backend=cuda $w/a.hir -o $w/get.hir
mpirun --oversubscribe --output-filename $w/ranks -np 2 hir-run --device=cuda --timeout=3 --p2p-protocol=put --verbose $w/get.hir > $w/mpirun.log 2>&1 &
for t in 10 45; do
  sleep $((t == 10 ? 10 : 35))
  echo "== after ${t}s"; ps -eo pid,stat,wchan:32,etime,cmd | grep -E "hir-run|mpirun" | grep -v grep
  for p in $(pgrep -f "hir-run --device"); do echo "-- $p threads:"; ls /proc/$p/task | while read t; do echo "   $t $(cat /proc/$p/task/$t/stat | awk '{print $3}') $(cat /proc/$p/task/$t/wchan 2>/dev/null)"; done; done
done
echo "== mpirun.log"; tail -5 $w/mpirun.log
for f in $(find $w/ranks -type f); do echo "== $f"; tail -8 $f; done
pkill -9 -f hir-run; pkill -9 mpirun; sleep 2
ps -eo pid,stat,cmd | grep hir-run | grep -v grep
