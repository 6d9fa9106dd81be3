#!/usr/bin/env bash
# tp_compare.sh — the whole AG+linear comparison in one call (issue 28, item 4): hir pipeline
# (get, put, deferred send wait, --comm-priority=high, --ipc-copy=overlap), hir NCCL pipeline,
# gather-then-GEMM, compute-only, PyTorch doing the same GEMMs, PyTorch NCCL all-gather + matmul,
# PyTorch async-TP; one rank per GPU when there are several GPUs, d ranks sharing the GPU
# otherwise (rows that cannot run are printed as skipped, with the reason). With 2+ GPUs (or
# --simulate-nodes N on --device cpu, or with --rows ...,sched on one GPU) also the schedule
# rows of stream-parallel{order= nodes= chunks=}: ring and local-first (one node: the ring) x
# chunks d/2, d, 2d (--sched-chunks: other multiples of d), nodes= from hir-run --topology,
# each checked.
# What is timed and how: bench/tp_compare.py.
#   bench/tp_compare.sh BIN_DIR OUT_DIR [tp_compare.py options]
# BIN_DIR: hir-gen, hir-opt, hir-run (scripts/pack-gpu's directory). Environment: M K N (the
# shape, default 32768 16384 8192), DS (ranks, default "2,4,8"), ROUNDS (default 2), ITERS
# (default 20), WARM (default 3), STREAMS (default 4), BUDGET (seconds after which no run
# starts; default 0, none), MPS (1: run under a CUDA MPS daemon of its own, gpu_env.sh; default
# 0). Writes OUT_DIR/tp_compare.{md,json,log}, OUT_DIR/runs/*.json.
# At the headline shape one checked hir run takes 9-18 s on one H100 with 16 CPU cores
# (2026-12-07, main 7a78039; 23-65 s before the check was threaded), most of it the check;
# hir-run's "time on rank 0" line (in OUT_DIR/tp_compare.log) says where it goes. ROUNDS=1 of
# every row at d = 2, 4 and 8 took 370 s, DS=4 alone 94 s: the whole table fits one device call.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 BIN_DIR OUT_DIR [tp_compare.py options]" >&2
  exit 2
fi
BIN=$(cd "$1" && pwd) || exit 2
OUT=$2; shift 2
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_env.sh"     # its trap removes GPU_ENV_TMP and stops MPS=1's daemon at exit
python3 "$here/tp_compare.py" --bin "$BIN" --out "$OUT" --m "${M:-32768}" --k "${K:-16384}" \
  --n "${N:-8192}" --ds "${DS:-2,4,8}" --rounds "${ROUNDS:-2}" --iters "${ITERS:-20}" \
  --warmup "${WARM:-3}" --streams "${STREAMS:-4}" --budget "${BUDGET:-0}" "$@"
