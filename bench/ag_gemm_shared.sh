#!/usr/bin/env bash
# ag_gemm_shared.sh - AG+linear at the headline shape (m=32768, k=16384, n=8192, bf16) with d
# ranks sharing one GPU, d in {2, 4, 8}, four ways in one run (docs/benchmarks.md):
#   (a) pipeline      hir-opt --stream-parallel --backend=cuda [--defer-send-wait], checked
#   (b) compute-only  the same program after --strip-communication (the same GEMMs, no copies)
#   (c) gather+GEMM   hir-opt --convert-to-communication --backend=cuda (Allgather over CUDA
#                     IPC, then one GEMM), checked
#   (d) torch         d processes each doing the same F.linear (bench/torch_shared.py)
# Every figure: wall time on one clock per iteration (barrier to barrier), TFLOP/s summed over
# the ranks that share the device, next to the device's peak; hir runs use --vary-inputs and
# the checked ones end with the randomized product check of the last timed run.
#   bash bench/ag_gemm_shared.sh BIN_DIR [OUT_DIR]     (on the GPU machine)
set -u
bin=$(cd "$1" && pwd); out=${2:-${OUT:-/tmp/ag-shared}}; mkdir -p "$out"
BIN=$bin; . "$(dirname "$0")/shared_gpu.sh"
shared_gpu_begin ag_shared.log
for d in $DS; do
  hir-gen ag-linear --m $M --k $K --n $N --d $d --no-bias -o $work/in$d.hir
  hir-opt --stream-parallel --backend=cuda $work/in$d.hir -o $work/pipe$d.hir
  hir-opt --stream-parallel --backend=cuda --defer-send-wait $work/in$d.hir -o $work/defer$d.hir
  hir-opt --strip-communication $work/pipe$d.hir -o $work/strip$d.hir
  hir-opt --convert-to-communication --backend=cuda $work/in$d.hir -o $work/gather$d.hir
  hr pipe-d$d $d $out/pipe-d$d.json --streams=$STREAMS --vary-inputs --check=$work/in$d.hir $work/pipe$d.hir
  hr defer-d$d $d $out/defer-d$d.json --streams=$STREAMS --vary-inputs --check=$work/in$d.hir $work/defer$d.hir
  hr strip-d$d $d $out/strip-d$d.json --streams=$STREAMS --vary-inputs $work/strip$d.hir
  hr gather-d$d $d $out/gather-d$d.json --vary-inputs --check=$work/in$d.hir $work/gather$d.hir
  torch_shared $d $K
done
python3 "$(dirname "$0")/ag_gemm_shared_table.py" "$out" | tee "$out/ag_shared.md"
rm -rf "$work"
