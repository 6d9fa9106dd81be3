#!/usr/bin/env bash
# schedule_gpu.sh BUILD_TOOLS_DIR [OUT_DIR] — stream-parallel{order= nodes= chunks=} on ONE GPU
# with d ranks sharing it (docs/passes.md, "Schedules past one node"): every schedule in the
# CUDA-IPC form (one real node; nodes= only shapes the order), --check against the unlowered
# program, and a short --bench of each for the log (d ranks on one GPU: not a multi-node
# measurement). NCCL cannot put two ranks on one GPU, so the kind=auto form is not run here.
# Each schedule's compute-only program (--strip-communication: the same GEMMs on the same
# streams, no communication) is benched too, OUT_DIR/TAG-strip.json beside OUT_DIR/TAG.json:
# bench/model_vs_gpu.py reads both next to the scale model's predictions.
# Environment: DS (default "4 8"), M K N (default 8192 4096 4096), STREAMS (4), ITERS (5),
# DEVICE (cuda; cpu runs the same on the CPU backend: the scripts' own test, no timings), MPS
# (1: the d ranks run under a CUDA MPS daemon of the script's own, gpu_env.sh; default 0: the
# GPU time-slices them). The log's header says "MPS: on/off".
set -u
bin=$(cd "$1" && pwd); out=${2:-${OUT:-/tmp/schedule-gpu}}; mkdir -p "$out"
BIN=$bin; . "$(dirname "$0")/gpu_env.sh"     # PATH, mpirun as root, MPS=1; its trap at exit
M=${M:-8192} K=${K:-4096} N=${N:-4096}
DS=${DS:-4 8}; STREAMS=${STREAMS:-4}; ITERS=${ITERS:-5}
DEVICE=${DEVICE:-cuda}
work=$(mktemp -d)
log=$out/schedule_gpu.log
: > "$log"
if [ "$DEVICE" = cuda ]; then dev=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); else dev="device=$DEVICE"; fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $dev; m=$M k=$K n=$N streams=$STREAMS; MPS: $GPU_ENV_MPS" | tee -a "$log"
fails=0
for d in $DS; do
  hir-gen ag-linear --m $M --k $K --n $N --d $d --no-bias -o $work/in$d.hir
  half=$((d / 2)); twice=$((2 * d))
  # the last two: every shard in 2 pieces (chunks = 2d)
  for v in "ring:$d:1" "ring:$half:1" "ring:1:1" "local-first:$d:2" "local-first:$half:2" \
           "ring:$twice:1" "local-first:$twice:2"; do
    IFS=: read -r order chunks nodes <<< "$v"
    tag=d$d-$order-k$chunks-n$nodes
    hir-opt --pass-pipeline="stream-parallel{backend=cuda order=$order nodes=$nodes chunks=$chunks}" \
        $work/in$d.hir -o $work/$tag.hir || { echo "$tag: lowering failed" | tee -a "$log"; fails=$((fails+1)); continue; }
    echo "\$ hir-run -np $d --device=$DEVICE --streams=$STREAMS --check=in$d.hir $tag.hir" >> "$log"
    timeout 400 hir-run -np $d --device=$DEVICE --timeout=120 --streams=$STREAMS --check=$work/in$d.hir \
        $work/$tag.hir > $work/$tag.check 2>&1
    rc=$?
    cat $work/$tag.check >> "$log"
    timeout 400 hir-run -np $d --device=$DEVICE --timeout=120 --streams=$STREAMS --bench=$ITERS --warmup=2 \
        --bench-json=$out/$tag.json $work/$tag.hir >> "$log" 2>&1
    # compute-only: its outputs are meaningless (never checked), only its time counts
    hir-opt --strip-communication $work/$tag.hir -o $work/$tag-strip.hir &&
    timeout 400 hir-run -np $d --device=$DEVICE --timeout=120 --streams=$STREAMS --bench=$ITERS --warmup=2 \
        --bench-json=$out/$tag-strip.json $work/$tag-strip.hir >> "$log" 2>&1 ||
        echo "$tag: compute-only run failed" | tee -a "$log"
    echo "$tag check rc=$rc $(grep -E 'check: (PASS|FAIL)' $work/$tag.check | tr '\n' ' ')" | tee -a "$log"
    grep -q 'check: PASS' $work/$tag.check || fails=$((fails+1))
  done
done
echo "schedule_gpu: $fails failing" | tee -a "$log"
rm -rf "$work"
[ $fails -eq 0 ]
