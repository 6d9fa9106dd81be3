#!/bin/bash
# gpu_session.sh — every GPU measurement of bench/ in one device call: host overhead (hir-run
# eager and --graph against PyTorch), then AG+GEMM (headline first, its CUDA-IPC trace, then the
# sweep) through bench/ag_gemm.py. Writes under $OUT: session.log, host_overhead.json,
# ag_gemm.{json,md,log,png}, trace_ipc.json.
# Usage (repo root, binaries built here and carried): bash bench/gpu_session.sh .dev/bench
# .dev/bench holds hir-run, hir-opt, hir-gen and blas.tar.xz (OpenBLAS for the CPU backend,
# which the device image may lack; only --check uses it).
set -u
BIN=${1:-.dev/bench}
OUTD=${OUT:-/tmp/bench-out}
BUDGET=${BUDGET:-420}          # seconds of hir runs ag_gemm.py may start (a full sweep on one
                               # H200 needs about that: ~30 s per hir-run at the headline shape,
                               # most of it generating random inputs on the host)
mkdir -p "$OUTD"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
LIBS=/usr/local/cuda/lib64:/usr/local/cuda/lib
for d in $(python3 -c 'import nvidia,os,glob; [print(p) for b in nvidia.__path__ for p in glob.glob(os.path.join(b,"*","lib"))]' 2>/dev/null); do LIBS=$LIBS:$d; done
if [ -f "$BIN/blas.tar.xz" ]; then tar xJf "$BIN/blas.tar.xz" -C /tmp && LIBS=$LIBS:/tmp/blas; fi
export LD_LIBRARY_PATH=$LIBS:${LD_LIBRARY_PATH:-}
LOG=$OUTD/session.log
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  echo "ldd: $(ldd "$BIN/hir-run" | grep -c 'not found') libraries not found"
  ldd "$BIN/hir-run" | grep 'not found'
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.device_count(), "GPU(s)")'
} 2>&1 | tee "$LOG"
t0=$(date +%s)
timeout 70 python3 bench/host_overhead.py --bin "$BIN" --out "$OUTD" --timeout 30 2>&1 | tee -a "$LOG"
echo "host_overhead: rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 )) s" | tee -a "$LOG"
t0=$(date +%s)
timeout $((BUDGET + 150)) python3 bench/ag_gemm.py --bin "$BIN" --out "$OUTD" --trace \
    --budget "$BUDGET" --timeout "${RUN_TIMEOUT:-90}" ${AG_ARGS:-} 2>&1 | tee -a "$LOG"
echo "ag_gemm: rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 )) s" | tee -a "$LOG"
ls -la "$OUTD" | tee -a "$LOG"
