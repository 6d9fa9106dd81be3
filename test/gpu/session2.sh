#!/usr/bin/env bash
# Second GPU session of 2026-12-02: the CUDA-IPC cases the first validation could not pass
# (Put protocol, hoisted handle exchange), the deferred send wait, the no-hang watchdog, and a
# side-by-side --bench of the CUDA-IPC pipeline variants at the headline shape.
#   test/gpu/session2.sh BIN_DIR OUT_DIR
set -u
bin=$(cd "$1" && pwd); out=$2; mkdir -p "$out"
export PATH="$bin:$PATH" NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
w=$(mktemp -d)
log=$out/session2.log
say() { echo "$@" | tee -a "$log"; }
chk() {  # name np opts... -- prog ref
  local name=$1 np=$2; shift 2; local o=(); while [ "$1" != "--" ]; do o+=("$1"); shift; done; shift
  local t0=$SECONDS
  if timeout 120 hir-run -np $np --device=cuda --timeout=30 "${o[@]}" --check="$2" "$1" > $w/$name.log 2>&1 && grep -q '^check: PASS' $w/$name.log; then
    say "$name: PASS ($((SECONDS - t0)) s)"
  else
    say "$name: FAIL ($((SECONDS - t0)) s)"; tail -4 $w/$name.log | tee -a "$log"
  fi
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
hir-gen ag-linear --m 1024 --k 1024 --n 1024 --d 8 -o $w/a.hir
hir-opt --stream-parallel --pass-pipeline='backend{kind=cuda,protocol=put}' $w/a.hir -o $w/put.hir
hir-opt --stream-parallel --backend=cuda --hoist-handle-exchange $w/a.hir -o $w/hoist.hir
hir-opt --stream-parallel --backend=cuda --defer-send-wait $w/a.hir -o $w/defer.hir
hir-opt --stream-parallel --backend=cuda --hoist-handle-exchange --defer-send-wait $w/a.hir -o $w/hd.hir
hir-opt --stream-parallel --backend=cuda $w/a.hir -o $w/get.hir
chk put-d8 8 --p2p-protocol=put -- $w/put.hir $w/a.hir
chk put-defer-d8 8 --p2p-protocol=put --iters=100 -- $w/put.hir $w/a.hir
chk hoisted-d8 8 --iters=100 -- $w/hoist.hir $w/a.hir
chk defer-d8 8 --iters=100 -- $w/defer.hir $w/a.hir
chk hoisted-defer-d8 8 --iters=1000 -- $w/hd.hir $w/a.hir
# No hang: a Get-ordered program run with the Put protocol cannot complete; the job must end
# with a message (warning up front, then the synchronize timeout or the watchdog).
t0=$SECONDS
timeout 150 hir-run -np 8 --device=cuda --timeout=5 --p2p-protocol=put $w/get.hir > $w/hang.log 2>&1
rc=$?
say "wrong-order-put: exit $rc after $((SECONDS - t0)) s (124 = killed by timeout(1), i.e. a hang)"
grep -E "warning|error" $w/hang.log | sort | uniq -c | head -6 | tee -a "$log"

# Bench: 4 ranks sharing the GPU at the headline shape (aggregate = per-rank TFLOP/s x 4).
M=32768 K=16384 N=8192 D=4
hir-gen ag-linear --m $M --k $K --n $N --d $D --no-bias -o $w/big.hir
hir-gen linear --m $M --k $K --n $N --no-bias -o $w/lin.hir
sed 's/ (DeviceMesh{0})//g' $w/lin.hir > $w/lin-rep.hir
hir-opt --stream-parallel --backend=cuda $w/big.hir -o $w/big-get.hir
hir-opt --stream-parallel --backend=cuda --defer-send-wait $w/big.hir -o $w/big-defer.hir
hir-opt --stream-parallel --backend=cuda --hoist-handle-exchange --defer-send-wait $w/big.hir -o $w/big-hd.hir
for v in lin-rep big-get big-defer big-hd; do
  t0=$SECONDS
  timeout 100 hir-run -np $D --device=cuda --timeout=60 --bench=20 --warmup=3 --bench-json=$out/bench-$v.json $w/$v.hir > $w/bench-$v.log 2>&1
  say "bench $v (exit $?, $((SECONDS - t0)) s):"
  grep -E "time/iter|throughput|host " $w/bench-$v.log | tee -a "$log"
done
tar -czf $out/logs.tar.gz -C $w . 2>/dev/null
