#!/usr/bin/env bash
# call 1 of 2026-12-07 s3: phase times of one checked headline run, tools before (fd5372a) and
# after (7a78039: threaded product check, faster bf16 fill); then d=8 rows with --forward-local-shard (item 3)
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s)
CALL=${CALL_BUDGET:-540}
ROOT=$PWD
nvidia-smi > $O/nvidia-smi.txt 2>&1
cat .dev/gpu/COMMIT .dev/gpu-old/COMMIT > $O/commit.txt
{ nproc; free -g; lscpu | grep -i "model name"; } > $O/host.txt
(
  BIN=$ROOT/.dev/gpu-old; MPS=1; . bench/gpu_env.sh
  echo "MPS: $GPU_ENV_MPS" > $O/phases.txt
  w=$(mktemp -d)
  for d in ${PDS:-2 4}; do
    hir-gen ag-linear --m 32768 --k 16384 --n 8192 --d $d --no-bias -o $w/h$d.hir
    hir-opt --stream-parallel --backend=cuda $w/h$d.hir -o $w/get$d.hir
    for b in gpu-old gpu; do
      s=$(date +%s.%N)
      $ROOT/.dev/$b/hir-run -np $d --device=cuda --timeout=120 --bench --warmup=3 --iters=20 \
        --streams=4 --vary-inputs --check $w/get$d.hir > $O/ph-$b-d$d.log 2>&1
      rc=$?
      echo "d=$d $(cat $ROOT/.dev/$b/COMMIT) rc=$rc wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s}") s: $(grep 'time on rank 0' $O/ph-$b-d$d.log)" >> $O/phases.txt
      grep "^check: PASS\|^check: FAIL\|median" $O/ph-$b-d$d.log | head -3 >> $O/phases.txt
    done
  done
)
echo "phases end +$(( $(date +%s) - t0 )) s" >> $O/c7.txt
left=$(( CALL - $(date +%s) + t0 ))
if [ $left -gt 120 ]; then
  MPS=1 DS=${DS:-8} ROUNDS=1 BUDGET=$(( left - 70 )) timeout $(( left - 5 )) bash bench/tp_compare.sh .dev/gpu $O/tp-d8 --rows ${ROWS:-pipe-get,pipe-fwd,compute,compute-fwd,torch-chunks} > $O/tp-d8.out 2>&1
  echo "tp rc=$? end +$(( $(date +%s) - t0 )) s" >> $O/c7.txt
  grep -h "time on rank 0\|^\$ .*hir-run" $O/tp-d8/tp_compare.log > $O/tp-phases.txt 2>/dev/null
fi
cd $O && tar czf tp.tar.gz tp-d8 ph-*.log 2>/dev/null; rm -rf tp-d8 ph-*.log; ls
