#!/usr/bin/env bash
# rs_gemm_shared.sh - GEMM + reduce-scatter (the row-parallel linear, hir-gen linear-rs) at the
# headline shape (m=32768, k=16384 split over the d ranks, n=8192, bf16) with d ranks sharing
# one GPU, d in {2, 4, 8}, the way bench/ag_gemm_shared.sh measures the all-gather:
#   (a) pipeline      hir-opt --stream-parallel=cuda [--defer-send-wait] (the CUDA-IPC ring of
#                     passes/stream_parallel_rs.c), checked against linear-rs-ref by the
#                     randomized product check
#   (b) compute-only  the same program after --strip-communication (the same GEMMs, the casts
#                     and adds, no exchange)
#   (c) one stream    the ring run with --streams=1: every chunk's GEMM waits for the previous
#                     exchange of its rank (the unpipelined order; NCCL, whose Reduce/ReduceScatter
#                     forms hir also makes, cannot run two ranks on one GPU), checked
#   (d) torch         d processes each doing the same F.linear, [m, k/d] x [n, k/d]^T
#                     (bench/torch_shared.py --k k/d)
# Every figure: wall time on one clock per iteration (barrier to barrier), TFLOP/s summed over
# the ranks that share the device, next to the device's peak; hir runs use --vary-inputs.
#   bash bench/rs_gemm_shared.sh BIN_DIR [OUT_DIR]     (on the GPU machine)
set -u
bin=$(cd "$1" && pwd); out=${2:-${OUT:-/tmp/rs-shared}}; mkdir -p "$out"
# shared_gpu.sh: the environment of every GPU bench script (gpu_env.sh: PATH, no NVLink
# multicast, OpenBLAS from blas.tar.xz for --check's CPU reference, which the device image may
# lack), the defaults, the log, hr and torch_shared
BIN=$bin; . "$(dirname "$0")/shared_gpu.sh"
shared_gpu_begin rs_shared.log
for d in $DS; do
  hir-gen linear-rs --m $M --k $K --n $N --d $d -o $work/in$d.hir
  hir-gen linear-rs-ref --m $M --k $K --n $N --d $d -o $work/ref$d.hir
  hir-opt --stream-parallel=cuda $work/in$d.hir -o $work/pipe$d.hir
  hir-opt --stream-parallel=cuda --defer-send-wait $work/in$d.hir -o $work/defer$d.hir
  hir-opt --strip-communication $work/pipe$d.hir -o $work/strip$d.hir
  hr pipe-d$d $d $out/pipe-d$d.json --streams=$STREAMS --vary-inputs --check=$work/ref$d.hir $work/pipe$d.hir
  hr defer-d$d $d $out/defer-d$d.json --streams=$STREAMS --vary-inputs --check=$work/ref$d.hir $work/defer$d.hir
  hr strip-d$d $d $out/strip-d$d.json --streams=$STREAMS --vary-inputs $work/strip$d.hir
  hr gather-d$d $d $out/gather-d$d.json --streams=1 --vary-inputs --check=$work/ref$d.hir $work/pipe$d.hir
  torch_shared $d $((K / d))
done
python3 "$(dirname "$0")/ag_gemm_shared_table.py" "$out" --rs | tee "$out/rs_shared.md"
rm -rf "$work"
