#!/usr/bin/env bash
# call 2: d=2 traces (get pipeline, forwarded pipeline, compute-only), then whole-table rows at d=8
set -u
O=${OUT:-/tmp/out}; mkdir -p $O/r
t0=$(date +%s)
CALL=${CALL_BUDGET:-540}
BIN=$(cd .dev/gpu && pwd)
export MPS=1
. bench/gpu_env.sh
echo "MPS: $GPU_ENV_MPS" > $O/c6.txt
w=$(mktemp -d)
hir-gen ag-linear --m 32768 --k 16384 --n 8192 --d 2 --no-bias -o $w/h2.hir
hir-opt --stream-parallel --backend=cuda $w/h2.hir -o $w/get2.hir
hir-opt --stream-parallel --backend=cuda --forward-local-shard $w/h2.hir -o $w/fwd2.hir
hir-opt --strip-communication $w/get2.hir -o $w/strip2.hir
hir-opt --strip-communication $w/fwd2.hir -o $w/stripfwd2.hir
for p in strip2 get2 fwd2 stripfwd2; do
  ( set -x; hir-run -np 2 --device=cuda --timeout=120 --bench=5 --warmup=3 --streams=4 --trace=$O/r/trace-$p.json $w/$p.hir ) > $O/r/trace-$p.log 2>&1
  echo "$p rc=$? +$(( $(date +%s) - t0 )) s" >> $O/c6.txt
done
cm=$(grep -o 'median [0-9.]*' $O/r/trace-strip2.log | head -1 | awk '{print $2}')
cmf=$(grep -o 'median [0-9.]*' $O/r/trace-stripfwd2.log | head -1 | awk '{print $2}')
for p in strip2 get2 stripfwd2; do python3 bench/trace_summary.py $O/r/trace-$p.json > $O/r/trace-$p.md 2>&1; done
python3 bench/trace_summary.py $O/r/trace-get2.json --compute-ms ${cm:-0} > $O/r/trace-get2.md 2>&1
python3 bench/trace_summary.py $O/r/trace-fwd2.json --compute-ms ${cmf:-0} > $O/r/trace-fwd2.md 2>&1
gzip $O/r/trace-*.json
echo "traces end +$(( $(date +%s) - t0 )) s" >> $O/c6.txt
left=$(( CALL - $(date +%s) + t0 ))
if [ $left -gt 120 ]; then
  MPS=0 DS=${DS2:-8} ROUNDS=1 BUDGET=$(( left - 70 )) timeout $(( left - 5 )) bash bench/tp_compare.sh $BIN $O/r/tp-rest --rows ${ROWS2:-compute,pipe-put,pipe-prio,gather,torch-gemm,pipe-nccl,torch-nccl,torch-symm} > $O/r/tp-rest.out 2>&1
  echo "rest rc=$? +$(( $(date +%s) - t0 )) s" >> $O/c6.txt
fi
cd $O && tar czf r.tar.gz r && rm -rf r && ls
