#!/usr/bin/env bash
# call 1: --forward-local-shard against the get pipeline and the two compute-only forms, d=4 then d=2
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s)
CALL=${CALL_BUDGET:-540}
nvidia-smi > $O/nvidia-smi.txt 2>&1
cat .dev/gpu/COMMIT > $O/commit.txt
ROWS=${ROWS:-pipe-get,pipe-fwd,compute,compute-fwd,torch-chunks,torch-copies}
for d in ${DS:-4 2}; do
  el=$(( $(date +%s) - t0 )); left=$(( CALL - el ))
  [ $left -lt 90 ] && { echo "skip d=$d: $left s left" >> $O/c5.txt; continue; }
  if [ "$d" = "${DS_FIRST:-4}" ]; then b=${B1:-260}; else b=$(( left - 60 )); fi
  echo "d=$d start +$el s budget $b" >> $O/c5.txt
  MPS=1 DS=$d ROUNDS=${ROUNDS:-2} BUDGET=$b timeout $(( left - 5 )) bash bench/tp_compare.sh .dev/gpu $O/tp-d$d --rows $ROWS > $O/tp-d$d.out 2>&1
  echo "d=$d rc=$? end +$(( $(date +%s) - t0 )) s" >> $O/c5.txt
done
cd $O && tar czf tp.tar.gz tp-d* && rm -rf tp-d*/ && ls
