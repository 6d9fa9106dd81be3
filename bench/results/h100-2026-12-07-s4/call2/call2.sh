#!/usr/bin/env bash
# call 2 of 2026-12-07 s4: (c) finer chunks at d=4 (schedule rows on the shared GPU); then the
# pipeline question's rows at d = 2 and 8, two interleaved rounds
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); CALL=${CALL_BUDGET:-560}; ROOT=$PWD
el() { echo "$1 +$(( $(date +%s) - t0 )) s" >> $O/timeline.txt; }
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.max.sm --format=csv > $O/nvidia-smi.txt 2>&1
MPS=1 DS=4 ROUNDS=2 BUDGET=150 timeout 220 bash bench/tp_compare.sh .dev/gpu $O/tp-sched \
  --rows pipe-get,compute,sched > $O/tp-sched.out 2>&1
el "sched rc=$?"
left=$(( CALL - $(date +%s) + t0 ))
MPS=1 DS=2,8 ROUNDS=2 BUDGET=$(( left - 70 )) timeout $(( left - 5 )) bash bench/tp_compare.sh \
  .dev/gpu $O/tp-d28 --rows pipe-get,pipe-fwd,compute,compute-fwd,torch-chunks > $O/tp-d28.out 2>&1
el "d28 rc=$?"
cd $O && for t in tp-sched tp-d28; do cp $t/tp_compare.md $t.md 2>/dev/null; done
tar czf rest.tar.gz tp-sched tp-d28 *.out 2>/dev/null; rm -rf tp-sched tp-d28 *.out; ls
