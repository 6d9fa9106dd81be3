#!/usr/bin/env bash
# call 1 of 2026-12-07 s4: (a) copy methods beside the chunk GEMMs (one process, MPS off);
# (e) the GPU suite's shapes tier (the *-ipc-overlap cases); (b) the d=4 pipeline both ways
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); CALL=${CALL_BUDGET:-560}; ROOT=$PWD
el() { echo "$1 +$(( $(date +%s) - t0 )) s" >> $O/timeline.txt; }
nvidia-smi > $O/nvidia-smi.txt 2>&1
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.max.sm --format=csv >> $O/nvidia-smi.txt 2>&1
cat .dev/gpu/COMMIT .dev/gpu-old/COMMIT > $O/commit.txt
{ nproc; free -g; lscpu | grep -i "model name"; python3 -c 'import torch; print(torch.__version__)'; } > $O/host.txt 2>&1
(
  BIN=$ROOT/.dev/gpu; MPS=0; . bench/gpu_env.sh
  for cfg in "8192 16384 8192 4" "16384 16384 8192 2" "4096 16384 8192 8"; do
    echo "== $cfg"; timeout 70 hir-cuda-selftest --bench-copy-overlap $cfg --rounds 11 --iters 5
    echo "rc=$?"
  done
) > $O/copy-overlap.txt 2>&1
el "copy-overlap end"
(
  BIN=$ROOT/.dev/gpu; MPS=0; . bench/gpu_env.sh
  CASE_TIMEOUT=120 timeout 200 bash test/gpu/suite.sh .dev/gpu $O/suite shapes
  echo "suite rc=$?"
) > $O/suite.out 2>&1
el "suite end"
left=$(( CALL - $(date +%s) + t0 ))
if [ $left -gt 120 ]; then
  MPS=1 DS=4 ROUNDS=2 BUDGET=$(( left - 60 )) timeout $(( left - 5 )) bash bench/tp_compare.sh \
    .dev/gpu $O/tp-d4 --rows pipe-get,pipe-ovl,compute,pipe-fwd,pipe-fwd-ovl,compute-fwd,torch-chunks > $O/tp-d4.out 2>&1
  el "tp rc=$?"
  grep -h "time on rank 0\|^\$ .*hir-run" $O/tp-d4/tp_compare.log > $O/tp-phases.txt 2>/dev/null
  cp $O/tp-d4/tp_compare.md $O/tp-d4.md 2>/dev/null
fi
cd $O && tar czf rest.tar.gz tp-d4 suite 2>/dev/null; cp suite/gpu-suite.md . 2>/dev/null; rm -rf tp-d4 suite; ls
