#!/usr/bin/env sh
# A tensor-parallel MLP block (README.md): made by hir-gen, both halves pipelined by
# hir-opt --stream-parallel, run on D ranks and checked against the unpipelined program.
#   sh examples/tp-mlp/run.sh [BIN_DIR] [DEVICE] [D] [BACKEND]
# defaults: build/tools, cpu, 4 ranks, cuda (the CUDA-IPC rings; nccl: NCCL's forms)
set -eu
bin=${1:-build/tools}; dev=${2:-cpu}; d=${3:-4}; backend=${4:-cuda}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/hir-gen" tp-mlp --m 256 --k 64 --n 256 --d "$d" -o "$tmp/mlp.hir"
"$bin/hir-opt" --stream-parallel="$backend" "$tmp/mlp.hir" -o "$tmp/mlp-pipelined.hir"
echo "pipelines: $(grep -c '^  FOR streamIdx' "$tmp/mlp-pipelined.hir") loops (a synchronisation loop and a main loop per half)"
"$bin/hir-run" -np "$d" --device="$dev" --vary-inputs --iters=2 --check="$tmp/mlp.hir" "$tmp/mlp-pipelined.hir"
