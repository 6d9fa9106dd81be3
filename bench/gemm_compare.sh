#!/usr/bin/env bash
# gemm_compare.sh — one same-method GEMM comparison on one GPU (issue 28, item 1): hir untuned,
# hir tuned (--gemm-tune's candidates), torch F.linear default and with TunableOp, bf16,
# k=16384 n=8192, m in {4096, 8192, 32768}, one rank. Everything is timed the same way (CUDA
# events around I back-to-back GEMMs after 3 warm-ups), interleaved in rounds; hir's output is
# checked at the timed shape in every round (hir-cuda-selftest's row-wise Freivalds check).
#   bench/gemm_compare.sh BIN_DIR OUT_DIR [ROUNDS]     (ROUNDS default 5)
# BIN_DIR: what scripts/pack-gpu made (hir-cuda-selftest among it). Writes
# OUT_DIR/gemm-compare.md (one table) and OUT_DIR/gemm-compare.log (every raw line).
# Needs python3 with torch and a GPU; about 2-3 minutes on an H100.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BIN_DIR OUT_DIR [ROUNDS]" >&2
  exit 2
fi
BIN=$(cd "$1" && pwd)
OUT=$2
ROUNDS=${3:-5}
mkdir -p "$OUT"
if [ ! -x "$BIN/hir-cuda-selftest" ]; then
  echo "gemm_compare: $BIN/hir-cuda-selftest missing (scripts/pack-gpu copies it)" >&2
  exit 1
fi
LIBS=""
if [ -d "$BIN/lib" ]; then LIBS=$BIN/lib; fi
if [ -f "$BIN/blas.tar.xz" ]; then
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  tar xJf "$BIN/blas.tar.xz" -C "$tmp" && LIBS=${LIBS:+$LIBS:}$tmp/blas
fi
export LD_LIBRARY_PATH=${LIBS:+$LIBS:}${LD_LIBRARY_PATH:-}
exec python3 "$(dirname "$0")/gemm_compare.py" --selftest "$BIN/hir-cuda-selftest" \
  --out "$OUT" --rounds "$ROUNDS"
