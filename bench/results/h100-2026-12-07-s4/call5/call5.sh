#!/usr/bin/env bash
# call 5: d=4 chunks 4, 8, 16 interleaved (two rounds); then the host-side check's phases, old vs new
set -u
O=${OUT:-/tmp/out}; mkdir -p $O; ROOT=$PWD; t0=$(date +%s)
(
  BIN=$ROOT/.dev/gpu; MPS=1; . bench/gpu_env.sh
  w=$GPU_ENV_TMP
  hir-gen ag-linear --m 32768 --k 16384 --n 8192 --d 4 --no-bias -o $w/in.hir
  for c in 4 8 16; do
    hir-opt "--pass-pipeline=stream-parallel{backend=cuda order=ring nodes=1 chunks=$c},backend{kind=auto nodes=1}" $w/in.hir -o $w/k$c.hir
  done
  for r in 1 2; do for c in 4 8 16; do
    hir-run -np 4 --device=cuda --timeout=120 --bench --warmup=3 --iters=20 --streams=4 --vary-inputs --check $w/k$c.hir > $O/k$c-r$r.log 2>&1
    echo "round $r chunks=$c rc=$? $(grep -m1 'time/iter' $O/k$c-r$r.log) $(grep '^check: PASS\|^check: FAIL' $O/k$c-r$r.log)"
  done; done
  echo "MPS $GPU_ENV_MPS"
  for b in gpu-old gpu; do
    s=$(date +%s.%N)
    $ROOT/.dev/$b/hir-run -np 4 --device=cuda --timeout=120 --bench --warmup=3 --iters=20 \
      --streams=4 --vary-inputs --check $w/k4.hir > $O/ph-$b.log 2>&1
    echo "phases $b $(cat $ROOT/.dev/$b/COMMIT | head -1) rc=$? wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s}") s: $(grep 'time on rank 0' $O/ph-$b.log) $(grep '^check: PASS\|^check: FAIL' $O/ph-$b.log)"
  done
) > $O/call5.txt 2>&1
echo "end +$(( $(date +%s) - t0 )) s" >> $O/call5.txt
cd $O && tar czf logs.tar.gz *.log && rm -f *.log; ls
